"""Range notation, the 13x13 grid, and the bet sizes of public trees."""

from __future__ import annotations

import re

import numpy as np
import pytest

from agent.solver.ranges import RangeError, class_label, grid, hand_class_cell, parse_range
from agent.solver.tree import DEEPSTACK_SIZING, FCPA, BetSizing, NodeKind, bet_actions, build_tree, count_nodes
from native.cards import cards_from_str, holdem_hand_index
from protocol.gamedef import Game
from protocol.state import CALL, FOLD, ActionKind, HandState, raise_to


@pytest.mark.parametrize(
    ("text", "combos"),
    [
        ("AA", 6),
        ("AKs", 4),
        ("AKo", 12),
        ("AK", 16),
        ("AhKh", 1),
        ("TT+", 30),
        ("ATs+", 16),
        ("22-55", 24),
        ("A2s-A5s", 16),
        ("random", 1326),
    ],
)
def test_range_items(text: str, combos: int) -> None:
    assert int((parse_range(text) > 0).sum()) == combos


def test_range_weights_and_overrides() -> None:
    r = parse_range("AA:0.5,AhAd")
    assert r[holdem_hand_index(*cards_from_str("AhAd"))] == 1.0
    assert r[holdem_hand_index(*cards_from_str("AsAc"))] == 0.5


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty range"),
        ("AA,,KK", "empty item"),
        ("AX", "not a hand class"),
        ("AAs", "pair cannot be suited"),
        ("AK:2", "in [0, 1]"),
        ("AK:x", "not a number"),
        ("AhAh", "same card twice"),
        ("A2s-K5s", "first rank fixed"),
    ],
)
def test_bad_ranges(text: str, fragment: str) -> None:
    with pytest.raises(RangeError, match=re.escape(fragment)):
        parse_range(text)


def test_grid_cells_and_labels() -> None:
    assert hand_class_cell(holdem_hand_index(*cards_from_str("AhAd"))) == (0, 0)
    assert hand_class_cell(holdem_hand_index(*cards_from_str("AhKh"))) == (0, 1)
    assert hand_class_cell(holdem_hand_index(*cards_from_str("AhKd"))) == (1, 0)
    assert class_label(0, 1) == "AKs" and class_label(1, 0) == "AKo" and class_label(12, 12) == "22"
    g = grid(np.ones(1326), parse_range("AKs"))
    assert g[0, 1] == 1.0 and np.isnan(g[1, 0])


def test_bet_sizes_are_legal_deduplicated_with_all_in(hunl: Game) -> None:
    state = HandState.at_round_start(hunl, 3, (9000, 9000), cards_from_str("QsJh2h8d3c"))
    actions = bet_actions(state, BetSizing(bets=((0.5, 1.0, 2.0),)), depth=0)
    sizes = [a.size for a in actions]
    # 0.5 pot = 9000 -> 18000, pot -> 27000 clamps to 20000 = all-in, 2 pot too
    assert sizes == [18000, 20000]
    assert all(state.is_legal(a) for a in actions)
    small = HandState.at_round_start(hunl, 1, (100, 100), cards_from_str("QsJh2h"))
    assert [a.size for a in bet_actions(small, BetSizing(bets=((0.1,),)), 0)] == [200, 20000]  # min bet 100


def test_tree_shapes(hunl: Game, leduc_limit: Game) -> None:
    river = HandState.at_round_start(hunl, 3, (500, 500), cards_from_str("QsJh2h8d3c"))
    root = build_tree(river, [DEEPSTACK_SIZING[r] for r in ("preflop", "flop", "turn", "river")])
    counts = count_nodes(root)
    assert counts[NodeKind.CHANCE] == 0 and counts[NodeKind.LEAF] == 0
    for node in root.walk():
        if node.kind is NodeKind.DECISION:
            for action in node.actions:
                assert node.state.is_legal(action)
    assert [str(a) for a in root.actions] == ["c", "r1000", "r1500", "r2500", "r20000"]
    flop = HandState.at_round_start(hunl, 1, (500, 500), cards_from_str("QsJh2h"))
    cut = build_tree(flop, FCPA, last_round=1)
    assert count_nodes(cut)[NodeKind.LEAF] > 0
    leduc = build_tree(HandState.initial(leduc_limit), FCPA)
    assert count_nodes(leduc)[NodeKind.CHANCE] > 0
    assert all(a.kind is not ActionKind.RAISE or a.size == 0 for n in leduc.walk() for a in n.actions)


def test_a_tree_past_its_node_ceiling_is_refused_while_it_is_built(leduc_limit: Game) -> None:
    """Many sizes and raises made trees that grew until memory ran out; the builder counts and
    stops at its ceiling (a million nodes by default) with what to change."""
    from agent.solver.tree import MAX_TREE_NODES, TreeTooLarge

    nodes = sum(count_nodes(build_tree(HandState.initial(leduc_limit), FCPA)).values())
    assert sum(count_nodes(build_tree(HandState.initial(leduc_limit), FCPA, max_nodes=nodes)).values()) == nodes
    with pytest.raises(TreeTooLarge, match=f"more than {nodes - 1:,} nodes: use fewer bet sizes"):
        build_tree(HandState.initial(leduc_limit), FCPA, max_nodes=nodes - 1)
    assert issubclass(TreeTooLarge, ValueError) and MAX_TREE_NODES == 1_000_000


def test_tree_refuses_terminal_and_incomplete_roots(hunl: Game) -> None:
    with pytest.raises(ValueError, match="terminal"):
        build_tree(HandState.initial(hunl).apply(FOLD), FCPA)
    with pytest.raises(ValueError, match="misses 3 board cards"):
        build_tree(HandState.initial(hunl).apply(CALL).apply(CALL), FCPA)


def test_root_action_is_added_and_the_decision_below_gets_root_sizes(hunl: Game) -> None:
    """A re-solve that starts before the opponent's real bet: the bet is offered at the root
    beside the abstraction's, and our reply below it has the sizes of a root decision."""
    turn = HandState.at_round_start(hunl, 2, (500, 500), cards_from_str("QsJh2h8d"))
    sizing = DEEPSTACK_SIZING["turn"]
    plain = build_tree(turn, sizing)
    odd = raise_to(1234)  # 734 into a pot of 1000: not one of the abstraction's sizes
    root = build_tree(turn, sizing, root_action=odd)
    assert [str(a) for a in root.actions] == ["c", "r1000", "r1234", "r1500", "r20000"]
    assert [str(a) for a in plain.actions] == ["c", "r1000", "r1500", "r20000"]
    reply = root.children[root.actions.index(odd)]
    at_root = bet_actions(turn.apply(odd), sizing, 0)  # what a re-solve at the state faced offers
    assert [a for a in reply.actions if a.kind is ActionKind.RAISE] == at_root
    other = root.children[root.actions.index(raise_to(1000))]  # the abstraction's own bets: deeper sizes
    assert [a for a in other.actions if a.kind is ActionKind.RAISE] == bet_actions(turn.apply(raise_to(1000)), sizing, 1)
    same = build_tree(turn, sizing, root_action=raise_to(1000))  # already there: no duplicate
    assert [str(a) for a in same.actions] == [str(a) for a in plain.actions]
    with pytest.raises(ValueError, match="not legal at the root"):
        build_tree(turn, sizing, root_action=raise_to(550))  # below the minimum raise-to (600)
