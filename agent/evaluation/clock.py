"""How the bot's decisions met the clock, per street, from its JSON-lines decision log.

A decision is cached (a re-solve kept from earlier), re-solved until its iteration count, or
re-solved until its time budget ran out (``stopped_by: clock``: the anytime solver answered
with its average strategy so far); ``out_of_time`` answers (check or fold: the bank could not
pay for a re-solve, or the clock stopped one before ``bot.time.min_iterations`` and it was
thrown away) and failed decisions are counted apart. Think times cover every decision that
logged one, these included: a re-solve thrown away took its time all the same.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

STREETS = {2: ("round 1", "round 2"), 4: ("preflop", "flop", "turn", "river")}


@dataclass
class StreetClock:
    """One street's counts of the bot's decisions (cached, re-solved to their iterations or stopped by
    the clock, out of time, failed) and their think times in ms."""

    decisions: int = 0
    cached: int = 0
    by_iterations: int = 0
    by_clock: int = 0
    out_of_time: int = 0
    failed: int = 0
    think_ms: list[float] = field(default_factory=list, repr=False)

    def row(self) -> dict[str, object]:
        """This street's row of the clock report: counts, the fraction of re-solves the clock stopped, and
        think-time median / p95 / max in ms (None when no time was recorded)."""
        solved = self.by_iterations + self.by_clock
        t = np.array(self.think_ms) if self.think_ms else np.full(1, np.nan)  # no times: n/a, not 0

        def ms(x: float) -> float | None:
            return None if np.isnan(x) else round(float(x), 1)

        return {
            "decisions": self.decisions,
            "cached": self.cached,
            "re_solved": solved,
            "ended_by_clock": self.by_clock,
            "clock_fraction": round(self.by_clock / solved, 4) if solved else 0.0,
            "out_of_time": self.out_of_time,
            "failed": self.failed,
            "think_ms_median": ms(np.median(t)),
            "think_ms_p95": ms(np.percentile(t, 95)),
            "think_ms_max": ms(t.max()),
        }


def read_events(paths: Iterable[Path]) -> Iterable[dict]:
    """The JSON objects of the JSON-lines logs ``paths``, in order; lines that are not JSON objects are skipped."""
    for path in paths:
        for line in path.read_text(errors="replace").splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(event, dict):
                yield event


def clock_report(
    paths: Sequence[Path], rounds: int | None = None, hole_cards: int | None = None, game_name: str = "the game"
) -> dict[str, dict[str, object]]:
    """``{street: counts}`` over the decision logs ``paths`` (``rounds``: 2 for Leduc, 4 for
    hold'em; default: from the highest street seen). ``hole_cards``: the game's (``game_name``'s); a
    decision whose cards are another number is a ValueError naming its log (a log of another game,
    whose streets would be named as this game's)."""
    per: dict[int, StreetClock] = {}
    holdem = False
    for log, event in ((p, event) for p in paths for event in read_events([p])):
        kind = event.get("event")
        street = event.get("street")
        if kind not in ("decision", "out_of_time", "decision_failed") or not finite_number(street) or street < 0:
            continue  # another event, or a line not written by the bot
        if rounds is not None and street >= rounds:  # no street of the game: not the bot's line either
            continue
        st = per.setdefault(int(street), StreetClock())
        st.decisions += 1
        if finite_number(event.get("think_ms")):
            st.think_ms.append(float(event["think_ms"]))
        cards = event.get("cards")
        holdem = holdem or (isinstance(cards, str) and len(cards) >= 4)  # two hole cards: hold'em
        if hole_cards is not None and isinstance(cards, str) and cards and len(cards) != 2 * hole_cards:
            held = len(cards) // 2
            raise ValueError(
                f"{log}: not a log of {game_name}: its decisions hold {held} hole card{'s' if held != 1 else ''} "
                f"(as {cards!r}), {game_name} deals {hole_cards}"
            )
        if kind == "out_of_time":
            st.out_of_time += 1
        elif kind == "decision_failed":
            st.failed += 1
        else:
            stopped = event.get("stopped_by")
            if event.get("cached") or stopped is None:
                st.cached += 1
            elif stopped == "clock":
                st.by_clock += 1
            else:
                st.by_iterations += 1
    if not per:
        return {}
    rounds = rounds or (4 if holdem or max(per) >= 2 else 2)
    names = STREETS.get(rounds, tuple(f"round {r + 1}" for r in range(rounds)))
    return {names[r] if r < len(names) else f"round {r + 1}": per[r].row() for r in sorted(per)}


def finite_number(x: object) -> bool:
    """A JSON number that can be used as one (not a bool, null, string, NaN or infinity)."""
    return isinstance(x, int | float) and not isinstance(x, bool) and np.isfinite(x)


def clock_lines(report: dict[str, dict[str, object]]) -> list[str]:
    """One readable line per street."""

    def ms(x: object) -> str:
        return "n/a" if x is None else str(x)

    return [
        f"{street}: {r['decisions']} decisions, {r['cached']} cached, {r['re_solved']} re-solved "
        f"({r['ended_by_clock']} ended by the clock, {100 * float(r['clock_fraction']):.0f}%), "  # type: ignore[arg-type]
        f"{r['out_of_time']} out of time, {r['failed']} failed; think ms median {ms(r['think_ms_median'])}, "
        f"p95 {ms(r['think_ms_p95'])}, max {ms(r['think_ms_max'])}"
        for street, r in report.items()
    ]
