"""``deepstack``: the one command-line entry point; each subcommand has ``--help``."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence

# Every subcommand's modules are imported here, not when the subcommand runs: measured, `deepstack --help`
# takes the same time either way (1.9-2.1 s on 2 cores; torch, which nearly every command needs, is ~1.2 s of it).
from agent.cli import eval as eval_cli
from agent.cli import solve as solve_cli
from agent.cli.blueprint import add_parser as add_blueprint
from agent.cli.buckets import add_parser as add_buckets
from agent.cli.campaign import add_parser as add_campaign
from agent.cli.common import HelpFormatter, Terminated, example, os_problem
from agent.cli.generate import add_parser as add_generate
from agent.cli.match import add_parser as add_match
from agent.cli.play import add_parser as add_play
from agent.cli.prepare import add_parser as add_prepare
from agent.cli.promote import add_parser as add_promote
from agent.cli.train import add_ensemble_parser as add_ensemble
from agent.cli.train import add_parser as add_train
from protocol.dealer_cli import build_parser as dealer_parser
from protocol.dealer_cli import main as dealer_main


def _add_dealer(sub: argparse._SubParsersAction) -> None:
    sub.add_parser(
        "dealer",
        help="an ACPC-compatible dealer (same arguments as the ACPC dealer)",
        add_help=False,
    )


def _run_dealer(argv: Sequence[str]) -> int:
    return dealer_main(argv)


def _add_solve(sub: argparse._SubParsersAction) -> None:
    solve_cli.add_parser(sub)


def _add_eval(sub: argparse._SubParsersAction) -> None:
    eval_cli.add_parser(sub)


#: the benchmark suites, imported by name when one runs (each pulls in what it measures; the
#: name table also gives ``bench``'s choices without importing them)
BENCHES = {
    "solver": "agent.cli.solve:bench_main",
    "native": "native.bench:main",
    "generate": "agent.cli.bench_generate:main",
    "resolve": "agent.cli.bench_resolve:main",
    "parity": "agent.cli.bench_parity:main",
    "blueprint": "agent.cli.bench_blueprint:main",
}
#: each suite's argument parser (its --help), by the same names
BENCH_PARSERS = {
    "solver": "agent.cli.solve:bench_parser",
    "native": "native.bench:build_parser",
    "generate": "agent.cli.bench_generate:build_parser",
    "resolve": "agent.cli.bench_resolve:build_parser",
    "parity": "agent.cli.bench_parity:build_parser",
    "blueprint": "agent.cli.bench_blueprint:build_parser",
}


def _add_bench(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="benchmarks, printed as JSON lines",
        description="Run a benchmark suite: " + ", ".join(BENCHES) + ". Each prints one JSON object per "
        "measurement (bench, value, unit, impl, device, threads, ...). 'deepstack bench SUITE --help' "
        "lists the suite's options.",
        epilog=example("deepstack bench solver --quick"),
        formatter_class=HelpFormatter,
    )
    p.add_argument("suite", choices=sorted(BENCHES), help="which benchmarks")
    p.add_argument("options", nargs=argparse.REMAINDER, help="options of the suite ('deepstack bench SUITE --help')")
    p.set_defaults(func=_run_bench)


def _run_bench(args: argparse.Namespace) -> int:
    module, _, func = BENCHES[args.suite].partition(":")
    return int(getattr(importlib.import_module(module), func)(list(args.options)))


# ---------------------------------------------------------------------- main
_ADDERS: list[Callable[[argparse._SubParsersAction], None]] = [
    add_play,
    add_match,
    _add_dealer,
    _add_solve,
    add_buckets,
    add_generate,
    add_train,
    add_campaign,
    add_promote,
    add_ensemble,
    add_prepare,
    _add_eval,
    add_blueprint,
    _add_bench,
]


def build_parser() -> argparse.ArgumentParser:
    """The ``deepstack`` parser with every subcommand of ``_ADDERS`` registered (``dealer`` only as a name: its
    arguments are parsed by protocol.dealer_cli)."""
    parser = argparse.ArgumentParser(
        prog="deepstack",
        description="DeepStack for ACPC poker: play, run matches, solve, train and evaluate. "
        "'deepstack COMMAND --help' explains a command and ends with an example.",
        epilog=example("deepstack match leduc 300 deepstack random --duplicate"),
        formatter_class=HelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in _ADDERS:
        add(sub)
    return parser


def all_parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``(command, parser)`` of every command as its ``--help`` shows it: ``""`` (``deepstack``
    itself), each subcommand and each nested one (``eval lbr``), the dealer's own parser and each
    benchmark suite's (``bench solver``)."""

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> Iterator[tuple[str, argparse.ArgumentParser]]:
        name = " ".join(path)
        yield name, dealer_parser() if name == "dealer" else parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child_name, child in action.choices.items():
                    yield from walk(child, path + (child_name,))

    yield from walk(build_parser(), ())
    for suite, target in BENCH_PARSERS.items():
        module, _, func = target.partition(":")
        yield f"bench {suite}", getattr(importlib.import_module(module), func)()


def main(argv: Sequence[str] | None = None) -> int:
    """The ``deepstack`` console script: run one subcommand and return its exit status (an OSError is one line
    and 1; Ctrl-C is 130, SIGTERM 143)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = " ".join(argv[:2] if argv and argv[0] in ("eval", "bench") else argv[:1])
    previous = None
    if threading.current_thread() is threading.main_thread():
        Terminated.received, Terminated.pid = False, os.getpid()
        previous = signal.signal(signal.SIGTERM, Terminated.handler)
    try:
        if command == "dealer":
            code = _run_dealer(argv[1:])
        else:
            args = build_parser().parse_args(argv)
            code = int(args.func(args))
    except OSError as exc:
        # what the machine refused (an output path that is a file, no permission, no space):
        # one line naming the path, not a traceback; commands handle what they can resume
        print(f"deepstack {command}: error: {os_problem(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C: one line and the shell's usual status, not a traceback
        print(f"deepstack {command}: {'terminated' if Terminated.received else 'interrupted'}", file=sys.stderr)
        code = 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return 143 if code == 130 and Terminated.received else code


if __name__ == "__main__":
    sys.exit(main())
