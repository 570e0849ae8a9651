"""The fused C CFR kernels (native/src/cfr_kernels.c) against the solver's torch phases."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agent.solver import cfr
from agent.solver.cfr import Solver
from agent.solver.gadget import Gadget
from agent.solver.handspace import HandSpace
from agent.solver.resolve import SolverConfig, prepare
from agent.solver.tree import DEEPSTACK_SIZING
from agent.solver.variant import Variant
from native import cfr_kernels
from native.cards import cards_from_str
from native.cfr_program import IterationProgram
from native.kernel_args import float_ptr, index_ptr, lib
from protocol.gamedef import Game
from protocol.state import HandState

SIZING = [DEEPSTACK_SIZING[r] for r in ("preflop", "flop", "turn", "river")]


def _solver(
    hunl: Game, board: str, native: bool, algorithm: str, seed: int = 0, alternating: bool = False
) -> tuple[Solver, torch.Tensor]:
    space = HandSpace(hunl)
    cards = cards_from_str(board)
    state = HandState.at_round_start(hunl, len(cards) - 2, (300, 300), cards)
    rng = np.random.default_rng(seed)
    hands = np.sort(rng.choice(np.flatnonzero(space.valid(cards)), 120, replace=False))
    _, la = prepare(state, space, hands, SIZING, SolverConfig(device="cpu"))
    variant = Variant(algorithm=algorithm, skip=2, alternating=alternating)
    reach = torch.as_tensor(rng.random((2, len(hands))), dtype=torch.float32)
    reach[:, rng.random(len(hands)) < 0.2] = 0  # hands out of the range
    return Solver(la, variant, native=native), reach


@pytest.mark.parametrize(("board", "algorithm"), [("QsJh2h8d3c", "dcfr"), ("QsJh2h8d", "hybrid"), ("Ks7d2c", "cfr+")])
def test_native_phases_match_torch(hunl: Game, board: str, algorithm: str) -> None:
    """A few iterations (river, turn with its chance nodes, flop to the end of the round with
    check-down leaves left out): every buffer the phases write agrees with the torch path."""
    if len(cards_from_str(board)) == 3:
        board = board + "4h"  # keep the test tree small: a turn board
    a, reach = _solver(hunl, board, True, algorithm)
    b, _ = _solver(hunl, board, False, algorithm)
    assert a._kernels is not None and b._kernels is None
    assert a._no_zeroing  # the lookahead's layout lets the C backward pass write every parent row
    ra = a.solve(reach, 6)
    rb = b.solve(reach, 6)
    for name in ("regrets", "strategy_sum", "reach", "values", "table"):
        x, y = getattr(a, name), getattr(b, name)
        scale = 1 + float(y.abs().max())
        assert float((x - y).abs().max()) <= 1e-4 * scale, name
    scale = 1 + float(rb.average_values.abs().max())
    assert float((ra.average_values - rb.average_values).abs().max()) <= 1e-5 * scale


@pytest.mark.parametrize(("board", "algorithm"), [("QsJh2h8d3c", "dcfr"), ("QsJh2h8d", "cfr+"), ("QsJh2h8d", "dcfr")])
def test_interleaved_phases_equal_the_phases_one_after_another(
    hunl: Game, board: str, algorithm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Alternating updates with the C kernels evaluate each depth's terminal rows as soon as the
    forward pass has written the opponent's reach at their parents, and update each depth's
    regrets as soon as the backward pass has its values: bit for bit what the phases give run one
    after another.
    (Only trees larger than the caches do so; this small one is made to.)"""
    small, _ = _solver(hunl, board, True, algorithm, alternating=True)
    assert small._terminal_by_depth is None  # below INTERLEAVE_MIN_BYTES: the phases one after another
    monkeypatch.setattr(cfr, "INTERLEAVE_MIN_BYTES", 0)
    a, reach = _solver(hunl, board, True, algorithm, alternating=True)
    b, _ = _solver(hunl, board, True, algorithm, alternating=True)
    assert a._terminal_by_depth is not None and a._kernels.interleaves_regrets
    assert sum(len(fns) for fns in a._terminal_by_depth[0]) > 2  # terminal rows at several depths
    b._terminal_by_depth = None  # the phases one after another
    ra, rb = a.solve(reach, 7), b.solve(reach, 7)
    for name in ("regrets", "strategy_sum", "values", "table", "values_sum", "reach_sum"):
        assert torch.equal(getattr(a, name), getattr(b, name)), name
    # the interleaved solver forms the reach at fold and showdown rows as it reads it: not stored
    inner = torch.ones(a.la.num_rows, dtype=torch.bool)
    inner[torch.cat([a.la.fold_rows, a.la.showdown_rows])] = False
    assert torch.equal(a.reach[:, inner], b.reach[:, inner])
    assert not torch.equal(a.reach[:, ~inner], b.reach[:, ~inner])
    assert a.weight_sum == b.weight_sum > 0
    assert torch.equal(ra.average_values, rb.average_values)
    assert torch.equal(ra.average_strategy, rb.average_strategy)


