"""A re-solve boiled down to what the bot keeps: a :class:`Decision` (the strategy for every hand we
might hold, the opponent values after each action and chance outcome), made right away so nothing
large survives a decision and pre-flop decisions can be cached by betting sequence; and the action
drawn from it for the hand we hold.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from agent.leaves.snapshot import LeafSnapshot
from agent.solver.resolve import Solution
from agent.solver.tree import NodeKind
from protocol.state import Action, ActionKind, HandState


@dataclass
class Decision:
    """What a re-solve said: the strategy for every hand we might hold, and what continual
    re-solving needs afterwards (opponent values after each action and chance outcome)."""

    state: HandState
    actions: list[Action]
    strategy: np.ndarray  # [actions, hands]
    our_range: np.ndarray  # [hands] the (normalised) range the re-solve started from
    child_values: np.ndarray  # [actions, 2, hands] average values at each child of the decision
    #: (action index, through the opponent's call) -> board -> [2, hands] values, or a leaf
    chance: dict[tuple[int, bool], dict[tuple[int, ...], np.ndarray] | LeafSnapshot] = field(default_factory=dict)
    iterations: int = 0
    seconds: float = 0.0
    #: of ``seconds``, those of the iterations (the rest: building the lookahead, summarising)
    solve_seconds: float = 0.0
    cached: bool = False
    #: betting string -> (actions, [actions, hands]) the opponent's strategy at its decisions
    #: in this round of the lookahead (for the opponent-range estimate)
    opp_strategies: dict[str, tuple[list[Action], np.ndarray]] = field(default_factory=dict)
    #: [hands] the opponent's reach at the decision compatible with each of our hands (the
    #: mass the counterfactual values of our hands are weighted by); see :meth:`action_values`
    opp_mass: np.ndarray | None = None
    #: when the re-solve started at the round's start, before the opponent's first action of the
    #: round: (actions, [actions, hands] its strategy there, the action it took), for the estimate
    opp_first: tuple[list[Action], np.ndarray, Action] | None = None

    def action_values(self, hand: int) -> np.ndarray | None:
        """``[actions]`` what the re-solve expects ``hand`` to win (chips, counted from the start
        of the hand) after each action, against the opponent's range at the decision: the
        counterfactual values of the children divided by the opponent's compatible mass. The
        control variates of AIVAT at our own actions; None when the opponent cannot hold
        anything beside ``hand``."""
        if self.opp_mass is None or not self.opp_mass[hand] > 0:
            return None
        me = self.state.current_player
        return self.child_values[:, me, hand] / float(self.opp_mass[hand])


def opponent_mass(solution: Solution, opponent: int) -> np.ndarray:
    """``[hands of the space]`` the opponent's average reach at our decision that shares no card
    with each hand (the fold kernels' card-removal sum, on the decision's board)."""
    la = solution.lookahead
    reach = solution.result.average_reach[opponent].unsqueeze(0)  # averaged at the decision row
    board = torch.as_tensor([int(la.row_board[solution.decision_row])], device=la.device)
    return solution.to_space(la.terminal.fold_mass(reach, board)[0])


def opponent_strategies(
    solution: Solution, opponent: int, depth: int = 1, start: int = 0
) -> dict[str, tuple[list[Action], np.ndarray]]:
    """The opponent's average strategy at its decisions of the round of row ``start``, ``depth``
    actions below it at most: one is enough, as we re-solve before the opponent acts again.
    Kept in float32 (pre-flop decisions are cached by the hundred)."""
    la = solution.lookahead
    avg = solution.result.average_strategy
    out: dict[str, tuple[list[Action], np.ndarray]] = {}
    if avg is None:
        return out
    root_round = la.nodes[start].state.round
    frontier = [start]
    for _ in range(depth + 1):
        nxt = []
        for row in frontier:
            node = la.nodes[row]
            if node.kind is not NodeKind.DECISION or node.state.round != root_round:
                continue
            if node.player == opponent:
                m = la.decision_index(row)
                strategy = solution.to_space(avg[m, : len(node.actions)]).astype(np.float32)
                out[node.state.betting_string()] = (list(node.actions), strategy)
            nxt.extend(la.children_of(row))
        frontier = nxt
    return out


def _averaged_leaf_values(solution: Solution, row: int) -> dict[tuple[int, ...], np.ndarray] | None:
    """``{next board: [2, hands]}`` below the leaf at ``row``: the values the re-solve's iterations
    saw there, averaged with its own weights, from a leaf function that keeps them
    (``average_board_values``). These are what the exact lookahead hands over at a chance node
    (its averaged values), and what the re-solve's strategy was made against; a network asked
    again at the average reaches (:class:`LeafSnapshot`) answers for another pair of ranges
    (the network is not linear in them)."""
    fn = getattr(solution.solver.leaf_values, "average_board_values", None)
    if fn is None:
        return None
    la = solution.solver.la
    leaf = int(torch.nonzero(la.leaves.rows == row).flatten()[0])
    values = fn(la, leaf)
    if values is None:
        return None
    return {board: solution.to_space(v) for board, v in values.items()}


def average_root_reach(solution: Solution) -> torch.Tensor:
    """``[2, H]`` the root reach that the average strategy carries to every node's average reach.

    The gadget player's root reach changes every iteration (``root_reach`` is its last iterate,
    which can be far from the average: at pre-flop re-solves facing a raise, the opponent's
    range at a leaf moved by a total variation of 0.06-0.68, the median over the leaves, docs/
    results.md "Four re-solving fixes"); our own is the range we came with. When our decision is below
    the opponent's action at the root, the average reach there is divided by the average
    strategy of that action (the average strategy is reach-weighted, so this is exact)."""
    result = solution.result
    root = result.root_reach.clone()
    row = solution.decision_row
    me = solution.lookahead.nodes[row].player
    assert me is not None
    avg = result.average_reach[1 - me]  # at the decision row
    if row == 0:
        root[1 - me] = avg
    elif result.average_strategy is not None:
        la = solution.lookahead
        p = result.average_strategy[la.decision_index(0), la.children_of(0).index(row)]
        root[1 - me] = torch.where(p > 0, avg / p.clamp_min(torch.finfo(p.dtype).tiny), torch.zeros_like(avg))
    return root


def summarize(solution: Solution, state: HandState, seconds: float) -> Decision:
    """Boil a re-solve down to a :class:`Decision` (for its decision row: the root, or the
    child of the opponent's action when the re-solve started before it)."""
    la = solution.lookahead
    row0 = solution.decision_row
    actions = list(la.nodes[row0].actions)
    me = la.nodes[row0].player
    assert me is not None
    # only the opponent may act between the root and our decision: our reach is the root's
    reach0 = solution.to_space(solution.result.root_reach[me])
    our = reach0 / reach0.sum() if reach0.sum() > 0 else reach0
    children = la.children_of(row0)
    child_values = np.stack([solution.values_at(r) for r in children])
    chance: dict[tuple[int, bool], dict[tuple[int, ...], np.ndarray] | LeafSnapshot] = {}
    avg_reach = None
    for i, row in enumerate(children):
        node = la.nodes[row]
        paths = [(False, row)]
        if node.kind is NodeKind.DECISION:
            call = next((j for j, a in enumerate(node.actions) if a.kind is ActionKind.CALL), None)
            if call is not None:
                paths = [(True, la.children_of(row)[call])]
        for via_call, r in paths:
            kind = la.nodes[r].kind
            if kind is NodeKind.CHANCE:
                chance[(i, via_call)] = {la.boards[int(la.row_board[c])]: solution.values_at(c) for c in la.children_of(r)}
            elif kind is NodeKind.LEAF:
                if avg_reach is None:
                    solution.solver.evaluate(average_root_reach(solution), solution.result.average_strategy)
                    avg_reach = solution.solver.reach
                n = la.nodes[r]
                chance[(i, via_call)] = LeafSnapshot(
                    reach=solution.to_space(avg_reach[:, r]),
                    spent=tuple(n.spent),
                    board=la.boards[int(la.row_board[r])],
                    next_round=int(n.next_round or 0),
                    board_values=_averaged_leaf_values(solution, r),
                )
    return Decision(
        state=state,
        actions=actions,
        strategy=solution.strategy_at(row0),
        our_range=our,
        child_values=child_values,
        chance=chance,
        iterations=solution.result.iterations,
        seconds=seconds,
        solve_seconds=min(seconds, solution.result.seconds),
        opp_strategies=opponent_strategies(solution, 1 - me, start=row0),
        opp_mass=opponent_mass(solution, 1 - me).astype(np.float32),
    )


def sample_action(decision: Decision, hand: int, rng: np.random.Generator) -> Action:
    """Draw our action for the hand we actually hold from the re-solve strategy."""
    probs = np.asarray(decision.strategy[:, hand], dtype=np.float64)
    total = probs.sum()
    if not total > 0 or not np.isfinite(probs).all():
        probs = np.ones(len(decision.actions)) / len(decision.actions)
    else:
        probs = probs / total
    return decision.actions[int(rng.choice(len(probs), p=probs))]
