"""How continual re-solving re-solves each street: bet sizes, solver settings, depth limit and what
values the lookahead's leaves and chance nodes get, plus the opponent-range warm start.

Settings only (no solving), so the bot's configuration (``agent.bots.settings``) and the street
solves (``chance_solve``) build them without importing the re-solver's state machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from agent.leaves.snapshot import LeafSnapshot
from agent.solver.cfr import LeafValueFn
from agent.solver.resolve import SolverConfig
from agent.solver.tree import BetSizing


class ChanceValueFn(Protocol):
    """Values ``[2, hands]`` at the start of the next round on ``board`` below a leaf."""

    def __call__(self, leaf: LeafSnapshot, board: tuple[int, ...]) -> np.ndarray:
        """``[2, hands]`` values on ``board`` below ``leaf``, for the leaf's (average) reaches: the
        opponent values continual re-solving carries into the next round after the cards come."""
        ...


@dataclass(frozen=True)
class StreetSettings:
    """How to re-solve when the current round is this street."""

    sizing: tuple[BetSizing, ...]
    config: SolverConfig = SolverConfig()
    #: the last round inside the lookahead (None: to the end of the game)
    last_round: int | None = None
    leaf_values: LeafValueFn | None = None
    chance_values: ChanceValueFn | None = None


@dataclass(frozen=True)
class ResolveSettings:
    """Per-round settings (one entry per round of the game; a single entry applies to all)."""

    streets: tuple[StreetSettings, ...]
    #: opponent-range warm start at our first action of a round (0 = off); "aggressive" when
    #: the re-solve's root faces no bet (the opponent must follow with the estimate with this
    #: probability; a re-solve from the round's start included), "conservative" when it starts
    #: facing a bet or in that mode (the gadget deals the estimate mixed in)
    warm_start_weight: float = 0.0
    warm_start_mode: Literal["conservative", "aggressive"] = "aggressive"
    #: when the opponent acted first in a round after the first one (and the warm start is
    #: on): re-solve from the round's start, the opponent's action in the tree, with the warm
    #: start there, instead of at the state faced (see :meth:`ContinualResolver._round_start`)
    from_round_start: bool = False
    #: decisions kept in the cache (pre-flop decisions only: they repeat every hand); a hold'em
    #: decision holds ~0.33 MB, and opponents with many bet sizes make many distinct lines, so
    #: the least recently used ones go (memory stays bounded over long matches)
    cache_size: int = 256

    def street(self, round_: int) -> StreetSettings:
        """The settings of round ``round_``: the last entry serves every later round."""
        return self.streets[min(round_, len(self.streets) - 1)]

    @classmethod
    def uniform(cls, sizing: BetSizing, config: SolverConfig, **kw: object) -> ResolveSettings:
        """One street's settings for every round (``sizing`` and ``config``; the Leduc bot); ``kw`` sets the
        other fields."""
        return cls(streets=(StreetSettings(sizing=(sizing,), config=config),), **kw)  # type: ignore[arg-type]