def test_native_kernels_are_used_only_where_they_apply(hunl: Game) -> None:
    space = HandSpace(hunl)
    cards = cards_from_str("QsJh2h8d3c")
    state = HandState.at_round_start(hunl, 3, (300, 300), cards)
    hands = np.flatnonzero(space.valid(cards))[:50]
    _, la64 = prepare(state, space, hands, SIZING, SolverConfig(device="cpu", dtype="float64"))
    assert Solver(la64)._kernels is None  # float64: the torch phases
    with pytest.raises(ValueError, match="float32 lookahead on the CPU"):
        Solver(la64, native=True)


def test_bad_arguments_raise_value_errors_not_crashes() -> None:
    H = 4
    parent = torch.ones(2, H)
    table = torch.ones(3, H)
    out = torch.zeros(3, H)
    ok = torch.tensor([0, 1, 1])
    cfr_kernels.forward(out, parent, ok, table, torch.tensor([0, 2, 1]))
    torch.testing.assert_close(out, torch.ones(3, H))
    out.zero_()
    with pytest.raises(ValueError):  # parent index out of range: nothing written
        cfr_kernels.forward(out, parent, torch.tensor([0, 5, 1]), table, torch.tensor([0, 2, 1]))
    assert float(out.abs().sum()) == 0
    with pytest.raises(ValueError):  # negative table index
        cfr_kernels.forward(out, parent, ok, table, torch.tensor([0, -1, 1]))
    with pytest.raises(ValueError):  # wrong dtypes
        cfr_kernels.forward(out.double(), parent, ok, table, ok)
    with pytest.raises(ValueError):
        cfr_kernels.forward(out, parent, ok.int(), table, ok)


@pytest.mark.parametrize("floor", [True, False])
def test_fused_regrets_strategy_equals_the_two_kernels(floor: bool) -> None:
    """Bit for bit on the valid actions; the invalid ones are not touched (a solver keeps 0 there)."""
    g = torch.Generator().manual_seed(3)
    m, A, H, N = 7, 4, 300, 20  # H > 256: more than one chunk of hands
    values = torch.randn(N, H, generator=g)
    rows = torch.randint(0, N, (m,), generator=g)
    children = torch.randint(0, N, (m, A), generator=g)
    valid = (torch.rand(m, A, generator=g) < 0.7).float()
    valid[0] = 0  # a decision with no valid action
    regrets = torch.randn(m, A, H, generator=g)
    regrets[2, :, :5] = -1  # hands with no positive regret: uniform
    sentinel = 12345.0
    fused_r, fused_s = regrets.clone(), torch.full((m, A, H), sentinel)
    two_r, two_s = regrets.clone(), torch.empty(m, A, H)
    pos, neg = 0.9, 0.4
    cfr_kernels.regrets(two_r, values, rows, children, valid, floor=floor, pos=pos, neg=neg)
    cfr_kernels.strategy(two_s, two_r, valid)
    cfr_kernels.regrets_strategy(fused_r, fused_s, values, rows, children, valid, floor=floor, pos=pos, neg=neg)
    on = valid.bool()
    assert torch.equal(fused_r[on], two_r[on]) and torch.equal(fused_s[on], two_s[on])
    assert torch.equal(fused_r[~on], regrets[~on]) and bool((fused_s[~on] == sentinel).all())
    with pytest.raises(ValueError):  # a child row out of range: nothing written
        cfr_kernels.regrets_strategy(fused_r, fused_s, values, rows, children + N, valid, floor=floor)


