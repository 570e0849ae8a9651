"""The blueprint bot (``--bot blueprint``): the abstraction-based agent of seed 001 playing its
precomputed strategy, one table lookup per decision (agent/blueprint)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agent.blueprint.mccfr import Blueprint, BlueprintFileError
from agent.blueprint.policy import BlueprintPolicy, HandPath
from agent.bots.config import Config
from agent.bots.settings import section_key
from agent.bots.start_cache import is_shipped
from agent.nets.manifest import checked_file
from agent.solver.handspace import HandSpace
from native.equity import hand_equities
from protocol.bot import BaseBot
from protocol.gamedef import Game
from protocol.logs import get_logger
from protocol.matchstate import MatchState
from protocol.state import CALL, FOLD, Action, HandState

log = get_logger("blueprint")


def blueprint_file(game: Game, config: Config) -> str:
    """The config's blueprint file for ``game``; ValueError naming the key where there is none."""
    try:
        key = section_key(game)
    except ValueError:
        raise ValueError(f"the blueprint bot has blueprints for Leduc and heads-up no-limit hold'em, not {game.name}") from None
    path = getattr(config.bot.blueprint, key)
    if path is None:
        raise ValueError(f"bot.blueprint.{key} is null: no blueprint for {game.name} (deepstack blueprint train)")
    return path


class BlueprintBot(BaseBot):
    """Plays the blueprint's (post-processed) average strategy."""

    name = "blueprint"

    def __init__(self, game: Game, config: Config, seed: int | None = None) -> None:
        self.check(game, config)
        path = blueprint_file(game, config)
        self.blueprint = Blueprint.open(path, game)
        section = config.bot.blueprint
        self.policy = BlueprintPolicy(self.blueprint, section.postprocess, section.threshold)
        self.rng = np.random.default_rng(config.seed if seed is None else seed)
        self.game = game
        self.space = HandSpace(game)
        # a reduced deck's other convention maps card for card onto the one the blueprint was dealt
        # (ranks and suits in the same order, so every showdown compares the same)
        high, low = game.deck("high"), game.deck("low")
        self._card = {c: c for c in high} | {lo: hi for lo, hi in zip(low, high) if lo not in high}
        self._hand_id: int | None = None
        self._path = HandPath()
        self.off_tree = 0

    @staticmethod
    def check(game: Game, config: Config) -> None:
        """What would stop the bot from starting (no file for the game, a shipped file whose sha256
        is not the manifest's, a file that is not a blueprint of the game)."""
        path = Path(blueprint_file(game, config))
        if is_shipped(path):
            checked_file(path, " (deepstack blueprint train writes one)")
        Blueprint.open(path, game)

    def act(self, view: MatchState) -> Action:
        if view.hand_id != self._hand_id:
            self._hand_id, self._path = view.hand_id, HandPath()
        state = view.state
        cards = [self._card[c] for c in view.our_cards]
        board = tuple(self._card[c] for c in state.board)
        bucket = self.blueprint.abstraction.bucket(state.round, self.space.index(cards), board)
        action, info = self.policy.decide(state, bucket, self._path, self.rng)
        if not info["on_tree"]:
            self.off_tree += 1
            action, equity = self._off_tree(state, cards, board)
            log.info("off_tree", hand=view.hand_id, betting=state.betting_string(), action=str(action), equity=equity)
        return action

    def _off_tree(self, state: HandState, cards: list[int], board: tuple[int, ...]) -> tuple[Action, float | None]:
        """Where the hand has left the tree (past its raise cap every raise is its all-in: a call of a
        min-raise there ends the tree while the hand goes on): check, and facing a bet after the flop
        call only with the equity its price asks for, against a uniform hand (optimistic against a
        range that bets, but no longer every bet with any two cards); elsewhere call."""
        to_call = state.amount_to_call()
        if to_call == 0 or not state.can_fold() or self.space.size != 1326 or len(board) < 3:
            return CALL, None
        equity = float(hand_equities(board)[self.space.index(cards)])
        price = to_call / (state.pot + to_call)
        return (FOLD if equity < price else CALL), round(equity, 4)


__all__ = ["BlueprintBot", "BlueprintFileError", "blueprint_file"]
