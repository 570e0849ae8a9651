"""The blueprint's betting tree: the whole game's public tree under a betting abstraction, laid out
flat (breadth first, each node's children side by side) for the C MCCFR (:mod:`native.mccfr`)."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from agent.solver.tree import BetSizing, Node, NodeKind, build_tree
from native.mccfr import CHANCE, DECISION, FOLD, MAX_ACTIONS, SHOWDOWN, FlatTree
from protocol.gamedef import Game
from protocol.state import HandState

_KINDS = {NodeKind.DECISION: DECISION, NodeKind.FOLD: FOLD, NodeKind.SHOWDOWN: SHOWDOWN, NodeKind.CHANCE: CHANCE}


@dataclass(frozen=True, eq=False)
class BlueprintTree:
    """``nodes[n]`` is flat node ``n`` of :attr:`flat`; a decision's information set for ``bucket``
    holds its ``len(node.actions)`` slots from ``flat.slot[n] + bucket * len(node.actions)``."""

    root: Node
    nodes: tuple[Node, ...]
    flat: FlatTree
    #: the betting abstraction, one per round
    sizing: tuple[BetSizing, ...]

    @property
    def game(self) -> Game:
        """The game the tree was built for (its root state's)."""
        return self.root.state.game

    @classmethod
    def build(cls, game: Game, sizing: BetSizing | Sequence[BetSizing], num_buckets: Sequence[int]) -> BlueprintTree:
        """The tree of ``game`` from its first state with ``sizing`` (one, or one per round) and
        ``num_buckets[r]`` card buckets in round ``r``."""
        if len(num_buckets) != game.num_rounds:
            raise ValueError(f"{len(num_buckets)} bucket counts given for {game.num_rounds} rounds")
        per_round = tuple(sizing) if isinstance(sizing, Sequence) else (sizing,) * game.num_rounds
        root = build_tree(HandState.initial(game), list(per_round))
        order: list[Node] = []
        queue = deque([root])
        while queue:
            node = queue.popleft()
            order.append(node)
            queue.extend(node.children)
        index = {id(node): n for n, node in enumerate(order)}
        size = len(order)
        kind = np.zeros(size, np.int8)
        player = np.zeros(size, np.int8)
        round_ = np.zeros(size, np.int8)
        first_child = np.zeros(size, np.int32)
        num_children = np.zeros(size, np.int8)
        slot = np.zeros(size, np.int64)
        fold_value0 = np.zeros(size, np.float32)
        stake = np.zeros(size, np.float32)
        slots = 0
        for n, node in enumerate(order):
            if node.kind not in _KINDS:
                raise ValueError(f"a blueprint tree covers the whole game; {node.kind.value} node found")
            kind[n] = _KINDS[node.kind]
            state = node.state
            round_[n] = state.round
            if node.children:
                first_child[n] = index[id(node.children[0])]
                num_children[n] = len(node.children)
            if node.kind is NodeKind.DECISION:
                if len(node.actions) > MAX_ACTIONS:
                    raise ValueError(f"{len(node.actions)} actions at one decision; at most {MAX_ACTIONS}")
                player[n] = node.player
                slot[n] = slots
                slots += num_buckets[state.round] * len(node.actions)
            elif node.kind is NodeKind.FOLD:
                fold_value0[n] = -state.spent[0] if state.folded[0] else state.spent[1]
            elif node.kind is NodeKind.SHOWDOWN:
                stake[n] = min(state.spent)
        flat = FlatTree(kind, player, round_, first_child, num_children, slot, fold_value0, stake, np.asarray(num_buckets), slots)
        return cls(root, tuple(order), flat, per_round)

    def index_of(self, node: Node) -> int:
        """The flat index of one of this tree's nodes."""
        return self._index[id(node)]

    @cached_property
    def _index(self) -> dict[int, int]:
        return {id(node): n for n, node in enumerate(self.nodes)}

    def info_set(self, n: int, bucket: int) -> slice:
        """The slots of decision ``n``'s information set for ``bucket``."""
        a = int(self.flat.num_children[n])
        start = int(self.flat.slot[n]) + bucket * a
        return slice(start, start + a)
