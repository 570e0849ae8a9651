"""Training data for counterfactual value networks: random situations, solved.

A situation is a public state at the start of a round (board, pot) and one range per
player from R(S, p); its targets are both players' counterfactual values after solving
it, as fractions of the pot, with both ranges normalised. Shards of ``shard_size``
situations are written atomically (temporary file, then rename) and are a function of
``(seed, shard index)`` only, so an interrupted run resumes where it stopped and gives
the same files as an uninterrupted one.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from agent.bots.config import HoldemModels
from agent.common.files import NPZ_ERRORS, save_npz, write_json
from agent.leaves.checkdown import CheckdownEvaluator
from agent.leaves.holdem import BucketNetLeafValues
from agent.nets.buckets import BucketTable, RiverStrength
from agent.nets.encoding import board_features, pot_scale
from agent.nets.manifest import ModelError, checked_file, code_version, command_line, load_value_net, trained_seeds
from agent.nets.valuenet import NetOnDevices
from agent.solver.batched import BatchSpot, solve_batch
from agent.solver.cfr import LeafValueFn, Variant, exploitability
from agent.solver.forest import forest_cost_rows, memory_budget_rows, pack, solve_forest
from agent.solver.handspace import HandSpace
from agent.solver.resolve import SolverConfig, pick_device, solve_ranges
from agent.solver.tree import FCPA, build_tree
from agent.training import harvest
from agent.training.aux_targets import ALL_FLOPS, FlopBuckets, aux_values
from agent.training.rangegen import recursive_range, strength_order
from agent.training.teacher import check_teacher, teacher_values
from native.equity import hand_equities
from protocol.gamedef import Game, load_game
from protocol.state import HandState


@dataclass(frozen=True)
class GenerateSpec:
    """What to generate. Leduc-style games (hands are their own buckets) write network rows;
    hold'em writes hand-level situations (board, pot, ranges, values) that training maps
    to buckets, so buckets can change without solving again."""

    game: str
    round: int
    situations: int
    shard_size: int = 500
    seed: int = 0
    iterations: int = 1000
    algorithm: str = "dcfr"
    device: str = "cpu"
    #: torch threads of this process (small solves run best on one; run one process per core)
    threads: int = 1
    #: hold'em: the next street's network (TorchScript file with a manifest entry): the river
    #: network for turn situations and the turn network for flop situations (depth-limit
    #: leaves), the flop network for the auxiliary pre-flop targets
    next_net: str | None = None
    #: CFR's updates: alternating (one player per pass) or simultaneous (both from one pass: with a
    #: network at the leaves one network call per iteration instead of two; on turn situations with
    #: the river network, simultaneous updates reach the targets of alternating ones closer per
    #: CPU-second: docs/training.md, "Updates with network leaves")
    alternating: bool = True
    #: how ``next_net`` multiplies: float32 or bfloat16 (:func:`agent.nets.valuenet.resolve_precision`
    #: turns the command line's ``auto`` into one of them before it is recorded); None without a network
    net_precision: str | None = None
    #: auxiliary targets: flops averaged per situation (None: all 22100, the exact average;
    #: fewer: a seeded uniform sample, an unbiased estimate)
    aux_flops: int | None = None
    #: DCFR's alpha, beta and gamma for the solves (algorithm dcfr or dcfr+): :data:`GENERATE_DCFR`
    dcfr_alpha: float = 1.5
    dcfr_beta: float = -math.inf
    dcfr_gamma: float = 4.0
    #: situations per solver call where each would get a lookahead of its own (hold'em turn and
    #: flop; not Leduc's last round, batched its own way): a forest, :mod:`agent.solver.forest`. None:
    #: one at a time on the CPU, on a GPU as many as half its free memory holds
    batch: int | None = None
    #: the fraction of situations whose ranges leave hands out (each possible hand of each player
    #: dropped with probability 1/2, one kept): at re-solving leaves a range holds no mass on the
    #: hands the player folded or never plays that way, which R(S, p) never draws (models/README.md)
    sparse: float = 0.0
    #: turn situations solved to the end: river subgames kept per situation as river data (a sample of
    #: those both players reach, written to the folder's ``river/``: :mod:`agent.training.harvest`); 0: none
    harvest_river: int = 0
    #: hold'em: label the situations with this network's values instead of solving them (data to
    #: distil the network from: :mod:`agent.training.teacher`); None: solved
    teacher: str | None = None
    #: situations drawn per board, each with its own ranges and pot (teacher-labelled data: the board's
    #: bucket lookup, most of a label's cost, is shared); 1: a board each, as solved data is drawn
    per_board: int = 1

    def solver_config(self, dtype: str) -> SolverConfig:
        return SolverConfig(
            algorithm=self.algorithm,
            alternating=self.alternating,
            iterations=self.iterations,
            device=self.device,
            dtype=dtype,  # type: ignore[arg-type]
            alpha=self.dcfr_alpha,
            beta=self.dcfr_beta,
            gamma=self.dcfr_gamma,
        )


#: DCFR parameters (alpha, beta, gamma) generation solves with by default: negative regrets reset
#: every iteration (beta = -inf) and the average weighted by t^4. On 34 turn draws (fold, call,
#: pot, all-in; 1326 hands) 450 such iterations leave the average strategy a little less
#: exploitable than 1000 CFR+ iterations; DCFR's published (1.5, 0, 2) falls just short of that
#: at 500 (docs/training.md: HUNL turn training situations)
GENERATE_DCFR = (GenerateSpec.dcfr_alpha, GenerateSpec.dcfr_beta, GenerateSpec.dcfr_gamma)
#: what data recorded before the DCFR fields existed was solved with (DCFR's published choice)
LEGACY_SPEC_FIELDS = {
    "dcfr_alpha": 1.5,
    "dcfr_beta": 0.0,
    "dcfr_gamma": 2.0,
    "sparse": 0.0,
    "alternating": True,
    "harvest_river": 0,
    "teacher": None,
    "per_board": 1,
}


#: ``--updates`` of the generation commands
UPDATES = ("auto", "alternating", "simultaneous")


def alternating_updates(updates: str, network_leaves: bool) -> bool:
    """Whether ``updates`` (:data:`UPDATES`) means alternating ones: ``auto`` = simultaneous where a
    network is at the leaves (one network call per iteration), alternating otherwise."""
    return updates == "alternating" or (updates == "auto" and not network_leaves)


def format_dcfr(dcfr: tuple[float, float, float]) -> str:
    """``ALPHA,BETA,GAMMA`` as the command lines take it (JSON has no -inf)."""
    return ",".join(f"{x:g}" for x in dcfr)


def parse_dcfr(text: str) -> tuple[float, float, float]:
    """``ALPHA,BETA,GAMMA`` (BETA may be -inf) for the command lines; ValueError if malformed."""
    parts = text.split(",")
    try:
        alpha, beta, gamma = (float(x) for x in parts)
    except ValueError:
        raise ValueError(f"DCFR parameters must be ALPHA,BETA,GAMMA (three numbers, BETA may be -inf), not {text!r}") from None

    Variant("dcfr", alpha=alpha, beta=beta, gamma=gamma)  # checks the values
    return alpha, beta, gamma


def parse_batch(text: str) -> int | None:
    """``--batch``: a positive number of situations per solver call, or ``auto`` (None)."""
    if text.strip().lower() == "auto":
        return None
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"expected a positive whole number or 'auto', got {text!r}") from None
    if value <= 0:
        raise ValueError(f"expected a positive whole number or 'auto', got {text!r}")
    return value


def possible_spent(game: Game, round_: int) -> list[int]:
    """Per-player contributions that can start ``round_`` (limit: enumerated; no-limit: a sample grid)."""
    if game.is_limit:
        amounts = {max(game.blind)}
        for r in range(round_):
            amounts = {a + k * game.raise_size[r] for a in amounts for k in range(game.max_raises[r] + 1)}
        return sorted(amounts)
    return []


def draw_pot(game: Game, round_: int, rng: np.random.Generator) -> int:
    """Pot at the start of ``round_``: uniform over the possible ones (limit), or an interval
    chosen uniformly then a value uniformly inside it (no-limit; all-in pots included)."""
    if game.is_limit:
        return 2 * int(rng.choice(possible_spent(game, round_)))
    stack = min(game.stack)
    low = max(game.blind)
    edges = [low, 2 * low, 4 * low, stack // 4, stack // 2, stack]
    intervals = [(a, b) for a, b in zip(edges, edges[1:]) if b > a] + [(stack, stack)]
    a, b = intervals[int(rng.integers(len(intervals)))]
    return 2 * int(rng.integers(a, b + 1))


@dataclass
class Situation:
    """One training situation at the start of a round: the board, the pot in chips (both players' shares)
    and both players' R(S, p) ranges over the hand space."""

    board: tuple[int, ...]
    pot: int
    ranges: np.ndarray  # [2, H]


def both_all_in(game: Game, sit: Situation) -> bool:
    """The pot holds both stacks: nothing is left to bet, the showdown decides."""
    return all(sit.pot // 2 >= s for s in game.stack)


def draw_situation(
    space: HandSpace, round_: int, rng: np.random.Generator, sparse: float = 0.0, board: tuple[int, ...] | None = None
) -> Situation:
    """A situation at the start of ``round_``: R(S, p) ranges of both players and a pot, on a
    random board (or on ``board``)."""
    game = space.game
    n_board = game.board_cards_through(round_)
    if board is None:
        board = tuple(int(c) for c in rng.choice(np.array(space.deck), n_board, replace=False))
    strength = space.strengths(board) if n_board == game.total_board_cards else _equity_strength(space, board)
    order = strength_order(strength, space.valid(board))
    ranges = np.stack([recursive_range(order, space.size, rng) for _ in range(2)])
    pot = draw_pot(game, round_, rng)
    if sparse > 0 and rng.random() < sparse:  # drawn only then: data without sparse ranges stays as it was
        while True:  # two ranges that can be dealt together
            dropped = np.stack([drop_hands(r, order, rng) for r in ranges])
            if dropped[0] @ space.compatible() @ dropped[1] > 0:
                ranges = dropped
                break
    return Situation(board, pot, ranges)


def drop_hands(range_: np.ndarray, order: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``range_`` with each of the hands ``order`` lists dropped with probability 1/2 (at least one
    kept), renormalised."""
    keep = rng.random(len(order)) < 0.5
    if not keep.any():
        keep[int(rng.integers(len(order)))] = True
    out = np.zeros_like(range_)
    out[order[keep]] = range_[order[keep]]
    return out / out.sum()


def _equity_strength(space: HandSpace, board: tuple[int, ...]) -> np.ndarray:
    if not board:
        return _preflop_strength()

    eq = np.asarray(hand_equities(board), dtype=np.float64)
    return np.where(np.isfinite(eq), eq, -1.0)


@lru_cache(maxsize=1)
def _preflop_strength() -> np.ndarray:
    """Pre-flop strength of each hand: its mean check-down result (-1 to 1, below zero for the
    weaker half) against every hand it can meet, from the shipped pre-flop check-down matrix
    (exact equities take minutes per call)."""

    path, _ = checked_file(HoldemModels().preflop_checkdown, " (deepstack buckets --street preflop builds it)")
    with np.load(path) as z:
        m = z["matrix"].astype(np.float64)
    compatible = HandSpace(load_game("hunl")).compatible()
    return (m * compatible).sum(axis=1) / compatible.sum(axis=1)


def solve_situation(
    space: HandSpace, round_: int, sit: Situation, config: SolverConfig, leaf_values: LeafValueFn | None = None
) -> np.ndarray:
    """``[2, H]`` counterfactual values per unit of pot (normalised ranges, blocked hands 0).
    With ``leaf_values`` the solve stops at the end of ``round_`` (depth-limited: flop
    situations with the turn network); without, it runs to the end of the game."""
    return solve_situation_checked(space, round_, sit, config, check=False, leaf_values=leaf_values)[0]


def solve_situation_checked(
    space: HandSpace,
    round_: int,
    sit: Situation,
    config: SolverConfig,
    check: bool = True,
    leaf_values: LeafValueFn | None = None,
) -> tuple[np.ndarray, float | None]:
    """:func:`solve_situation`, and with ``check`` the exploitability of the solve's average
    strategy as a fraction of the pot (0 for both-all-in situations: nothing to decide).
    Without ``check`` only the average values are kept (no strategy sums: faster, leaner)."""
    game = space.game
    half = sit.pot // 2
    valid = space.valid(sit.board)
    ranges = sit.ranges * valid
    ranges = ranges / ranges.sum(axis=1, keepdims=True)
    if both_all_in(game, sit):
        return _allin_values(space, sit.board, ranges, half) / sit.pot, (0.0 if check else None)
    state = _round_start(game, round_, sit)
    last_round = round_ if leaf_values is not None else None
    sol = solve_ranges(
        state,
        [ranges[0], ranges[1]],
        FCPA,
        config,
        space=space,
        average_strategy=check,
        last_round=last_round,
        leaf_values=leaf_values,
        all_hands=True,  # sparse ranges leave hands out of both: their targets are values, not 0
    )
    values = sol.values_at(0) / sit.pot
    if not check:
        return values, None
    return values, exploitability(sol.solver, sol.result.root_reach)["exploitability"] / sit.pot


def solve_situations(
    space: HandSpace,
    round_: int,
    situations: list[Situation],
    config: SolverConfig,
    batch: int | None = 1,
    leaf_values: LeafValueFn | None = None,
) -> list[np.ndarray]:
    """:func:`solve_situation` for each situation, ``batch`` at a time in one forest solve
    (:func:`agent.solver.forest.solve_forest`); None: one at a time on the CPU, on a GPU as many as
    :func:`agent.solver.forest.memory_budget_rows` allows. One at a time keeps each situation's own
    hand list: the values of data made before forests existed."""
    game = space.game
    last_round = round_ if leaf_values is not None else None
    todo = [i for i, sit in enumerate(situations) if not both_all_in(game, sit)]
    groups = forest_groups(space, round_, [situations[i] for i in todo], config, batch, last_round)
    if groups is None:
        return [solve_situation(space, round_, sit, config, leaf_values) for sit in situations]
    solved = set(todo)
    out = [
        np.empty(0) if i in solved else solve_situation(space, round_, sit, config)  # both all-in: the showdown
        for i, sit in enumerate(situations)
    ]
    for group in groups:
        members = [todo[k] for k in group]
        for i, values in zip(members, solve_in_forest(space, round_, [situations[i] for i in members], config, leaf_values)):
            out[i] = values
    return out


def solve_in_forest(
    space: HandSpace, round_: int, situations: list[Situation], config: SolverConfig, leaf_values: LeafValueFn | None = None
) -> list[np.ndarray]:
    """:func:`solve_situation`'s values for situations (none both all-in) solved in one forest."""
    states, ranges = [], []
    for sit in situations:
        states.append(_round_start(space.game, round_, sit))
        r = sit.ranges * space.valid(sit.board)
        ranges.append(r / r.sum(axis=1, keepdims=True))
    last_round = round_ if leaf_values is not None else None
    values = solve_forest(space, states, ranges, FCPA, config, last_round=last_round, leaf_values=leaf_values)
    return [v / sit.pot for v, sit in zip(values, situations)]


def forest_groups(
    space: HandSpace,
    round_: int,
    situations: list[Situation],
    config: SolverConfig,
    batch: int | None,
    last_round: int | None = None,
) -> list[list[int]] | None:
    """Which of ``situations`` (none both all-in) share a forest: ``batch`` at a time, or (None) as
    many as the device's memory holds by their trees' rows; None where each is solved alone."""
    if batch is None:
        budget = memory_budget_rows(space.size, pick_device(config.device))
        if budget is None:
            return None
        rows = [
            forest_cost_rows(build_tree(_round_start(space.game, round_, sit), FCPA, last_round=last_round), space)
            for sit in situations
        ]
        return pack(rows, budget)
    if batch <= 1:
        return None
    return [list(range(k, min(k + batch, len(situations)))) for k in range(0, len(situations), batch)]


def _round_start(game: Game, round_: int, sit: Situation) -> HandState:
    return HandState.at_round_start(game, round_, (sit.pot // 2, sit.pot // 2), sit.board)


def _allin_values(space: HandSpace, board: tuple[int, ...], ranges: np.ndarray, half: int) -> np.ndarray:
    """Both players all-in: the showdown over every completion of the board."""
    hands = np.nonzero(space.valid(board))[0]
    evaluator = CheckdownEvaluator(space, hands, [board], np.array([[half, half]]), torch.device("cpu"), torch.float64)
    reach = torch.as_tensor(ranges[:, hands], dtype=torch.float64).unsqueeze(1)
    out = np.zeros((2, space.size))
    out[:, hands] = evaluator(reach)[:, 0].numpy()
    return out


def encode(space: HandSpace, sit: Situation, values: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Network input, target and mask rows for a hand-level network (Leduc)."""
    valid = space.valid(sit.board).astype(np.float64)
    ranges = sit.ranges * valid
    ranges = ranges / ranges.sum(axis=1, keepdims=True)
    x = np.concatenate([[sit.pot / pot_scale(space.game)], ranges[0], ranges[1], board_features(space, sit.board)])
    mask = np.concatenate([valid, valid])
    y = np.zeros(2 * space.size) if values is None else np.concatenate([values[0], values[1]]) * mask
    return x.astype(np.float32), y.astype(np.float32), mask.astype(np.float32)


def shard_path(out: Path, index: int) -> Path:
    """The file of shard ``index`` in ``out``; :func:`shard_files` reads exactly these names."""
    return out / f"shard-{index:05d}.npz"


SHARD_NAME = re.compile(r"shard-\d+\.npz")


def shard_files(out: Path) -> list[Path]:
    """The finished shards in ``out``, in order: exactly the names :func:`shard_path` gives, so a
    file left half-written by a killed run (or by older code, ``shard-N.tmp.npz``) is never read."""
    if not out.is_dir():
        return []
    return sorted(p for p in out.iterdir() if SHARD_NAME.fullmatch(p.name))


def is_hand_level(game: Game) -> bool:
    """Games small enough for networks over hands (no buckets): Leduc and friends."""
    return game.deck_size <= 12


def check_harvest(spec: GenerateSpec, game: Game) -> None:
    """Harvesting river subgames needs a hold'em turn solved to the end of the game."""
    if spec.harvest_river < 0:
        raise ValueError(f"harvest_river {spec.harvest_river}: river subgames to keep cannot be negative")
    if spec.harvest_river > 0 and (is_hand_level(game) or spec.round != game.num_rounds - 2 or spec.next_net is not None):
        raise ValueError("harvesting river subgames needs hold'em turn situations solved to the end (no river network)")


def check_labels(spec: GenerateSpec, game: Game) -> None:
    """Teacher-labelled data: hold'em, the teacher's own street, nothing solved beside it; several
    situations per board only for it (solved data keeps a board each)."""
    if spec.per_board < 1:
        raise ValueError(f"per_board {spec.per_board}: at least one situation per board")
    if spec.teacher is None:
        if spec.per_board > 1:
            raise ValueError("several situations per board are for teacher-labelled data (solved data draws a board each)")
        return
    if is_hand_level(game) or spec.next_net is not None or spec.harvest_river > 0:
        raise ValueError("a teacher labels hold'em situations instead of solving them: no next network, no harvest")
    check_teacher(spec.teacher, spec.round, float(sum(game.stack)))


def draw_situations(space: HandSpace, spec: GenerateSpec, rng: np.random.Generator, count: int) -> list[Situation]:
    """``count`` situations of ``spec``, ``spec.per_board`` on each board drawn."""
    situations: list[Situation] = []
    for i in range(count):
        board = None if i % spec.per_board == 0 else situations[-1].board
        situations.append(draw_situation(space, spec.round, rng, spec.sparse, board))
    return situations


def generate_shard(spec: GenerateSpec, index: int, count: int) -> dict[str, np.ndarray]:
    """Draw and solve ``count`` situations of shard ``index`` (seeded by ``[spec.seed, index]``, so a shard
    is the same whenever it is redone) and return its arrays: network rows (Leduc) or situations with
    their values as fractions of the pot (hold'em)."""
    game = load_game(spec.game)
    check_harvest(spec, game)
    check_labels(spec, game)
    space = HandSpace(game)
    rng = np.random.default_rng([spec.seed, index])
    dtype = "float64" if is_hand_level(game) else "float32"
    config = spec.solver_config(dtype)
    situations = draw_situations(space, spec, rng, count)
    if spec.teacher is not None:
        labelled = teacher_values(spec.teacher, space, situations)
        # both all-in: the showdown decides, exactly and cheaply, as in solved data
        solved = [
            solve_situation(space, spec.round, sit, config) if both_all_in(game, sit) else v
            for sit, v in zip(situations, labelled)
        ]
    elif is_hand_level(game) and spec.round == game.num_rounds - 1:
        solved = solve_last_round_batch(space, spec.round, situations, config)
    elif spec.next_net is not None and spec.round == 0:
        solved = [_aux_situation(spec, sit, rng) for sit in situations]
    elif spec.harvest_river > 0:
        pick = np.random.default_rng([spec.seed, index, 1])  # the draws of the situations stay as they were
        pairs = [solve_and_harvest(space, spec.round, sit, config, spec.harvest_river, pick) for sit in situations]
        solved = [values for values, _ in pairs]
        river = [rows for _, rows in pairs]
    else:
        leaf = (
            _next_street_leaf(spec.game, spec.next_net, spec.round, spec.net_precision or "float32")
            if spec.next_net is not None
            else None
        )
        solved = solve_situations(space, spec.round, situations, config, spec.batch, leaf)
    rows: dict[str, list[np.ndarray]] = {}
    for sit, values in zip(situations, solved):
        if is_hand_level(game):
            x, y, m = encode(space, sit, values)
            item = {"inputs": x, "targets": y, "masks": m}
        else:
            board = np.full(game.total_board_cards, -1, dtype=np.int8)
            board[: len(sit.board)] = sit.board
            item = {
                "boards": board,
                "pots": np.array(sit.pot, dtype=np.int32),
                "ranges": sit.ranges.astype(np.float32),
                "values": values.astype(np.float32),
            }
        for key, value in item.items():
            rows.setdefault(key, []).append(value)
    arrays = {key: np.stack(values) for key, values in rows.items()}
    if spec.harvest_river > 0:
        for key in river[0]:
            arrays[harvest.PREFIX + key] = np.concatenate([r[key] for r in river])
        arrays[harvest.PREFIX + "source"] = np.repeat(np.arange(len(river), dtype=np.int32), [len(r["pots"]) for r in river])
    return arrays


def solve_and_harvest(
    space: HandSpace, round_: int, sit: Situation, config: SolverConfig, keep: int, rng: np.random.Generator
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """:func:`solve_situation`'s values (solved to the end of the game) and up to ``keep`` of the
    river subgames inside the solve as river data (:func:`agent.training.harvest.harvest_river`)."""
    game = space.game
    if both_all_in(game, sit):  # nothing is decided: no river subgame to keep
        return solve_situation(space, round_, sit, config), harvest.empty_rows(game.total_board_cards, space.size)
    ranges = sit.ranges * space.valid(sit.board)
    ranges = ranges / ranges.sum(axis=1, keepdims=True)
    sol = solve_ranges(_round_start(game, round_, sit), [ranges[0], ranges[1]], FCPA, config, space=space, all_hands=True)
    return sol.values_at(0) / sit.pot, harvest.harvest_river(sol, keep, rng)


def load_next_net(path: str, street: str) -> tuple[torch.jit.ScriptModule, dict]:
    """The network of ``street`` at ``path``, checked against its manifest entry (and refused,
    with a message naming it, when it is missing, damaged or made for another street)."""

    net, entry = load_value_net(path)
    if entry.get("street") != street:
        raise ModelError(f"{path}: this needs the {street} network, this one is for {entry.get('street')!r}")
    return net, entry


#: the network at the depth limit of each street's situations
NEXT_STREET = {"turn": "river", "flop": "turn", "preflop-aux": "flop"}


@lru_cache(maxsize=2)
def _next_street_leaf(game_name: str, net_path: str, round_: int, precision: str = "float32") -> LeafValueFn:
    """The next street's network as depth-limit leaves (loaded once per process): the river
    network at the end of turn solves (its river abstraction from its manifest entry), the turn
    network at the end of flop solves (the bucket table its manifest entry names)."""

    if round_ == 2:
        net, entry = load_next_net(net_path, "river")
        return BucketNetLeafValues(net, load_game(game_name), RiverStrength(int(entry["river_buckets"])), precision)
    net, entry = load_next_net(net_path, "turn")
    table = BucketTable.load(checked_file(entry["buckets_file"])[0])
    return BucketNetLeafValues(net, load_game(game_name), table, precision)


@lru_cache(maxsize=1)
def _flop_network(net_path: str) -> tuple[torch.jit.ScriptModule, FlopBuckets]:
    net, entry = load_next_net(net_path, "flop")
    return net, FlopBuckets(BucketTable.load(checked_file(entry["buckets_file"])[0]))


def _aux_situation(spec: GenerateSpec, sit: Situation, rng: np.random.Generator) -> np.ndarray:
    """Auxiliary target: the flop network averaged over the flops (all, or a seeded sample)."""

    game = load_game(spec.game)
    net, flops = _flop_network(str(spec.next_net))
    ranges = sit.ranges / sit.ranges.sum(axis=1, keepdims=True)
    rows = None if spec.aux_flops is None else np.sort(rng.choice(len(ALL_FLOPS), spec.aux_flops, replace=False))
    run = NetOnDevices(net, spec.net_precision or "float32")
    return aux_values(run, flops, ranges, float(sit.pot), float(sum(game.stack)), flop_rows=rows)


def solve_last_round_batch(space: HandSpace, round_: int, situations: list[Situation], config: SolverConfig) -> list[np.ndarray]:
    """Like :func:`solve_situation` for every situation, all solved in one batched CFR
    (:mod:`agent.solver.batched`); both-all-in situations are valued by their showdown."""
    game = space.game
    out: list[np.ndarray | None] = [None] * len(situations)
    spots, where = [], []
    for i, sit in enumerate(situations):
        half = sit.pot // 2
        valid = space.valid(sit.board)
        ranges = sit.ranges * valid
        ranges = ranges / ranges.sum(axis=1, keepdims=True)
        if both_all_in(game, sit):
            out[i] = _allin_values(space, sit.board, ranges, half) / sit.pot
            continue
        spots.append(BatchSpot(HandState.at_round_start(game, round_, (half, half), sit.board), ranges))
        where.append(i)
    if spots:
        values = solve_batch(space, spots, FCPA, config.variant(), config.iterations)
        for i, v in zip(where, values):
            out[i] = v / situations[i].pot
    return out  # type: ignore[return-value]


def timed_shard(spec: GenerateSpec, index: int, count: int) -> tuple[dict[str, np.ndarray], float]:
    """:func:`generate_shard` and the seconds it took where it ran (recorded in the shard's
    metadata: the throughput of any run, local or on a cluster, can be read back from its shards)."""
    start = time.perf_counter()
    arrays = generate_shard(spec, index, count)
    return arrays, time.perf_counter() - start


def write_shard(out: Path, index: int, arrays: dict[str, np.ndarray], meta: dict) -> None:
    """Shard ``index`` of ``out``; rows harvested from it go to the same shard of ``out/river``
    first, so a shard that exists has its harvest beside it (a killed run redoes both)."""
    own, river = harvest.split(arrays)
    if river is not None:
        folder = out / harvest.FOLDER
        folder.mkdir(exist_ok=True)
        write_atomic(shard_path(folder, index), river, {**_harvest_meta(meta), "shard": index})
    write_atomic(shard_path(out, index), own, meta)


def _harvest_meta(meta: dict) -> dict:
    """What a harvested river folder records: river data (round 3 of the game), harvested from the turn
    data described by ``meta``. No seed of its own: the exact river data of any seed pools with it."""
    spec = meta["spec"]
    river_spec = {"game": spec["game"], "round": spec["round"] + 1, "harvested_from": spec, "min_reach": harvest.MIN_REACH}
    return {"spec": river_spec, **{k: meta[k] for k in ("code_version", "command") if k in meta}}


def _start_harvest(folder: Path, meta: dict) -> None:
    """Record what the harvested folder holds; refuse to add rows kept by another threshold."""
    record = folder / "generate.json"
    if record.exists() and shard_files(folder):
        try:
            old = json.loads(record.read_text()).get("spec", {}).get("min_reach")
        except (OSError, json.JSONDecodeError, AttributeError) as exc:
            raise DataFolderError(f"{record}: unreadable ({exc})") from exc
        if old != harvest.MIN_REACH:
            raise DataFolderError(
                f"{folder} holds river rows kept at a reach of at least {old}, this code keeps {harvest.MIN_REACH}: "
                "resuming would mix them; give another --out"
            )
    folder.mkdir(exist_ok=True)
    write_json(record, meta)


def write_atomic(path: Path, arrays: dict[str, np.ndarray], meta: dict) -> None:
    """Written under a hidden name, then renamed: a run killed mid-write leaves no shard."""
    save_npz(path, compressed=False, meta=np.array(json.dumps(meta)), **arrays)


#: spec fields a resumed run may change: how many situations (shards are a function of the seed
#: and their index, so asking for more extends the same sequence), where the solves run and how
#: many share a solver call (a batch changes values only by rounding: :mod:`agent.solver.forest`)
RESUMABLE_FIELDS = ("situations", "device", "threads", "batch")
#: a recorded field as the command line sets it, where the two names differ
OPTION_OF = {
    "round": "round (--round or --street)",
    "alternating": "alternating updates (--updates)",
    "next_net": "next street's network (--river-net, --turn-net or --flop-net)",
    "shard_size": "--shard-size",
    "harvest_river": "--harvest-river",
}


class DataFolderError(ValueError):
    """An output folder holds data generated with other settings (resuming would mix them)."""


def _recorded_meta(out: Path) -> dict | None:
    """What generated the data already in ``out``: its ``generate.json``, else (older or
    hand-copied folders) the metadata of a shard; None for a folder without data."""
    record = out / "generate.json"
    # a record without shards is a run that failed before its first shard: nothing to mix with
    if record.exists() and shard_files(out):
        try:
            return json.loads(record.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise DataFolderError(
                f"{record}: unreadable ({exc}); move it away only if the shards beside it "
                f"were made with the settings of this command"
            ) from exc
    for shard in shard_files(out):
        try:
            with np.load(shard) as z:
                return json.loads(str(z["meta"]))
        except Exception as exc:  # noqa: BLE001 - any unreadable shard: refuse, never overwrite
            raise DataFolderError(f"{shard}: unreadable shard ({exc})") from exc
    return None


def spec_record(spec: GenerateSpec | dict) -> dict:
    """The spec as recorded in ``generate.json`` and the shards: infinite numbers (DCFR's beta)
    as text, since JSON has none."""
    fields = asdict(spec) if isinstance(spec, GenerateSpec) else dict(spec)
    return {k: (str(v) if isinstance(v, float) and not math.isfinite(v) else v) for k, v in fields.items()}


def _sha256_or_none(path: str | None) -> str | None:
    """Which network made (or labelled) the targets: the path alone may later hold a retrained one."""
    if path is None:
        return None
    try:
        return checked_file(path)[1]["sha256"]
    except ModelError:
        return None  # the solves (or the labels) refuse it, with the reason


def _check_same_data(
    out: Path, recorded: dict, spec: GenerateSpec, next_net_sha256: str | None, teacher_sha256: str | None = None
) -> None:
    new = spec_record(spec)
    recorded_spec = recorded.get("spec", {})
    # older records lack the DCFR fields, and the precision (their networks multiplied in float32)
    legacy = {**LEGACY_SPEC_FIELDS, "net_precision": "float32" if recorded_spec.get("next_net") else None}
    old = spec_record({**legacy, **recorded_spec})
    same_file = {  # a network named by another path (relative, absolute) is the same one when its bytes are
        "next_net": recorded.get("next_net_sha256") is not None and recorded.get("next_net_sha256") == next_net_sha256,
        "teacher": recorded.get("teacher_sha256") is not None and recorded.get("teacher_sha256") == teacher_sha256,
    }
    differ = [
        f"{OPTION_OF.get(key, key)} {old.get(key)!r} -> {new[key]!r}"
        for key in new
        if key not in RESUMABLE_FIELDS and old.get(key) != new[key] and not same_file.get(key)
    ]
    old_sha = recorded.get("next_net_sha256")
    if old_sha is not None and next_net_sha256 is not None and old_sha != next_net_sha256:
        differ.append(f"next network sha256 {old_sha[:12]}... -> {next_net_sha256[:12]}... (retrained)")
    old_teacher = recorded.get("teacher_sha256")
    if old_teacher is not None and teacher_sha256 is not None and old_teacher != teacher_sha256:
        differ.append(f"teacher sha256 {old_teacher[:12]}... -> {teacher_sha256[:12]}... (retrained)")
    if differ:
        raise DataFolderError(
            f"{out} holds data generated with other settings ({'; '.join(differ)}); "
            f"resuming would mix them: give another --out, or the folder's settings"
        )


def start_output(spec: GenerateSpec, out: Path, command: str | None) -> dict:
    """Create ``out`` (or resume it), record what generates it (``generate.json``) and return
    the metadata every shard carries.

    A folder that already holds data is resumed only with the same settings (any number of
    situations): otherwise :class:`DataFolderError`. Each run is appended to the record's
    ``runs``; the first run's command and code version stay its ``command`` and
    ``code_version`` (and a hand-written ``note`` is kept)."""
    recorded = _recorded_meta(out) if out.exists() else None
    next_net_sha256 = _sha256_or_none(spec.next_net)
    teacher_sha256 = _sha256_or_none(spec.teacher)
    if recorded is not None:
        _check_same_data(out, recorded, spec, next_net_sha256, teacher_sha256)
    out.mkdir(parents=True, exist_ok=True)
    run = {
        "command": command or command_line(),
        "code_version": code_version(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "situations": spec.situations,
    }
    meta_base = {"spec": spec_record(spec), "code_version": run["code_version"], "command": run["command"]}
    if next_net_sha256 is not None:
        meta_base["next_net_sha256"] = next_net_sha256
    if teacher_sha256 is not None:
        meta_base["teacher_sha256"] = teacher_sha256
        # what the teacher learned from, so that no test folder of those seeds passes as held out
        meta_base["teacher_seeds"] = sorted(trained_seeds(checked_file(spec.teacher)[1]))
    recorded = recorded or {}
    # a record from before `runs` existed (or a shard's metadata) counts as one earlier run
    earlier = recorded.get("runs") or [{k: recorded[k] for k in ("command", "code_version") if k in recorded}]
    kept = {k: recorded[k] for k in ("command", "code_version", "note") if k in recorded}
    record = {**meta_base, **kept, "runs": [r for r in earlier if r] + [run]}
    # the folder's size is the largest any run asked for (a run asking fewer adds nothing): what a
    # network trained on it records as its data
    asked = max([spec.situations] + [int(r["situations"]) for r in record["runs"] if isinstance(r.get("situations"), int)])
    record["spec"] = {**record["spec"], "situations": asked}
    write_json(out / "generate.json", record)
    if spec.harvest_river > 0:
        _start_harvest(out / harvest.FOLDER, _harvest_meta(record))
    return meta_base


def shard_count(path: Path) -> int | None:
    """Situations a shard holds, from its metadata; None where the file is missing or unreadable
    (cut short, damaged) or records no count (shards of older code: taken as whole)."""
    if not path.exists():
        return None
    try:
        with np.load(path) as z:
            count = json.loads(str(z["meta"])).get("count")
    except NPZ_ERRORS:
        return None
    return int(count) if isinstance(count, int) else -1


def missing_shards(spec: GenerateSpec, out: Path) -> list[tuple[int, int]]:
    """``(index, count)`` of the shards to write: those not written yet, unreadable ones, and the
    last shard of a shorter run that holds fewer situations than this run's shard of that index
    (a shard is a function of the seed and its index, so rewriting it gives what one run gives)."""
    n_shards = -(-spec.situations // spec.shard_size)
    todo = []
    for i in range(n_shards):
        count = min(spec.shard_size, spec.situations - i * spec.shard_size)
        have = shard_count(shard_path(out, i))
        if have is None or 0 <= have < count:
            todo.append((i, count))
    return todo


def generate(spec: GenerateSpec, out: Path, progress: bool = True, command: str | None = None) -> dict[str, float]:
    """Write the shards of ``spec`` into ``out`` (existing shards are kept: resuming)."""
    meta_base = start_output(spec, out, command)
    torch.set_num_threads(spec.threads)
    todo = missing_shards(spec, out)
    bar = tqdm(
        total=spec.situations,
        desc=f"generate {spec.game}",
        unit="sit",
        disable=not progress,
        initial=spec.situations - sum(c for _, c in todo),
    )
    start = time.perf_counter()
    made = 0
    for i, count in todo:
        arrays, seconds = timed_shard(spec, i, count)
        write_shard(out, i, arrays, {**meta_base, "shard": i, "count": count, "seconds": round(seconds, 3)})
        made += count
        bar.update(count)
        bar.set_postfix(sit_per_s=f"{made / (time.perf_counter() - start):.2f}")
    bar.close()
    elapsed = time.perf_counter() - start
    return {"situations": float(made), "seconds": elapsed, "situations_per_s": made / elapsed if elapsed > 0 else 0.0}


def load_shards(data_dir: Path) -> Iterator[dict[str, np.ndarray]]:
    """Each finished shard's arrays in ``data_dir``, in order; a missing, unreadable or inconsistent shard
    is an error that names it."""
    paths = shard_files(data_dir)
    if not paths:
        raise FileNotFoundError(f"{data_dir}: no shard-*.npz files (run deepstack generate first)")
    for p in paths:
        try:
            with np.load(p) as z:
                arrays = {k: z[k] for k in z.files if k != "meta"}
        except NPZ_ERRORS as exc:
            raise ValueError(f"{p}: unreadable shard ({exc}); delete it and run deepstack generate again to redo it") from None
        for harvested in (False, True):  # a shard's rows, and the river rows harvested beside them
            rows = {k: len(v) for k, v in arrays.items() if v.ndim and k.startswith(harvest.PREFIX) == harvested}
            if len(set(rows.values())) > 1:
                counts = ", ".join(f"{k} {n}" for k, n in rows.items())
                raise ValueError(
                    f"{p}: its arrays have different numbers of rows ({counts}); not a shard deepstack generate wrote"
                )
        yield arrays
