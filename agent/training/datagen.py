"""Training data for counterfactual value networks: random situations, solved, written as shards.

The run's settings are :mod:`agent.training.generate_spec`, the draws
:mod:`agent.training.situations`, the folder of shards :mod:`agent.training.data_folder`.
A situation is a public state at the start of a round (board, pot) and one range per
player from R(S, p); its targets are both players' counterfactual values after solving
it, as fractions of the pot, with both ranges normalised. Shards of ``shard_size``
situations are written atomically (temporary file, then rename) and are a function of
``(seed, shard index)`` only, so an interrupted run resumes where it stopped and gives
the same files as an uninterrupted one.
"""

from __future__ import annotations

import time
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from agent.leaves.checkdown import CheckdownEvaluator
from agent.leaves.holdem import BucketNetLeafValues
from agent.nets.buckets import BucketTable, RiverStrength
from agent.nets.encoding import board_features, pot_scale
from agent.nets.manifest import ModelError, checked_file, load_value_net
from agent.nets.valuenet import NetOnDevices
from agent.solver.batched import BatchSpot, solve_batch
from agent.solver.cfr import LeafValueFn, exploitability
from agent.solver.forest import forest_cost_rows, memory_budget_rows, pack, solve_forest
from agent.solver.handspace import HandSpace
from agent.solver.resolve import SolverConfig, pick_device, solve_ranges
from agent.solver.tree import FCPA, build_tree
from agent.training import harvest
from agent.training.aux_targets import ALL_FLOPS, FlopBuckets, aux_values
from agent.training.data_folder import missing_shards, start_output, write_shard
from agent.training.generate_spec import GenerateSpec
from agent.training.situations import Situation, both_all_in, draw_situations
from agent.training.teacher import check_teacher, teacher_values
from protocol.gamedef import Game, load_game
from protocol.state import HandState


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


def generate(spec: GenerateSpec, out: Path, progress: bool = True, command: str | None = None) -> dict[str, float]:
    """Write the shards of ``spec`` into ``out`` (existing shards are kept: resuming)."""
    meta_base = start_output(spec, out, command)
    torch.set_num_threads(spec.threads)
    todo = missing_shards(spec, out)
    start = time.perf_counter()
    made = 0
    with tqdm(  # closed before an error is shown (left open, it printed itself again after the message)
        total=spec.situations,
        desc=f"generate {spec.game}",
        unit="sit",
        disable=not progress,
        initial=spec.situations - sum(c for _, c in todo),
    ) as bar:
        for i, count in todo:
            arrays, seconds = timed_shard(spec, i, count)
            write_shard(out, i, arrays, {**meta_base, "shard": i, "count": count, "seconds": round(seconds, 3)})
            made += count
            bar.update(count)
            bar.set_postfix(sit_per_s=f"{made / (time.perf_counter() - start):.2f}")
    elapsed = time.perf_counter() - start
    return {"situations": float(made), "seconds": elapsed, "situations_per_s": made / elapsed if elapsed > 0 else 0.0}
