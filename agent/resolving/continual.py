"""Continual re-solving (DeepStack section 2): what the bot keeps between decisions.

Only two vectors survive from one decision to the next: our range and the opponent's
counterfactual values (both over the hand space). Every decision re-solves the current
public state from them; then

* our action a: opponent values := the re-solve's values at the child of a;
  our range := Bayes update with the re-solve strategy for a;
* chance (new board cards): opponent values := the last re-solve's values for that
  chance outcome (through the opponent's call that closed the round, if any);
  our range := zero the hands the new cards block;
* the opponent's action: nothing for the two vectors (the next re-solve starts from the
  real state, so an opponent bet outside our abstraction needs no translation); it only
  sharpens an *estimate* of the opponent's range (Bayes' rule with the opponent's strategy
  in our last re-solve, the nearest bet size standing in for one outside the tree). When
  the opponent acted first in a round after the pre-flop, the re-solve starts at the
  round's start instead, with the opponent's real action added to the tree there (see
  :meth:`ContinualResolver._round_start`), and the opponent's strategy there updates the
  estimate when we act (no earlier re-solve of ours reached that action).

The estimate is used for DeepStack's opponent-range warm start at our first action of a
round (section 3). It matters because the values at a depth limit (check-down values, or a
network's) promise the opponent more than the next round can take from him: the gadget then
lets nearly every opponent hand "terminate", nothing our strategy does changes the re-solve's
value, and the bot checks almost everything (measured: 175 of 181 flops, every river, in a
match against a calling station). The aggressive warm start makes the opponent follow with
the estimated range with probability ``warm_start_weight``.

Our range and the opponent values are kept on a common scale: when our range is
renormalised, the opponent values are divided by the same factor (they are linear in
our range). A re-solve is boiled down to a :class:`Decision` (strategy, child values,
chance-outcome values or leaf snapshots) right away, so nothing large is kept between
decisions and pre-flop decisions can be cached by betting sequence.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from agent.leaves.snapshot import LeafSnapshot
from agent.resolving.decision import Decision, opponent_strategies, summarize
from agent.resolving.settings import ResolveSettings, StreetSettings
from agent.solver.handspace import HandSpace
from agent.solver.lookahead import chance_outcome
from agent.solver.resolve import WarmStart, resolve, solve_ranges
from agent.solver.tree import BetSizing, bet_actions
from protocol.state import CALL, FOLD, Action, ActionKind, HandState


class ContinualError(RuntimeError):
    """The state machine was driven with inconsistent states (a bug in the caller)."""


@dataclass
class HandMemory:
    """What one seat carries between its decisions in a hand: our range and the opponent's counterfactual
    values (the gadget's input, on a common scale), the last re-solve, and the opponent-range estimate."""

    position: int
    our_range: np.ndarray
    opp_values: np.ndarray
    #: the last re-solve and our action there (for the chance update)
    last: Decision | None = None
    last_action: Action | None = None
    board_at_last: tuple[int, ...] = ()
    history: list[str] = field(default_factory=list)
    #: estimate of the opponent's range (normalised; Bayes' rule with our model of its play)
    opp_range: np.ndarray | None = None
    #: the opponent's strategies the estimate is updated with, and the actions already seen
    opp_strategies: dict[str, tuple[list[Action], np.ndarray]] = field(default_factory=dict)
    actions_seen: int = 0

    def copy(self) -> HandMemory:
        """An independent copy (decisions are shared: they are never modified)."""
        return replace(
            self,
            our_range=self.our_range.copy(),
            opp_values=self.opp_values.copy(),
            history=list(self.history),
            opp_range=None if self.opp_range is None else self.opp_range.copy(),
        )


class ContinualResolver:
    """The re-solving state machine for one seat (one hand at a time)."""

    def __init__(self, space: HandSpace, settings: ResolveSettings, cache: bool = True) -> None:
        self.space = space
        self.game = space.game
        self.settings = settings
        self._root: dict[int, Decision] = {}
        self._root_values: dict[int, np.ndarray] = {}
        #: the opponent's strategy at the first state when it acts first (we are not to act)
        self._root_opp: dict[int, dict[str, tuple[list[Action], np.ndarray]]] = {}
        self._cache: OrderedDict[tuple, Decision] | None = OrderedDict() if cache else None
        self.memory: HandMemory | None = None
        self.clock: Callable[[], float] = time.monotonic

    # ------------------------------------------------------------------ hand life cycle
    def _root_solve(self, position: int) -> None:
        """Solve the game's first state from uniform ranges (the same every hand)."""
        state = HandState.initial(self.game)
        st = self.settings.street(0)
        uniform = self.space.uniform(state.board)
        start = time.perf_counter()
        sol = solve_ranges(
            state,
            [uniform, uniform],
            self._sizing(st),
            st.config,
            space=self.space,
            last_round=st.last_round,
            leaf_values=st.leaf_values,
        )
        self._root_values[position] = sol.values_at(0)[1 - position]
        if state.current_player == position:
            self._root[position] = summarize(sol, state, time.perf_counter() - start)
        else:
            self._root_opp[position] = opponent_strategies(sol, 1 - position)

    def prepare(self) -> None:
        """Solve the game's first state for both positions now (before a match starts), so
        that no decision of the match pays for it."""
        for position in range(self.game.num_players):
            if position not in self._root_values:
                self._root_solve(position)

    def prepare_first_round(self, limit: int = 256) -> int:
        """Re-solve the first-round decisions that the abstraction's own lines reach (both
        positions; the opponent taking each of the tree's actions) into the decision cache, at
        most ``limit`` of them, breadth first; returns how many were solved. With these shipped,
        a first-round decision is re-solved in a match only after an action off the tree (a
        size the abstraction does not have)."""
        if self._cache is None:
            return 0
        sizing = self._sizing(self.settings.street(0))[0]
        solved = 0
        for position in range(self.game.num_players):
            paths: list[tuple[Action, ...]] = [()]
            while paths and solved < limit:
                path = paths.pop(0)
                state = self._replay(position, path)
                if state.finished or state.round > 0 or state.board_cards_needed:
                    continue
                if state.current_player == position:
                    before = len(self._cache)
                    decision = self.decide(state)
                    solved += len(self._cache) > before
                    actions = list(decision.actions)
                else:
                    actions = [CALL, *bet_actions(state, sizing, len(state.actions[0]))]
                paths += [path + (a,) for a in actions if a != FOLD]
        self.memory = None
        return solved

    def _replay(self, position: int, path: tuple[Action, ...]) -> HandState:
        """Play ``path`` from a hand's first state as the bot would (cached decisions at ours)."""
        self.start_hand(position)
        state = HandState.initial(self.game)
        self.observe(state)
        for action in path:
            if state.current_player == position:
                self.act(self.decide(state), action)
            state = state.apply(action)
            self.observe(state)
        return state

    def export_preflop(self) -> dict:
        """The re-solves that repeat from hand to hand (first states, cached pre-flop
        decisions), to be saved and given back to :meth:`import_preflop` by a later process."""
        return {
            "root": dict(self._root),
            "root_values": dict(self._root_values),
            "root_opp": dict(self._root_opp),
            "cache": list(self._cache.items()) if self._cache is not None else [],
        }

    def import_preflop(self, data: dict) -> None:
        """Take back what :meth:`export_preflop` saved (first-state solves, the newest ``cache_size``
        cached decisions); one that raises has been only partly applied, so its caller drops the resolver."""
        self._root.update(data["root"])
        self._root_values.update(data["root_values"])
        self._root_opp.update(data.get("root_opp", {}))
        if self._cache is not None:
            for key, decision in data["cache"][-self.settings.cache_size :]:
                self._cache[key] = decision

    def start_hand(self, position: int) -> None:
        """A new hand in ``position``: uniform ranges and the first state's opponent values as the gadget's
        input (the first state is solved now unless :meth:`prepare` or an import did it)."""
        if position not in self._root_values:
            self._root_solve(position)
        our = self.space.uniform(())
        self.memory = HandMemory(
            position=position,
            our_range=our,
            opp_values=self._root_values[position].copy(),
            opp_range=our.copy(),
            opp_strategies=self._root_opp.get(position, {}),
        )

    # ------------------------------------------------------------------ decisions
    def decide(self, state: HandState, deadline: float | None = None) -> Decision:
        """The strategy at ``state`` (our turn) for every hand we might hold: the answer solved
        before (:meth:`precomputed`), else a re-solve (:meth:`re_solve`).

        ``deadline`` (``time.monotonic()`` seconds) stops the solver early with the best
        average strategy so far."""
        hit = self.precomputed(state)
        return hit if hit is not None else self.re_solve(state, deadline)

    def precomputed(self, state: HandState) -> Decision | None:
        """The decision at ``state`` (our turn) that needs no solving, played from here on, else None:
        the first state's, solved before the match, or a cached pre-flop one of the range we hold now.
        A bot short of time still plays these; only :meth:`re_solve` needs the clock. Brings the hand's
        bookkeeping up to ``state`` (the opponent's actions and new cards) either way."""
        mem = self._memory()
        if state.current_player != mem.position:
            raise ContinualError(f"decide() called when position {state.current_player} is to act, we are {mem.position}")
        self._catch_up_opponent(state)
        self._catch_up_chance(state)
        hit = None
        if not state.num_actions and state.round == 0 and mem.position in self._root:
            hit = replace(self._root[mem.position], cached=True)
        elif self._cache is not None and not state.board:
            hit = self._cached((mem.position, state.betting_string()))
        if hit is not None:
            self._playing(hit, state)
        return hit

    def re_solve(self, state: HandState, deadline: float | None = None) -> Decision:
        """Re-solve ``state`` (our turn; after :meth:`precomputed` found nothing) and play from it."""
        mem = self._memory()
        decision = self._resolve(state, deadline)
        # a re-solve the clock cut short is played once, not kept for the rest of the match
        if (
            self._cache is not None
            and not state.board
            and decision.iterations >= self.settings.street(state.round).config.iterations
        ):
            self._cache[(mem.position, state.betting_string())] = decision
            if len(self._cache) > self.settings.cache_size:
                self._cache.popitem(last=False)
        self._playing(decision, state)
        return decision

    def _playing(self, decision: Decision, state: HandState) -> None:
        """``decision`` is the one at ``state``: our action, new cards and values follow from it."""
        mem = self._memory()
        mem.last = decision
        mem.last_action = None
        mem.board_at_last = tuple(state.board)

    def _cached(self, key: tuple) -> Decision | None:
        """The cached decision at ``key`` if it was solved from the range we hold now, else None
        (and it leaves the cache). An earlier decision on the same line that was evicted, or cut
        short by the clock, and solved again may lead here with another range; the cached
        strategy would then be played for hands in proportions it was not solved for."""
        assert self._cache is not None
        mem = self._memory()
        hit = self._cache.get(key)
        if hit is None:
            return None
        if not np.allclose(hit.our_range, mem.our_range, rtol=1e-4, atol=1e-6):
            del self._cache[key]
            return None
        self._cache.move_to_end(key)
        return replace(hit, cached=True)

    def _resolve(self, state: HandState, deadline: float | None) -> Decision:
        mem = self._memory()
        st = self.settings.street(state.round)
        origin = self._round_start(state)
        if origin is None:
            root, opponent_action, warm = state, None, self._warm_start(state)
        else:
            root, opponent_action = origin
            assert mem.opp_range is not None
            warm = WarmStart(mem.opp_range, self.settings.warm_start_weight, self.settings.warm_start_mode)
        start = time.perf_counter()
        solution = resolve(
            root,
            mem.our_range,
            mem.opp_values,
            self._sizing(st),
            st.config,
            space=self.space,
            last_round=st.last_round,
            leaf_values=st.leaf_values,
            warm_start=warm,
            deadline=deadline,
            opponent_action=opponent_action,
        )
        decision = summarize(solution, state, time.perf_counter() - start)
        if opponent_action is not None:
            # the opponent's first action of the round is below no earlier re-solve of ours: its
            # strategy at the round's start comes from this one (applied when we act)
            ((actions, strategy),) = opponent_strategies(solution, 1 - mem.position, depth=0).values()
            decision = replace(decision, opp_first=(actions, strategy, opponent_action))
        return decision

    def _round_start(self, state: HandState) -> tuple[HandState, Action] | None:
        """``(start of the round, the opponent's first action)`` when the re-solve should start
        before that action, else None.

        The opponent's values we keep are valid where its action was taken, not after it.
        Re-solving at the state faced lets every opponent hand whose values there fall short
        of those "terminate", so the range that follows into the re-solve is mostly the hands
        that gain by betting, and with depth-limit values that promise the opponent more than
        a round of betting leaves it (check-down values) the bot folds too often: measured
        against LBR's pot bets on the turn, 51-59% of our range (a bluff gains above 50%).
        From the round's start the opponent's range (the warm start's estimate) chooses among
        all its actions, bluffs included, and our reply to the action it took is part of that
        equilibrium. Pre-flop keeps the current state: there the values come from the exact
        first-state solve."""
        mem = self._memory()
        if not self.settings.from_round_start or self.settings.warm_start_weight <= 0 or mem.opp_range is None:
            return None
        taken = state.actions[state.round]
        if state.round == 0 or len(taken) != 1 or state.actors[state.round][0] == mem.position:
            return None
        return round_start(state), taken[0]

    def _warm_start(self, state: HandState) -> WarmStart | None:
        """The opponent-range warm start for our first action of a round (None otherwise)."""
        mem = self._memory()
        weight = self.settings.warm_start_weight
        first = mem.position not in state.actors[state.round]
        if weight <= 0 or not first or mem.opp_range is None:
            return None
        facing_bet = state.amount_to_call() > 0
        mode = "conservative" if facing_bet else self.settings.warm_start_mode
        return WarmStart(mem.opp_range, weight, mode)

    def act(self, decision: Decision, action: Action) -> None:
        """We take ``action`` (one of ``decision.actions``): update our range and the opponent values."""
        mem = self._memory()
        if action not in decision.actions:
            raise ContinualError(f"action {action} is not one of the re-solve's actions {decision.actions}")
        i = decision.actions.index(action)
        new_range = decision.our_range * decision.strategy[i]
        mass = new_range.sum()
        if mass > 0:
            mem.our_range = new_range / mass
            mem.opp_values = decision.child_values[i][1 - mem.position] / mass
            mem.last_action = action
        else:
            # an action our strategy never takes: its child's values (and those of the chance
            # outcomes below it) are all 0, so the range and the opponent's values stay as they
            # were, upper bounds of what the opponent can get
            mem.last_action = None
        if decision.opp_first is not None:
            self._opponent_took(*decision.opp_first)
        mem.opp_strategies = decision.opp_strategies  # the opponent's replies are modelled by this re-solve
        mem.last = decision
        mem.history.append(str(action))

    def observe(self, state: HandState) -> None:
        """Any state of the hand: new cards are caught up, opponent actions sharpen the estimate
        of its range (the two vectors re-solving needs do not change)."""
        if self.memory is None or state.finished:
            return
        self._catch_up_opponent(state)
        self._catch_up_chance(state)

    def observe_cards(self, state: HandState) -> None:
        """Only the new board cards of ``state`` (for a caller that will peek at hypothetical
        opponent actions in ``state`` without making them part of the hand)."""
        if self.memory is None or state.finished:
            return
        self._catch_up_chance(state)

    # ------------------------------------------------------------------ opponent range estimate
    def _catch_up_opponent(self, state: HandState) -> None:
        """Bayes' rule on the opponent-range estimate for the opponent actions not seen yet."""
        mem = self._memory()
        history = [(r, k) for r in range(len(state.actions)) for k in range(len(state.actions[r]))]
        for r, k in history[mem.actions_seen :]:
            if state.actors[r][k] == mem.position or mem.opp_range is None:
                continue
            before = "/".join("".join(str(a) for a in acts) for acts in (*state.actions[:r], state.actions[r][:k]))
            known = mem.opp_strategies.get(before)
            if known is None:
                continue  # a node outside our last lookahead: the estimate stays as it is
            self._opponent_took(*known, state.actions[r][k])
        mem.actions_seen = len(history)

    def _opponent_took(self, actions: list[Action], strategy: np.ndarray, taken: Action) -> None:
        """Bayes' rule on the estimate: the opponent took ``taken`` where our model of its play is
        ``strategy`` over ``actions`` (the nearest size standing in for a bet off the tree)."""
        mem = self._memory()
        i = nearest_action(actions, taken)
        if i is None or mem.opp_range is None:
            return
        updated = mem.opp_range * strategy[i]
        if updated.sum() > 0:  # an action our model never takes leaves the estimate alone
            mem.opp_range = updated / updated.sum()

    # ------------------------------------------------------------------ chance
    def _catch_up_chance(self, state: HandState) -> None:
        mem = self._memory()
        if len(state.board) == len(mem.board_at_last):
            return
        new_board = tuple(state.board)
        if mem.last is not None and mem.last_action is not None:
            values = self._chance_values(mem.last, mem.last_action, new_board)
            if values is not None:
                i = mem.last.actions.index(mem.last_action)
                mass = (mem.last.our_range * mem.last.strategy[i]).sum()
                mem.opp_values = values / mass if mass > 0 else values
        blocked = self.space.blocked(new_board)
        our = mem.our_range * ~blocked
        total = our.sum()
        if not total > 0:
            raise ContinualError("our range is empty after the new board cards")
        mem.our_range = our / total
        mem.opp_values = mem.opp_values * ~blocked / total
        mem.board_at_last = new_board
        if mem.opp_range is not None:
            est = mem.opp_range * ~blocked
            mem.opp_range = est / est.sum() if est.sum() > 0 else self.space.uniform(new_board)

    def _chance_values(self, decision: Decision, action: Action, board: tuple[int, ...]) -> np.ndarray | None:
        """Opponent values at the chance outcome ``board`` below our action (and the opponent's call),
        on the scale of the range the re-solve started from."""
        mem = self._memory()
        i = decision.actions.index(action)
        info = decision.chance.get((i, False)) or decision.chance.get((i, True))
        if info is None:
            return None
        if isinstance(info, LeafSnapshot):
            st = self.settings.street(decision.state.round)
            if st.chance_values is None:
                return None
            return st.chance_values(info, board)[1 - mem.position]
        values = info.get(chance_outcome(decision.state.board, board, self.space.deck))
        return None if values is None else values[1 - mem.position]

    # ------------------------------------------------------------------ helpers
    def _sizing(self, st: StreetSettings) -> tuple[BetSizing, ...]:
        if len(st.sizing) == 1:
            return tuple(st.sizing) * self.game.num_rounds
        return tuple(st.sizing)

    def _memory(self) -> HandMemory:
        if self.memory is None:
            raise ContinualError("start_hand() must be called first")
        return self.memory


def round_start(state: HandState) -> HandState:
    """``state`` with the actions of its round undone (same board, same hole cards)."""
    game = state.game
    s = HandState.initial(game, state.hand_id, hole_cards=state.hole_cards)
    for r in range(state.round):
        for action in state.actions[r]:
            s = s.apply(action)
            if s.board_cards_needed:
                s = s.with_board(state.board[: game.board_cards_through(s.round)])
    if s.round != state.round:
        raise ContinualError(f"could not replay the betting {state.betting_string()!r} to its round's start")
    return s


def nearest_action(actions: list[Action], taken: Action) -> int | None:
    """Index of ``taken`` in ``actions``, or of the raise nearest in size (a bet outside the tree)."""
    if taken in actions:
        return actions.index(taken)
    if taken.kind is ActionKind.RAISE:
        raises = [(abs(a.size - taken.size), i) for i, a in enumerate(actions) if a.kind is ActionKind.RAISE]
        if raises:
            return min(raises)[1]
    return None
