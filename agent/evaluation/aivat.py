"""AIVAT: lower-variance, unbiased estimates of a bot's winnings (Burch et al., 2018).

A hand's raw outcome is corrected at every event whose distribution we know exactly:
chance (the private deal, board cards; the true distribution given both hands, which the
dealer's log reveals after the match) and our own actions (our bot's exact action
probabilities for the hand it held). At such an event the correction is the expected value
of a value function over the possible outcomes minus its value at the outcome that
happened; each correction has expectation zero given the past, so the estimate stays
unbiased whatever the value function, and the better the value function predicts the
outcome, the more variance it removes. The opponent's actions are never corrected.

Here hands are played by two :class:`agent.evaluation.policies.StrategyProvider` objects (so our
probabilities are known exactly), the value function is the expected outcome when both
players follow a reference strategy profile from a full-game solve (the game value the
bot itself aims at), and every estimate comes with a 95% interval.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations, permutations
from math import comb

import numpy as np

from agent.evaluation.policies import OutsideSolvedTree, StrategyProvider
from agent.evaluation.stats import Estimate, estimate
from agent.solver.handspace import HandSpace
from protocol.gamedef import Game
from protocol.state import Action, HandState

#: value of a state (both hole cards inside it) for a seat, in chips
ValueFn = Callable[[HandState, int], float]
#: private deals are corrected only when there are at most this many (Leduc: 30; hold'em: skipped)
MAX_DEALS = 10_000


@dataclass
class ActionEvent:
    """One action in a :class:`HandTrace`: the state it was taken in, the legal actions, the actor's
    probabilities for the hand it held, and the index of the one sampled (what AIVAT corrects)."""

    state: HandState
    actions: list[Action]
    probs: np.ndarray  # the actor's probabilities for the hand it holds
    taken: int


@dataclass
class HandTrace:
    """Everything AIVAT needs about one hand: the deal, the events in order, the outcome."""

    holes: tuple[tuple[int, ...], ...]
    initial: HandState
    deck: tuple[int, ...]
    events: list[tuple[str, object]] = field(default_factory=list)  # ("board", state before) / ("action", ActionEvent)
    final: HandState | None = None


def deal_cards(space: HandSpace, rng: np.random.Generator) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """A random deal from ``space``'s deck: both seats' hole cards and the whole board, disjoint."""
    game = space.game
    order = rng.permutation(np.array(space.deck))
    k = game.num_hole_cards
    holes = tuple(tuple(int(c) for c in order[p * k : (p + 1) * k]) for p in range(2))
    board = tuple(int(c) for c in order[2 * k : 2 * k + game.total_board_cards])
    return holes, board


def play_hand(
    game: Game,
    space: HandSpace,
    seats: Sequence[StrategyProvider],
    holes: tuple[tuple[int, ...], ...],
    board_all: tuple[int, ...],
    hand_id: int,
    rng: np.random.Generator,
) -> HandTrace:
    """One hand between two providers (``seats[p]`` plays position p), sampled from their strategies."""
    for p, provider in enumerate(seats):
        provider.start_hand(p)
    state = HandState.initial(game, hand_id, hole_cards=holes)
    trace = HandTrace(holes, state, tuple(space.deck))
    hand_index = [space.index(h) for h in holes]
    while not state.finished:
        actor = state.current_player
        assert actor is not None
        actions, probs = seats[actor].strategy(state)
        p = np.asarray(probs[:, hand_index[actor]], dtype=np.float64)
        p = p / p.sum() if p.sum() > 0 else np.full(len(actions), 1.0 / len(actions))
        i = int(rng.choice(len(actions), p=p))
        trace.events.append(("action", ActionEvent(state, list(actions), p, i)))
        seats[actor].commit(state, actions[i])
        state = state.apply(actions[i])
        seats[1 - actor].observe(state)
        if state.board_cards_needed:
            trace.events.append(("board", state))
            state = state.with_board(board_all[: game.board_cards_through(state.round)])
            if not state.finished:
                for provider in seats:
                    provider.observe(state)
    trace.final = state
    return trace


def board_completions(state: HandState, deck: Sequence[int]) -> list[HandState]:
    """Every way the dealer can deal the board cards ``state`` waits for (equally likely)."""
    used = set(state.board) | {c for h in state.hole_cards for c in h}
    remaining = [c for c in deck if c not in used]
    return [state.with_board(state.board + extra) for extra in combinations(remaining, state.board_cards_needed)]


def private_deals(game: Game, deck: Sequence[int], hand_id: int) -> list[HandState]:
    """Every ordered pair of disjoint hole cards for the two seats (equally likely): the outcomes of the
    private-deal correction, as initial states of hand ``hand_id``."""
    k = game.num_hole_cards
    hands = list(combinations(deck, k))
    return [HandState.initial(game, hand_id, hole_cards=(a, b)) for a, b in permutations(hands, 2) if not set(a) & set(b)]


def aivat_value(trace: HandTrace, seat: int, value: ValueFn) -> tuple[float, float]:
    """``(raw, aivat)`` winnings of ``seat`` in chips for one hand."""
    assert trace.final is not None
    raw = float(trace.final.payoffs()[seat])
    correction = 0.0
    game = trace.initial.game
    n_deals = _count_deals(game)
    if n_deals <= MAX_DEALS:
        deals = private_deals(game, trace.deck, trace.initial.hand_id)
        correction += float(np.mean([value(s, seat) for s in deals])) - value(trace.initial, seat)
    for kind, item in trace.events:
        if kind == "board":
            state = item  # type: ignore[assignment]
            outcomes = board_completions(state, trace.deck)
            actual = _next_state_after(trace, state)
            correction += float(np.mean([value(s, seat) for s in outcomes])) - value(actual, seat)
        elif kind == "action":
            ev: ActionEvent = item  # type: ignore[assignment]
            if ev.state.current_player != seat:
                continue
            children = [value(ev.state.apply(a), seat) for a in ev.actions]
            correction += float(np.dot(ev.probs, children)) - children[ev.taken]
    return raw, raw + correction


def _next_state_after(trace: HandTrace, waiting: HandState) -> HandState:
    """The state right after the board cards that ``waiting`` waited for were dealt."""
    assert trace.final is not None
    return waiting.with_board(trace.final.board[: trace.initial.game.board_cards_through(waiting.round)])


def _count_deals(game: Game) -> int:
    n, k = game.deck_size, game.num_hole_cards
    return comb(n, k) * comb(n - k, k)


class ProfileValue:
    """The expected outcome of a state when both players follow fixed strategies from here on
    (exact, over every board card still to come); memoised per (cards, betting). Below an
    action the strategies do not know (an opponent's bet size off their tree), the hand is
    valued as checked down: AIVAT stays unbiased with any value function."""

    def __init__(self, space: HandSpace, seats: Sequence[StrategyProvider]) -> None:
        self.space = space
        self.seats = list(seats)
        self._memo: dict[tuple, np.ndarray] = {}

    def __call__(self, state: HandState, seat: int) -> float:
        return float(self._values(state)[seat])

    def _values(self, state: HandState) -> np.ndarray:
        key = (state.hole_cards, state.board, state.betting_string(), state.finished)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        if state.board_cards_needed:
            out = np.mean([self._values(s) for s in board_completions(state, self.space.deck)], axis=0)
        elif state.finished:
            out = np.asarray(state.payoffs(), dtype=np.float64)
        else:
            actor = state.current_player
            assert actor is not None
            try:
                actions, probs = self.seats[actor].strategy(state)
            except OutsideSolvedTree:  # off the reference's tree (e.g. a bet size it never makes): check it down
                out = self._checkdown(state)
                self._memo[key] = out
                return out
            p = probs[:, self.space.index(state.hole_cards[actor])]
            p = p / p.sum() if p.sum() > 0 else np.full(len(actions), 1.0 / len(actions))
            out = sum(float(pi) * self._values(state.apply(a)) for pi, a in zip(p, actions) if pi > 0)
        self._memo[key] = out
        return out

    def _checkdown(self, state: HandState) -> np.ndarray:
        """Both players' outcome if nobody bets again: the matched contributions go to the
        better hand, averaged over the board cards still to come."""
        game = state.game
        missing = game.total_board_cards - len(state.board)
        used = set(state.board) | {c for h in state.hole_cards for c in h}
        remaining = [c for c in self.space.deck if c not in used]
        amount = float(min(state.spent))
        total = np.zeros(2)
        boards = [tuple(state.board) + extra for extra in combinations(remaining, missing)]
        for board in boards:
            strength = self.space.strengths(board)
            a, b = (strength[self.space.index(h)] for h in state.hole_cards)
            sign = float(np.sign(a - b))
            total += np.array([sign, -sign]) * amount
        return total / len(boards)


def run_aivat(
    game: Game,
    ours: StrategyProvider,
    opponent: StrategyProvider,
    value: ValueFn,
    hands: int,
    seed: int = 0,
    duplicate: bool = True,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Estimate]:
    """Play ``hands`` hands (pairs with the same cards and seats swapped when ``duplicate``) and
    return the raw, duplicate and AIVAT estimates of our winnings per hand, in chips. With
    ``duplicate`` the per-hand intervals (``raw``, ``aivat``) count the two hands of a pair as
    independent, which they are not: ``duplicate`` and ``aivat duplicate`` average each pair first."""
    space = ours.space
    rng = np.random.default_rng(seed)
    raw, corrected = [], []
    deal = None
    for h in range(hands):
        if not duplicate or h % 2 == 0:
            deal = deal_cards(space, rng)
        assert deal is not None
        our_pos = h % 2
        seats = [ours, opponent] if our_pos == 0 else [opponent, ours]
        trace = play_hand(game, space, seats, deal[0], deal[1], h, rng)
        r, a = aivat_value(trace, our_pos, value)
        raw.append(r)
        corrected.append(a)
        if progress is not None:
            progress(1)
    out = {"raw": estimate(raw), "aivat": estimate(corrected)}
    paired = len(raw) // 2 * 2
    if duplicate and paired:  # the two hands of a pair share their cards: one sample
        out["duplicate"] = estimate(0.5 * (np.array(raw[0:paired:2]) + np.array(raw[1:paired:2])))
        out["aivat duplicate"] = estimate(0.5 * (np.array(corrected[0:paired:2]) + np.array(corrected[1:paired:2])))
    return out
