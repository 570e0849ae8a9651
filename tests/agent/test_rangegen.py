"""The training situations' ranges: DeepStack's recursive generator R(S, p) (agent/training/rangegen.py)
as generation draws them (agent/training/situations.py draw_situation), on real boards and hand strengths."""

from __future__ import annotations

import numpy as np
import pytest

from agent.solver.handspace import HandSpace
from agent.training.rangegen import recursive_range, strength_order
from agent.training.situations import draw_situation
from native.cards import cards_from_str
from protocol.gamedef import load_game


class _FixedDraws:
    """A random source whose every uniform draw is ``u``: it makes R(S, p)'s splits visible."""

    def __init__(self, u: float) -> None:
        self.u = u

    def random(self, n: int) -> np.ndarray:
        return np.full(n, self.u)


@pytest.mark.parametrize(("game_name", "round_"), [("leduc", 1), ("hunl", 0), ("hunl", 1), ("hunl", 2), ("hunl", 3)])
def test_situation_ranges_sum_to_one_and_avoid_blocked_hands(game_name: str, round_: int) -> None:
    game = load_game(game_name)
    space = HandSpace(game)
    rng = np.random.default_rng(7)
    for _ in range(12):
        sit = draw_situation(space, round_, rng)
        assert len(sit.board) == game.board_cards_through(round_) == len(set(sit.board))
        blocked = space.blocked(sit.board)
        assert sit.ranges.shape == (2, space.size)
        assert (sit.ranges >= 0).all()
        assert sit.ranges.sum(axis=1) == pytest.approx([1.0, 1.0], abs=1e-12)
        assert (sit.ranges[:, blocked] == 0).all()
        # every possible hand can be held: a draw of exactly zero has probability zero
        assert (sit.ranges[:, ~blocked] > 0).all()
        assert sit.pot % 2 == 0 and 2 * max(game.blind) <= sit.pot <= 2 * min(game.stack)


def test_strength_order_lists_the_possible_hands_from_weakest_to_strongest() -> None:
    space = HandSpace(load_game("hunl"))
    board = cards_from_str("Ah7d7c2s9h")
    strength = space.strengths(board)
    order = strength_order(strength, space.valid(board))
    assert sorted(order.tolist()) == np.flatnonzero(space.valid(board)).tolist()
    assert (np.diff(strength[order]) >= 0).all()
    # ties keep index order (the draw is reproducible across platforms)
    for a, b in zip(order, order[1:]):
        if strength[a] == strength[b]:
            assert a < b


@pytest.mark.parametrize("u", [0.0, 1.0])
def test_the_first_share_goes_to_the_weaker_half_by_strength_on_the_board(u: float) -> None:
    """R(S, p) gives p1 ~ U[0, p] to the weaker half: with every draw 0 all mass ends on the
    strongest hand, with every draw 1 on the weakest (by the board's real hand values)."""
    space = HandSpace(load_game("hunl"))
    board = cards_from_str("KsQs4d4c8h")
    strength = space.strengths(board)
    order = strength_order(strength, space.valid(board))
    r = recursive_range(order, space.size, _FixedDraws(u))  # type: ignore[arg-type]
    (held,) = np.flatnonzero(r)
    assert r[held] == 1.0
    assert held == (order[-1] if u == 0.0 else order[0])
    assert strength[held] == (strength.max() if u == 0.0 else strength[strength >= 0].min())


def test_equal_shares_give_each_hand_of_a_dyadic_set_the_same_mass() -> None:
    order = np.array([5, 3, 7, 0, 6, 1, 2, 4])
    r = recursive_range(order, 8, _FixedDraws(0.5))  # type: ignore[arg-type]
    assert r == pytest.approx(np.full(8, 1 / 8))


def test_each_split_is_uniform_and_mass_is_conserved_down_the_recursion() -> None:
    """The weaker half's share of its parent's mass is U[0, 1] at the top split and the next
    one (Kolmogorov-Smirnov distance over 3000 seeded draws), and halves add up to parents."""
    n = 1128  # the hands a turn board leaves
    order = np.random.default_rng(3).permutation(n)
    rng = np.random.default_rng(11)
    top, second = [], []
    for _ in range(3000):
        r = recursive_range(order, n, rng)[order]  # by strength order
        half, quarter = n // 2, n // 4
        weaker = r[:half].sum()
        assert r.sum() == pytest.approx(1.0, abs=1e-12)
        assert weaker + r[half:].sum() == pytest.approx(1.0, abs=1e-12)
        top.append(weaker)
        second.append(r[:quarter].sum() / weaker)
    for shares in (np.sort(top), np.sort(second)):
        cdf = np.arange(1, len(shares) + 1) / len(shares)
        ks = max(np.abs(cdf - shares).max(), np.abs(cdf - 1 / len(shares) - shares).max())
        assert ks < 0.035  # 5% critical value 1.36 / sqrt(3000) = 0.025; seeded, so no flakes
        assert np.mean(shares) == pytest.approx(0.5, abs=0.02)


def test_strengths_below_zero_are_possible_hands_not_blocked_ones() -> None:
    """A strength scale with negative values (a mean check-down result) keeps every valid hand:
    before the mask was explicit, pre-flop ranges left out the weaker half of the hands."""
    strength = np.array([-0.3, 0.2, -0.1, 0.7, 0.0])
    valid = np.array([True, True, True, False, True])
    assert strength_order(strength, valid).tolist() == [0, 2, 4, 1]


def test_recursive_range_refuses_an_empty_set_of_hands() -> None:
    with pytest.raises(ValueError, match="no valid hands"):
        recursive_range(np.array([], dtype=np.int64), 10, np.random.default_rng(0))
