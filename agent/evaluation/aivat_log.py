"""AIVAT on recorded matches, in any game: a dealer log and our bot's decision log.

The dealer's log has every hand's hole cards, board and actions; our bot's decision log
(``bots.jsonl`` of ``deepstack match --log-dir``, or ``deepstack play --log-json``) has, for
each of its decisions, the exact probabilities it sampled its action from for the hand it
held. That is all AIVAT needs (:mod:`agent.evaluation.aivat` explains the estimator): corrections at
chance events (board cards) and at our own actions, with the opponent never corrected, so
it works against any opponent, including programs we cannot look into.

Value function: the *check-down value* of a state for a seat, ``amount * (2 * equity - 1)``
where ``amount`` is what both players have matched and ``equity`` is the seat's exact
share of the pot over every completion of the board, with both hole cards known (a
finished hand is worth its payoff). Because the matched amount does not change at a chance
event, the mean of this value over the cards that can come equals its value before them,
so a chance correction is simply ``V(before) - V(after)``: the luck of the cards, removed
exactly. AIVAT is unbiased with any value function; this one needs no solver and removes
the variance of the cards dealt while both players are in, which is most of it in hold'em.

At our own decisions the bot's own values can stand in (``values`` of a decision line: what
its re-solve expected the hand to win after each action, betting to come included, as
DeepStack's AIVAT did). Measured, they reduce the variance less than check-down values with
both hands known (hold'em against ``raise``, 600 hands: standard deviation 43,472 against
40,878 mbb per hand; Leduc against ``random``, 1000 hands: 3,924 against 3,796): the
re-solve values a hand against the range it expects, not the cards the opponent holds. So
check-down is the default.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import combinations
from pathlib import Path

import numpy as np

from agent.evaluation.stats import Estimate, estimate
from agent.solver.handspace import HandSpace
from native.cards import cards_to_str
from native.evaluator import evaluate
from protocol.dealer_log import LoggedHand, read_hands
from protocol.gamedef import Game
from protocol.state import CALL, FOLD, LIMIT_RAISE, Action, HandState, raise_to


def _tokens(text: str, game: Game) -> list[Action]:
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        i += 1
        if ch == "f":
            out.append(FOLD)
        elif ch == "c":
            out.append(CALL)
        elif ch == "r":
            j = i
            while j < len(text) and text[j].isdigit():
                j += 1
            if game.is_nolimit and j == i:  # int('') said "invalid literal for int() with base 10: ''"
                raise ValueError(f"raise without its raise-to amount in betting {text!r} (a no-limit game)")
            out.append(raise_to(int(text[i:j])) if game.is_nolimit else LIMIT_RAISE)
            i = j
        else:
            raise ValueError(f"bad action {ch!r} in betting {text!r}")
    return out


@dataclass
class Replay:
    """A logged hand replayed by the rules engine: its events in order."""

    chance: list[tuple[HandState, HandState]] = field(default_factory=list)  # (waiting for cards, dealt)
    actions: list[tuple[HandState, Action]] = field(default_factory=list)
    final: HandState | None = None


def replay(game: Game, hand: LoggedHand) -> Replay:
    """Every state of ``hand``; the final payoffs must be the logged ones."""
    state = HandState.initial(game, hand.hand_id, hole_cards=hand.holes)
    out = Replay()

    def deal() -> None:
        nonlocal state
        before = state
        state = state.with_board(hand.board[: game.board_cards_through(state.round)])
        out.chance.append((before, state))

    for r, text in enumerate(hand.betting.split("/")):
        if r > 0 and state.board_cards_needed:
            deal()
        for action in _tokens(text, game):
            out.actions.append((state, action))
            state = state.apply(action)
    while not state.finished and state.board_cards_needed:  # an all-in run-out
        deal()
    if state.board_cards_needed and state.is_showdown:
        deal()
    if not state.finished:
        raise ValueError(f"hand {hand.hand_id}: betting {hand.betting!r} does not finish the hand")
    got = state.payoffs()
    if not np.allclose(got, hand.payoffs):
        raise ValueError(f"hand {hand.hand_id}: replayed payoffs {got} differ from the logged {hand.payoffs}")
    out.final = state
    return out


@lru_cache(maxsize=8)
def _completions(n: int, k: int) -> np.ndarray:
    """All k-subsets of range(n) as a uint8 array (pre-flop hold'em: 1,712,304 rows)."""
    if k == 0:
        return np.zeros((1, 0), dtype=np.uint8)
    return np.array(list(combinations(range(n), k)), dtype=np.uint8)


class CheckdownValue:
    """``V(state, seat)``: the payoff of a finished hand; otherwise the matched amount times
    the seat's exact check-down result (win 1, tie 0, loss -1) over every board completion."""

    def __init__(self, game: Game, deck: tuple[int, ...]) -> None:
        self.game = game
        self.deck = deck
        self._equity: dict[tuple, float] = {}

    def result(self, state: HandState, seat: int) -> float:
        """The seat's exact check-down result against the other's hole cards (mean of win 1, tie 0, loss -1
        over every board completion), memoised per (cards, board): pre-flop hold'em enumerates 1.7M boards."""
        key = (state.hole_cards[seat], state.hole_cards[1 - seat], state.board)
        hit = self._equity.get(key)
        if hit is None:
            ours, theirs = state.hole_cards[seat], state.hole_cards[1 - seat]
            used = set(ours) | set(theirs) | set(state.board)
            remaining = np.array([c for c in self.deck if c not in used], dtype=np.uint8)
            boards = remaining[_completions(len(remaining), self.game.total_board_cards - len(state.board))]
            fixed = np.array(state.board, dtype=np.uint8)
            n = len(boards)
            a = evaluate(
                np.ascontiguousarray(np.hstack([np.tile(np.array(ours + tuple(fixed), dtype=np.uint8), (n, 1)), boards]))
            )
            b = evaluate(
                np.ascontiguousarray(np.hstack([np.tile(np.array(theirs + tuple(fixed), dtype=np.uint8), (n, 1)), boards]))
            )
            hit = self._equity[key] = float(np.sign(a.astype(np.int32) - b.astype(np.int32)).mean())
        return hit

    def __call__(self, state: HandState, seat: int) -> float:
        if state.finished and not (state.is_showdown and state.board_cards_needed):
            return float(state.payoffs()[seat])
        return float(min(state.spent)) * self.result(state, seat)  # heads-up: the excess of a bet comes back


@dataclass(frozen=True)
class LoggedDecision:
    """One decision of our bot as its log records it: the probabilities it sampled from (by action
    name), the action taken, and optionally its re-solve's values per action."""

    strategy: dict[str, float]
    action: str
    #: what the bot's re-solve expected its hand to win after each action (chips), if logged
    values: dict[str, float] | None = None


def _number_map(value: object, field: str) -> dict[str, float]:
    """A logged mapping of action names to numbers (a strategy, the bot's values)."""
    if not isinstance(value, dict):
        raise ValueError(f"{field} {value!r}: expected a mapping of actions to numbers")
    try:
        return {str(k): float(v) for k, v in value.items()}
    except (TypeError, ValueError):
        raise ValueError(f"{field} {value!r}: expected a mapping of actions to numbers") from None


def _decision(event: dict) -> tuple[tuple[int, str, str], LoggedDecision]:
    """One decision line's key and content; a bad field is a ValueError naming it."""
    hand = event["hand"]
    if isinstance(hand, bool) or not isinstance(hand, (int, str)) or not str(hand).strip().isdigit():
        raise ValueError(f"hand {hand!r}: expected a hand number")
    if not isinstance(event.get("action"), str):
        raise ValueError(f"action {event.get('action')!r}: expected the action taken, as text")
    values = event.get("values")
    item = LoggedDecision(
        _number_map(event["strategy"], "strategy"),
        event["action"],
        _number_map(values, "values") if values is not None else None,
    )
    probs = list(item.strategy.values())
    if not all(math.isfinite(p) and p >= 0 for p in probs) or not sum(probs) > 0:
        raise ValueError(f"strategy {event['strategy']!r}: expected probabilities (finite, not negative, some above 0)")
    if item.values is not None and not all(math.isfinite(v) for v in item.values.values()):
        raise ValueError(f"values {values!r}: expected finite numbers")
    return (int(hand), str(event["cards"]), str(event["betting"])), item


def read_decisions(path: Path, required: bool = False) -> tuple[dict[tuple[int, str, str], LoggedDecision], int]:
    """Decisions keyed by (hand, our hole cards, betting before the action); and how many decision
    lines were left out (no cards/betting fields: logs of older versions; a JSON object cut short,
    e.g. by a killed bot; or one key seen twice with different strategies). Lines that are neither
    JSON nor the start of a JSON object (console output, say) are no decisions and not counted.
    ``required``: a file without a single JSON log event (console output, say) is a ValueError naming it;
    a log of events but no decision (a match of call/random seats) is a log of no decisions."""
    out: dict[tuple[int, str, str], LoggedDecision] = {}
    dropped, clashes, events, lines = 0, set(), 0, 0
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        lines += line.strip() != ""
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            dropped += line.lstrip().startswith("{")  # a line cut short by a killed bot: its decision is left out
            continue
        events += isinstance(event, dict) and "event" in event
        if not isinstance(event, dict) or event.get("event") != "decision":
            continue  # other lines of a shared log (a number, a list) are not ours to judge
        if "cards" not in event or "betting" not in event or "strategy" not in event:
            dropped += 1
            continue
        try:
            key, item = _decision(event)
        except (TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"{path}:{number}: a decision line with {exc}") from None
        if key in out and out[key] != item:
            clashes.add(key)
        out[key] = item
    for key in clashes:
        del out[key]
    if required and not events:
        raise ValueError(
            f'{path}: not a decision log: none of its {lines} lines is a JSON log event (a line with an "event", '
            "as the bots.jsonl of 'deepstack match --log-dir' or 'deepstack play --log-json' holds)"
        )
    return out, dropped + len(clashes)


@dataclass
class LogAivat:
    """The running tally of :func:`log_aivat`: per-hand raw and corrected winnings (chips) and counts of
    the corrections made and of the decisions left uncorrected."""

    raw: list[float] = field(default_factory=list)
    corrected: list[float] = field(default_factory=list)
    chance_events: int = 0
    action_events: int = 0
    #: of the action corrections, those made with the bot's own values (the rest: check-down)
    bot_value_events: int = 0
    unmatched_decisions: int = 0


def _bot_values(d: LoggedDecision, taken: str) -> dict[str, float] | None:
    """The logged values when they cover the action taken and every action played."""
    if d.values is None or taken not in d.values:
        return None
    if any(p > 0 and name not in d.values for name, p in d.strategy.items()):
        return None
    return d.values


def hand_aivat(
    game: Game,
    hand: LoggedHand,
    seat: int,
    value: CheckdownValue,
    decisions: dict[tuple[int, str, str], LoggedDecision],
    tally: LogAivat,
    action_values: str = "checkdown",
) -> tuple[float, float]:
    """``(raw, aivat)`` winnings of ``seat`` in one logged hand.

    At our own decisions the correction is ``sum_a p(a) V(a) - V(taken)``, zero in expectation
    whatever ``V`` is: the check-down value with both hands known, or (``action_values="bot"``)
    what the bot's re-solve expected each action to win against the opponent's range,
    betting to come included, where the decision log has it."""
    rep = replay(game, hand)
    raw = hand.payoffs[seat]
    correction = 0.0
    for before, after in rep.chance:
        correction += value(before, seat) - value(after, seat)
        tally.chance_events += 1
    ours = cards_to_str(hand.holes[seat])
    for state, taken in rep.actions:
        if state.current_player != seat:
            continue
        d = decisions.get((hand.hand_id, ours, state.betting_string()))
        if d is None or d.action != str(taken) or str(taken) not in d.strategy:
            tally.unmatched_decisions += 1
            continue
        total = sum(d.strategy.values())
        logged = _bot_values(d, str(taken)) if action_values == "bot" else None
        if logged is not None:
            v = logged.__getitem__
            tally.bot_value_events += 1
        else:
            v = lambda name: value(state.apply(_tokens(name, game)[0]), seat)  # noqa: E731
        expected = sum(p / total * v(name) for name, p in d.strategy.items() if p > 0)
        correction += expected - v(str(taken))
        tally.action_events += 1
    return raw, raw + correction


def log_aivat(
    game: Game,
    logs: list[Path],
    player: str,
    decisions_log: Path | None,
    action_values: str = "checkdown",
    decisions_required: bool = False,
) -> tuple[dict[str, Estimate], LogAivat]:
    """Raw and AIVAT estimates of ``player``'s winnings per hand, in chips, and both per deal
    (``duplicate``, ``aivat duplicate``) when a log and its ``.swapped`` twin are both given:
    the two corrections are independent, so they add up. ``decisions_required``: a ``decisions_log``
    that holds no JSON log event is refused (a file given on purpose), not read as a log of no decisions.

    The tally's ``unmatched_decisions`` counts the player's decisions in the dealer logs that no usable
    line of the decision log matches; a line left out (cut short, of an older version, a clash) is one
    of them already, and a line of the decision log that is no decision is none."""

    if action_values not in ("checkdown", "bot"):
        raise ValueError(f"action values must be 'checkdown' or 'bot', not {action_values!r}")
    if decisions_log and decisions_log.exists():
        decisions, _ = read_decisions(decisions_log, required=decisions_required)
    else:
        decisions = {}
    value = CheckdownValue(game, tuple(HandSpace(game).deck) if game.deck_size <= 12 else tuple(range(52)))
    tally = LogAivat(unmatched_decisions=0)
    per_log: dict[Path, dict[int, tuple[float, float]]] = {}
    for path in logs:
        per_log[path] = {}
        try:
            for hand in read_hands(path):
                if player not in hand.names:
                    raise ValueError(f"hand {hand.hand_id} has no player named {player!r} (players: {', '.join(hand.names)})")
                seat = hand.names.index(player)
                if hand.hand_id in per_log[path]:
                    raise ValueError(f"hand {hand.hand_id} is logged twice; a log holds each hand once")
                try:
                    r, a = hand_aivat(game, hand, seat, value, decisions, tally, action_values)
                except ValueError as exc:  # a bad card or action of the hand: where it is
                    text = str(exc)
                    raise ValueError(text if text.startswith("hand ") else f"hand {hand.hand_id}: {text}") from None
                tally.raw.append(r)
                tally.corrected.append(a)
                per_log[path][hand.hand_id] = (r, a)
        except ValueError as exc:  # every problem of a log names the log (several are read)
            text = str(exc)
            raise ValueError(text if text.startswith(str(path)) else f"{path}: {text}") from None
    out = {"raw": estimate(tally.raw), "aivat": estimate(tally.corrected)}
    pairs: list[tuple[float, float]] = []
    for path, values in per_log.items():
        twin = path.with_name(path.name.replace(".log", ".swapped.log"))
        if twin in per_log:
            pairs += [
                (0.5 * (v[0] + per_log[twin][h][0]), 0.5 * (v[1] + per_log[twin][h][1]))
                for h, v in values.items()
                if h in per_log[twin]
            ]
    if pairs:
        out["duplicate"] = estimate([p[0] for p in pairs])
        out["aivat duplicate"] = estimate([p[1] for p in pairs])
    return out, tally
