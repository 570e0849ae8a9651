"""The registry of bots by name, used by ``deepstack play`` and ``deepstack match``."""

from __future__ import annotations

from typing import Callable

from agent.baselines import CallBot, RaiseBot, RandomBot
from protocol.bot import Bot

BotFactory = Callable[[int | None], Bot]

_REGISTRY: dict[str, BotFactory] = {
    "call": lambda seed: CallBot(),
    "raise": lambda seed: RaiseBot(),
    "random": lambda seed: RandomBot(seed),
}


def bot_names() -> list[str]:
    return sorted(_REGISTRY)


def make_bot(name: str, seed: int | None = None) -> Bot:
    """A fresh bot called ``name``; ValueError naming the known bots otherwise."""
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown bot {name!r}; known bots: {', '.join(bot_names())}") from None
    return factory(seed)
