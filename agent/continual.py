"""Continual re-solving (DeepStack section 2): what the bot keeps between decisions.

Only two vectors survive from one decision to the next: our range and the opponent's
counterfactual values (both over the hand space). Every decision re-solves the current
public state from them; then

* our action a: opponent values := the re-solve's values at the child of a;
  our range := Bayes update with the re-solve strategy for a;
* chance (new board cards): opponent values := the last re-solve's values for that
  chance outcome (through the opponent's call that closed the round, if any);
  our range := zero the hands the new cards block;
* the opponent's action: nothing (the next re-solve starts from the real state, so an
  opponent bet outside our abstraction needs no translation).

Our range and the opponent values are kept on a common scale: when our range is
renormalised, the opponent values are divided by the same factor (they are linear in
our range).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

import numpy as np

from agent.cfr import LeafValueFn
from agent.handspace import HandSpace
from agent.resolve import Solution, SolverConfig, WarmStart, resolve, solve_ranges
from agent.tree import BetSizing, NodeKind
from protocol.state import Action, ActionKind, HandState

#: leaf value functions may also give per-board values at a leaf for the chance update
ChanceValueFn = Callable[[Solution, int, tuple[int, ...]], np.ndarray]


class ContinualError(RuntimeError):
    """The state machine was driven with inconsistent states (a bug in the caller)."""


@dataclass(frozen=True)
class ResolveSettings:
    """How to re-solve: trees per round, depth limit per round, solver settings."""

    sizing: tuple[BetSizing, ...]
    config: SolverConfig = SolverConfig()
    #: per round of the root: the last round inside the lookahead (None: to the end)
    last_round: tuple[int | None, ...] = ()
    leaf_values: LeafValueFn | None = None
    #: values of the opponent at a depth-limit leaf for one next board (needed with leaf_values)
    chance_values: ChanceValueFn | None = None
    warm_start_weight: float = 0.0

    def depth_limit(self, round_: int) -> int | None:
        if round_ < len(self.last_round):
            return self.last_round[round_]
        return None


@dataclass
class Decision:
    """What a re-solve said at one decision: the strategy for every hand we might hold."""

    state: HandState
    actions: list[Action]
    strategy: np.ndarray  # [actions, hands]
    solution: Solution
    cached: bool = False


@dataclass
class HandMemory:
    position: int
    our_range: np.ndarray
    opp_values: np.ndarray
    #: the last re-solve and our action there (for the chance update)
    last: Decision | None = None
    last_action: Action | None = None
    board_at_last: tuple[int, ...] = ()
    history: list[str] = field(default_factory=list)

    def copy(self) -> "HandMemory":
        """An independent copy (the re-solve results are shared: they are never modified)."""
        return replace(self, our_range=self.our_range.copy(), opp_values=self.opp_values.copy(), history=list(self.history))


class ContinualResolver:
    """The re-solving state machine for one seat (one hand at a time)."""

    def __init__(self, space: HandSpace, settings: ResolveSettings, cache: bool = True) -> None:
        self.space = space
        self.game = space.game
        self.settings = settings
        self._root: dict[int, Solution] = {}
        self._cache: dict[tuple, Decision] | None = {} if cache else None
        self.memory: HandMemory | None = None

    # ------------------------------------------------------------------ hand life cycle
    def root_solution(self, position: int) -> Solution:
        """The re-solve of the game's first state from uniform ranges (same every hand)."""
        if position not in self._root:
            state = HandState.initial(self.game)
            uniform = self.space.uniform(state.board)
            self._root[position] = solve_ranges(
                state,
                [uniform, uniform],
                self._sizing(),
                self.settings.config,
                space=self.space,
                last_round=self.settings.depth_limit(0),
                leaf_values=self.settings.leaf_values,
            )
        return self._root[position]

    def start_hand(self, position: int) -> None:
        root = self.root_solution(position)
        our = self.space.uniform(())
        opp_values = root.values_at(0)[1 - position]
        self.memory = HandMemory(position=position, our_range=our, opp_values=opp_values)

    # ------------------------------------------------------------------ decisions
    def decide(self, state: HandState) -> Decision:
        """Re-solve ``state`` (our turn) and return the strategy for every hand we might hold."""
        mem = self._memory()
        if state.current_player != mem.position:
            raise ContinualError(f"decide() called when position {state.current_player} is to act, we are {mem.position}")
        self._catch_up_chance(state)
        key = (mem.position, state.betting_string(), tuple(state.board))
        if self._cache is not None and key in self._cache:
            decision = replace(self._cache[key], cached=True)
        else:
            decision = self._resolve(state)
            if self._cache is not None:
                self._cache[key] = decision
        mem.last = decision
        mem.last_action = None
        mem.board_at_last = tuple(state.board)
        return decision

    def _resolve(self, state: HandState) -> Decision:
        mem = self._memory()
        sizing = self._sizing()
        limit = self.settings.depth_limit(state.round)
        if not state.num_actions and state.round == 0:
            solution = self.root_solution(mem.position)
        else:
            warm = None
            if self.settings.warm_start_weight > 0 and not state.round_actions:
                warm = WarmStart(self.space.uniform(state.board), self.settings.warm_start_weight)
            solution = resolve(
                state,
                mem.our_range,
                mem.opp_values,
                sizing,
                self.settings.config,
                space=self.space,
                last_round=limit,
                leaf_values=self.settings.leaf_values,
                warm_start=warm,
            )
        return Decision(state=state, actions=solution.root_actions, strategy=solution.root_strategy(), solution=solution)

    def act(self, decision: Decision, action: Action) -> None:
        """We take ``action`` (one of ``decision.actions``): update our range and the opponent values."""
        mem = self._memory()
        if action not in decision.actions:
            raise ContinualError(f"action {action} is not one of the re-solve's actions {decision.actions}")
        i = decision.actions.index(action)
        sol = decision.solution
        child = sol.child_row(0, action)
        opp_values = sol.values_at(child)[1 - mem.position]
        new_range = mem.our_range * decision.strategy[i]
        mass = new_range.sum()
        if not mass > 0:
            # we took an action our strategy never takes: keep the old range (values stay bounds)
            mass = 1.0
            new_range = mem.our_range.copy()
        mem.our_range = new_range / mass
        mem.opp_values = opp_values / mass
        mem.last = decision
        mem.last_action = action
        mem.history.append(str(action))

    def observe(self, state: HandState) -> None:
        """Any state of the hand (opponent actions change nothing; new cards are caught up)."""
        if self.memory is None:
            return
        if state.finished:
            return
        self._catch_up_chance(state)

    # ------------------------------------------------------------------ chance
    def _catch_up_chance(self, state: HandState) -> None:
        mem = self._memory()
        if len(state.board) == len(mem.board_at_last):
            return
        new_board = tuple(state.board)
        if mem.last is not None and mem.last_action is not None:
            values = self._chance_values(mem.last, mem.last_action, new_board)
            if values is not None:
                mem.opp_values = values
        blocked = self.space.blocked(new_board)
        our = mem.our_range * ~blocked
        mass = our.sum()
        if not mass > 0:
            raise ContinualError("our range is empty after the new board cards")
        mem.our_range = our / mass
        mem.opp_values = mem.opp_values * ~blocked / mass
        mem.board_at_last = new_board

    def _chance_values(self, decision: Decision, action: Action, board: tuple[int, ...]) -> np.ndarray | None:
        """Opponent values at the chance outcome ``board`` below our action (and the opponent's call)."""
        mem = self._memory()
        sol = decision.solution
        row = sol.child_row(0, action)
        node = sol.lookahead.nodes[row]
        if node.kind is NodeKind.DECISION:
            call = next((a for a in node.actions if a.kind is ActionKind.CALL), None)
            if call is None:
                return None
            row = sol.child_row(row, call)
            node = sol.lookahead.nodes[row]
        if node.kind is NodeKind.CHANCE:
            try:
                child = sol.chance_child_row(row, board)
            except KeyError:
                return None
            # the values are scaled like our range at the time of the re-solve
            return self._rescale(sol.values_at(child)[1 - mem.position], decision, action)
        if node.kind is NodeKind.LEAF and self.settings.chance_values is not None:
            return self._rescale(self.settings.chance_values(sol, row, board)[1 - mem.position], decision, action)
        return None

    def _rescale(self, values: np.ndarray, decision: Decision, action: Action) -> np.ndarray:
        """Values from a re-solve are scaled for the range we had then; bring them to our range now."""
        mem = self._memory()
        i = decision.actions.index(action)
        before = self._range_before(decision)
        mass = (before * decision.strategy[i]).sum()
        return values / mass if mass > 0 else values

    def _range_before(self, decision: Decision) -> np.ndarray:
        sol = decision.solution
        reach = sol.result.root_reach[self._memory().position]
        r = sol.to_space(reach)
        total = r.sum()
        return r / total if total > 0 else r

    # ------------------------------------------------------------------ helpers
    def _sizing(self) -> tuple[BetSizing, ...]:
        sizing = self.settings.sizing
        if len(sizing) == 1:
            return tuple(sizing) * self.game.num_rounds
        return tuple(sizing)

    def _memory(self) -> HandMemory:
        if self.memory is None:
            raise ContinualError("start_hand() must be called first")
        return self.memory


def sample_action(decision: Decision, hand: int, rng: np.random.Generator) -> Action:
    """Draw our action for the hand we actually hold from the re-solve strategy."""
    probs = np.asarray(decision.strategy[:, hand], dtype=np.float64)
    total = probs.sum()
    if not total > 0 or not np.isfinite(probs).all():
        probs = np.ones(len(decision.actions)) / len(decision.actions)
    else:
        probs = probs / total
    return decision.actions[int(rng.choice(len(probs), p=probs))]


def normalize_strategy(strategy: np.ndarray, valid: Sequence[bool]) -> np.ndarray:
    """Each valid hand's column sums to one (uniform where a column is empty)."""
    s = np.array(strategy, dtype=np.float64)
    totals = s.sum(axis=0)
    empty = totals <= 0
    s[:, empty] = 1.0 / s.shape[0]
    s /= s.sum(axis=0, keepdims=True)
    s[:, ~np.asarray(valid)] = 0.0
    return s
