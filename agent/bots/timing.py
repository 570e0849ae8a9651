"""Time management: how long each decision may think, given the match's time rules.

The ACPC dealer allows ``t_per_hand`` milliseconds per hand on average over the whole
match (and ``t_response`` per reply, ``t_hand`` per hand). The budget of a decision is a
share of what is banked (a safety fraction of the average allowance of the hands played so
far and of this one, minus the time used) spread over the decisions this hand may still
need, capped by the per-reply and per-hand limits, all scaled by the safety factor again. The
network's round trip to the dealer (``latency_s``, known only from the config) is charged per
reply and kept back for each reply still expected.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

#: decisions still expected in a hand when it is our turn on each street (pre-flop .. river)
EXPECTED_DECISIONS_LEFT = (4.0, 3.0, 2.0, 1.0)


@dataclass
class TimeBudget:
    """One match's clock for the DeepStack bot: the dealer's limits in seconds, what has been used,
    and recent re-solve times, from which each decision's budget is drawn."""

    t_per_hand_s: float = 7.0
    t_response_s: float = 600.0
    t_hand_s: float = 600.0
    safety: float = 0.7
    #: rounds of the game (the decisions still expected are those of the last rounds of hold'em's table)
    rounds: int = 4
    #: the network's round trip per reply: on the dealer's clock, never on ours
    latency_s: float = 0.0
    hands: int = 0
    used_s: float = 0.0
    #: recent re-solves per round: (seconds, iterations, seconds of the iterations)
    recent: dict = field(default_factory=dict, repr=False)
    hand_used_s: float = 0.0
    clock: object = field(default=time.monotonic, repr=False)

    def start_hand(self) -> None:
        """A new hand: its ``t_per_hand_s`` joins the bank and the per-hand clock restarts."""
        self.hands += 1
        self.hand_used_s = 0.0

    def _limits(self, left: float) -> tuple[float, float]:
        """``(banked, cap)``: the match allowance left so far, and the per-reply / per-hand cap, less the
        round trips of this reply and of the ``left - 1`` the hand is expected to need after it.

        Only ``safety`` of the allowance is ever banked: the dealer's clock also runs while we
        read, parse and answer and while other programs hold the CPU, none of which the bot
        can measure; spending the whole allowance let such overheads add up over a match until
        the dealer aborted it (seen on a 2-core machine running other jobs)."""
        trips = left * self.latency_s
        banked = self.safety * self.hands * self.t_per_hand_s - self.used_s - trips
        return banked, min(self.t_response_s - self.latency_s, self.t_hand_s - self.hand_used_s - trips)

    def budget(self, round_: int) -> float:
        """Seconds the decision about to be made may use."""
        table = (
            EXPECTED_DECISIONS_LEFT[-self.rounds :] if self.rounds <= len(EXPECTED_DECISIONS_LEFT) else EXPECTED_DECISIONS_LEFT
        )
        left = table[min(round_, len(table) - 1)]
        banked, cap = self._limits(left)  # each reply still expected, this one included, travels on the dealer's clock
        share = max(0.0, banked) / left
        return max(0.0, self.safety * min(share, cap))

    def deadline(self, round_: int, started: float) -> float:
        """Absolute ``clock()`` deadline of a decision that started at ``started``."""
        return started + self.budget(round_)

    def spent(self, seconds: float, reply: bool = False) -> None:
        """``seconds`` of the dealer's clock went to us (a decision, or start-up charged to the next hand):
        counted against the match's bank and the hand's cap; a ``reply`` also pays its round trip."""
        seconds += self.latency_s if reply else 0.0
        self.used_s += seconds
        self.hand_used_s += seconds

    def solved(self, round_: int, seconds: float, iterations: int = 0, solve_seconds: float = 0.0) -> None:
        """A re-solve of ``round_`` took ``seconds``: ``solve_seconds`` of them for its
        ``iterations`` (the rest to set it up)."""
        times = self.recent.setdefault(round_, [])
        times.append((seconds, iterations, solve_seconds))
        del times[:-10]

    def playable_cost(self, round_: int, floor: int) -> float | None:
        """Seconds a re-solve of ``round_`` needs to reach ``floor`` iterations (its set-up plus
        ``floor`` iterations), by the cheapest recent one; None before the first."""
        times = self.recent.get(round_)
        if not times:
            return None
        costs = []
        for seconds, iterations, solve_seconds in times:
            if iterations >= floor and 0 < solve_seconds <= seconds:
                costs.append(seconds - solve_seconds + floor * solve_seconds / iterations)
            else:  # stopped short of the floor (its first iterations are the slowest), or no split known:
                costs.append(seconds)  # it needs at least what it took
        return min(costs)

    def affordable(self, round_: int, floor: int = 1) -> bool:
        """Whether a re-solve can reach ``floor`` iterations (the fewest whose answer is played)
        within this decision's budget, judging by the cheapest recent one. One that cannot would
        be stopped by the clock and thrown away, its time spent all the same; the bot answers at
        once instead (a slow machine, a tight limit, a small bank early in a match)."""
        cost = self.playable_cost(round_, floor)
        return cost is None or self.budget(round_) >= cost
