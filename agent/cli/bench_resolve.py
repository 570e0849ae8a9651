"""``deepstack bench resolve``: think time per street of the DeepStack bot in real play.

The decision points are those of a fixed, seeded match on loopback through our dealer
(the bot against ``random``, which reaches every street, facing both small and all-in
bets), so every run times the same decisions on the current device. Rows
``resolve.preflop|flop|turn|river``: ``value`` = mean seconds per decision, ``p95_s``, the
number of decisions, the iterations the re-solves reached and the solver's iterations per
second, the match's corrected actions and failed decisions of the bot, and DeepStack's GTX
1080 times next to them.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agent.bots.config import ConfigError, load_config
from agent.bots.deepstack import DeepStackBot
from agent.cli.common import HelpFormatter, example, path_arg, seed
from agent.evaluation.clock import clock_report
from agent.evaluation.match import check_log_dir, decision_solver_rates, decision_think_times, run_match
from agent.nets.manifest import ModelError
from agent.solver.resolve import pick_device
from protocol.gamedef import load_game
from protocol.logs import configure_logging

STREETS = ("preflop", "flop", "turn", "river")
#: DeepStack (Science 2017, GTX 1080): mean think time per action
DEEPSTACK_S = {"preflop": 0.2, "flop": 5.9, "turn": 5.5, "river": 2.1}


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``deepstack bench resolve`` (also shown by ``deepstack bench resolve --help``)."""
    p = argparse.ArgumentParser(
        prog="deepstack bench resolve",
        description=" ".join(__doc__.split("\n\n")[0].split()),
        epilog=example("deepstack bench resolve --hands 5"),
        formatter_class=HelpFormatter,
    )
    p.add_argument("--hands", type=int, default=20, help="hands of the fixed match (default 20, both seatings: 40)")
    p.add_argument("--seed", type=seed, default=11, help="seed of the fixed match's deal")
    p.add_argument(
        "--config", type=path_arg, default=None, help="config file (default: $DEEPSTACK_CONFIG, else the shipped config.yaml)"
    )
    p.add_argument(
        "--log-dir",
        type=path_arg,
        default=None,
        help="keep the match logs in this new or empty folder (default: a temporary folder, removed after)",
    )
    return p


def main(argv: list[str]) -> int:
    """Run ``deepstack bench resolve``: a fixed duplicate hold'em match against the random bot, timing
    each street's decisions (mean, p95 seconds); 2 on a bad option, config or model, 1 if the match fails."""
    args = build_parser().parse_args(argv)
    if args.hands <= 0:
        print("deepstack bench resolve: error: --hands must be positive", file=sys.stderr)
        return 2
    try:
        config = load_config(args.config)
        DeepStackBot.check(load_game("hunl"), config)  # a wrong model path: one line now, not a traceback mid-match
        if args.log_dir is not None:
            check_log_dir(Path(args.log_dir), default="a temporary folder")
    except (ConfigError, ModelError, ValueError) as exc:
        print(f"deepstack bench resolve: error: {exc}", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory() as tmp:
        log_dir = Path(args.log_dir or tmp)
        log_dir.mkdir(parents=True, exist_ok=True)
        configure_logging("warning", log_dir / "bots.jsonl")
        report = run_match(
            load_game("hunl"),
            "hunl",
            args.hands,
            ["deepstack", "random"],
            seed=args.seed,
            duplicate=True,
            log_dir=log_dir,
            bot_config=config,
        )
        if not report.ok:
            print("deepstack bench resolve: error: the match did not finish (see the dealer log)", file=sys.stderr)
            return 1
        times = decision_think_times(log_dir / "bots.jsonl", STREETS)
        rates = decision_solver_rates(log_dir / "bots.jsonl", STREETS)
        failed = (log_dir / "bots.jsonl").read_text().count('"decision_failed"')
        clock = clock_report([log_dir / "bots.jsonl"], rounds=4)  # per street: answers out of time, ended by the clock
        corrections = report.corrections(0)
    device = pick_device(config.device).type
    for street in STREETS:
        t = np.array(times[street])
        if not len(t):
            continue
        row: dict[str, Any] = {
            "bench": f"resolve.{street}",
            "value": float(f"{t.mean():.6g}"),
            "unit": "s",
            "impl": "ours",
            "device": device,
            "threads": torch.get_num_threads(),
            "p95_s": float(f"{np.percentile(t, 95):.6g}"),
            "decisions": int(len(t)),
            # the re-solved decisions (not cached): iterations reached, and the solver's speed
            "iterations_mean": float(f"{np.mean(rates[street][0]):.4g}") if rates[street][0] else None,
            "iterations_per_s": float(f"{sum(rates[street][0]) / sum(rates[street][1]):.4g}")
            if sum(rates[street][1]) > 0
            else None,
            "hands": 2 * args.hands,
            "seed": args.seed,
            "deepstack_gtx1080_s": DEEPSTACK_S[street],
            "corrections": corrections,
            "decisions_failed": failed,
            "out_of_time": int(clock.get(street, {}).get("out_of_time", 0)),
            "ended_by_clock": int(clock.get(street, {}).get("ended_by_clock", 0)),
        }
        print(json.dumps(row), flush=True)
    return 0
