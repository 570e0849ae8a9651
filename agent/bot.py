"""The DeepStack bot: continual re-solving behind the protocol client.

It watches every state of the hand (new hands, new board cards), re-solves on its turn,
samples an action for the cards it holds from the re-solve strategy, and logs one JSON
line per decision. Everything that can fail for reasons outside a decision (a missing or
corrupt model, a bad config) fails when the bot is built, before the match starts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from agent.config import Config, LeducBotConfig
from agent.continual import ContinualResolver, Decision, ResolveSettings, StreetSettings, sample_action
from agent.handspace import HandSpace
from agent.models import load_value_net
from agent.netleaf import HandNetLeafValues
from agent.resolve import SolverConfig, pick_device
from agent.tree import FCPA
from protocol.bot import BaseBot
from protocol.gamedef import DeckConvention, Game
from protocol.logs import get_logger
from protocol.matchstate import MatchState
from protocol.state import Action, ActionKind

log = get_logger("bot")


@dataclass
class _Seat:
    convention: DeckConvention
    space: HandSpace
    resolver: ContinualResolver


def leduc_settings(game: Game, space: HandSpace, cfg: LeducBotConfig, device: str) -> ResolveSettings:
    config = SolverConfig(algorithm=cfg.algorithm, alternating=cfg.algorithm != "hybrid", iterations=cfg.iterations, device=device, dtype="float64")
    if cfg.value_net is None:
        return ResolveSettings.uniform(FCPA, config)
    net, entry = load_value_net(cfg.value_net, device=pick_device(device))
    leaf = HandNetLeafValues(net, space, canonical=bool(entry.get("canonical_suits", False)))
    round1 = StreetSettings(sizing=(FCPA,), config=config, last_round=0, leaf_values=leaf, chance_values=leaf.chance_values)
    round2 = StreetSettings(sizing=(FCPA,), config=config)
    return ResolveSettings(streets=(round1, round2))


class DeepStackBot(BaseBot):
    """Continual re-solving; Leduc (either deck convention) through :func:`leduc_settings`."""

    name = "deepstack"

    def __init__(self, game: Game, config: Config, seed: int | None = None) -> None:
        if game.num_players != 2:
            raise ValueError(f"the DeepStack bot plays two-player games, not {game.num_players} players")
        self.game = game
        self.config = config
        self.rng = np.random.default_rng(seed)
        self.device = "cpu" if config.device == "auto" else config.device
        if game.num_rounds == 2 and game.deck_size == 6:
            self.bot_config = config.bot.leduc_limit if game.is_limit else config.bot.leduc
        else:
            raise ValueError(f"the DeepStack bot supports Leduc games here, not {game.name}")
        self._seats: dict[DeckConvention, _Seat] = {}
        self._seat: _Seat | None = None
        self._hand = -1
        # build (and load the model) now: a bad model must stop us before the match
        self._seat_for("high")

    def _seat_for(self, convention: DeckConvention) -> _Seat:
        if convention not in self._seats:
            space = HandSpace(self.game, convention)
            settings = leduc_settings(self.game, space, self.bot_config, self.device)
            self._seats[convention] = _Seat(convention, space, ContinualResolver(space, settings))
        return self._seats[convention]

    def start_match(self, game: Game) -> None:
        if game != self.game:
            raise ValueError("the bot was built for another game")

    def observe(self, view: MatchState) -> None:
        if view.hand_id != self._hand:
            self._hand = view.hand_id
            cards = list(view.our_cards) + list(view.state.board)
            conventions = self.game.conventions_containing(cards)
            if not conventions:
                raise ValueError(f"cards {cards} belong to no deck convention of {self.game.name}")
            self._seat = self._seat_for(conventions[0])
            self._seat.resolver.start_hand(view.position)
        assert self._seat is not None
        self._seat.resolver.observe(view.state)

    def act(self, view: MatchState) -> Action:
        if self._seat is None or view.hand_id != self._hand:
            self.observe(view)
        assert self._seat is not None
        start = time.perf_counter()
        seat = self._seat
        decision = seat.resolver.decide(view.state)
        hand = seat.space.index(view.our_cards)
        action = sample_action(decision, hand, self.rng)
        seat.resolver.act(decision, action)
        self._log(view, decision, hand, action, time.perf_counter() - start)
        return action

    def _log(self, view: MatchState, decision: Decision, hand: int, action: Action, seconds: float) -> None:
        state = view.state
        names = [str(a) if a.kind is not ActionKind.RAISE or self.game.is_nolimit else "r" for a in decision.actions]
        log.info(
            "decision",
            hand=view.hand_id,
            street=state.round,
            pot=state.pot,
            to_call=state.amount_to_call(),
            think_ms=round(1000 * seconds, 2),
            iterations=decision.iterations,
            cached=decision.cached,
            strategy={n: round(float(p), 4) for n, p in zip(names, decision.strategy[:, hand])},
            action=str(action),
        )
