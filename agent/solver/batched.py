"""Many last-round situations solved at once (data generation for small games).

Solving one Leduc situation costs about a millisecond per CFR iteration, almost all of it
per-operation overhead on tensors of five hands. Situations whose public trees have the
same shape (same kinds of nodes, same actors, same branching) differ only in their
chip amounts, ranges and boards, so a batch of them runs as one CFR over arrays
``[situation, hand]``: the overhead is paid once per node and iteration, not once per
situation. Only trees without chance nodes or leaves qualify (the last betting round);
the rules (regret matching, discounting, averaging) are those of :class:`agent.solver.variant.Variant`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agent.solver.handspace import HandSpace
from agent.solver.tree import BetSizing, Node, NodeKind, build_tree
from agent.solver.variant import Variant
from protocol.state import HandState


@dataclass(frozen=True)
class FlatNode:
    """One node of a tree shape: kind, actor (decisions), children (indices, pre-order)."""

    kind: NodeKind
    player: int
    children: tuple[int, ...]


def flatten(root: Node) -> tuple[tuple[FlatNode, ...], np.ndarray]:
    """``(shape, amounts)``: the tree's shape and, per node, its chip amounts ``[N, 2]``.

    Fold nodes carry the chips each position wins (``state.payoffs()``), showdown nodes the
    amount at stake twice (both contributions), other nodes zeros."""
    nodes: list[Node] = []
    index: dict[int, int] = {}

    def visit(node: Node) -> None:
        if node.kind in (NodeKind.CHANCE, NodeKind.LEAF):
            raise ValueError("batched solving covers the last betting round only (no chance nodes or leaves)")
        index[id(node)] = len(nodes)
        nodes.append(node)
        for child in node.children:
            visit(child)

    visit(root)
    shape = []
    amounts = np.zeros((len(nodes), 2))
    for i, node in enumerate(nodes):
        player = node.player if node.kind is NodeKind.DECISION else -1
        shape.append(FlatNode(node.kind, int(player if player is not None else -1), tuple(index[id(c)] for c in node.children)))
        if node.kind is NodeKind.FOLD:
            amounts[i] = node.state.payoffs()
        elif node.kind is NodeKind.SHOWDOWN:
            amounts[i] = min(node.spent)
    return tuple(shape), amounts


@dataclass
class BatchSpot:
    """One situation of a batch: a last-round state and both players' ranges ``[2, hands]``."""

    state: HandState
    ranges: np.ndarray


def solve_batch(space: HandSpace, spots: Sequence[BatchSpot], sizing: BetSizing, variant: Variant, iterations: int) -> np.ndarray:
    """``[n, 2, hands]`` counterfactual values (chips, blocked hands 0) at the root of each spot,
    for the average strategies after ``iterations``; spots are grouped by tree shape."""
    out = np.zeros((len(spots), 2, space.size))
    groups: dict[tuple[FlatNode, ...], list[tuple[int, np.ndarray]]] = {}
    for i, spot in enumerate(spots):
        shape, amounts = flatten(build_tree(spot.state, sizing))
        groups.setdefault(shape, []).append((i, amounts))
    for shape, members in groups.items():
        idx = [i for i, _ in members]
        amounts = np.stack([a for _, a in members], axis=1)  # [N, B, 2]
        batch = [spots[i] for i in idx]
        out[idx] = _GroupSolver(space, shape, amounts, batch, variant).run(iterations)
    return out


