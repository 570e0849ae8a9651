"""The fused C CFR kernels (native/src/cfr_kernels.c) against the solver's torch phases."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agent.cfr import Solver, Variant
from agent.handspace import HandSpace
from agent.resolve import SolverConfig, prepare
from agent.tree import DEEPSTACK_SIZING
from native import cfr_kernels
from native.cards import cards_from_str
from protocol.gamedef import Game
from protocol.state import HandState

SIZING = [DEEPSTACK_SIZING[r] for r in ("preflop", "flop", "turn", "river")]


def _solver(hunl: Game, board: str, native: bool, algorithm: str, seed: int = 0) -> tuple[Solver, torch.Tensor]:
    space = HandSpace(hunl)
    cards = cards_from_str(board)
    state = HandState.at_round_start(hunl, len(cards) - 2, (300, 300), cards)
    rng = np.random.default_rng(seed)
    hands = np.sort(rng.choice(np.flatnonzero(space.valid(cards)), 120, replace=False))
    _, la = prepare(state, space, hands, SIZING, SolverConfig(device="cpu"))
    variant = Variant(algorithm=algorithm, skip=2)
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
    ra = a.solve(reach, 6)
    rb = b.solve(reach, 6)
    for name in ("regrets", "strategy_sum", "reach", "values", "table"):
        x, y = getattr(a, name), getattr(b, name)
        scale = 1 + float(y.abs().max())
        assert float((x - y).abs().max()) <= 1e-4 * scale, name
    scale = 1 + float(rb.average_values.abs().max())
    assert float((ra.average_values - rb.average_values).abs().max()) <= 1e-5 * scale


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
