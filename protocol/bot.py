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

    def start_match(self, game: Game) -> None: ...

    def observe(self, view: MatchState) -> None: ...

    def act(self, view: MatchState) -> Action: ...

    def end_match(self) -> None: ...


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
