"""Local best response (LBR, Lisy & Bowling 2017): a lower bound on a bot's exploitability.

LBR plays against a bot that exposes its strategy (:mod:`agent.evaluation.policies`). It tracks the
bot's range by Bayes' rule from the bot's action probabilities, and at each of its own
decisions picks, from a fixed set, the action with the highest value under the
assumption that the rest of the hand is checked down: calling is worth the equity
against the bot's range; a bet is worth the bot's fold probability (asked from the bot at
that hypothetical state) times what is in the pot, plus the equity when called.

Settings name LBR's actions per round, e.g. ``fc/fc/fc/fc`` or ``c/c/fcpa/fcpa``: ``f``
fold, ``c`` check/call, ``p`` pot bet, ``a`` all-in, ``56`` the 56 bet sizes 0.05..2.80
times the pot (our choice; the supplement's exact list is not in our copy).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import as_completed
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from agent.common.files import write_json
from agent.common.workers import worker_pool
from agent.evaluation.policies import StrategyProvider
from agent.solver.handspace import HandSpace
from native.equity import hand_equities
from native.evaluator import evaluate
from protocol.gamedef import Game
from protocol.state import CALL, FOLD, LIMIT_RAISE, Action, ActionKind, HandState, raise_to

FIFTY_SIX = tuple(round(0.05 * k, 2) for k in range(1, 57))


@dataclass(frozen=True)
class LBRSetting:
    """Allowed LBR actions per round: tokens 'f', 'c', 'a' and pot fractions."""

    text: str
    rounds: tuple[tuple[str | float, ...], ...]

    @classmethod
    def parse(cls, text: str, num_rounds: int) -> LBRSetting:
        """Parse ``text``: one group per round, split by ``/``, of ``f``, ``c``, ``p`` (a pot-size raise) and
        ``a`` (all-in), or ``56`` (fold, call and raises of 5% to 280% of the pot); every round must allow ``c``."""
        parts = text.split("/")
        if len(parts) != num_rounds:
            raise ValueError(f"LBR setting {text!r} has {len(parts)} rounds, the game has {num_rounds}")
        rounds = []
        for part in parts:
            if part == "56":
                rounds.append(("f", "c", *FIFTY_SIX))
                continue
            tokens: list[str | float] = []
            for ch in part:
                if ch in "fca":
                    tokens.append(ch)
                elif ch == "p":
                    tokens.append(1.0)
                else:
                    raise ValueError(f"LBR setting {text!r}: unknown action {ch!r} (use f, c, p, a or 56)")
            if "c" not in tokens:
                raise ValueError(f"LBR setting {text!r}: every round must allow c (check/call)")
            rounds.append(tuple(tokens))
        return cls(text, tuple(rounds))


def checkdown_outcome(
    space: HandSpace,
    ours: Sequence[int],
    board: Sequence[int],
    opp_range: np.ndarray,
    rng: np.random.Generator,
    max_runouts: int = 2000,
) -> float:
    """P(win) − P(lose) of our hand against ``opp_range`` if the board is dealt out with no more
    betting: what each chip at stake is worth at the check-down (0 with no compatible range).

    Every runout when there are at most ``max_runouts`` (a hold'em flop has 1081), by the C
    equity kernel; else a random sample of ``max_runouts`` of them (pre-flop)."""
    game = space.game
    missing = game.total_board_cards - len(board)
    remaining = [c for c in space.deck if c not in set(ours) | set(board)]
    if math.comb(len(remaining), missing) <= max_runouts:
        eq = hand_equities(
            tuple(board), opp_range, hand_cards=space.cards, deck=space.deck, final_board_size=game.total_board_cards
        )[space.index(tuple(ours))]
        return 0.0 if math.isnan(eq) else 2.0 * float(eq) - 1.0
    return _sampled_checkdown(space, ours, board, opp_range, remaining, rng, max_runouts)


def _sampled_checkdown(
    space: HandSpace,
    ours: Sequence[int],
    board: Sequence[int],
    opp_range: np.ndarray,
    remaining: Sequence[int],
    rng: np.random.Generator,
    runouts: int,
) -> float:
    """:func:`checkdown_outcome` over ``runouts`` random runouts (too many to enumerate)."""
    missing = space.game.total_board_cards - len(board)
    inc = space.card_incidence
    cards = space.cards.astype(np.int64)
    base = np.asarray(opp_range, dtype=np.float64) * ~space.blocked(list(ours) + list(board))
    ours_arr = np.asarray(ours, dtype=np.int64)
    win = lose = mass = 0.0
    for _ in range(runouts):
        runout = rng.choice(np.asarray(remaining, dtype=np.int64), missing, replace=False)
        full = np.concatenate([np.asarray(board, dtype=np.int64), runout])
        r = base * ~inc[:, runout].any(axis=1)
        live = np.nonzero(r > 0)[0]
        if not len(live):
            continue
        mine = int(evaluate(np.concatenate([ours_arr, full]).astype(np.uint8)))
        theirs = evaluate(np.concatenate([cards[live], np.broadcast_to(full, (len(live), len(full)))], axis=1).astype(np.uint8))
        w = r[live]
        win += float(w[theirs < mine].sum())
        lose += float(w[theirs > mine].sum())
        mass += float(w.sum())
    return (win - lose) / mass if mass > 0 else 0.0


#: one of LBR's questions to the bot: (round, bet as a fraction of the pot after calling,
#: whether it is all-in, the bot's fold probability weighted by its range, whether the bot had
#: already acted in the round: a check or bet LBR answers, rather than LBR leading; None in
#: files written before it was kept). The bot re-solves these two cases differently
#: (:meth:`agent.resolving.continual.ContinualResolver._round_start`), so their fold rates are told apart
FoldQuery = tuple[int, float, bool, float, bool | None]


class LBRPlayer:
    """Local best response (Lisý & Bowling, 2017): at each of its decisions LBR keeps the exact
    posterior of the bot's hand, asks the bot how often it would fold to each bet of its setting,
    and takes the action of highest value against that range, assuming the hand is checked down
    after it."""

    def __init__(
        self, space: HandSpace, setting: LBRSetting, rng: np.random.Generator, queries: list[FoldQuery] | None = None
    ) -> None:
        self.space = space
        self.setting = setting
        self.rng = rng
        #: every bet LBR considered and how often the bot would fold to it: where LBR's profit
        #: comes from (a pure bluff of b times the pot gains when the bot folds more than b / (1 + b))
        self.queries: list[FoldQuery] = queries if queries is not None else []

    def start_hand(self, position: int, cards: Sequence[int]) -> None:
        """A new hand: LBR in ``position`` holding ``cards``, the bot's range uniform."""
        self.position = position
        self.cards = tuple(cards)
        self.belief = self.space.uniform(self.cards)

    def bot_acted(self, probs_of_action: np.ndarray) -> None:
        """The bot took an action it takes with ``probs_of_action`` per hand: Bayes' rule."""
        b = self.belief * probs_of_action
        if b.sum() > 0:
            self.belief = b / b.sum()

    def cards_dealt(self, board: Sequence[int]) -> None:
        """Board cards: the bot's hands that hold one of them are gone from its range."""
        b = self.belief * ~self.space.blocked(list(board))
        if b.sum() > 0:
            self.belief = b / b.sum()

    def candidates(self, state: HandState) -> list[Action]:
        """The legal actions LBR's setting allows this round (pot fractions as raise-to amounts)."""
        tokens = self.setting.rounds[state.round]
        out: list[Action] = []
        bounds = state.raise_bounds()
        for t in tokens:
            if t == "f" and state.can_fold():
                out.append(FOLD)
            elif t == "c":
                out.append(CALL)
            elif bounds is not None and (t == "a" or isinstance(t, float)):
                if state.game.is_limit:
                    out.append(LIMIT_RAISE)
                    continue
                if t == "a":
                    size = bounds[1]
                else:
                    p = state.current_player
                    assert p is not None
                    to_call = min(state.max_spent, state.game.stack[p]) - state.spent[p]
                    size = min(max(state.max_spent + int(round(float(t) * (state.pot + to_call))), bounds[0]), bounds[1])
                out.append(raise_to(size))
        return list(dict.fromkeys(out))

    def choose(self, state: HandState, bot: StrategyProvider) -> Action:
        """The candidate of highest value to LBR (a call when none can be valued)."""
        best, best_value = CALL, -math.inf
        for action, value in self.action_values(state, bot):
            if value > best_value + 1e-12:
                best, best_value = action, value
        return best

    def action_values(self, state: HandState, bot: StrategyProvider) -> list[tuple[Action, float]]:
        """Each candidate's value to LBR in chips, relative to folding nothing: a fold loses what it
        put in; a call checks down against its range; a bet wins the bot's chips where the bot
        folds and checks down against the range that calls. Records each bet's fold query."""
        me = self.position
        values: list[tuple[Action, float]] = []
        outcome_now: float | None = None
        for action in self.candidates(state):
            if action.kind is ActionKind.FOLD:
                value = -float(state.spent[me])
            elif action.kind is ActionKind.CALL:
                if outcome_now is None:
                    outcome_now = checkdown_outcome(self.space, self.cards, state.board, self.belief, self.rng)
                stake = min(state.max_spent, state.game.stack[me])
                value = stake * outcome_now
            else:
                after = state.apply(action)
                if after.current_player != 1 - me:
                    continue
                actions, probs = bot.strategy(after)
                fold = next((i for i, a in enumerate(actions) if a.kind is ActionKind.FOLD), None)
                p_fold_h = probs[fold] if fold is not None else np.zeros(self.space.size)
                p_fold = float((self.belief * p_fold_h).sum())
                to_call = state.max_spent - state.spent[me]
                fraction = (after.spent[me] - state.max_spent) / (state.pot + to_call)
                bot_acted = (1 - me) in state.actors[state.round]
                self.queries.append((state.round, round(fraction, 3), after.max_spent >= state.game.stack[me], p_fold, bot_acted))
                called = self.belief * (1 - p_fold_h)
                outcome = 0.0
                if called.sum() > 0:
                    outcome = checkdown_outcome(self.space, self.cards, state.board, called / called.sum(), self.rng)
                stake = after.spent[me]
                value = p_fold * state.spent[1 - me] + (1 - p_fold) * stake * outcome
            values.append((action, value))
        return values


def range_expected_winnings(
    space: HandSpace, state: HandState, lbr_pos: int, lbr_cards: Sequence[int], belief: np.ndarray
) -> float:
    """LBR's winnings in a finished hand, in expectation over the bot's hand given everything
    LBR saw (its Bayes range for the bot): the realised payoff where someone folded, the
    range-weighted showdown otherwise.

    LBR's range for the bot is the exact posterior of the bot's hand (the bot's actions were
    drawn from the very probabilities LBR updated with), so replacing a showdown's payoff by
    its conditional expectation keeps the estimate unbiased and removes the variance of the
    bot's cards (Rao-Blackwellisation)."""
    if not state.is_showdown:
        return float(state.payoffs()[lbr_pos])
    strengths = space.strengths(state.board)
    mine = strengths[space.index(tuple(lbr_cards))]
    weights = belief * (strengths >= 0) * ~space.blocked(list(lbr_cards))
    if weights.sum() <= 0:  # pragma: no cover - the bot's real hand always has mass
        return float(state.payoffs()[lbr_pos])
    heads_up_stake = float(min(state.spent))  # two players: the winner takes the smaller stake
    return heads_up_stake * float((weights * np.sign(mine - strengths)).sum() / weights.sum())


class LuckCorrections:
    """AIVAT's control variates for an LBR hand, for every hand the bot may hold at once.

    The value of a state for LBR, were the bot to hold hand h, is the check-down value: the
    matched amount times LBR's result against h (win 1, tie 0, loss -1) over every completion
    of the board (a hand ended by a fold: its payoff). With both hands fixed, the cards to come
    are uniform, so at a board deal the mean of the value after equals the value before and
    ``V(before) - V(after)`` removes the luck of the cards; at a bot decision the bot's action
    probabilities for h are known exactly, so ``sum_a p(a | h) V(a) - V(taken)`` removes the
    luck of its sampling. A term has mean zero given the hand the bot really holds, not for any
    other h (the cards and the action were drawn for the real hand); averaged with the weights of
    the exact posterior P(h | what LBR saw), the corrections still have mean zero, so
    ``payoff + terms`` over LBR's Bayes range is unbiased exactly when that range is the exact
    posterior (the bot's full strategy at every decision), as ``range_expected`` is. Boards with
    too many completions (the hold'em pre-flop) are left uncorrected, which only costs variance."""

    def __init__(self, space: HandSpace, lbr_cards: Sequence[int], lbr_pos: int, max_runouts: int = 2000) -> None:
        self.space = space
        self.lbr_cards = tuple(lbr_cards)
        self.lbr_pos = lbr_pos
        self.max_runouts = max_runouts
        self.single = np.zeros(space.size)
        self.single[space.index(self.lbr_cards)] = 1.0
        self.total = np.zeros(space.size)  # the corrections so far, per bot hand
        self._outcomes: dict[tuple[int, ...], np.ndarray | None] = {}

    def outcome(self, board: tuple[int, ...]) -> np.ndarray | None:
        """LBR's check-down result against each bot hand (0 where blocked); None when the board
        has more completions than ``max_runouts``."""
        if board not in self._outcomes:
            game = self.space.game
            missing = game.total_board_cards - len(board)
            unseen = len(self.space.deck) - len(board) - 2 * game.num_hole_cards
            if math.comb(unseen, missing) > self.max_runouts:
                self._outcomes[board] = None
            else:
                bot_equity = hand_equities(
                    board, self.single, hand_cards=self.space.cards, deck=self.space.deck, final_board_size=game.total_board_cards
                )
                self._outcomes[board] = np.nan_to_num(1.0 - 2.0 * bot_equity, nan=0.0)
        return self._outcomes[board]

    def value(self, state: HandState) -> np.ndarray | None:
        """The check-down value of ``state`` for LBR against each bot hand, in chips; None where the board
        has too many completions to correct."""
        if state.finished and not state.is_showdown:
            return np.full(self.space.size, float(state.payoffs()[self.lbr_pos]))
        result = self.outcome(tuple(state.board))
        return None if result is None else float(min(state.spent)) * result  # heads-up: an unmatched bet comes back

    def cards_dealt(self, before: HandState, after: HandState) -> None:
        """Board cards came between ``before`` and ``after``: add ``V(before) - V(after)`` to every hand's total."""
        v_before, v_after = self.value(before), self.value(after)
        if v_before is not None and v_after is not None:
            self.total += v_before - v_after

    def bot_acted(self, state: HandState, actions: Sequence[Action], probs: np.ndarray, taken: int) -> None:
        """The bot took ``actions[taken]`` with ``probs`` per hand: add ``sum_a p(a | h) V(a) - V(taken)``
        to every hand's total."""
        values = [self.value(state.apply(a)) for a in actions]
        if all(v is not None for v in values):
            self.total += sum(p * v for p, v in zip(probs, values)) - values[taken]


@dataclass(frozen=True)
class HandResult:
    """LBR's winnings in one hand (chips), three unbiased ways."""

    realised: float
    #: showdowns averaged over LBR's Bayes range for the bot (:func:`range_expected_winnings`)
    range_expected: float
    #: that, plus the luck corrections of :class:`LuckCorrections` averaged the same way
    aivat: float


def play_lbr_hand(
    game: Game,
    space: HandSpace,
    bot: StrategyProvider,
    setting: LBRSetting,
    hand_id: int,
    rng: np.random.Generator,
    queries: list[FoldQuery] | None = None,
    deal: np.random.Generator | None = None,
) -> HandResult:
    """One hand; returns LBR's winnings (:class:`HandResult`) and appends LBR's questions to ``queries``.
    The cards come from ``deal`` (default ``rng``), the random choices of the hand from ``rng``."""
    lbr_pos = hand_id % 2
    bot_pos = 1 - lbr_pos
    order = (rng if deal is None else deal).permutation(np.array(space.deck))
    k = game.num_hole_cards
    holes = [tuple(int(c) for c in order[p * k : (p + 1) * k]) for p in range(2)]
    board_all = tuple(int(c) for c in order[2 * k : 2 * k + game.total_board_cards])
    lbr = LBRPlayer(space, setting, rng, queries)
    lbr.start_hand(lbr_pos, holes[lbr_pos])
    bot.start_hand(bot_pos)
    bot_hand = space.index(holes[bot_pos])
    luck = LuckCorrections(space, holes[lbr_pos], lbr_pos)
    state = HandState.initial(game, hand_id, hole_cards=holes)
    while not state.finished:
        if state.current_player == bot_pos:
            actions, probs = bot.strategy(state)
            p = probs[:, bot_hand]
            p = p / p.sum() if p.sum() > 0 else np.full(len(actions), 1 / len(actions))
            i = int(rng.choice(len(actions), p=p))
            lbr.bot_acted(probs[i])
            luck.bot_acted(state, actions, probs, i)
            bot.commit(state, actions[i])
            state = state.apply(actions[i])
        else:
            state = state.apply(lbr.choose(state, bot))
        if state.board_cards_needed:
            before = state
            state = state.with_board(board_all[: game.board_cards_through(state.round)])
            lbr.cards_dealt(state.board)
            luck.cards_dealt(before, state)
            if not state.finished:
                bot.observe(state)
    expected = range_expected_winnings(space, state, lbr_pos, holes[lbr_pos], lbr.belief)
    weights = lbr.belief * ~space.blocked(list(holes[lbr_pos]) + list(state.board))
    corrections = float((weights * luck.total).sum() / weights.sum()) if weights.sum() > 0 else 0.0
    return HandResult(float(state.payoffs()[lbr_pos]), expected, expected + corrections)


ProviderFactory = Callable[[], StrategyProvider]


def run_chunk(
    game: Game,
    make_bot: ProviderFactory,
    setting: LBRSetting,
    first: int,
    count: int,
    seed: int,
    queries: list[FoldQuery] | None = None,
) -> list[HandResult]:
    """Hands ``first .. first + count - 1``. Hand i's cards come from ``(seed, i)`` alone, so two bots
    (or settings) run with the same seed play the same deals hand for hand: paired comparisons.
    The random choices (the bot's sampled actions, LBR's sampled run-outs) come from
    ``(seed, first)``."""
    bot = make_bot()
    rng = np.random.default_rng([seed, first])
    return [
        play_lbr_hand(
            game, bot.space, bot, setting, first + i, rng, queries, deal=np.random.default_rng([seed, first + i, DEAL_STREAM])
        )
        for i in range(count)
    ]


#: the random stream of a hand's cards, apart from those of its choices (see :func:`run_chunk`)
DEAL_STREAM = 7

#: how hands are dealt, recorded in an LBR folder's run.json: a folder whose chunks were dealt
#: otherwise (before each hand had its own stream, the cards shared the chunk's stream with the
#: bot's sampled actions) is not resumed, so one folder never mixes two ways of dealing
DEAL_SCHEME = "per-hand"


#: the lower-variance estimates kept beside each chunk: file prefix -> :class:`HandResult` field
ESTIMATES = {"expected": "range_expected", "aivat": "aivat"}


def _chunk_job(
    game: Game, make_bot: ProviderFactory, setting: LBRSetting, first: int, count: int, seed: int
) -> tuple[list[float], list[FoldQuery], dict[str, list[float]]]:
    queries: list[FoldQuery] = []
    hands = run_chunk(game, make_bot, setting, first, count, seed, queries)
    estimates = {name: [getattr(h, name) for h in hands] for name in ESTIMATES.values()}
    return [h.realised for h in hands], queries, estimates


def _stored_estimate(out_dir: Path | None, prefix: str, first: int, count: int) -> list[float] | None:
    """An estimate kept beside chunk ``first`` (None for chunks written before it was kept)."""
    path = out_dir / f"{prefix}-{first:07d}.json" if out_dir is not None else None
    if path is None or not path.exists():
        return None
    values = chunk_values(path, "a file of LBR winnings")
    if len(values) != count:  # a chunk cut short beside whole estimates: resuming counted hands twice
        raise ValueError(f"{path}: {len(values)} hands, its chunk (lbr-{first:07d}.json) has {count}")
    return values


def _stored_queries(out_dir: Path | None, first: int) -> list[FoldQuery] | None:
    """The fold queries kept beside chunk ``first`` (None for chunks written before they were kept)."""
    path = out_dir / f"folds-{first:07d}.json" if out_dir is not None else None
    if path is None or not path.exists():
        return None
    try:
        rows = json.loads(path.read_text())
        return [(int(r), float(f), bool(a), float(p), bool(rest[0]) if rest else None) for r, f, a, p, *rest in rows]
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{path}: not a file of LBR fold queries ({exc})") from exc


def _fold_stats(rows: Sequence[tuple[float, float]], prefix: str = "") -> dict[str, float]:
    """Count, mean fold probability and a pure bluff's break-even of ``(fraction, p_fold)`` rows."""
    fractions = np.array([f for f, _ in rows])
    folds = np.array([p for _, p in rows])
    return {
        f"{prefix}queries": len(rows),
        f"{prefix}mean_fold": round(float(folds.mean()), 4),
        f"{prefix}bluff_breakeven": round(float((fractions / (1 + fractions)).mean()), 4),
    }


def fold_summary(queries: Sequence[FoldQuery], num_rounds: int) -> dict[str, dict[str, dict[str, float]]]:
    """The bot's mean fold probability to LBR's bets per round and size (pot, all-in, other),
    next to the fold rate above which a pure bluff of that size gains (b / (1 + b)); where the
    queries say so, also split by whether LBR led the round or answered the bot's action."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    groups: dict[tuple[int, str], list[tuple[float, float, bool | None]]] = {}
    for rnd, fraction, all_in, p_fold, bot_acted in queries:
        kind = "all-in" if all_in else ("pot" if abs(fraction - 1.0) < 0.05 else "other")
        groups.setdefault((rnd, kind), []).append((fraction, p_fold, bot_acted))
    for (rnd, kind), rows in sorted(groups.items()):
        name = ("preflop", "flop", "turn", "river")[rnd] if num_rounds == 4 else f"round {rnd + 1}"
        row = _fold_stats([(f, p) for f, p, _ in rows])
        for label, flag in (("lbr_led", False), ("after_bot", True)):
            part = [(f, p) for f, p, acted in rows if acted is flag]
            if part:
                row.update(_fold_stats(part, f"{label}_"))
        out.setdefault(name, {})[kind] = row
    return out


def chunk_values(path: Path, what: str = "an LBR chunk") -> list[float]:
    """A chunk file's numbers; one ValueError naming the file (``{path}: not {what} (...)``) for one
    that is not a list of numbers or holds one that is not finite (JSON's NaN and Infinity are read
    by Python: a damaged chunk turned a run's result into NaN and wrote it over result.json)."""
    try:
        values = [float(v) for v in json.loads(path.read_text())]
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{path}: not {what} ({exc})") from exc
    bad = next((v for v in values if not math.isfinite(v)), None)
    if bad is not None:
        raise ValueError(f"{path}: not {what} (a value is {bad})")
    return values


def _stored_chunks(out_dir: Path | None) -> dict[int, list[float]]:
    """Chunks already written to ``out_dir``, by their first hand."""
    if out_dir is None or not out_dir.exists():
        return {}
    stored = {}
    for path in out_dir.glob("lbr-[0-9]*.json"):
        try:
            first = int(path.stem.split("-")[1])
        except (ValueError, IndexError) as exc:
            raise ValueError(f"{path}: not an LBR chunk ({exc})") from exc
        stored[first] = chunk_values(path)
    end = 0
    for first in sorted(stored):
        if first < end:
            raise ValueError(f"{out_dir}: LBR chunks overlap at hand {first}")
        end = first + len(stored[first])
    return stored


@dataclass
class StoredHands:
    """What an LBR folder holds from hand 0 up to its first gap: LBR's winnings per hand (chips)
    under each estimate that every chunk kept (``realised`` always), and the chunks' bounds and
    fold queries (None for a chunk written before they were kept)."""

    per_hand: dict[str, list[float]]
    chunks: list[tuple[int, int, list[FoldQuery] | None]]

    @property
    def hands(self) -> int:
        """Number of hands stored from hand 0 up to the first gap."""
        return len(self.per_hand["realised"])

    def queries(self, hands: int) -> list[FoldQuery]:
        """The fold queries of the chunks that lie wholly within the first ``hands`` hands."""
        return [q for first, count, rows in self.chunks if first + count <= hands and rows for q in rows]


def stored_hands(out_dir: Path) -> StoredHands:
    """The hands of an LBR folder, read without playing any (for comparing two runs)."""
    stored = _stored_chunks(out_dir)
    realised: list[float] = []
    kept: dict[str, list[float] | None] = {name: [] for name in ESTIMATES.values()}
    chunks: list[tuple[int, int, list[FoldQuery] | None]] = []
    while len(realised) in stored:
        first = len(realised)
        values = stored[first]
        if not values:
            raise ValueError(f"{out_dir}: LBR chunk at hand {first} is empty")
        realised += values
        for prefix, name in ESTIMATES.items():
            est = _stored_estimate(out_dir, prefix, first, len(values))
            kept[name] = None if est is None or kept[name] is None else kept[name] + est
        chunks.append((first, len(values), _stored_queries(out_dir, first)))
    per_hand = {"realised": realised} | {name: values for name, values in kept.items() if values is not None}
    return StoredHands(per_hand, chunks)


def plan_chunks(hands: int, chunk: int, stored: dict[int, list[float]]) -> list[tuple[int, int]]:
    """``(first, count)`` of every chunk covering hands ``0..hands-1``: the stored ones where they
    are, new ones of at most ``chunk`` hands in the gaps (so a folder written with one chunk size
    resumes with another)."""
    if chunk < 1:
        raise ValueError(f"chunk must be at least 1 hand, not {chunk}")
    plan = []
    i = 0
    starts = sorted(stored)
    while i < hands:
        if i in stored:
            count = min(len(stored[i]), hands - i)
            if count == 0:
                raise ValueError(f"LBR chunk at hand {i} is empty")
        else:
            next_stored = next((s for s in starts if s > i), hands)
            count = min(chunk, next_stored - i, hands - i)
        plan.append((i, count))
        i += count
    return plan


def resumed_hands(out_dir: Path | None, hands: int, chunk: int) -> int:
    """How many of the first ``hands`` hands a run in ``out_dir`` finds already played."""
    stored = _stored_chunks(out_dir)
    return sum(count for first, count in plan_chunks(hands, chunk, stored) if first in stored)


def share_the_cores(workers: int) -> None:
    """Worker initializer: torch's intra-op threads get this process's share of the cores.

    Left alone, every worker starts as many threads as the machine has cores, so N workers
    oversubscribe it N-fold and the threads that spin waiting for work take time from the
    workers that have some."""

    torch.set_num_threads(max(1, (os.cpu_count() or 1) // workers))


def run_lbr(
    game: Game,
    make_bot: ProviderFactory,
    setting: LBRSetting,
    hands: int,
    seed: int = 0,
    out_dir: Path | None = None,
    workers: int = 1,
    chunk: int = 50,
    progress: Callable[[int], None] | None = None,
    queries: list[FoldQuery] | None = None,
    estimates: dict[str, list[float]] | None = None,
    progress_resumed: bool = True,
) -> list[float]:
    """LBR's realised winnings per hand (chips); chunks are written to ``out_dir`` and reused (resumable).

    Each hand's cards come from ``(seed, hand)`` and each chunk's random choices from ``(seed, first
    hand)``, so a run is reproducible for a given chunk size whatever the number of workers, and
    runs of two bots with one seed deal the same cards hand for hand. ``queries`` receives LBR's questions to the bot
    (:data:`FoldQuery`) of every chunk that has them (kept as ``folds-*.json`` beside the chunk).
    ``estimates`` receives, per :class:`HandResult` field other than ``realised``, the lower-variance
    winnings hand for hand with the returned list (kept as ``expected-*.json`` and
    ``aivat-*.json``), each only when every chunk has it (older folders may not).
    ``progress`` hears of the hands of stored chunks too unless ``progress_resumed`` is False
    (a progress bar that starts from :func:`resumed_hands` instead, for an honest rate)."""
    stored = _stored_chunks(out_dir)
    chunks = plan_chunks(hands, chunk, stored)
    results: dict[int, list[float]] = {}
    todo = []
    asked: dict[int, list[FoldQuery]] = {}
    kept: dict[str, dict[int, list[float]]] = {name: {} for name in ESTIMATES.values()}
    for first, count in chunks:
        if first in stored:
            results[first] = stored[first][:count]
            stored_queries = _stored_queries(out_dir, first) if count == len(stored[first]) else None
            if stored_queries is not None:
                asked[first] = stored_queries
            for prefix, name in ESTIMATES.items():
                values = _stored_estimate(out_dir, prefix, first, len(stored[first]))
                if values is not None:  # the hands this run asks for (a shorter run reads part of a chunk)
                    kept[name][first] = values[:count]
            if progress is not None and progress_resumed:
                progress(count)
        else:
            todo.append((first, count))

    def save(first: int, done: tuple[list[float], list[FoldQuery], dict[str, list[float]]]) -> None:
        values, chunk_queries, chunk_estimates = done
        results[first] = values
        asked[first] = chunk_queries
        for name, est in chunk_estimates.items():
            kept[name][first] = est
        if out_dir is not None:
            out_dir.mkdir(parents=True, exist_ok=True)
            # the chunk file last: a chunk present means its queries and estimates are too
            files = [(f"folds-{first:07d}.json", chunk_queries)]
            files += [(f"{prefix}-{first:07d}.json", chunk_estimates[name]) for prefix, name in ESTIMATES.items()]
            for name, data in files + [(f"lbr-{first:07d}.json", values)]:
                write_json(out_dir / name, data, indent=None)
        if progress is not None:
            progress(len(values))

    workers = min(workers, len(todo))  # no process without a chunk to play
    if workers <= 1:
        for first, count in todo:
            save(first, _chunk_job(game, make_bot, setting, first, count, seed))
    else:
        with worker_pool(workers, share_the_cores, (workers,)) as pool:  # Ctrl-C stops the chunks in flight
            futures = {pool.submit(_chunk_job, game, make_bot, setting, first, count, seed): first for first, count in todo}
            for fut in as_completed(futures):  # each chunk is kept as soon as it is done
                save(futures[fut], fut.result())
    if queries is not None:
        for first, _ in chunks:
            queries.extend(asked.get(first, []))
    if estimates is not None:
        for name, per_chunk in kept.items():
            if all(first in per_chunk for first, _ in chunks):
                estimates[name] = [v for first, _ in chunks for v in per_chunk[first]]
    return [v for first, _ in chunks for v in results[first]]
