"""Playing a blueprint: find the tree node of a real state (translating the opponent's bets the tree
lacks), look up the hand's bucket, post-process the average strategy and turn the chosen tree action
into a legal real one. A table lookup per decision, no solving."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from agent.blueprint.mccfr import Blueprint
from agent.blueprint.postprocess import postprocess
from agent.blueprint.translation import pot_fraction, real_action, translate_bet
from agent.solver.tree import NodeKind
from protocol.state import CALL, Action, ActionKind, HandState

_KIND_NAMES = {ActionKind.FOLD: "fold", ActionKind.CALL: "call", ActionKind.RAISE: "bet"}


@dataclass
class HandPath:
    """One hand's way through the tree: the tree child taken for each real action so far (a translated
    bet is translated once per hand, so the path does not change as the hand goes on)."""

    children: list[int] = field(default_factory=list)


class BlueprintPolicy:
    """The blueprint's decisions at real states (``space``'s hand indices for the cards)."""

    def __init__(self, blueprint: Blueprint, method: str = "none", threshold: float = 0.0) -> None:
        self.blueprint = blueprint
        self.tree = blueprint.tree
        self.method = method
        self.threshold = threshold
        postprocess(np.ones(2) / 2, ["call", "bet"], method, threshold, np.random.default_rng(0))  # checks method

    def locate(self, state: HandState, path: HandPath, rng: np.random.Generator) -> int | None:
        """The flat index of the tree decision matching ``state`` (None where the hand left the tree:
        an action the tree cannot hold there)."""
        tree = self.tree
        real = HandState.initial(state.game)
        n = 0
        i = 0
        for round_actions in state.actions:
            for action in round_actions:
                n = self._below_chance(n)
                node = tree.nodes[n]
                if node.kind is not NodeKind.DECISION:
                    return None
                if i == len(path.children):
                    child = self._translate(node.actions, node.state, real, action, rng)
                    if child is None:
                        return None
                    path.children.append(child)
                n = int(tree.flat.first_child[n]) + path.children[i]
                real = _dealt(real.apply(action))
                i += 1
        n = self._below_chance(n)
        return n if tree.nodes[n].kind is NodeKind.DECISION else None

    def decide(self, state: HandState, bucket: int, path: HandPath, rng: np.random.Generator) -> tuple[Action, dict]:
        """The action to play at ``state`` with our cards in ``bucket`` of this round, and what
        it came from (for logs); check/call where the hand has left the tree."""
        n = self.locate(state, path, rng)
        if n is None:
            return CALL, {"on_tree": False}
        node = self.tree.nodes[n]
        probs = self.blueprint.average(n, bucket)
        kinds = [_KIND_NAMES[a.kind] for a in node.actions]
        played = postprocess(probs, kinds, self.method, self.threshold, rng)
        a = int(rng.choice(len(played), p=played))
        action = real_action(node.state, node.actions[a], state)
        if action.kind is not node.actions[a].kind:  # e.g. a tree raise where the real stacks allow none
            a = next((k for k, t in enumerate(node.actions) if t.kind is action.kind), a)
        path.children.append(a)
        return action, {"on_tree": True, "node": n, "tree_action": str(node.actions[a]), "probability": float(played[a])}

    def strategy_all(
        self, state: HandState, buckets: np.ndarray, path: HandPath, rng: np.random.Generator
    ) -> tuple[list[Action], list[int], np.ndarray] | None:
        """Every hand's (post-processed) strategy at ``state``: the real actions, the tree child each
        plays, and ``[actions, hands]`` probabilities (``buckets`` per hand, -1 blocked: zero). None off
        the tree. Tree actions that become the same real action (a size clamped to all-in) are merged."""
        n = self.locate(state, path, rng)
        if n is None:
            return None
        node = self.tree.nodes[n]
        kinds = [_KIND_NAMES[a.kind] for a in node.actions]
        real = [real_action(node.state, a, state) for a in node.actions]
        actions = list(dict.fromkeys(real))
        probs = np.zeros((len(actions), len(buckets)))
        column = [actions.index(r) for r in real]
        for h in np.flatnonzero(buckets >= 0):
            played = postprocess(self.blueprint.average(n, int(buckets[h])), kinds, self.method, self.threshold, rng)
            np.add.at(probs[:, h], column, played)
        children = [real.index(a) for a in actions]
        return actions, children, probs

    def _below_chance(self, n: int) -> int:
        while self.tree.nodes[n].kind is NodeKind.CHANCE:
            n = int(self.tree.flat.first_child[n])
        return n

    @staticmethod
    def _translate(actions: list[Action], tree_state: HandState, real: HandState, action: Action, rng) -> int | None:
        if action.kind is not ActionKind.RAISE:
            return next((k for k, a in enumerate(actions) if a.kind is action.kind), None)
        raises = [k for k, a in enumerate(actions) if a.kind is ActionKind.RAISE]
        if not raises:
            return None
        if real.game.is_limit or len(raises) == 1:
            return raises[0]
        tree_bounds = tree_state.raise_bounds()
        real_bounds = real.raise_bounds()
        tree_all_in = tree_bounds is not None and actions[raises[-1]].size >= tree_bounds[1]
        if real_bounds is not None and action.size >= real_bounds[1]:
            return raises[-1] if tree_all_in else None  # all-in is all-in
        if tree_all_in and len(raises) > 1:
            raises = raises[:-1]  # a bet that leaves chips behind is not mapped to all-in (the tree would end)
        sizes = [pot_fraction(tree_state, actions[k].size) for k in raises]
        return raises[translate_bet(pot_fraction(real, action.size), sizes, rng)]


def _dealt(state: HandState) -> HandState:
    """``state`` with placeholder cards where a new round needs them (the tree is card-free)."""
    missing = state.board_cards_needed
    return state.with_board(state.board + (-1,) * missing) if missing else state
