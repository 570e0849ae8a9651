"""The opponent's values at the start of a street, by solving that street.

After the cards of a new street come, continual re-solving needs the opponent's
counterfactual values there: they are what the re-solving gadget lets each opponent hand
"terminate" with. Below a depth-limited lookahead they come from the leaf: DeepStack's value
networks, or our check-down values. Check-down values misstate them badly: on turn draws they
are 0.1-0.3 of the pot away per hand (range-weighted) from the values of the turn solved to
the end, because the betting still to come moves value between the hands. With them the
gadget constrains the wrong hands, and the re-solve then folds too often after its own check
(on one turn draw 62% to a pot bet where the game's equilibrium folds 50%; docs/results.md, "Street-start values").

:class:`SolvedChanceValues` gets them instead the way a perfect next-street network would:
it solves the new street from its start with both ranges at the leaf (no gadget: both are
known there), with the settings the bot re-solves that street with, and reads both players'
values at the root. That is one solve per street reached, the size of one re-solve; it runs
before the decision's re-solve and is not cut by the decision's clock (its iterations are the
street's). Not shipped: LBR won more against it (docs/results.md, "Street-start values").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from agent.leaves.snapshot import LeafSnapshot
from agent.resolving.settings import ChanceValueFn, StreetSettings
from agent.solver.handspace import HandSpace
from agent.solver.resolve import SpotError, solve_ranges
from agent.solver.tree import BetSizing
from protocol.state import HandState, RulesError


@dataclass
class SolvedChanceValues:
    """A :class:`agent.resolving.settings.ChanceValueFn` solving the next street (see the module).

    ``street``: how the bot re-solves the next street (iterations, depth limit, leaves);
    ``sizing``: the lookahead's bets per round; ``fallback``: the leaf's own chance values,
    used where there is nothing to solve (a range emptied by the new cards, nobody left to
    act)."""

    space: HandSpace
    street: StreetSettings
    sizing: tuple[BetSizing, ...]
    fallback: ChanceValueFn
    solves: int = field(default=0, init=False)

    def __call__(self, leaf: LeafSnapshot, board: tuple[int, ...]) -> np.ndarray:
        valid = self.space.valid(board)
        reach = np.asarray(leaf.reach, dtype=np.float64) * valid
        mass = reach.sum(axis=1)
        if not (mass > 0).all():
            return self.fallback(leaf, board)
        try:
            state = HandState.at_round_start(self.space.game, leaf.next_round, tuple(leaf.spent), tuple(board))
            sol = solve_ranges(
                state,
                [reach[0], reach[1]],
                self.sizing,
                self.street.config,
                space=self.space,
                last_round=self.street.last_round,
                leaf_values=self.street.leaf_values,
                average_strategy=False,
            )
        except (RulesError, SpotError):  # both all-in, or no pair of hands fits together
            return self.fallback(leaf, board)
        self.solves += 1
        values = sol.values_at(0)
        # counterfactual values are linear in the other player's reach: back to the leaf's scale
        return np.stack([values[0] * mass[1], values[1] * mass[0]]) * valid
