"""What the DeepStack bot plays with, per game: its re-solving settings (street by street: the
tree's sizes, the solver, the depth limit and the values there) and the model files they load.

The start cache's key hashes this module's source (agent/bots/start_cache.py): a change here
can change every re-solve.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from agent.bots.config import Config, HoldemBotConfig, LeducBotConfig
from agent.leaves.by_stack import LeavesByStack
from agent.leaves.equity_matrix import CheckdownMatrices
from agent.leaves.handnet import HandNetLeafValues
from agent.leaves.holdem import BucketNetLeafValues, CheckdownLeafValues
from agent.nets.buckets import BucketTable, RiverStrength
from agent.nets.manifest import ModelError, checked_file, load_value_net, sha256_of, trained_games
from agent.resolving.chance_solve import SolvedChanceValues
from agent.resolving.settings import ResolveSettings, StreetSettings
from agent.solver.handspace import HandSpace
from agent.solver.resolve import SolverConfig, pick_device
from agent.solver.tree import DEEPSTACK_SIZING, FCPA
from models import MODELS_DIR
from protocol.gamedef import Game, GameDefError, load_game
from protocol.logs import get_logger

log = get_logger("settings")


def leduc_settings(game: Game, space: HandSpace, cfg: LeducBotConfig, device: str) -> ResolveSettings:
    """The re-solving settings of the Leduc bot: round 1's leaves are the value network's when one is
    configured (round 2 then solved to the end), else the whole game is solved to the end."""
    config = SolverConfig(
        algorithm=cfg.algorithm, alternating=cfg.algorithm != "hybrid", iterations=cfg.iterations, device=device, dtype="float64"
    )
    if cfg.value_net is None:
        return ResolveSettings.uniform(FCPA, config)
    net, entry = load_value_net(cfg.value_net, device=pick_device(device))
    check_leduc_net(entry, cfg.value_net, game, space)
    leaf = HandNetLeafValues(net, space, canonical=bool(entry.get("canonical_suits", False)))
    round1 = StreetSettings(sizing=(FCPA,), config=config, last_round=0, leaf_values=leaf, chance_values=leaf.chance_values)
    round2 = StreetSettings(sizing=(FCPA,), config=config)
    return ResolveSettings(streets=(round1, round2))


def check_leduc_net(entry: dict, net_path: str, game: Game, space: HandSpace) -> None:
    """Refuse a network whose inputs are not this game's hands and board, or trained for the
    other betting (limit values in no-limit, or the reverse: it runs, and plays on wrong
    values); another stack or ante is only logged (the values are in fractions of the pot)."""
    net = entry.get("net") or {}
    if (net.get("buckets"), net.get("extra")) != (space.size, len(space.deck)):
        raise ModelError(
            f"{net_path}: a network of {net.get('buckets')} hands and {net.get('extra')} board features, "
            f"not {game.name}'s {space.size} hands and {len(space.deck)} cards"
        )
    for name in sorted(trained_games(entry)):
        try:
            trained = load_game(name)
        except (GameDefError, OSError):  # a game file that is gone: nothing to compare
            continue
        if trained.betting != game.betting:
            raise ModelError(
                f"{net_path}: trained for {name} ({trained.betting.value} betting); this game is {game.betting.value}"
            )
        if trained.to_text() != game.to_text():
            log.warning("value_net_other_game", path=net_path, trained_for=name, game=game.name)


def data_file(path: str) -> Path:
    """A data file of ``models/`` checked against its manifest entry (sha256)."""

    return checked_file(path, " (deepstack buckets builds the bucket tables and check-down matrix)")[0]


def check_leaf_net(entry: dict, net_path: str, street: str, key: str, table: Path | None) -> None:
    """Refuse a network made for another street, or trained on another bucket table than ``table``
    (the configured one): it would run on the wrong card abstraction without a word."""
    if entry.get("street") != street:
        raise ModelError(f"{net_path} ({key}): this needs the {street} network; this one is for {entry.get('street')!r}")
    trained = entry.get("buckets_file")
    if table is None or not trained:
        return
    path = Path(trained)
    if not path.is_absolute() and not path.exists():
        path = MODELS_DIR.parent / path
    if path.exists() and path.resolve() != table.resolve() and sha256_of(path) != sha256_of(table):
        raise ModelError(f"{net_path} ({key}) was trained on the bucket table {trained}, not on {table}")


#: ``street_start_values: net``: below a check-down leaf with at most this many chips behind per chip
#: in the pot the opponent's values at the next street stay check-down's, nearly exact there, where
#: the networks err most (docs/results.md, "Leaf accuracy against the turn solved to the end")
STREET_START_CHECKDOWN_SPR = 1.0
#: the network that values the start of the street after the pre-flop, the flop and the turn (its
#: ``HoldemModels`` keys: the network, then its bucket table where it has one)
NEXT_STREET_MODELS = (("flop_net", "flop_buckets"), ("turn_net", "turn_buckets"), ("river_net",))


def hunl_settings(game: Game, cfg: HoldemBotConfig, device: str) -> ResolveSettings:
    """Per-street re-solving for heads-up no-limit hold'em (DeepStack's table, section 4)."""

    dev = pick_device(device)
    sizing = tuple(DEEPSTACK_SIZING[r] for r in ("preflop", "flop", "turn", "river"))
    streets_cfg = (cfg.preflop, cfg.flop, cfg.turn, cfg.river)
    checkdown = None

    def get_checkdown() -> CheckdownLeafValues:
        nonlocal checkdown
        if checkdown is None:
            checkdown = CheckdownLeafValues(CheckdownMatrices(data_file(cfg.models.preflop_checkdown)))
        return checkdown

    def net_leaf(net_key: str, buckets_key: str | None, street: str) -> BucketNetLeafValues:
        net_path = getattr(cfg.models, net_key)
        net, entry = load_value_net(net_path, device=dev)
        table_path = data_file(getattr(cfg.models, buckets_key)) if buckets_key else None
        check_leaf_net(entry, net_path, street, f"bot.hunl.models.{net_key}", table_path)
        table = BucketTable.load(table_path) if table_path else None
        return BucketNetLeafValues(net, game, table, cfg.net_precision)

    def river_leaf(net_path: str) -> BucketNetLeafValues:
        net, entry = load_value_net(net_path, device=dev)
        buckets = entry.get("river_buckets")
        if entry.get("street") != "river" or not isinstance(buckets, int):
            raise ModelError(f"{net_path}: not a river network (its manifest entry names no river_buckets)")
        return BucketNetLeafValues(net, game, RiverStrength(buckets), cfg.net_precision)

    streets = []
    for r, sc in enumerate(streets_cfg):
        # network leaves: simultaneous updates (DeepStack's), so that one network call per
        # iteration gives both players' values; alternating updates would need one per player
        config = SolverConfig(
            algorithm=cfg.algorithm,
            alternating=cfg.algorithm != "hybrid" and sc.leaves != "net",
            iterations=sc.iterations,
            skip=sc.skip,
            device=device,
        )
        if sc.leaves == "end" or r == 3:
            streets.append(StreetSettings(sizing=sizing, config=config))
            continue
        if sc.leaves == "checkdown":
            leaf = get_checkdown()
            streets.append(
                StreetSettings(sizing=sizing, config=config, last_round=r, leaf_values=leaf, chance_values=leaf.chance_values)
            )
            continue
        if r == 0:
            aux = net_leaf("aux_net", None, "preflop-aux")
            flop = net_leaf("flop_net", "flop_buckets", "flop")
            streets.append(
                StreetSettings(sizing=sizing, config=config, last_round=0, leaf_values=aux, chance_values=flop.chance_values)
            )
        else:  # the flop ends at the turn network, the turn at the river network, over every next card
            leaf: BucketNetLeafValues | LeavesByStack = (
                net_leaf("turn_net", "turn_buckets", "turn") if r == 1 else river_leaf(cfg.models.river_net)
            )
            if sc.checkdown_spr > 0:
                leaf = LeavesByStack(leaf, get_checkdown(), min(game.stack), sc.checkdown_spr)
            streets.append(
                StreetSettings(sizing=sizing, config=config, last_round=r, leaf_values=leaf, chance_values=leaf.chance_values)
            )
    if cfg.street_start_values == "net":
        for r, keys in enumerate(NEXT_STREET_MODELS):  # a street ending in check-down: the next street's network
            st = streets[r]
            if streets_cfg[r].leaves == "checkdown" and st.chance_values is not None:
                nxt = (
                    river_leaf(cfg.models.river_net)
                    if len(keys) == 1
                    else net_leaf(keys[0], keys[1], keys[0].removesuffix("_net"))
                )
                by_stack = LeavesByStack(nxt, get_checkdown(), min(game.stack), STREET_START_CHECKDOWN_SPR)
                streets[r] = replace(st, chance_values=by_stack.chance_values)
    if cfg.street_start_values == "solve":
        space = HandSpace(game)
        for r in range(3):  # a depth-limited street: the next one is solved when its cards come
            st = streets[r]
            if st.last_round is not None and st.chance_values is not None:
                streets[r] = replace(st, chance_values=SolvedChanceValues(space, streets[r + 1], sizing, st.chance_values))
    return ResolveSettings(
        streets=tuple(streets),
        warm_start_weight=cfg.warm_start.weight,
        warm_start_mode=cfg.warm_start.mode,
        from_round_start=cfg.warm_start.opponent_first == "round_start",
    )


def is_leduc(game: Game) -> bool:
    """Leduc's cards and rounds (stacks, blinds and raises may differ): the networks and the
    hand space are made for one hole card and one board card in the second round."""
    return game.num_rounds == 2 and game.deck_size == 6 and game.num_hole_cards == 1 and game.num_board_cards == (0, 1)


def is_hunl(game: Game) -> bool:
    """Heads-up no-limit hold'em's cards and rounds (stacks and blinds may differ)."""
    return (
        game.is_nolimit
        and game.num_rounds == 4
        and game.deck_size == 52
        and game.num_hole_cards == 2
        and game.num_board_cards == (0, 3, 1, 1)
    )


def section_key(game: Game) -> str:
    """The key of ``bot`` in the config holding the bot's settings for ``game``."""
    if is_leduc(game):
        return "leduc_limit" if game.is_limit else "leduc"
    if is_hunl(game):
        return "hunl"
    raise ValueError(f"the DeepStack bot plays Leduc and heads-up no-limit hold'em, not {game.name}")


