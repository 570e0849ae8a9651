"""The opponent's values at the start of a street by solving that street (agent/resolving/chance_solve.py)."""

from __future__ import annotations

import numpy as np
import pytest

from agent.bots.config import BotConfig, Config, HoldemBotConfig, HoldemModels
from agent.bots.settings import hunl_settings, model_paths
from agent.leaves.equity_matrix import CheckdownMatrices
from agent.leaves.holdem import BucketNetLeafValues, CheckdownLeafValues
from agent.leaves.snapshot import LeafSnapshot
from agent.nets.buckets import BucketTable
from agent.nets.manifest import checked_file, load_value_net
from agent.resolving.chance_solve import SolvedChanceValues
from agent.resolving.settings import StreetSettings
from agent.solver.handspace import HandSpace
from agent.solver.resolve import SolverConfig
from agent.solver.tree import DEEPSTACK_SIZING
from agent.training.situations import draw_situation
from protocol.gamedef import Game

SIZING = tuple(DEEPSTACK_SIZING[r] for r in ("preflop", "flop", "turn", "river"))


@pytest.fixture(scope="module")
def checkdown() -> CheckdownLeafValues:
    return CheckdownLeafValues(CheckdownMatrices(checked_file(HoldemModels().preflop_checkdown)[0]))


def _river_values(hunl: Game, checkdown: CheckdownLeafValues) -> tuple[SolvedChanceValues, LeafSnapshot, tuple[int, ...]]:
    """A turn leaf (both ranges after the turn's betting) and a river card below it."""
    space = HandSpace(hunl)
    sit = draw_situation(space, 3, np.random.default_rng(4))  # a river board and two ranges
    river = StreetSettings(sizing=SIZING, config=SolverConfig(algorithm="dcfr", iterations=200, device="cpu"))
    solved = SolvedChanceValues(space, river, SIZING, checkdown.chance_values)
    reach = sit.ranges * space.valid(sit.board[:4]) * np.array([[0.3], [0.7]])  # the leaf's scale, not normalised
    return solved, LeafSnapshot(reach=reach, spent=(300, 300), board=tuple(sit.board[:4]), next_round=3), tuple(sit.board)


def test_solved_street_start_values_are_zero_sum_and_scale_with_the_other_range(
    hunl: Game, checkdown: CheckdownLeafValues
) -> None:
    solved, leaf, board = _river_values(hunl, checkdown)
    values = solved(leaf, board)
    valid = solved.space.valid(board)
    reach = leaf.reach * valid
    assert solved.solves == 1 and np.all(values[:, ~valid] == 0)
    # both players' range-weighted values: what one wins the other loses (the averages of a solve
    # converge to that: within 0.5% of the pot after 200 iterations, 0.004% after 1000)
    pot = sum(leaf.spent)
    assert abs((reach[0] @ values[0]) + (reach[1] @ values[1])) < 0.01 * pot * reach[0].sum() * reach[1].sum()
    # counterfactual: the opponent's values are linear in our reach, and do not move with its own scale
    scaled = LeafSnapshot(reach=leaf.reach * np.array([[2.0], [5.0]]), spent=leaf.spent, board=leaf.board, next_round=3)
    again = solved(scaled, board)
    np.testing.assert_allclose(again[1], 2.0 * values[1], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(again[0], 5.0 * values[0], rtol=1e-4, atol=1e-6)
    # and they are not the check-down values: the river's betting moves value between hands
    plain = checkdown.chance_values(leaf, board)
    assert np.abs(values[1] - plain[1]).max() > 1.0


def test_nothing_to_solve_falls_back_to_the_leaf_values(hunl: Game, checkdown: CheckdownLeafValues) -> None:
    solved, leaf, board = _river_values(hunl, checkdown)
    reach = leaf.reach.copy()
    reach[0] = 0.0
    reach[0, np.flatnonzero(~solved.space.valid(board))[0]] = 1.0  # our only hand is blocked by the river card
    empty = LeafSnapshot(reach=reach, spent=leaf.spent, board=leaf.board, next_round=3)
    np.testing.assert_array_equal(solved(empty, board), checkdown.chance_values(empty, board))
    allin = LeafSnapshot(reach=leaf.reach, spent=(20000, 20000), board=leaf.board, next_round=3)
    np.testing.assert_array_equal(solved(allin, board), checkdown.chance_values(allin, board))
    assert solved.solves == 0


def test_the_setting_wires_every_depth_limited_street(hunl: Game) -> None:
    shipped = hunl_settings(hunl, HoldemBotConfig(), "cpu")
    assert not any(isinstance(st.chance_values, SolvedChanceValues) for st in shipped.streets)
    solving = hunl_settings(hunl, HoldemBotConfig(street_start_values="solve"), "cpu")
    kinds = [isinstance(st.chance_values, SolvedChanceValues) for st in solving.streets]
    assert kinds == [True, True, True, False]  # pre-flop, flop and turn end at a depth limit; the river does not
    for r, st in enumerate(solving.streets[:3]):  # each solves the next street as the bot re-solves it
        nxt = solving.streets[r + 1]
        assert (st.chance_values.street.config, st.chance_values.street.last_round) == (nxt.config, nxt.last_round)


def test_net_street_start_values_come_from_the_next_streets_network_where_chips_are_left(
    hunl: Game, checkdown: CheckdownLeafValues
) -> None:
    """``street_start_values: net``: below the shipped streets ending in check-down (pre-flop and flop)
    the opponent's values come from the next street's network, except nearly all in."""
    cfg = HoldemBotConfig(street_start_values="net")
    net = hunl_settings(hunl, cfg, "cpu")
    turn = net.streets[2]  # the turn ends at a network already: its own leaves' values
    assert turn.chance_values == turn.leaf_values.chance_values
    space = HandSpace(hunl)
    sit = draw_situation(space, 1, np.random.default_rng(6))  # a flop and two ranges below a pre-flop leaf
    models = HoldemModels()
    flop_net = BucketNetLeafValues(
        load_value_net(models.flop_net)[0], hunl, BucketTable.load(checked_file(models.flop_buckets)[0]), cfg.net_precision
    )
    reach = sit.ranges * np.array([[0.4], [0.8]])
    for spent, deep in (((300, 300), True), ((12000, 12000), False)):
        leaf = LeafSnapshot(reach=reach, spent=spent, board=(), next_round=1)
        values = net.streets[0].chance_values(leaf, sit.board)
        assert np.isfinite(values).all()
        cd = checkdown.chance_values(leaf, sit.board)
        if deep:
            np.testing.assert_allclose(values, flop_net.chance_values(leaf, sit.board))
            assert np.abs(values - cd).max() > 1e-3 * spent[0]
        else:
            np.testing.assert_allclose(values, cd)
    below_flop = net.streets[1].chance_values.__self__  # the flop ends in check-down: the turn network below
    assert below_flop.net.buckets.num_buckets == BucketTable.load(checked_file(models.turn_buckets)[0]).num_buckets
    paths = dict(model_paths(hunl, Config(bot=BotConfig(hunl=cfg))))
    assert {"bot.hunl.models.flop_net", "bot.hunl.models.turn_net"} <= set(paths)
