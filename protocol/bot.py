"""What the protocol client needs from a bot: an action for a state, and a look at every state."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Protocol, runtime_checkable

from protocol.gamedef import Game
from protocol.matchstate import MatchState
from protocol.state import Action


@runtime_checkable
class Bot(Protocol):
    """A poker bot driven by :func:`protocol.client.play`.

    ``observe`` sees every state the dealer sends (including the opponent's actions,
    new board cards and the final state of each hand) before ``act`` is asked, on the
    states where this bot is to act, for a legal action.
    """

    def start_match(self, game: Game) -> None:
        """The match's game, before its first state."""
        ...

    def observe(self, view: MatchState) -> None:
        """Every state the dealer sends, before any ``act`` on it."""
        ...

    def act(self, view: MatchState) -> Action:
        """A legal action where this bot is to act."""
        ...

    def end_match(self) -> None:
        """The dealer closed the connection: the match is over (save what is worth keeping)."""
        ...


class BaseBot(ABC):
    """Convenience base with no-op hooks; subclasses implement :meth:`act`."""

    name = "bot"

    def start_match(self, game: Game) -> None:
        self.game = game

    def observe(self, view: MatchState) -> None:
        return None

    @abstractmethod
    def act(self, view: MatchState) -> Action:
        """A legal action for ``view`` (where this bot is to act)."""

    def end_match(self) -> None:
        return None
