"""``deepstack prepare``: solve a game's first states once and write the start cache, so that
``deepstack play`` (and every DeepStack seat of ``deepstack match``) starts in seconds."""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

from agent.bots.config import ConfigError, load_config
from agent.bots.deepstack import DeepStackBot
from agent.bots.settings import section_key
from agent.bots.start_cache import StartCacheError, check_cache_path, is_shipped, save_start_cache, start_key
from agent.cli.common import GAME_HELP, HelpFormatter, count, example, os_reason, path_arg
from agent.nets.manifest import ModelError, register_model
from protocol.gamedef import GameDefError, load_game


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``deepstack prepare`` (a game's first states solved into the DeepStack bot's start cache)."""
    p = sub.add_parser(
        "prepare",
        help="solve a game's first states and write the start cache (instant start-up)",
        description="Build the DeepStack bot for GAME with the config's settings (its first states solved, "
        "unless the start cache already holds them) and write its start cache: the config's "
        "bot.<game>.start_cache, or --out. A file under models/ is recorded in models/manifest.json (sha256), "
        "as the shipped caches are; they must be remade when the solver's code or the default settings change "
        "(tests/agent/test_start_cache.py says so).",
        epilog=example("deepstack prepare hunl --out models/start/hunl.pkl --solve"),
        formatter_class=HelpFormatter,
    )
    p.add_argument("game", help=GAME_HELP)
    p.add_argument(
        "--config", type=path_arg, default=None, help="config file (default: $DEEPSTACK_CONFIG, else the shipped config.yaml)"
    )
    p.add_argument("--out", type=path_arg, default=None, help="where to write (default: the config's start_cache of the game)")
    p.add_argument("--solve", action="store_true", help="solve the first states even if the cache holds them")
    p.add_argument(
        "--first-round",
        type=count,
        default=0,
        metavar="N",
        help="also re-solve up to N first-round decisions on the abstraction's own lines, per deck convention "
        "(the shipped Leduc caches hold all of them; default 0: the first states only)",
    )
    p.add_argument(
        "--device",
        default=None,
        choices=["auto", "cpu", "cuda"],
        help="where the first states are solved (default: the config's device)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``deepstack prepare``: build the bot, write its start cache (refused paths named before any solving)
    and record a file under models/ in the manifest; 2 on any error."""
    try:
        config = load_config(args.config)
        game = load_game(args.game)
    except (ConfigError, GameDefError) as exc:
        print(f"deepstack prepare: error: {exc}", file=sys.stderr)
        return 2
    if args.device is not None:
        config = replace(config, device=args.device)
    try:
        DeepStackBot.check(game, config)
        key = section_key(game)
        section = getattr(config.bot, key)
        out = Path(args.out) if args.out else (Path(section.start_cache) if section.start_cache else None)
        if out is None:
            raise ValueError(f"bot.{key}.start_cache is null: give --out")
        where = "--out" if args.out else f"bot.{key}.start_cache"
        # refused before the first states are solved, not after
        try:
            check_cache_path(out)
        except StartCacheError as exc:
            raise ValueError(f"{where} {exc}") from None
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ValueError(f"{where} {out}: its folder cannot be made ({os_reason(exc)})") from None
        if not os.access(out.parent, os.W_OK):
            raise ValueError(f"{where} {out}: its folder {out.parent} cannot be written")
        if args.solve:  # a cache in the way would be used: build without one
            config = replace(config, bot=replace(config.bot, **{key: replace(section, start_cache=None)}))
        start = time.monotonic()
        bot = DeepStackBot(game, config)
        decisions = bot.prepare_first_round(args.first_round)
        seconds = time.monotonic() - start
        save_start_cache(out, start_key(game, section), bot.export_start(), allow_shipped=True)
    except (ValueError, ModelError) as exc:
        print(f"deepstack prepare: error: {exc}", file=sys.stderr)
        return 2
    if is_shipped(out):
        name = f"start-{out.stem}"
        command = f"deepstack prepare {args.game} --out {args.out or out}" + (" --solve" if args.solve else "")
        command += f" --first-round {args.first_round}" if args.first_round else ""
        register_model(out, name, kind="start_cache", game=args.game, command=command)
    print(f"wrote {out} (bot built in {seconds:.1f} s, with the first states; {decisions} more first-round decisions re-solved)")
    return 0
