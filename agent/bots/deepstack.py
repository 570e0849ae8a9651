"""The DeepStack bot: continual re-solving behind the protocol client.

It watches every state of the hand (new hands, new board cards), re-solves on its turn,
samples an action for the cards it holds from the re-solve strategy, and logs one JSON
line per decision. Everything that can fail for reasons outside a decision (a missing or
corrupt model, a bad config) fails when the bot is built, before the match starts.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from agent.bots.config import Config, HoldemBotConfig, LeducBotConfig
from agent.bots.heap import release_free_memory
from agent.bots.timing import TimeBudget
from agent.leaves.equity_matrix import CheckdownMatrices
from agent.leaves.handnet import HandNetLeafValues
from agent.leaves.holdem import BucketNetLeafValues, CheckdownLeafValues
from agent.nets.buckets import BucketTable
from agent.nets.manifest import ModelError, checked_file, code_version, load_value_net, sha256_of
from agent.resolving.chance_solve import SolvedChanceValues
from agent.resolving.continual import ContinualResolver, Decision, ResolveSettings, StreetSettings, sample_action
from agent.solver.handspace import HandSpace
from agent.solver.resolve import SolverConfig, pick_device
from agent.solver.tree import DEEPSTACK_SIZING, FCPA
from native.cards import cards_to_str
from protocol.bot import BaseBot
from protocol.gamedef import DeckConvention, Game
from protocol.logs import get_logger
from protocol.matchstate import MatchState
from protocol.state import CALL, FOLD, Action, ActionKind

log = get_logger("bot")


@dataclass
class _Seat:
    convention: DeckConvention
    space: HandSpace
    resolver: ContinualResolver


def leduc_settings(game: Game, space: HandSpace, cfg: LeducBotConfig, device: str) -> ResolveSettings:
    config = SolverConfig(
        algorithm=cfg.algorithm, alternating=cfg.algorithm != "hybrid", iterations=cfg.iterations, device=device, dtype="float64"
    )
    if cfg.value_net is None:
        return ResolveSettings.uniform(FCPA, config)
    net, entry = load_value_net(cfg.value_net, device=pick_device(device))
    leaf = HandNetLeafValues(net, space, canonical=bool(entry.get("canonical_suits", False)))
    round1 = StreetSettings(sizing=(FCPA,), config=config, last_round=0, leaf_values=leaf, chance_values=leaf.chance_values)
    round2 = StreetSettings(sizing=(FCPA,), config=config)
    return ResolveSettings(streets=(round1, round2))


def _checked_file(path: str) -> Path:
    """A data file of ``models/`` checked against its manifest entry (sha256)."""

    return checked_file(path, " (deepstack buckets builds the bucket tables and check-down matrix)")[0]


def hunl_settings(game: Game, cfg: HoldemBotConfig, device: str) -> ResolveSettings:
    """Per-street re-solving for heads-up no-limit hold'em (DeepStack's table, section 4)."""

    dev = pick_device(device)
    sizing = tuple(DEEPSTACK_SIZING[r] for r in ("preflop", "flop", "turn", "river"))
    streets_cfg = (cfg.preflop, cfg.flop, cfg.turn, cfg.river)
    checkdown = None

    def get_checkdown() -> CheckdownLeafValues:
        nonlocal checkdown
        if checkdown is None:
            checkdown = CheckdownLeafValues(CheckdownMatrices(_checked_file(cfg.models.preflop_checkdown)))
        return checkdown

    def net_leaf(net_path: str, buckets_path: str | None) -> BucketNetLeafValues:
        net, _ = load_value_net(net_path, device=dev)
        table = BucketTable.load(_checked_file(buckets_path)) if buckets_path else None
        return BucketNetLeafValues(net, game, table)

    streets = []
    for r, sc in enumerate(streets_cfg):
        config = SolverConfig(
            algorithm=cfg.algorithm, alternating=cfg.algorithm != "hybrid", iterations=sc.iterations, device=device
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
            aux = net_leaf(cfg.models.aux_net, None)
            flop = net_leaf(cfg.models.flop_net, cfg.models.flop_buckets)
            streets.append(
                StreetSettings(sizing=sizing, config=config, last_round=0, leaf_values=aux, chance_values=flop.chance_values)
            )
        elif r == 1:
            turn = net_leaf(cfg.models.turn_net, cfg.models.turn_buckets)
            streets.append(
                StreetSettings(sizing=sizing, config=config, last_round=1, leaf_values=turn, chance_values=turn.chance_values)
            )
        else:
            raise ValueError("the turn has no value network in DeepStack: use leaves 'end' or 'checkdown'")
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
    return game.num_rounds == 2 and game.deck_size == 6


def is_hunl(game: Game) -> bool:
    return game.is_nolimit and game.num_rounds == 4 and game.deck_size == 52 and game.num_hole_cards == 2


def model_paths(game: Game, config: Config) -> list[tuple[str, str]]:
    """``(config key, path)`` of every model file the DeepStack bot loads for ``game`` with these
    settings (a hold'em network only where a street's leaves use it)."""
    if is_leduc(game):
        key = "leduc_limit" if game.is_limit else "leduc"
        net = getattr(config.bot, key).value_net
        return [(f"bot.{key}.value_net", net)] if net else []
    if not is_hunl(game):
        return []
    hc = config.bot.hunl
    m = hc.models
    keys = []
    if any(s.leaves == "checkdown" for s in (hc.preflop, hc.flop, hc.turn)) or hc.preflop_cache:
        keys.append("preflop_checkdown")
    if hc.preflop.leaves == "net":
        keys += ["aux_net", "flop_net", "flop_buckets"]
    if hc.flop.leaves == "net":
        keys += ["turn_net", "turn_buckets"]
    return [(f"bot.hunl.models.{k}", getattr(m, k)) for k in dict.fromkeys(keys)]


def check_models(game: Game, config: Config) -> None:
    """Every model file the bot will load exists, is listed in its manifest and has the recorded
    sha256; else one ModelError naming the config file, the key and the path. Run at start-up,
    before anything slow, so that a wrong path stops a command at once and says which setting."""
    for key, path in model_paths(game, config):
        hint = " (deepstack buckets builds the bucket tables and check-down matrix)" if path.endswith(".npz") else ""
        try:
            checked_file(path, hint)
        except ModelError as exc:
            where = f"{config.source}: " if config.source else ""
            raise ModelError(f"{where}{key}: {exc}") from None


class DeepStackBot(BaseBot):
    """Continual re-solving: Leduc (either deck convention) and heads-up no-limit hold'em."""

    name = "deepstack"

    def __init__(self, game: Game, config: Config, seed: int | None = None) -> None:
        if game.num_players != 2:
            raise ValueError(f"the DeepStack bot plays two-player games, not {game.num_players} players")
        self.game = game
        self.config = config
        self.rng = np.random.default_rng(seed)
        self.device = (
            "cpu"
            if config.device == "auto" and not torch.cuda.is_available()
            else ("cuda" if config.device == "auto" else config.device)
        )
        tc = config.bot.time
        self.timing = TimeBudget(
            tc.t_per_hand_ms / 1000, tc.t_response_ms / 1000, tc.t_hand_ms / 1000, tc.safety, rounds=game.num_rounds
        )
        if is_leduc(game):
            self.bot_config: LeducBotConfig | HoldemBotConfig = config.bot.leduc_limit if game.is_limit else config.bot.leduc
            self.device = "cpu"  # tiny tensors: the CPU beats a GPU here
        elif is_hunl(game):
            hc = config.bot.hunl
            self.bot_config = hc
        else:
            raise ValueError(f"the DeepStack bot plays Leduc and heads-up no-limit hold'em, not {game.name}")
        check_models(game, config)  # every model it will load, named by its config key
        self._seats: dict[DeckConvention, _Seat] = {}
        self._seat: _Seat | None = None
        self._hand = -1
        self._degraded = False
        self._starved = False
        self._turn_started: float | None = None
        # build (and load the models) now: a bad model must stop us before the match
        # and solve the first state of a hand for both positions (the same every hand), for
        # each deck a reduced-deck dealer may use, so that no decision of the match pays for it
        conventions: list[DeckConvention] = ["high"] if game.deck("high") == game.deck("low") else ["high", "low"]
        self._cache_path = (
            Path(self.bot_config.preflop_cache)
            if isinstance(self.bot_config, HoldemBotConfig) and self.bot_config.preflop_cache
            else None
        )
        loaded = self._load_preflop_cache()
        for convention in conventions:
            self._seat_for(convention).resolver.prepare()
        if self._cache_path is not None and not loaded:
            self._save_preflop_cache()

    # ------------------------------------------------------------------ pre-flop cache on disk
    def _cache_key(self) -> str:
        """What the cached re-solves depend on: game, settings, models and code."""

        parts = [self.game.to_text(), repr(self.bot_config), self.device, code_version()]
        if isinstance(self.bot_config, HoldemBotConfig):
            parts.append(sha256_of(_checked_file(self.bot_config.models.preflop_checkdown)))
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()

    def _load_preflop_cache(self) -> bool:
        path = self._cache_path
        if path is None or not path.exists():
            return False
        try:
            with open(path, "rb") as f:
                saved = pickle.load(f)
            if saved.get("key") != self._cache_key():
                log.warning("preflop_cache_stale", path=str(path), reason="made by other settings, models or code; solving again")
                return False
            self._seat_for("high").resolver.import_preflop(saved["data"])
        except Exception as exc:  # a damaged file must not stop the bot: solve again
            log.warning("preflop_cache_unreadable", path=str(path), error=repr(exc))
            return False
        log.info("preflop_cache_loaded", path=str(path), decisions=len(saved["data"]["cache"]))
        return True

    def _save_preflop_cache(self) -> None:
        path = self._cache_path
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + ".tmp")
            with open(tmp, "wb") as f:
                pickle.dump({"key": self._cache_key(), "data": self._seat_for("high").resolver.export_preflop()}, f)
            os.replace(tmp, path)
        except OSError as exc:
            log.warning("preflop_cache_not_written", path=str(path), error=repr(exc))

    def end_match(self) -> None:
        self._save_preflop_cache()

    def _seat_for(self, convention: DeckConvention) -> _Seat:
        if convention not in self._seats:
            space = HandSpace(self.game, convention)
            if isinstance(self.bot_config, LeducBotConfig):
                settings = leduc_settings(self.game, space, self.bot_config, self.device)
            else:
                settings = hunl_settings(self.game, self.bot_config, self.device)
            self._seats[convention] = _Seat(convention, space, ContinualResolver(space, settings))
        return self._seats[convention]

    def start_match(self, game: Game) -> None:
        if game != self.game:
            raise ValueError("the bot was built for another game")

    def observe(self, view: MatchState) -> None:
        # the dealer's clock runs from the line that puts us to act, so the observation before
        # the decision (a chance update can take a second) is charged to the decision too
        self._turn_started = time.monotonic() if view.is_our_turn else None
        if view.hand_id != self._hand:
            self._hand = view.hand_id
            self._degraded = False
            self._starved = False
            self.timing.start_hand()
            cards = list(view.our_cards) + list(view.state.board)
            conventions = self.game.conventions_containing(cards)
            if not conventions:
                raise ValueError(f"cards {cards} belong to no deck convention of {self.game.name}")
            self._seat = self._seat_for(conventions[0])
            self._seat.resolver.start_hand(view.position)
        assert self._seat is not None
        if not self._degraded:
            try:
                self._seat.resolver.observe(view.state)
            except Exception:
                log.exception("observe_failed", hand=view.hand_id, betting=view.state.betting_string())
                self._degraded = True
        if view.state.finished:  # nobody's clock runs now: keep the resident memory flat
            release_free_memory()

    def act(self, view: MatchState) -> Action:
        if self._seat is None or view.hand_id != self._hand:
            self.observe(view)
        assert self._seat is not None
        start = self._turn_started if self._turn_started is not None else time.monotonic()
        self._turn_started = None
        seat = self._seat
        try:
            if self._degraded:
                raise RuntimeError("the re-solving state of this hand was lost earlier")
            if self._starved or not self.timing.affordable(view.state.round):
                return self._out_of_time(view, start)
            deadline = self.timing.deadline(view.state.round, start)
            decision = seat.resolver.decide(view.state, deadline)
            if not decision.cached:
                self.timing.solved(view.state.round, time.monotonic() - start)
            hand = seat.space.index(view.our_cards)
            action = sample_action(decision, hand, self.rng)
            seat.resolver.act(decision, action)
            self._log(view, decision, hand, action, time.monotonic() - start)
        except Exception as exc:  # out of memory, a bug: the match goes on with a legal action
            self._degraded = True
            action = CALL
            log.error(
                "decision_failed", hand=view.hand_id, betting=view.state.betting_string(), error=repr(exc), action=str(action)
            )
        self.timing.spent(time.monotonic() - start)
        return action

    def _out_of_time(self, view: MatchState, start: float) -> Action:
        """No time left for a re-solve: check, or fold to a bet; the rest of the hand is played
        the same way (its re-solving state is not kept up to date any more)."""
        self._starved = True
        action = CALL if view.state.amount_to_call() == 0 else FOLD
        log.warning("out_of_time", hand=view.hand_id, betting=view.state.betting_string(), action=str(action))
        self.timing.spent(time.monotonic() - start)
        return action

    def _log(self, view: MatchState, decision: Decision, hand: int, action: Action, seconds: float) -> None:
        state = view.state
        names = [str(a) if a.kind is not ActionKind.RAISE or self.game.is_nolimit else "r" for a in decision.actions]
        values = decision.action_values(hand)
        log.info(
            "decision",
            hand=view.hand_id,
            street=state.round,
            pot=state.pot,
            to_call=state.amount_to_call(),
            think_ms=round(1000 * seconds, 2),
            solve_ms=round(1000 * decision.seconds, 2),
            iterations=decision.iterations,
            cached=decision.cached,
            strategy={n: round(float(p), 6) for n, p in zip(names, decision.strategy[:, hand])},
            # what the re-solve expects our hand to win after each action (chips): AIVAT's
            # control variates at our decisions
            values=None if values is None else {n: round(float(v), 3) for n, v in zip(names, values)},
            action=str(action),
            # with these, the dealer's log and this line identify the decision (AIVAT from logs)
            cards=cards_to_str(view.our_cards),
            betting=state.betting_string(),
        )
