"""How the bot's decisions met the clock, per street, from its JSON-lines decision log.

A decision is cached (a re-solve kept from earlier), re-solved until its iteration count, or
re-solved until its time budget ran out (``stopped_by: clock``: the anytime solver answered
with its average strategy so far); ``out_of_time`` answers (check or fold, no re-solve: the
bank could not pay for one) and failed decisions are counted apart.
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
    decisions: int = 0
    cached: int = 0
    by_iterations: int = 0
    by_clock: int = 0
    out_of_time: int = 0
    failed: int = 0
    think_ms: list[float] = field(default_factory=list, repr=False)

    def row(self) -> dict[str, object]:
        solved = self.by_iterations + self.by_clock
        t = np.array(self.think_ms) if self.think_ms else np.zeros(1)
        return {
            "decisions": self.decisions,
            "cached": self.cached,
            "re_solved": solved,
            "ended_by_clock": self.by_clock,
            "clock_fraction": round(self.by_clock / solved, 4) if solved else 0.0,
            "out_of_time": self.out_of_time,
            "failed": self.failed,
            "think_ms_median": round(float(np.median(t)), 1),
            "think_ms_p95": round(float(np.percentile(t, 95)), 1),
            "think_ms_max": round(float(t.max()), 1),
        }


def read_events(paths: Iterable[Path]) -> Iterable[dict]:
    for path in paths:
        for line in path.read_text(errors="replace").splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(event, dict):
                yield event


def clock_report(paths: Sequence[Path], rounds: int | None = None) -> dict[str, dict[str, object]]:
    """``{street: counts}`` over the decision logs ``paths`` (``rounds``: 2 for Leduc, 4 for
    hold'em; default: from the highest street seen)."""
    per: dict[int, StreetClock] = {}
    for event in read_events(paths):
        kind = event.get("event")
        if kind not in ("decision", "out_of_time", "decision_failed") or "street" not in event:
            continue
        st = per.setdefault(int(event["street"]), StreetClock())
        st.decisions += 1
        if kind == "out_of_time":
            st.out_of_time += 1
        elif kind == "decision_failed":
            st.failed += 1
        else:
            st.think_ms.append(float(event.get("think_ms", 0.0)))
            stopped = event.get("stopped_by")
            if event.get("cached") or stopped is None:
                st.cached += 1
            elif stopped == "clock":
                st.by_clock += 1
            else:
                st.by_iterations += 1
    if not per:
        return {}
    rounds = rounds or (2 if max(per) < 2 else 4)
    names = STREETS.get(rounds, tuple(f"round {r + 1}" for r in range(rounds)))
    return {names[r] if r < len(names) else f"round {r + 1}": per[r].row() for r in sorted(per)}


def clock_lines(report: dict[str, dict[str, object]]) -> list[str]:
    """One readable line per street."""
    return [
        f"{street}: {r['decisions']} decisions, {r['cached']} cached, {r['re_solved']} re-solved "
        f"({r['ended_by_clock']} ended by the clock, {100 * float(r['clock_fraction']):.0f}%), "  # type: ignore[arg-type]
        f"{r['out_of_time']} out of time, {r['failed']} failed; think ms median {r['think_ms_median']}, "
        f"p95 {r['think_ms_p95']}, max {r['think_ms_max']}"
        for street, r in report.items()
    ]
