"""The registry of bots by name, used by ``deepstack play`` and ``deepstack match``."""

from __future__ import annotations

from collections.abc import Callable

from agent.bots.baselines import CallBot, RaiseBot, RandomBot
from agent.bots.blueprint import BlueprintBot
from agent.bots.config import Config, load_config
from agent.bots.deepstack import DeepStackBot
from protocol.bot import Bot
from protocol.gamedef import Game


def _deepstack(game: Game, config: Config, seed: int | None) -> Bot:
    return DeepStackBot(game, config, seed)


BotFactory = Callable[[Game, Config, "int | None"], Bot]

_REGISTRY: dict[str, BotFactory] = {
    "call": lambda game, config, seed: CallBot(),
    "raise": lambda game, config, seed: RaiseBot(),
    "random": lambda game, config, seed: RandomBot(seed),
    "deepstack": _deepstack,
    "blueprint": lambda game, config, seed: BlueprintBot(game, config, seed),
}


def bot_names() -> list[str]:
    """The names ``--bot`` and a match seat accept, sorted (for choices and error messages)."""
    return sorted(_REGISTRY)


def make_bot(name: str, game: Game, config: Config | None = None, seed: int | None = None) -> Bot:
    """A fresh bot called ``name`` for ``game``; ValueError naming the known bots otherwise."""
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown bot {name!r}; known bots: {', '.join(bot_names())}") from None
    return factory(game, config if config is not None else load_config(), seed)


def check_bot(name: str, game: Game, config: Config) -> None:
    """What would stop ``make_bot(name, game, config)`` (an unknown name, a game it does not
    play, a missing or corrupt model file), found without building the bot: quick, so a command
    can say it before it connects to a dealer."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown bot {name!r}; known bots: {', '.join(bot_names())}")
    if name == "deepstack":
        DeepStackBot.check(game, config)
    if name == "blueprint":
        BlueprintBot.check(game, config)