def test_backward_assign_writes_parents_without_zeroing() -> None:
    g = torch.Generator().manual_seed(4)
    H = 70
    child = torch.randn(6, H, generator=g)
    table = torch.rand(3, H, generator=g)
    src = torch.tensor([0, 1, 2, 0, 1, 2])
    weight = torch.rand(6, generator=g)
    parent_local = torch.tensor([0, 0, 1, 1, 1, 3])  # parent 2 has no children: left as it is
    expected = torch.zeros(4, H)
    cfr_kernels.backward(expected, child, parent_local, table, src, weight)
    dst = torch.full((4, H), 7.0)  # stale values of an earlier pass
    cfr_kernels.backward(dst, child, parent_local, table, src, weight, assign=True)
    assert torch.equal(dst[[0, 1, 3]], expected[[0, 1, 3]]) and bool((dst[2] == 7).all())
    with pytest.raises(ValueError, match="one run"):  # children of a parent split in two runs
        cfr_kernels.backward(dst, child, torch.tensor([0, 1, 0, 1, 1, 3]), table, src, weight, assign=True)


def test_parents_are_assigned_only_when_every_row_is_written(hunl: Game) -> None:
    """A row that is neither terminal, leaf nor parent would keep an earlier pass's values:
    then the solver zeroes the values before each pass, as the torch path does."""
    from types import SimpleNamespace

    from native.solver_kernels import _parents_assignable

    a, _ = _solver(hunl, "QsJh2h8d3c", True, "dcfr")
    la = a.la
    assert _parents_assignable(la)
    empty = torch.zeros(0, dtype=torch.long)
    no_showdowns = SimpleNamespace(
        num_rows=la.num_rows,
        fold_rows=la.fold_rows,
        showdown_rows=empty,
        leaves=la.leaves,
        transitions=la.transitions,
        depth_slices=la.depth_slices,
    )
    assert not _parents_assignable(no_showdowns)


def test_solver_results_do_not_depend_on_the_kernel_threads() -> None:
    """The turn benchmark spot, 12 iterations, with the kernels on 1 and on 3 threads (the
    pool's workers share the large calls): the same strategy and values, bit for bit."""
    from pathlib import Path

    from agent.cli.solve import DEFAULT_SPOTS
    from agent.solver.resolve import SolverConfig, solve_ranges
    from agent.solver.spots import load_spots

    spot = load_spots(Path(DEFAULT_SPOTS))[0]["turn"]
    before = torch.get_num_threads()
    results = []
    try:
        for threads in (1, 3):
            torch.set_num_threads(threads)
            sol = solve_ranges(spot.state(), list(spot.ranges), spot.sizing, SolverConfig(iterations=12, device="cpu"))
            results.append((sol.result.average_strategy, sol.result.average_values))
    finally:
        torch.set_num_threads(before)
    (s1, v1), (s3, v3) = results
    assert torch.equal(s1, s3) and torch.equal(v1, v3)


@pytest.mark.parametrize(("board", "algorithm"), [("QsJh2h8d3c", "dcfr"), ("QsJh2h8d", "cfr+"), ("QsJh2h8d", "hybrid")])
def test_iteration_program_equals_the_phases_called_one_by_one(hunl: Game, board: str, algorithm: str) -> None:
    """An alternating iteration replayed as one C call (ds_cfr_program) writes what the phases
    called from Python write, bit for bit, including the reach and value sums and the weights."""
    a, reach = _solver(hunl, board, True, algorithm, alternating=True)
    b, _ = _solver(hunl, board, True, algorithm, alternating=True)
    b.replays_iterations = False
    ra, rb = a.solve(reach, 5), b.solve(reach, 5)
    assert a._program is not None and len(a._program) > 10 and b._program is None
    ra, rb = a.solve(reach, 4), b.solve(reach, 4)  # a second call goes on from the first
    for name in ("regrets", "strategy_sum", "values", "table", "values_sum", "reach_sum", "reach"):
        assert torch.equal(getattr(a, name), getattr(b, name)), name
    assert a.weight_sum == b.weight_sum > 0 and a.iterations_done == b.iterations_done == 9
    assert torch.equal(ra.average_values, rb.average_values)
    assert torch.equal(ra.average_strategy, rb.average_strategy)