def model_paths(game: Game, config: Config) -> list[tuple[str, str]]:
    """``(config key, path)`` of every model file the DeepStack bot loads for ``game`` with these
    settings (a hold'em network only where a street's leaves use it)."""
    if is_leduc(game):
        key = section_key(game)
        net = getattr(config.bot, key).value_net
        return [(f"bot.{key}.value_net", net)] if net else []
    if not is_hunl(game):
        return []
    hc = config.bot.hunl
    m = hc.models
    keys = []
    if any(s.leaves == "checkdown" or s.checkdown_spr > 0 for s in (hc.preflop, hc.flop, hc.turn)):
        keys.append("preflop_checkdown")
    if hc.preflop.leaves == "net":
        keys += ["aux_net", "flop_net", "flop_buckets"]
    if hc.flop.leaves == "net":
        keys += ["turn_net", "turn_buckets"]
    if hc.turn.leaves == "net":
        keys.append("river_net")
    if hc.street_start_values == "net":  # the next street's network below each check-down street
        for street, more in zip((hc.preflop, hc.flop, hc.turn), NEXT_STREET_MODELS):
            if street.leaves == "checkdown":
                keys += more
    return [(f"bot.hunl.models.{k}", getattr(m, k)) for k in dict.fromkeys(keys)]


def check_models(game: Game, config: Config) -> None:
    """Every model file the bot will load exists, is listed in its manifest and has the recorded
    sha256; else one ModelError naming the config file, the key and the path. Run at start-up,
    before anything slow, so that a wrong path stops a command at once and says which setting."""
    for key, path in model_paths(game, config):
        hint = " (deepstack buckets builds the bucket tables and check-down matrix)" if path.endswith(".npz") else ""
        try:
            entry = checked_file(path, hint)[1]
            if is_leduc(game) and key.endswith(".value_net"):
                check_leduc_net(entry, path, game, HandSpace(game))
        except ModelError as exc:
            where = f"{config.source}: " if config.source else ""
            raise ModelError(f"{where}{key}: {exc}") from None
