"""Many hold'em situations solved in one CFR call: a forest lookahead.

One turn situation (fold, call, pot, all-in to the end of the game) is a tree of about
13,600 rows of 1128 hands: on a GPU that is too little work per tensor operation to keep
the device busy, and the per-depth launch overhead is paid once per situation. A forest
lays out the trees of many situations side by side (their roots are the rows of depth 0,
each on its own board; see :mod:`agent.solver.lookahead`), so one iteration runs every situation
with the same number of tensor operations. The trees need not have the same shape: pots
that change which bets are legal only change how many rows each depth holds.

The hand list is the whole hand space (on varied boards the union of the situations' hands
is nearly all 1326 anyway); a hand that a tree's board blocks has zero reach and zero value in
that tree's rows. Every tree then sees the same arithmetic as in a forest of its own, so a
situation's values do not depend on which others share its call. They differ from a solve
over the situation's own hands only by rounding and what rounding does to later iterations:
regret matching turns regrets of 1e-12 into different pure strategies for hands indifferent
between actions.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb

import numpy as np
import torch

from agent.solver.cfr import LeafValueFn, Solver
from agent.solver.handspace import HandSpace
from agent.solver.lookahead import compile_lookahead
from agent.solver.resolve import SolverConfig, SpotError, pick_device
from agent.solver.tree import BetSizing, Node, NodeKind, build_tree
from protocol.state import HandState

#: [rows x hands] buffers of float32 a forest solve keeps per tree row (reach and values of both
#: players, the multiplier table's and the regrets' share, the temporaries of a pass) with margin:
#: what :func:`memory_budget_rows` budgets a forest's memory by
BUFFERS_PER_ROW = 10


def solve_forest(
    space: HandSpace,
    states: Sequence[HandState],
    ranges: Sequence[np.ndarray],
    sizing: BetSizing | Sequence[BetSizing],
    config: SolverConfig,
    last_round: int | None = None,
    leaf_values: LeafValueFn | None = None,
) -> np.ndarray:
    """``[n, 2, space.size]`` average counterfactual values at each situation's root after
    ``config.iterations`` (chips, for the given ranges; blocked hands 0).

    ``ranges[i]`` is ``[2, space.size]``: both players' ranges in situation i, zero on the
    hands its board blocks. ``last_round``/``leaf_values``: depth-limited trees, as in
    :func:`agent.solver.resolve.solve_ranges`."""
    if len(states) != len(ranges) or not states:
        raise SpotError(f"{len(states)} states and {len(ranges)} range pairs: a forest needs one pair per state, at least one")
    stacked = np.stack([np.asarray(r, dtype=np.float64) for r in ranges])  # [n, 2, hands]
    if stacked.shape[1:] != (2, space.size):
        raise SpotError(f"ranges have shape {stacked.shape[1:]}, expected (2, {space.size}) per situation")
    for i, state in enumerate(states):
        blocked = ~space.valid(state.board)
        if (stacked[i][:, blocked] != 0).any():
            raise SpotError(f"situation {i}: a range holds hands its board blocks")
    hands = np.arange(space.size)
    roots = [build_tree(state, sizing, last_round=last_round) for state in states]
    la = compile_lookahead(roots, space, hands, pick_device(config.device), config.torch_dtype())
    solver = Solver(
        la,
        config.variant(),
        leaf_values=leaf_values,
        track_rows=torch.arange(len(roots), device=la.device),
        average_strategy=False,
    )
    reach = torch.as_tensor(stacked[:, :, hands].transpose(1, 0, 2).copy(), dtype=la.dtype, device=la.device)  # [2, n, H]
    result = solver.solve(reach.reshape(solver.root_reach.shape), config.iterations)
    values = result.average_values.detach().to("cpu", torch.float64).numpy().reshape(2, len(states), -1)
    out = np.zeros((len(states), 2, space.size))
    out[:, :, hands] = values.transpose(1, 0, 2)
    return out


def lookahead_rows(root: Node, space: HandSpace) -> int:
    """Rows the lookahead of ``root`` has (one per node and board), counted on the tree, which
    stores the subtree below a chance node once: what a situation costs before it is laid out."""
    game = space.game

    def rows(node: Node) -> int:
        if node.kind is NodeKind.CHANCE:
            assert node.next_round is not None
            board = len(node.state.board)
            return 1 + comb(game.deck_size - board, game.board_cards_through(node.next_round) - board) * rows(node.children[0])
        return 1 + sum(rows(child) for child in node.children)

    return rows(root)


#: what a depth-limit leaf costs per next-street board, in rows: the network's leaf batch keeps
#: the board's bucket ids (int64) and both players' reach, bucketed ranges and values per board
LEAF_ROWS_PER_BOARD = 5


def forest_cost_rows(root: Node, space: HandSpace) -> int:
    """What a tree costs a forest, in rows of :data:`BUFFERS_PER_ROW` buffers: its lookahead rows,
    and for a depth-limited tree (flop situations, the turn network at the leaves) each leaf's
    queries, one per card the next street can deal."""
    game = space.game
    extra = 0

    def leaves(node: Node) -> int:
        if node.kind is NodeKind.LEAF:
            assert node.next_round is not None
            board = len(node.state.board)
            return comb(game.deck_size - board, game.board_cards_through(node.next_round) - board)
        return sum(leaves(child) for child in node.children)

    extra = leaves(root) * LEAF_ROWS_PER_BOARD
    return lookahead_rows(root, space) + extra


def memory_budget_rows(hands: int, device: torch.device, free_bytes: int | None = None) -> int | None:
    """How many lookahead rows one forest solve may hold: on a GPU what half its free memory
    holds at :data:`BUFFERS_PER_ROW` float32 buffers of ``hands`` per row; None on the CPU,
    where situations are solved one at a time (the C kernels gain nothing from a forest, and
    its hand list grows from a board's 1128 hands to 1326)."""
    if device.type != "cuda":
        return None
    if free_bytes is None:  # free on the device, and what torch holds cached but unused
        free_bytes = torch.cuda.mem_get_info(device)[0] + torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
    return int(free_bytes // 2 // (hands * 4 * BUFFERS_PER_ROW))


def pack(rows: Sequence[int], budget: int) -> list[list[int]]:
    """Indices of ``rows`` in order, cut into groups whose rows sum to at most ``budget`` (a
    situation larger than the budget alone in its group)."""
    groups: list[list[int]] = []
    used = budget + 1
    for i, n in enumerate(rows):
        if used + n > budget:
            groups.append([])
            used = 0
        groups[-1].append(i)
        used += n
    return groups