def test_iteration_program_reports_the_failing_op() -> None:
    """A bad index in a replayed op is found by its kernel before anything is written: a
    ValueError naming the op, not a crash."""
    H = 4
    parent, table, out = torch.ones(2, H), torch.ones(3, H), torch.zeros(2, H)
    pl, src = torch.tensor([0, 5]), torch.tensor([0, 1])  # parent row 5 of 2
    prog = IterationProgram(threads=1)
    prog.add("copy", lib.DS_OP_COPY, (H,), (float_ptr(parent), float_ptr(out)))
    prog.add(
        "forward",
        lib.DS_OP_FORWARD,
        (2, H, 2, 3),
        tuple(map(index_ptr, (pl, src))) + (float_ptr(parent), float_ptr(table), float_ptr(out)),
    )
    with pytest.raises(ValueError, match=r"forward \(op 1\)"):
        prog.run()
    assert torch.equal(out[0], parent[0]) and not out[1].any()  # the copy ran, the forward wrote nothing


@pytest.mark.parametrize("board", ["QsJh2h8d3c", "QsJh2h8d"])
def test_native_best_response_matches_torch(hunl: Game, board: str) -> None:
    """Best responses with the C max kernel (ds_cfr_max_rows) against the torch path, on the
    average strategy of a few iterations: the same exploitability."""
    a, reach = _solver(hunl, board, True, "dcfr")
    b, _ = _solver(hunl, board, False, "dcfr")
    a.solve(reach, 6)
    b.solve(reach, 6)
    strategy = b.average_strategy()
    ea, eb = cfr.exploitability(a, reach, strategy), cfr.exploitability(b, reach, strategy)
    for key in ("br0", "br1", "value0", "value1", "exploitability"):
        assert ea[key] == pytest.approx(eb[key], rel=1e-4, abs=1e-4), key
    for p in range(2):
        x, y = a.best_response_values(reach, strategy, p), b.best_response_values(reach, strategy, p)
        assert float((x - y).abs().max()) <= 1e-4 * (1 + float(y.abs().max()))


class _RecordingLeaves:
    """Check-down leaf values that also keep averages (``track_average``), recording the calls:
    the solver's Python work between the replayed kernels, in the order it happened."""

    def __init__(self) -> None:
        from agent.leaves.equity_matrix import CheckdownMatrices
        from agent.leaves.holdem import CheckdownLeafValues

        self.inner = CheckdownLeafValues(CheckdownMatrices())
        self.calls: list[tuple] = []

    def __call__(self, reach: torch.Tensor, leaves, la) -> torch.Tensor:
        self.calls.append(("values", float(reach.sum())))
        return self.inner(reach, leaves, la)

    def track_average(self, la, player: int, weight: float) -> None:
        self.calls.append(("track", player, weight))


def test_iteration_program_with_leaves_and_a_gadget_equals_the_phases(hunl: Game) -> None:
    """A turn re-solve ending at check-down leaves, with the re-solving gadget for player 1: the
    replayed kernels stop for the leaf values, the gadget's update and the leaf averages, and
    give what the phases called one by one give, bit for bit."""
    space = HandSpace(hunl)
    cards = cards_from_str("QsJh2h8d")
    state = HandState.at_round_start(hunl, 2, (300, 300), cards)
    rng = np.random.default_rng(3)
    hands = np.sort(rng.choice(np.flatnonzero(space.valid(cards)), 80, replace=False))
    runs = []
    for replay in (True, False):
        _, la = prepare(state, space, hands, SIZING, SolverConfig(device="cpu"), last_round=2)
        assert len(la.leaves.rows)
        leaves = _RecordingLeaves()
        solver = Solver(la, Variant(algorithm="dcfr", alternating=True), leaf_values=leaves)
        solver.replays_iterations = replay
        gen = torch.Generator().manual_seed(5)
        reach = torch.rand(2, len(hands), generator=gen)
        gadget = Gadget(player=1, cfvs=torch.rand(len(hands), generator=gen) - 0.5, prior=torch.ones(len(hands)))
        result = solver.solve(reach, 6, gadget=gadget)
        assert (solver._program is not None) == replay
        runs.append((solver, result, gadget, leaves.calls))
    (a, ra, ga, ca), (b, rb, gb, cb) = runs
    assert ca == cb and len(ca) == 6 * 4  # per iteration: values and averages of each player
    for name in ("regrets", "strategy_sum", "values", "table", "values_sum", "reach_sum", "reach", "root_reach"):
        assert torch.equal(getattr(a, name), getattr(b, name)), name
    assert torch.equal(ga.regret_follow, gb.regret_follow)
    assert torch.equal(ra.average_strategy, rb.average_strategy)