class _GroupSolver:
    """CFR over one tree shape for a batch of situations: every array is ``[B, H]`` per node."""

    def __init__(
        self, space: HandSpace, shape: tuple[FlatNode, ...], amounts: np.ndarray, spots: Sequence[BatchSpot], variant: Variant
    ) -> None:
        self.shape = shape
        self.variant = variant
        self.amounts = amounts
        valid = np.stack([space.valid(s.state.board) for s in spots]).astype(np.float64)  # [B, S]
        compat = space.compatible().astype(np.float64)
        strength = np.stack([space.strengths(s.state.board) for s in spots])  # [B, S]
        both = valid[:, :, None] * valid[:, None, :] * compat[None]
        #: [B, S, S] fold masks and showdown signs (0 where hands collide or are blocked)
        self.compat = both
        self.sign = np.sign(strength[:, :, None] - strength[:, None, :]) * both
        self.ranges = np.stack([s.ranges for s in spots], axis=1) * valid[None]  # [2, B, S]
        self.valid2 = np.stack([valid, valid])  # [2, B, S]: every possible hand reached (own-reach weights)
        self.decisions = [i for i, n in enumerate(shape) if n.kind is NodeKind.DECISION]
        b, h = valid.shape
        self.regret = {d: np.zeros((len(shape[d].children), b, h)) for d in self.decisions}
        self.average = {d: np.zeros((len(shape[d].children), b, h)) for d in self.decisions}

    def _strategy(self, d: int, regret: np.ndarray) -> np.ndarray:
        positive = np.maximum(regret, 0.0)
        total = positive.sum(axis=0, keepdims=True)
        uniform = 1.0 / regret.shape[0]
        return np.where(total > 0, positive / np.where(total > 0, total, 1.0), uniform)

    def _reaches(self, strategy: dict[int, np.ndarray], root: np.ndarray | None = None) -> list[np.ndarray]:
        """Per node ``[2, B, H]`` reach of both players from ``root`` (default: the ranges)."""
        reach: list[np.ndarray | None] = [None] * len(self.shape)
        reach[0] = self.ranges if root is None else root
        for i, node in enumerate(self.shape):
            if node.kind is not NodeKind.DECISION:
                continue
            here = reach[i]
            for a, c in enumerate(node.children):
                child = here.copy()
                child[node.player] = here[node.player] * strategy[i][a]
                reach[c] = child
        return reach  # type: ignore[return-value]

    def _terminal(self, i: int, player: int, opp_reach: np.ndarray) -> np.ndarray:
        node = self.shape[i]
        if node.kind is NodeKind.FOLD:
            mass = np.matmul(self.compat, opp_reach[:, :, None])[:, :, 0]
            return mass * self.amounts[i, :, player][:, None]
        return np.matmul(self.sign, opp_reach[:, :, None])[:, :, 0] * self.amounts[i, :, 0][:, None]

    def _values(self, player: int, strategy: dict[int, np.ndarray], reach: list[np.ndarray], regret_update: bool) -> np.ndarray:
        values: list[np.ndarray | None] = [None] * len(self.shape)
        for i in reversed(range(len(self.shape))):
            node = self.shape[i]
            if node.kind is not NodeKind.DECISION:
                values[i] = self._terminal(i, player, reach[i][1 - player])
                continue
            child = np.stack([values[c] for c in node.children])  # [A, B, H]
            if node.player == player:
                v = (strategy[i] * child).sum(axis=0)
                if regret_update:
                    self.regret[i] += child - v[None]
            else:
                v = child.sum(axis=0)
            values[i] = v
        return values[0]  # type: ignore[return-value]

    def run(self, iterations: int) -> np.ndarray:
        variant = self.variant
        for t in range(1, iterations + 1):
            # simultaneous updates: both players' from the strategy at the iteration's start
            shared = None if variant.alternating else {d: self._strategy(d, self.regret[d]) for d in self.decisions}
            for player in (0, 1):
                strategy = shared if shared is not None else {d: self._strategy(d, self.regret[d]) for d in self.decisions}
                reach = self._reaches(strategy)
                self._values(player, strategy, reach, regret_update=True)
                # the average strategy is weighted by the player's own reach without its range: the
                # range is the same factor at every decision of a hand and cancels, except where it
                # is 0, where the hand would be left with a uniform strategy and the value of playing
                # it (not the value of playing it well, the counterfactual value a leaf needs)
                own = self._reaches(strategy, self.valid2)
                pos, neg = variant.discount(t)
                w = variant.average_weight(t)
                for d in self.decisions:
                    if self.shape[d].player != player:
                        continue
                    r = self.regret[d]
                    if variant.floors_regrets:
                        np.maximum(r, 0.0, out=r)
                    elif (pos, neg) != (1.0, 1.0):
                        r *= np.where(r > 0, pos, neg)
                    if w:
                        self.average[d] += w * own[d][player][None] * strategy[d]
        final = {}
        for d in self.decisions:
            total = self.average[d].sum(axis=0, keepdims=True)
            n = self.average[d].shape[0]
            final[d] = np.where(total > 0, self.average[d] / np.where(total > 0, total, 1.0), 1.0 / n)
        reach = self._reaches(final)
        values = np.stack([self._values(p, final, reach, regret_update=False) for p in (0, 1)])  # [2, B, H]
        return values.transpose(1, 0, 2)
