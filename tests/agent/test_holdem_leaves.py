"""Hold'em depth-limit leaves: a pre-flop re-solve valued by the shipped check-down matrix."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from agent.leaves.equity_matrix import CheckdownMatrices
from agent.leaves.holdem import CheckdownLeafValues
from agent.leaves.per_lookahead import PerLookahead
from agent.solver.handspace import HandSpace
from agent.solver.resolve import SolverConfig, solve_ranges
from agent.solver.tree import DEEPSTACK_SIZING
from models import __file__ as models_init
from protocol.gamedef import Game
from protocol.state import HandState


def test_preflop_resolve_with_checkdown_leaves(hunl: Game) -> None:
    leaf = CheckdownLeafValues(CheckdownMatrices(Path(models_init).parent / "holdem" / "preflop-checkdown.npz"))
    space = HandSpace(hunl)
    uni = space.uniform(())
    sizing = [DEEPSTACK_SIZING[r] for r in ("preflop", "flop", "turn", "river")]
    sol = solve_ranges(
        HandState.initial(hunl), [uni, uni], sizing, SolverConfig(iterations=20, device="cpu"), last_round=0, leaf_values=leaf
    )
    strategy = sol.root_strategy()
    assert strategy.shape == (5, 1326) and np.isfinite(strategy).all()
    np.testing.assert_allclose(strategy.sum(axis=0), 1.0, atol=1e-5)
    assert len(leaf._prepared._items) == 1  # prepared once for the lookahead, reused every iteration


def test_per_lookahead_cache_tells_lookaheads_apart() -> None:
    class Thing:
        pass

    cache, built = PerLookahead(size=2), []
    a, b = Thing(), Thing()
    assert cache.get(a, lambda: built.append("a") or "A") == "A"
    assert cache.get(a, lambda: built.append("a") or "A2") == "A"
    assert cache.get(b, lambda: built.append("b") or "B") == "B"
    assert built == ["a", "b"]


@pytest.mark.parametrize("board", [(0, 13, 26, 39), (5, 17, 30, 44, 50)])
def test_checkdown_matrix_kernel_matches_dense_sum(board: tuple[int, ...]) -> None:
    """The C pair-sign kernel gives exactly the dense per-runout sum it replaced."""
    from itertools import combinations

    import torch

    from agent.leaves import equity_matrix as em

    remaining = [c for c in range(52) if c not in board]
    total, count = em._accumulate([tuple(board) + e for e in combinations(remaining, 5 - len(board))])
    dense = torch.where(count > 0, total / count.clamp(min=1), torch.zeros(())) * torch.as_tensor(em._pair_compat())
    assert torch.equal(em.exact_matrix(board), dense)


def test_pair_sign_kernel_refuses_bad_sizes() -> None:
    import numpy as np
    from native._native import ffi, lib

    total = np.zeros((2, 2), dtype=np.int32)
    assert lib.ds_pair_sign_sum(0, 1, ffi.NULL, ffi.from_buffer("int32_t[]", total)) == -2
    assert lib.ds_pair_sign_sum(2, 1, ffi.NULL, ffi.from_buffer("int32_t[]", total)) == -2
    s = np.array([[3, 1], [-1, 2]], dtype=np.int32)
    assert lib.ds_pair_sign_sum(2, 2, ffi.from_buffer("int32_t[]", s), ffi.from_buffer("int32_t[]", total)) == 0
    assert total.tolist() == [[0, 1], [-1, 0]]  # board 2 has hand 0 blocked: nothing added


def test_solver_asks_checkdown_leaves_for_one_player_only(hunl: Game) -> None:
    """CFR uses one player's leaf values at a time: the one-player path must give exactly that
    half of the two-player values, and the solver must take it (half the matrix products)."""
    leaf = CheckdownLeafValues(CheckdownMatrices(Path(models_init).parent / "holdem" / "preflop-checkdown.npz"))
    calls = {"one": 0, "both": 0}

    class Counting:
        def __call__(self, reach, leaves, la):
            calls["both"] += 1
            return leaf(reach, leaves, la)

        def one_player(self, reach, leaves, la, player):
            calls["one"] += 1
            one = leaf.one_player(reach, leaves, la, player)
            assert torch.equal(one, leaf(reach, leaves, la)[player])
            if calls["one"] <= 2:  # against the definition: amount x check-down equity x opponent reach
                for i in range(0, len(leaves.boards), 7):
                    e = leaf.matrices.matrix(tuple(leaves.boards[i])).double().numpy()[la.hands][:, la.hands]
                    want = leaves.spent[i].min() * (e @ reach[1 - player, i].double().numpy())
                    np.testing.assert_allclose(one[i].double().numpy(), want, rtol=1e-4, atol=1e-3)
            return one

    class BothOnly:  # a leaf function without the one-player path
        def __call__(self, reach, leaves, la):
            return leaf(reach, leaves, la)

    space = HandSpace(hunl)
    uni = space.uniform(())
    sizing = [DEEPSTACK_SIZING[r] for r in ("preflop", "flop", "turn", "river")]
    cfg = SolverConfig(iterations=6, device="cpu")
    one = solve_ranges(HandState.initial(hunl), [uni, uni], sizing, cfg, last_round=0, leaf_values=Counting())
    both = solve_ranges(HandState.initial(hunl), [uni, uni], sizing, cfg, last_round=0, leaf_values=BothOnly())
    assert calls["one"] >= 12 and calls["both"] == 0
    np.testing.assert_allclose(one.root_strategy(), both.root_strategy(), atol=1e-6)


def test_river_network_leaves_answer_both_players_from_one_call(hunl: Game) -> None:
    """Turn leaves valued by the shipped river network: a second call with the same reach (the
    other player's half of a simultaneous update) returns the first call's values; another
    reach gets new ones; the values are those of the network's own per-board evaluation."""

    leaf, _ = _river_leaf(hunl, "river.pt")
    cards, hands, la = _turn_lookahead(hunl, 300)
    gen = torch.Generator().manual_seed(0)
    reach = torch.rand(2, len(la.leaves.rows), len(hands), generator=gen, dtype=la.dtype)
    first = leaf(reach, la.leaves, la)
    assert leaf(reach.clone(), la.leaves, la) is first
    other = leaf(reach * torch.rand(reach.shape, generator=gen, dtype=la.dtype), la.leaves, la)
    assert other is not first and not torch.equal(other, first)
    # leaf 0: the mean over river cards (1/44 each: 44 are possible beside any hand) of the
    # network's values on each river board alone
    full = np.zeros((2, 1326))
    full[:, hands] = reach[:, 0].numpy()
    snap = type("Snap", (), {"board_values": None, "reach": full, "spent": la.leaves.spent[0]})()
    boards = [tuple(cards) + (c,) for c in range(52) if c not in cards]
    mean = sum(leaf.chance_values(snap, b) for b in boards)[:, hands] / 44
    np.testing.assert_allclose(first[:, 0].numpy(), mean, rtol=1e-3, atol=1e-4 * np.abs(mean).max())


def test_leaves_split_by_stack_to_pot_ratio(hunl: Game) -> None:
    """``checkdown_spr``: a turn lookahead's leaves with little behind (after a pot bet and call, or
    all in) are checked down, the others valued by the river network; each part gives what its own
    leaf function gives there, the network's averages keep their leaf numbers, and the next round's
    values come from whichever valued the leaf."""
    from agent.leaves.by_stack import LeavesByStack, stack_to_pot
    from agent.leaves.snapshot import LeafSnapshot

    assert np.allclose(stack_to_pot(np.array([[1000, 1000], [19000, 20000]]), 20000), [9.5, 0.0])
    river, net = _river_leaf(hunl, "river-small.pt")
    checkdown = CheckdownLeafValues(CheckdownMatrices(Path(models_init).parent / "holdem" / "preflop-checkdown.npz"))
    split = LeavesByStack(river, checkdown, 20000, max_spr=1.0)
    cards, hands, la = _turn_lookahead(hunl, 3000)
    shallow = stack_to_pot(la.leaves.spent, 20000) <= 1.0
    assert shallow.any() and (~shallow).any()
    reach = torch.rand(2, len(la.leaves.rows), len(hands), generator=torch.Generator().manual_seed(1), dtype=la.dtype)
    values = split(reach, la.leaves, la)
    deep_idx, shallow_idx = np.flatnonzero(~shallow), np.flatnonzero(shallow)
    # (the wrapped functions prepare the lookahead for their own leaves: fresh ones to compare with)
    alone = CheckdownLeafValues(checkdown.matrices)(reach, la.leaves, la)
    torch.testing.assert_close(values[:, shallow_idx], alone[:, shallow_idx], rtol=1e-4, atol=1e-3)
    mine, _ = _river_leaf(hunl, "river-small.pt")
    sub = split._split(la.leaves, la).net_leaves
    torch.testing.assert_close(values[:, deep_idx], mine(reach[:, deep_idx].contiguous(), sub, la), rtol=1e-4, atol=1e-3)
    split.track_average(la, 0, 1.0)
    split.track_average(la, 1, 1.0)
    boards = split.average_board_values(la, int(deep_idx[0]))
    assert boards is not None and len(boards) == 48 and split.average_board_values(la, int(shallow_idx[0])) is None
    full = np.zeros((2, 1326))
    for i, kind in ((deep_idx[0], river), (shallow_idx[0], checkdown)):
        snap = LeafSnapshot(full + 1.0 / len(hands), tuple(int(x) for x in la.leaves.spent[i]), tuple(cards), 3)
        board = tuple(cards) + (next(c for c in range(52) if c not in cards),)
        np.testing.assert_allclose(split.chance_values(snap, board), kind.chance_values(snap, board))


def _river_leaf(hunl: Game, name: str):
    """A shipped river network as turn leaves (and the network)."""
    from agent.leaves.holdem import BucketNetLeafValues
    from agent.nets.buckets import RiverStrength
    from agent.nets.manifest import load_value_net

    net, entry = load_value_net(Path(models_init).parent / "holdem" / name)
    return BucketNetLeafValues(net, hunl, RiverStrength(int(entry["river_buckets"]))), net


def _turn_lookahead(hunl: Game, half_pot: int):
    """A turn lookahead on QsJh2h8d ending at the river, every hand: (cards, hands, lookahead)."""
    from agent.solver.resolve import prepare
    from native.cards import cards_from_str

    space = HandSpace(hunl)
    cards = cards_from_str("QsJh2h8d")
    state = HandState.at_round_start(hunl, 2, (half_pot, half_pot), cards)
    hands = np.flatnonzero(space.valid(cards))
    sizing = [DEEPSTACK_SIZING[r] for r in ("preflop", "flop", "turn", "river")]
    _, la = prepare(state, space, hands, sizing, SolverConfig(device="cpu"), last_round=2)
    return cards, hands, la
