"""``deepstack campaign``: the hold'em value networks built bottom-up within a time budget."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from agent.bots.config import MAX_SEED
from agent.cli.common import MAX_HIDDEN, MAX_LAYERS, MAX_WORKERS, HelpFormatter, cannot_write, example, path_arg, seed
from agent.nets.manifest import ModelError
from agent.solver.resolve import SpotError, pick_device
from agent.training.campaign import STAGES, CampaignSpec, parse_budget, parse_streets, run_campaign

#: worker k draws with seed * 1000 + k, which must stay a seed (numpy and the held-out checks take 32 bits)
MAX_CAMPAIGN_SEED = MAX_SEED // 1000 - 1


def campaign_seed(text: str) -> int:
    """A campaign's seed: 0..MAX_CAMPAIGN_SEED, so that every worker's seed is one too."""
    value = seed(text)
    if value > MAX_CAMPAIGN_SEED:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a campaign seed (0..{MAX_CAMPAIGN_SEED}: worker k draws with seed*1000+k)"
        )
    return value


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``deepstack campaign`` (the hold'em networks generated and trained bottom-up within a wall-clock budget)."""
    p = sub.add_parser(
        "campaign",
        help="generate and train the hold'em networks bottom-up (river, turn, flop, auxiliary) within a budget",
        description="River situations solved exactly, then each street solved to its own end with the network just "
        "trained below it at the leaves, each stage generating on every worker until its share of the budget "
        "is used and training on the rest. Writes OUT/<street>/network/<street>.pt with a manifest, "
        "OUT/report.md and report.json (situations, throughput, validation losses against the shipped "
        "networks on the same held-out situations, loss curves). Each stage ends at its cumulative share of "
        "the budget (river 30%, turn 35%, flop 25%, auxiliary 10%; of the stages run, with --streets) counted"
        " from the campaign's start, so an overrun shortens the later stages. Running the same command again "
        "resumes: the finished stages are skipped, the data of the others resumed, and the seconds the "
        "earlier runs used (OUT/campaign.json, elapsed_s) count against --budget, so a resumed run has what "
        "was left (a larger --budget gives it more); other settings than --budget are refused. 'deepstack "
        "promote' puts a network into models/ where it beats the shipped one on held-out situations.",
        epilog=example("deepstack campaign --budget 9m --out runs/campaign", "a GPU window: all cores and the GPU"),
        formatter_class=HelpFormatter,
    )
    p.add_argument(
        "--budget",
        required=True,
        help="wall-clock budget of the whole campaign, earlier runs of a resumed one included: seconds, or with s, m "
        "or h (e.g. 90s, 9m, 2h)",
    )
    p.add_argument("--out", type=path_arg, required=True, help="output folder (resumed when it holds a campaign)")
    p.add_argument(
        "--workers", type=int, default=None, help="generating processes, one per core (default: every core of the machine)"
    )
    p.add_argument(
        "--device",
        default="auto",
        choices=["auto", "cpu", "cuda"],
        help="auto: with a GPU, the first --gpu-workers workers solve there (default auto)",
    )
    p.add_argument(
        "--gpu-workers",
        type=int,
        default=1,
        help="with a GPU: workers that solve there, sharing it (default 1)",
    )
    p.add_argument(
        "--seed",
        type=campaign_seed,
        default=0,
        help="seed of the situations: worker k draws with seed*1000+k, skipping the shipped network's training seeds "
        "(another campaign: another seed; default 0)",
    )
    p.add_argument(
        "--iterations",
        default=None,
        metavar="STREET=N,...",
        help="CFR iterations per street's solves (default river=200,turn=300,flop=200)",
    )
    p.add_argument(
        "--from-shipped",
        action="store_true",
        help="fine-tune the shipped network of each street (its shape; --hidden and --layers unused) instead of "
        "training from scratch (default: from scratch)",
    )
    p.add_argument(
        "--streets",
        default=",".join(STAGES),
        metavar="STREET,...",
        help="the stages to run, sharing the budget; a stage whose street below is not run has the shipped network of "
        f"that street at its leaves (e.g. turn,flop: the shipped river network under the turn; default {','.join(STAGES)})",
    )
    p.add_argument("--hidden", type=int, default=256, help="units per hidden layer of every network (default 256)")
    p.add_argument("--layers", type=int, default=4, help="hidden layers of every network (default 4)")
    p.set_defaults(func=run)


def _iterations(text: str | None) -> dict[str, int]:
    its = dict(CampaignSpec(budget_s=1, out=Path(".")).iterations)
    if text:
        for part in text.split(","):
            street, _, n = part.partition("=")
            if street.strip() not in STAGES or not n.strip().isdigit() or int(n) <= 0:
                raise ValueError(f"--iterations: {part!r} is not STREET=N with STREET one of {', '.join(STAGES)}")
            its[street.strip()] = int(n)
    return its


def run(args: argparse.Namespace) -> int:
    """Run ``deepstack campaign`` and print its report; 2 on a bad option or a refused resume, 1 when OUT cannot be written."""
    try:
        budget = parse_budget(args.budget)
        iterations = _iterations(args.iterations)
        streets = parse_streets(args.streets)
        device = pick_device(args.device).type
    except (ValueError, SpotError) as exc:
        print(f"deepstack campaign: error: {exc}", file=sys.stderr)
        return 2
    workers = args.workers if args.workers is not None else (os.cpu_count() or 1)
    wrong = [  # each option out of its range, with its range (all the ranges at once named none)
        f"--{name} {value} is not from 1 to {top}"
        for name, value, top in (
            ("workers", workers, MAX_WORKERS),
            ("hidden", args.hidden, MAX_HIDDEN),
            ("layers", args.layers, MAX_LAYERS),
            ("gpu-workers", args.gpu_workers, f"--workers ({workers})"),
        )
        if not 0 < value <= (workers if name == "gpu-workers" else top) and not (name == "gpu-workers" and workers < 1)
    ]
    if wrong:
        print(f"deepstack campaign: error: {'; '.join(wrong)}", file=sys.stderr)
        return 2
    spec = CampaignSpec(
        budget_s=budget,
        out=Path(args.out),
        workers=workers,
        device=device,
        gpu_workers=args.gpu_workers,
        seed=args.seed,
        iterations=iterations,
        hidden=args.hidden,
        from_shipped=args.from_shipped,
        layers=args.layers,
        streets=streets,
    )
    try:
        report = run_campaign(spec)
    except (ValueError, ModelError) as exc:
        print(f"deepstack campaign: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"deepstack campaign: error: {cannot_write(args.out, exc)}", file=sys.stderr)
        return 1
    print((Path(args.out) / "report.md").read_text(), end="")
    print(f"took {report['seconds']:.0f} s of a {budget:.0f} s budget")
    return 0
