"""The CFR-D re-solving gadget (Burch et al.; DeepStack section 2): at the root of a re-solve the
opponent chooses, per hand, to take the counterfactual value it was promised (terminate) or to play
the subgame (follow). Regret matching on that choice keeps the re-solved strategy from giving the
opponent more than the values carried from the last re-solve.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass
class Gadget:
    """CFR-D re-solving gadget for ``player`` (the opponent): terminate (receive ``cfvs``) or follow.

    ``prior`` is the deal of the opponent's hand (uniform, or mixed with a range estimate for
    the conservative warm start); with ``aggressive`` > 0 the opponent must follow with
    probability ``aggressive`` holding a hand from ``estimate``.
    """

    player: int
    cfvs: torch.Tensor  # [H]
    prior: torch.Tensor  # [H]
    estimate: torch.Tensor | None = None
    aggressive: float = 0.0
    regret_follow: torch.Tensor = field(init=False)
    regret_terminate: torch.Tensor = field(init=False)
    follow_sum: torch.Tensor = field(init=False)

    def __post_init__(self) -> None:
        self.regret_follow = torch.zeros_like(self.cfvs)
        self.regret_terminate = torch.zeros_like(self.cfvs)
        self.follow_sum = torch.zeros_like(self.cfvs)

    def follow_probability(self) -> torch.Tensor:
        """``[H]`` probability that each opponent hand follows into the re-solved subgame rather than
        terminates, by regret matching (0.5 before either regret is positive)."""
        f = self.regret_follow.clamp(min=0)
        t = self.regret_terminate.clamp(min=0)
        total = f + t
        return torch.where(total > 0, f / total.clamp(min=1e-30), torch.full_like(f, 0.5))

    def reach(self, p_follow: torch.Tensor) -> torch.Tensor:
        """The opponent's ``[H]`` root reach for ``p_follow``: its prior times the follow probability, mixed
        with ``estimate`` in the aggressive warm start."""
        r = self.prior * p_follow
        if self.aggressive > 0 and self.estimate is not None:
            r = (1 - self.aggressive) * r + self.aggressive * self.estimate
        return r

    def update(self, follow_values: torch.Tensor, p_follow: torch.Tensor) -> None:
        """One regret-matching+ step: the opponent's root values ``follow_values`` ``[H]`` when it follows,
        against ``cfvs`` when it terminates."""
        v = p_follow * follow_values + (1 - p_follow) * self.cfvs
        self.regret_follow = (self.regret_follow + follow_values - v).clamp(min=0)
        self.regret_terminate = (self.regret_terminate + self.cfvs - v).clamp(min=0)
