"""``deepstack promote``: a trained network replaces a shipped one when it beats it on held-out data."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agent.cli.common import GAME_HELP, HelpFormatter, example
from agent.nets.manifest import MODELS_DIR, ModelError
from agent.training.promote import NotBetter, promote
from protocol.gamedef import GameDefError, load_game


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``deepstack promote`` (a trained value network replaces a shipped one only if it beats it held-out)."""
    p = sub.add_parser(
        "promote",
        help="replace a shipped value network by a trained one that beats it on held-out situations",
        description="Scores the network of manifest entry --as and CANDIDATE on every situation of the --test "
        "folders (generated with a seed neither trained on), as 'deepstack eval nets' does. Only when the "
        "candidate's mean per-situation loss is lower with 95% confidence are its files (.pt, .history.json, "
        ".loss.png) copied over the shipped ones and the manifest entry given the candidate's record with the "
        "test's result; otherwise nothing changes and the exit status is 1.",
        epilog=example(
            "deepstack promote runs/river/river-small.pt --as river-small --test data/river-test",
            "a river network trained with 'deepstack train --street river' against the shipped one",
        ),
        formatter_class=HelpFormatter,
    )
    p.add_argument("candidate", help="the trained network (TorchScript, beside its manifest)")
    p.add_argument("--as", dest="name", required=True, help="manifest entry to replace (e.g. river-small, turn)")
    p.add_argument("--test", nargs="+", required=True, type=Path, help="folders of held-out situations")
    p.add_argument("--game", default="hunl", help=f"{GAME_HELP} (default hunl)")
    p.add_argument(
        "--manifest",
        type=Path,
        default=MODELS_DIR / "manifest.json",
        help="the manifest whose entry is replaced (default: the shipped models/manifest.json)",
    )
    p.add_argument("--force", action="store_true", help="promote even when the candidate is not shown better")
    p.add_argument("--dry-run", action="store_true", help="score and decide, change nothing")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``deepstack promote``; 1 when the candidate is not better with 95% confidence (nothing changed), 2 on errors."""
    try:
        game = load_game(args.game)
        result = promote(
            Path(args.candidate),
            args.name,
            args.test,
            float(sum(game.stack)),
            manifest=args.manifest,
            force=args.force,
            dry_run=args.dry_run,
            game=args.game,
        )
    except NotBetter as exc:
        print(f"deepstack promote: {exc}", file=sys.stderr)
        return 1
    except (GameDefError, ModelError, ValueError, FileNotFoundError) as exc:
        print(f"deepstack promote: error: {exc}", file=sys.stderr)
        return 2
    print(
        f"{result.name}: shipped Huber {result.shipped_loss:.5f}, candidate {result.candidate_loss:.5f} on "
        f"{result.situations} held-out situations; per situation {result.difference:+.5f} ± {result.half_width:.5f} (95%)"
    )
    if result.written:
        print(f"promoted {args.candidate} -> {result.target} (manifest entry {result.name})")
    else:
        print("dry run: nothing changed")
    return 0
