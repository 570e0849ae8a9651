"""The lookahead: a public tree laid out as tensors for vectorized CFR.

Layout (see ``docs/internals.md``): every *instance* (a tree node on one board) is a row
of one big tensor ``[player, row, hand]``. Rows are grouped by depth into contiguous
slices, so a CFR pass is one short loop over depths. The betting tree below a chance node
is stored once (:mod:`agent.solver.tree`) and replicated here for every card the chance node
can deal; each row carries the id of its board in a registry.

A lookahead may hold several trees (a *forest*: many situations solved in one call, the
GPU's way to data generation): their roots are the rows of depth 0, each on its own board,
and every depth holds the rows of all trees that reach it.

Transitions ``depth d -> d+1`` are described by, per child row:
  * ``parent``: the parent row,
  * a constant multiplier (the chance mask ``[row, hand]``: 0 where the new cards block a
    hand; the backward multiplier also carries the chance weight ``1 / #deals``),
  * for children of decisions: the acting player and the flat index ``decision * A + action``
    of the strategy row that multiplies that player's reach (forward) and value (backward).
Decisions of both players share one regret tensor ``[decision, A, hand]`` (A = most actions
of any decision; missing actions are masked).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from math import comb

import numpy as np
import torch

from agent.solver.handspace import HandSpace
from agent.solver.terminal import TerminalEquity
from agent.solver.tree import Node, NodeKind
from native.torch_showdown import canonical_device


@dataclass
class Transition:
    """How the rows of depth d+1 hang from the rows of depth d.

    ``src[p, j]`` is the row of the multiplier table (:attr:`Lookahead.table_rows`) that
    multiplies player p's reach going down to child j and its value coming back up: row 0
    is all ones, rows 1..B are the boards' validity masks (chance children), rows B+1.. are
    the strategy rows ``decision * A + action`` (for the acting player of a decision).
    """

    parent: torch.Tensor  # [n] global parent row of each child row
    parent_local: torch.Tensor  # [n] the same, counted from the first row of depth d
    src: torch.Tensor  # [2, n] multiplier-table row per (player, child)
    chance_weight: torch.Tensor | None  # [n, 1] 1/#deals for chance children (1 elsewhere)


@dataclass
class LeafInfo:
    """The lookahead's depth-limit leaves, one entry per leaf row: its board, the chips each position has
    put in, and the round whose cards come next (what a leaf value function needs)."""

    rows: torch.Tensor  # [L] global rows
    boards: list[tuple[int, ...]]
    spent: np.ndarray  # [L, 2]
    next_round: np.ndarray  # [L]


@dataclass
class Lookahead:
    """Tensor layout of one tree on one root board (or of a forest: one tree per root row)
    for one hand list."""

    root: Node  # the first root (the only one but in a forest)
    space: HandSpace
    hands: np.ndarray  # [H] indices into the hand space
    device: torch.device
    dtype: torch.dtype
    boards: list[tuple[int, ...]]
    depth_slices: list[slice]
    nodes: list[Node]  # per global row
    row_board: np.ndarray  # [N]
    transitions: list[Transition]  # transitions[d] links depth d -> d+1
    board_valid: torch.Tensor  # [B, H] hand possible on board b
    # decisions
    dec_rows: torch.Tensor  # [M] global row of each decision (player 0's decisions first)
    dec_actor: torch.Tensor  # [M]
    dec_slices: tuple[slice, slice]  # decisions of player 0, of player 1
    dec_children: torch.Tensor  # [M, A] global child rows (padded with the decision's own row)
    dec_valid: torch.Tensor  # [M, A] bool
    num_actions: int
    # terminals
    fold_rows: torch.Tensor
    fold_payoff: torch.Tensor  # [F, 2] chips won by each position
    fold_boards: torch.Tensor  # [F]
    showdown_rows: torch.Tensor
    showdown_amount: torch.Tensor  # [S] chips at stake
    showdown_boards: np.ndarray
    leaves: LeafInfo
    chance_rows: np.ndarray
    terminal: TerminalEquity = field(repr=False)

    @property
    def strategy_offset(self) -> int:
        """First row of the strategy block in the multiplier table."""
        return 1 + len(self.boards)

    @property
    def num_roots(self) -> int:
        """Rows of depth 0: 1, or the number of trees in a forest."""
        return self.depth_slices[0].stop

    @property
    def table_rows(self) -> int:
        """Rows of the multiplier table (see :class:`Transition`): the all-ones row, one validity mask per
        board, then ``num_actions`` strategy rows per decision."""
        return self.strategy_offset + len(self.dec_rows) * self.num_actions

    @property
    def num_rows(self) -> int:
        """N, the global rows of the tree (or forest): one per node, across every depth."""
        return len(self.nodes)

    @property
    def num_hands(self) -> int:
        """H, the hands this lookahead carries: the rows ``hands`` picks out of the hand space."""
        return len(self.hands)

    def decision_index(self, row: int) -> int:
        """Index (into the decision tensors) of the decision at global ``row``."""
        hits = (self.dec_rows == row).nonzero()
        if len(hits) == 0:
            raise ValueError(f"row {row} is not a decision")
        return int(hits[0, 0])

    def row_key(self, row: int) -> tuple[str, tuple[int, ...]]:
        """``(betting, board)``: identifies a row across lookaheads built from the same history."""
        return self.nodes[row].state.betting_string(), self.boards[int(self.row_board[row])]

    def children_of(self, row: int) -> list[int]:
        """Global rows of the children of ``row`` (actions in order, or one per dealt card)."""
        for d, sl in enumerate(self.depth_slices):
            if sl.start <= row < sl.stop:
                if d + 1 >= len(self.depth_slices):
                    return []
                parents = self.transitions[d].parent
                local = (parents == row).nonzero().flatten()
                return [self.depth_slices[d + 1].start + int(i) for i in local]
        raise ValueError(f"row {row} out of range")


def compile_lookahead(
    root: Node | Sequence[Node],
    space: HandSpace,
    hands: np.ndarray,
    device: torch.device,
    dtype: torch.dtype = torch.float32,
) -> Lookahead:
    """Lay out ``root`` (built on the root state's board) for the hand list ``hands``; a
    sequence of roots gives a forest, root i at row i (``hands`` must then cover every
    tree's hands, and a tree's root reach must be zero on the hands its board blocks)."""
    roots = [root] if isinstance(root, Node) else list(root)
    if not roots:
        raise ValueError("a lookahead needs at least one root")
    device = canonical_device(device)
    deck = space.deck
    k = space.game.num_hole_cards
    boards: list[tuple[int, ...]] = []
    board_id: dict[tuple[int, ...], int] = {}
    hands = np.asarray(hands, dtype=np.int64)

    levels: list[list[tuple[Node, int]]] = [[]]
    for r in roots:
        root_board = tuple(int(c) for c in r.state.board)
        if root_board not in board_id:
            board_id[root_board] = len(boards)
            boards.append(root_board)
        levels[0].append((r, board_id[root_board]))
    links: list[list[tuple[int, int, int | None]]] = []  # per child: (parent local, slot, chance card-set id)
    chance_sets: list[tuple[int, ...]] = []
    while True:
        nxt: list[tuple[Node, int]] = []
        link: list[tuple[int, int, int | None]] = []
        for i, (node, b) in enumerate(levels[-1]):
            if node.kind is NodeKind.DECISION:
                for a, child in enumerate(node.children):
                    nxt.append((child, b))
                    link.append((i, a, None))
            elif node.kind is NodeKind.CHANCE:
                board = boards[b]
                assert node.next_round is not None
                n_new = space.game.board_cards_through(node.next_round) - len(board)
                remaining = [c for c in deck if c not in board]
                for slot, combo in enumerate(_combinations(remaining, n_new)):
                    new_board = board + combo
                    if new_board not in board_id:
                        board_id[new_board] = len(boards)
                        boards.append(new_board)
                    nxt.append((node.children[0], board_id[new_board]))
                    chance_sets.append(combo)
                    link.append((i, slot, len(chance_sets) - 1))
        if not nxt:
            break
        levels.append(nxt)
        links.append(link)

    # global rows
    offsets = np.cumsum([0] + [len(l) for l in levels])
    depth_slices = [slice(int(offsets[d]), int(offsets[d + 1])) for d in range(len(levels))]
    nodes = [n for level in levels for n, _ in level]
    row_board = np.array([b for level in levels for _, b in level], dtype=np.int64)

    # decisions, player 0's first so that each player's tensors are contiguous slices
    dec_global = sorted((r for r, n in enumerate(nodes) if n.kind is NodeKind.DECISION), key=lambda r: (nodes[r].player, r))
    n_dec0 = sum(1 for r in dec_global if nodes[r].player == 0)
    dec_of_row = {r: m for m, r in enumerate(dec_global)}
    A = max((len(nodes[r].children) for r in dec_global), default=1)
    dec_children = np.zeros((len(dec_global), A), dtype=np.int64)
    dec_valid = np.zeros((len(dec_global), A), dtype=bool)
    for m, r in enumerate(dec_global):
        dec_children[m, :] = r

    valid_by_board = np.stack([space.valid(b)[hands] for b in boards]).astype(np.float64)  # [B, H]
    strat_off = 1 + len(boards)
    transitions: list[Transition] = []
    for d, link in enumerate(links):
        start, child_start = depth_slices[d].start, depth_slices[d + 1].start
        parent = np.array([start + p for p, _, _ in link], dtype=np.int64)
        src = np.zeros((2, len(link)), dtype=np.int64)
        weight = np.ones(len(link))
        for j, (p, slot, cset) in enumerate(link):
            prow = start + p
            if cset is not None:
                child_b = int(row_board[child_start + j])
                parent_b = int(row_board[prow])
                n_new = len(boards[child_b]) - len(boards[parent_b])
                src[:, j] = 1 + child_b
                weight[j] = 1.0 / comb(len(deck) - len(boards[parent_b]) - 2 * k, n_new)
            else:
                m = dec_of_row[prow]
                dec_children[m, slot] = child_start + j
                dec_valid[m, slot] = True
                src[nodes[prow].player, j] = strat_off + m * A + slot
        has_chance = any(c is not None for _, _, c in link)
        transitions.append(
            Transition(
                parent=torch.as_tensor(parent, device=device),
                parent_local=torch.as_tensor(parent - start, device=device),
                src=torch.as_tensor(src, device=device),
                chance_weight=torch.as_tensor(weight, dtype=dtype, device=device).view(-1, 1) if has_chance else None,
            )
        )

    fold = [r for r, n in enumerate(nodes) if n.kind is NodeKind.FOLD]
    showdown = [r for r, n in enumerate(nodes) if n.kind is NodeKind.SHOWDOWN]
    leaf = [r for r, n in enumerate(nodes) if n.kind is NodeKind.LEAF]
    chance = [r for r, n in enumerate(nodes) if n.kind is NodeKind.CHANCE]
    fold_payoff = np.array([nodes[r].state.payoffs() for r in fold], dtype=np.float64).reshape(-1, 2)
    showdown_amount = np.array([min(nodes[r].spent) for r in showdown], dtype=np.float64)

    terminal = TerminalEquity(space, hands, boards, device, dtype)
    tt = lambda a, **kw: torch.as_tensor(np.asarray(a), device=device, **kw)  # noqa: E731
    return Lookahead(
        root=roots[0],
        space=space,
        hands=hands,
        device=device,
        dtype=dtype,
        boards=boards,
        depth_slices=depth_slices,
        nodes=nodes,
        row_board=row_board,
        transitions=transitions,
        board_valid=torch.as_tensor(valid_by_board, dtype=dtype, device=device),
        dec_rows=tt(np.array(dec_global, dtype=np.int64)),
        dec_actor=tt(np.array([nodes[r].player for r in dec_global], dtype=np.int64)),
        dec_slices=(slice(0, n_dec0), slice(n_dec0, len(dec_global))),
        dec_children=tt(dec_children),
        dec_valid=tt(dec_valid),
        num_actions=A,
        fold_rows=tt(np.array(fold, dtype=np.int64)),
        fold_payoff=tt(fold_payoff, dtype=dtype),
        fold_boards=tt(row_board[fold] if fold else np.zeros(0, dtype=np.int64)),
        showdown_rows=tt(np.array(showdown, dtype=np.int64)),
        showdown_amount=tt(showdown_amount, dtype=dtype),
        showdown_boards=row_board[showdown] if showdown else np.zeros(0, dtype=np.int64),
        leaves=LeafInfo(
            rows=tt(np.array(leaf, dtype=np.int64)),
            boards=[boards[row_board[r]] for r in leaf],
            spent=np.array([nodes[r].spent for r in leaf], dtype=np.float64).reshape(-1, 2),
            next_round=np.array([nodes[r].next_round for r in leaf], dtype=np.int64),
        ),
        chance_rows=np.array(chance, dtype=np.int64),
        terminal=terminal,
    )


def chance_outcome(parent: Sequence[int], board: Sequence[int], deck: Sequence[int]) -> tuple[int, ...]:
    """The lookahead's name for ``board`` dealt below a chance node on ``parent``: the new cards in
    deck order, as the lookahead enumerates them, whatever order the dealer gave them in (a flop
    comes as three cards at once)."""
    order = {c: i for i, c in enumerate(deck)}
    return tuple(int(c) for c in parent) + tuple(sorted((int(c) for c in board[len(parent) :]), key=order.__getitem__))


def _combinations(cards: list[int], n: int) -> list[tuple[int, ...]]:
    return list(combinations(cards, n))
