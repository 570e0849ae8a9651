"""``deepstack eval lbr`` and ``eval lbr-paired``: local best response against a bot, resumable in chunks, and
two runs on the same deals compared hand for hand."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from tqdm import tqdm

from agent.bots.config import ConfigError, load_config
from agent.bots.settings import section_key
from agent.bots.start_cache import start_key
from agent.cli.common import MAX_HANDS, MAX_WORKERS, dumps
from agent.common.files import write_text
from agent.evaluation.lbr import DEAL_SCHEME, FoldQuery, LBRSetting, fold_summary, resumed_hands, run_lbr
from agent.evaluation.lbr_paired import compare_lbr_runs, format_comparison
from agent.evaluation.policies import ProviderFactory
from agent.evaluation.stats import estimate
from agent.nets.manifest import ModelError
from protocol.gamedef import Game, GameDefError, load_game

#: one example per tool (each --help ends with it)


def bot_key(game: Game, config_path: str | None) -> str:
    """What the DeepStack bot's play depends on (the start cache's key: the game, the bot's
    settings, its model files by sha256 and the solving code), so a folder of chunks is not
    resumed by a changed bot."""
    return start_key(game, getattr(load_config(config_path).bot, section_key(game)))


def check_lbr_run(out: Path, run: dict) -> None:
    """Chunks in ``out`` are only resumed by the run that wrote them: a folder records its game,
    bot, setting, seed, bot settings and way of dealing, and another run is refused once chunks
    are there (mixing settings would silently average two different experiments)."""
    path = out / "run.json"
    has_chunks = out.is_dir() and any(out.glob("lbr-[0-9]*.json"))
    if has_chunks and not path.exists():
        raise ValueError(
            f"{out}: holds LBR chunks but no run.json, so which run wrote them and how it dealt is unknown; use another --out"
        )
    if has_chunks:
        try:
            stored = json.loads(path.read_text())
        except ValueError as exc:
            raise ValueError(f"{path}: unreadable ({exc})") from exc
        if "deals" in run and "deals" not in stored:
            raise ValueError(
                f"{out}: its run.json records no 'deals' (written before 25dadef), so its chunks may have been dealt the old "
                "way (before 1eb3959 the cards shared the chunk's random stream) and new chunks would not pair with them. "
                "Use another --out (a folder whose chunks were all written at or after 1eb3959 resumes after adding "
                '"deals": "per-hand" to its run.json)'
            )
        # a different game, bot, setting, seed, ... is named first (another game's or bot's key differs too, and
        # "its code, settings or model files have changed" was said of a bot or game the user had simply not given)
        diff = [f"{k} {stored.get(k)!r} there, {v!r} now" for k, v in run.items() if k != "bot_key" and stored.get(k) != v]
        if diff:
            raise ValueError(f"{out} holds another LBR run ({'; '.join(diff)}); use another --out")
        # the same options; a folder written before bot_key was recorded resumes on them alone
        if "bot_key" in stored and stored["bot_key"] != run.get("bot_key"):
            raise ValueError(
                f"{out}: its chunks were played by another bot (its code, settings or model files have changed since: "
                "bot_key in run.json); new chunks would mix two bots. Use another --out"
            )
        return
    # a match's log folder: LBR's chunks written among its logs were then read by eval plot and aivat-log as part of it
    logs = sorted(p.name for p in out.glob("*") if p.name == "bots.jsonl" or p.suffix == ".log") if out.is_dir() else []
    if logs:
        raise ValueError(
            f"{out}: holds a match's logs ({', '.join(logs[:2])}{', ...' if len(logs) > 2 else ''}); use another --out"
        )
    out.mkdir(parents=True, exist_ok=True)
    write_text(path, dumps(run, indent=1))


def run_lbr_cli(args: argparse.Namespace) -> int:
    """Run ``deepstack eval lbr``: local best response's winnings against the bot in mbb/g, in chunks that an
    ``--out`` folder keeps, so the same command resumes; also how often the bot folds to LBR's bets."""

    try:
        game = load_game(args.game)
        setting = LBRSetting.parse(args.setting, game.num_rounds)
        if args.config is not None and args.bot != "deepstack":  # given on purpose: a typo is not silently ignored
            load_config(args.config)
        factory = ProviderFactory(args.game, args.bot, args.config, args.iterations)
        if args.chunk < 1:
            raise ValueError(f"--chunk must be at least 1, not {args.chunk}")
        # the chunks are planned up front: 10**20 hands was gigabytes of plans before the first hand
        if not 1 <= args.hands <= MAX_HANDS:
            raise ValueError(f"--hands must be from 1 to {MAX_HANDS}, not {args.hands}")
        if not 1 <= args.workers <= MAX_WORKERS:  # each is a process: a typo here was a fork bomb
            raise ValueError(f"--workers must be from 1 to {MAX_WORKERS}, not {args.workers}")
        factory()  # fail now (bad model, bad bot) rather than in a worker
        out = Path(args.out) if args.out else None
        if out is not None and out.exists() and not out.is_dir():  # was "[Errno 17] File exists", naming no option
            # an OSError: exit 1, as every command's output path that the machine refuses
            raise NotADirectoryError(f"--out {out}: is a file; give a folder for the chunks")
        if out is not None:
            check_lbr_run(
                out,
                {
                    "game": args.game,
                    "bot": args.bot,
                    "setting": args.setting,
                    "seed": args.seed,
                    "config": args.config,
                    "iterations": args.iterations,
                    "deals": DEAL_SCHEME,
                    **({"bot_key": bot_key(game, args.config)} if args.bot == "deepstack" else {}),
                },
            )
    except (GameDefError, ConfigError, ModelError, ValueError) as exc:
        print(f"deepstack eval lbr: error: {exc}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    queries: list[FoldQuery] = []
    estimates: dict[str, list[float]] = {}
    bar = None
    try:
        # the bar starts at the hands already played, so its rate and time left are this run's
        bar = tqdm(
            total=args.hands,
            initial=resumed_hands(out, args.hands, args.chunk),
            desc=f"LBR vs {args.bot}",
            unit="hand",
            disable=args.json,
        )
        values = run_lbr(
            game,
            factory,
            setting,
            args.hands,
            seed=args.seed,
            out_dir=out,
            workers=args.workers,
            chunk=args.chunk,
            progress=bar.update,
            queries=queries,
            estimates=estimates,
            progress_resumed=False,
        )
    except ValueError as exc:  # unreadable or overlapping chunks in --out
        if bar is not None:
            bar.close()
        print(f"deepstack eval lbr: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: every finished chunk is on disk; the one in flight is replayed
        if bar is not None:
            bar.close()
        kept = f"the finished chunks are kept in {out}; the same command resumes" if out else "nothing kept (no --out)"
        print(f"deepstack eval lbr: interrupted: {kept}", file=sys.stderr)
        return 130
    bar.close()
    est = estimate(values, game.big_blind)
    result = {
        "game": args.game,
        "bot": args.bot,
        "setting": args.setting,
        "hands": len(values),
        "lbr_mbb_g": est.mean,
        "ci95_mbb_g": est.ci95,
        "seconds": round(time.perf_counter() - start, 1),
    }
    # the same hands, estimated with less variance (unbiased; agent.evaluation.lbr.HandResult says how)
    for name, per_hand in estimates.items():
        e = estimate(per_hand, game.big_blind)
        result.update({f"{name}_mbb_g": e.mean, f"{name}_ci95_mbb_g": e.ci95})
    # how often the bot folds to LBR's bets (range-weighted), next to a pure bluff's break-even
    result["bot_fold"] = fold_summary(queries, game.num_rounds)
    if out is not None:
        write_text(out / "result.json", dumps(result, indent=1))
    print(dumps(result) if args.json else f"LBR ({args.setting}) vs {args.bot} in {args.game}: {est} over {len(values)} hands")
    if not args.json:
        labels = {
            "range_expected": "showdowns averaged over the bot's range",
            "aivat": "and the luck of the cards and of the bot's sampling removed (AIVAT)",
        }
        for name, per_hand in estimates.items():
            print(f"  the same hands, {labels[name]}: {estimate(per_hand, game.big_blind)}")
        for name, kinds in result["bot_fold"].items():
            for kind, row in kinds.items():
                print(
                    f"  {name} {kind} bets: the bot folds {row['mean_fold']:.1%} (a bluff gains above "
                    f"{row['bluff_breakeven']:.1%}; {row['queries']} queries)"
                )
                for label, words in (("lbr_led", "LBR leading the round"), ("after_bot", "after the bot's check or bet")):
                    if f"{label}_queries" in row:
                        print(
                            f"    {words}: {row[f'{label}_mean_fold']:.1%} (above "
                            f"{row[f'{label}_bluff_breakeven']:.1%}; {row[f'{label}_queries']} queries)"
                        )
    return 0


def run_lbr_paired_cli(args: argparse.Namespace) -> int:
    """Run ``deepstack eval lbr-paired``: two LBR runs of the same deals compared hand for hand."""
    if args.png and Path(args.png).is_dir():  # matplotlib wrote FOLDER.png beside it, without a word
        print(f"deepstack eval lbr-paired: error: --png {args.png}: is a folder; give the picture's file name", file=sys.stderr)
        return 2
    if args.png and Path(args.png).suffix.lower() != ".png":  # the picture is PNG data, whatever the name says
        print(f"deepstack eval lbr-paired: error: --png {args.png}: give a .png file", file=sys.stderr)
        return 2
    try:
        result = compare_lbr_runs(Path(args.a), Path(args.b), Path(args.png) if args.png else None)
    except (GameDefError, ValueError) as exc:
        print(f"deepstack eval lbr-paired: error: {exc}", file=sys.stderr)
        return 2
    print(dumps(result) if args.json else format_comparison(result))
    return 0
