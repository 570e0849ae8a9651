"""Hold'em depth-limit leaves: a pre-flop re-solve valued by the shipped check-down matrix."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agent.equity_matrix import CheckdownMatrices
from agent.handspace import HandSpace
from agent.holdem_leaves import CheckdownLeafValues, _PerLookahead
from agent.resolve import SolverConfig, solve_ranges
from agent.tree import DEEPSTACK_SIZING
from models import __file__ as models_init
from protocol.gamedef import Game
from protocol.state import HandState


def test_preflop_resolve_with_checkdown_leaves(hunl: Game) -> None:
    leaf = CheckdownLeafValues(CheckdownMatrices(Path(models_init).parent / "holdem" / "preflop-checkdown.npz"))
    space = HandSpace(hunl)
    uni = space.uniform(())
    sizing = [DEEPSTACK_SIZING[r] for r in ("preflop", "flop", "turn", "river")]
    sol = solve_ranges(HandState.initial(hunl), [uni, uni], sizing, SolverConfig(iterations=20, device="cpu"),
                       last_round=0, leaf_values=leaf)
    strategy = sol.root_strategy()
    assert strategy.shape == (5, 1326) and np.isfinite(strategy).all()
    np.testing.assert_allclose(strategy.sum(axis=0), 1.0, atol=1e-5)
    assert len(leaf._prepared._items) == 1  # prepared once for the lookahead, reused every iteration


def test_per_lookahead_cache_tells_lookaheads_apart() -> None:
    class Thing:
        pass

    cache, built = _PerLookahead(size=2), []
    a, b = Thing(), Thing()
    assert cache.get(a, lambda: built.append("a") or "A") == "A"
    assert cache.get(a, lambda: built.append("a") or "A2") == "A"
    assert cache.get(b, lambda: built.append("b") or "B") == "B"
    assert built == ["a", "b"]
