"""``deepstack bench generate``: how many training situations per second data generation solves.

Rows (JSON lines): ``generate.leduc`` (round-2 situations of no-limit Leduc, solved in
batches and, for comparison, one per solver call) and ``generate.turn`` (hold'em turn
situations with full 1326-hand ranges, fold/call/pot/all-in, solved to the end of the game
with no card abstraction). The flop row (``generate.flop``) needs a turn network and the
auxiliary row (``generate.preflop-aux``) a flop network; a missing one is reported as such.
DeepStack's reference: about 550 core-seconds per turn situation.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch

from agent.cli.common import HelpFormatter, add_network_leaf_options, example
from agent.common.workers import worker_pool
from agent.nets.manifest import ModelError, checked_file
from agent.nets.valuenet import NetOnDevices, resolve_precision
from agent.solver.handspace import HandSpace
from agent.solver.resolve import SolverConfig, pick_device
from agent.training.aux_targets import ALL_FLOPS, aux_values
from agent.training.datagen import (
    _flop_network,
    _next_street_leaf,
    forest_groups,
    generate_shard,
    load_next_net,
    solve_in_forest,
    solve_situation,
    solve_situation_checked,
)
from agent.training.generate_spec import GENERATE_DCFR, GenerateSpec, alternating_updates, format_dcfr, parse_batch, parse_dcfr
from agent.training.situations import Situation, both_all_in, draw_situation
from protocol.gamedef import load_game

#: DeepStack (supplement): 10M turn situations took 175 core-years, i.e. ~550 core-seconds each
DEEPSTACK_CORE_S_PER_TURN_SITUATION = 550.0


def _row(bench: str, value: float | None, unit: str, device: str, **context: Any) -> dict[str, Any]:
    return {
        "bench": bench,
        "value": None if value is None else float(f"{value:.6g}"),
        "unit": unit,
        "impl": "ours",
        "device": device,
        "threads": torch.get_num_threads(),
        **context,
    }


def _measured_rate(fields: dict[str, Any]) -> float | None:
    """The row's rate, popped from ``fields``; None, with a ``reason``, when no situation was solved
    (every draw all-in): a rate of 0 would read as a measurement."""
    rate = fields.pop("rate")
    if fields.get("situations"):
        return rate
    fields["reason"] = "no situation solved (every draw was all-in): nothing measured; draw more situations"
    return None


@contextmanager
def _one_thread() -> Iterator[None]:
    """torch on one thread (the C kernels run on one anyway), as each process of ``deepstack generate`` runs."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _time_shard(spec: GenerateSpec, count: int) -> float:
    start = time.perf_counter()
    generate_shard(spec, 0, count)
    return time.perf_counter() - start


def bench_leduc(situations: int, iterations: int) -> list[dict[str, Any]]:
    """The ``generate.leduc`` rows: round-2 Leduc situations per second, solved in one batch and one per
    solver call (the batching's gain), on the CPU in float64."""
    rows = []
    spec = GenerateSpec(game="leduc", round=1, situations=situations, shard_size=situations, seed=1, iterations=iterations)
    seconds = _time_shard(spec, situations)
    dcfr = _dcfr_field(spec.algorithm, (spec.dcfr_alpha, spec.dcfr_beta, spec.dcfr_gamma))
    rows.append(
        _row(
            "generate.leduc",
            situations / seconds,
            "situations/s",
            "cpu",
            mode="batched",
            situations=situations,
            iterations=iterations,
            algorithm=spec.algorithm,
            **dcfr,
            seconds=round(seconds, 3),
        )
    )
    single = max(1, min(10, situations))
    space = HandSpace(load_game("leduc"))
    rng = np.random.default_rng(1)
    config = spec.solver_config("float64")
    start = time.perf_counter()
    for _ in range(single):
        solve_situation(space, 1, draw_situation(space, 1, rng), config)
    seconds = time.perf_counter() - start
    rows.append(
        _row(
            "generate.leduc",
            single / seconds,
            "situations/s",
            "cpu",
            mode="one-per-solver-call",
            situations=single,
            iterations=iterations,
            algorithm=spec.algorithm,
            **dcfr,
            seconds=round(seconds, 3),
        )
    )
    return rows


def _timed_draws(round_: int, count: int, solve: Callable[[Situation], float | None], stream: int = 0) -> dict[str, Any]:
    """Draw ``count`` hold'em situations at the start of ``round_`` as generation draws them
    (seeded, random stream ``[1, stream]``) and time ``solve`` on each. Both-all-in draws (a
    showdown, nothing to solve) are timed too but kept out of ``rate``: ``rate_all_draws``
    counts them, as ``deepstack generate`` does. ``solve`` may return the solve's
    exploitability (fraction of the pot). The solve times are heavy-tailed (small pots
    make deep trees), so the rate comes with a 95% interval from the spread of the times."""
    game = load_game("hunl")
    space = HandSpace(game)
    rng = np.random.default_rng([1, stream])
    times, pots, expl, allin_times = [], [], [], []
    for _ in range(count):
        sit = draw_situation(space, round_, rng)
        start = time.perf_counter()
        pct = solve(sit)
        seconds = time.perf_counter() - start
        if both_all_in(game, sit):
            allin_times.append(seconds)
            continue
        times.append(seconds)
        pots.append(sit.pot)
        if pct is not None:
            expl.append(round(100 * pct, 4))
    total = sum(times)
    fields: dict[str, Any] = {
        "rate": len(times) / total if total > 0 else 0.0,
        "situations": len(times),
        "allin_draws": len(allin_times),
        "seconds": round(total, 3),
        "rate_all_draws": round((len(times) + len(allin_times)) / max(total + sum(allin_times), 1e-12), 5),
        "seconds_per_situation": [round(t, 2) for t in times],
        "pots": pots,
        "hands": 1326,
        "sizing": "fold,call,pot,all-in",
        "stream": stream,
    }
    if len(times) >= 2:
        mean, sem = float(np.mean(times)), float(np.std(times, ddof=1)) / len(times) ** 0.5
        fields["seconds_mean"], fields["seconds_sem"] = round(mean, 4), round(sem, 4)
        fields["rate_ci95"] = [
            round(1 / (mean + 1.96 * sem), 5),
            round(1 / (mean - 1.96 * sem), 5) if mean > 1.96 * sem else None,
        ]
    if expl:
        fields["exploitability_pct"] = expl
    return fields


def _timed_forests(count: int, batch: int | None, config: SolverConfig, stream: int = 0, round_: int = 2) -> dict[str, Any]:
    """Like :func:`_timed_draws` for the turn (or river), the situations solved in forests ``batch`` at a
    time (None: as many as the device's memory holds), as ``deepstack generate --batch`` solves
    them. Both-all-in draws need no solve and are counted only in ``rate_all_draws``."""
    game = load_game("hunl")
    space = HandSpace(game)
    rng = np.random.default_rng([1, stream])
    draws = [draw_situation(space, round_, rng) for _ in range(count)]
    todo = [sit for sit in draws if not both_all_in(game, sit)]
    groups = forest_groups(space, round_, todo, config, batch)
    times = []
    for group in groups or [[k] for k in range(len(todo))]:  # None: one at a time (auto on the CPU)
        began = time.perf_counter()
        if groups is None:
            solve_situation(space, round_, todo[group[0]], config)
        else:
            solve_in_forest(space, round_, [todo[k] for k in group], config)
        if pick_device(config.device).type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - began)
    total = sum(times)
    return {
        "rate": len(todo) / total if total > 0 else 0.0,
        "situations": len(todo),
        "allin_draws": len(draws) - len(todo),
        "seconds": round(total, 3),
        "rate_all_draws": round(len(draws) / max(total, 1e-12), 5),
        "batch": "auto" if batch is None else batch,
        "pots": [sit.pot for sit in todo],
        "hands": 1326,
        "sizing": "fold,call,pot,all-in",
        "stream": stream,
        **(
            {"seconds_per_situation": [round(t, 2) for t in times]}
            if groups is None
            else {"forest_sizes": [len(g) for g in groups], "seconds_per_forest": [round(t, 2) for t in times]}
        ),
    }


def _turn_draws(
    stream: int,
    situations: int,
    iterations: int,
    algorithm: str,
    device: str,
    check: bool,
    dcfr: tuple[float, float, float] = GENERATE_DCFR,
    batch: int | None = 1,
    round_: int = 2,
    river_net: str | None = None,
    precision: str = "float32",
    alternating: bool = True,
) -> dict[str, Any]:
    """One process's share of the turn (or river) row (module level: the worker processes import it)."""
    space = HandSpace(load_game("hunl"))
    config = _hunl_config(algorithm, iterations, device, dcfr, alternating)
    leaf = _next_street_leaf("hunl", river_net, 2, precision) if river_net is not None else None
    with _one_thread():  # as deepstack generate runs: one process per core
        if batch != 1:
            return _timed_forests(situations, batch, config, stream, round_)
        return _timed_draws(
            round_,
            situations,
            lambda sit: solve_situation_checked(space, round_, sit, config, check=check, leaf_values=leaf)[1],
            stream,
        )


def _combined(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The rows of processes that ran side by side: the machine's rate is the sum of theirs."""
    fields: dict[str, Any] = {
        "rate": sum(p["rate"] for p in parts),
        "rate_all_draws": round(sum(p["rate_all_draws"] for p in parts), 5),
        "rate_per_process": [round(p["rate"], 5) for p in parts],
    }
    for key in ("situations", "allin_draws"):
        fields[key] = sum(p[key] for p in parts)
    for key in ("seconds_per_situation", "pots", "exploitability_pct", "forest_sizes", "seconds_per_forest"):
        if any(key in p for p in parts):
            fields[key] = [x for p in parts for x in p.get(key, [])]
    if all("seconds_sem" in p for p in parts):
        # each process's rate is 1 / its mean time: delta method, independent processes
        half = 1.96 * sum(p["seconds_sem"] ** 2 / p["seconds_mean"] ** 4 for p in parts) ** 0.5
        fields["rate_ci95"] = [round(max(fields["rate"] - half, 0.0), 5), round(fields["rate"] + half, 5)]
    fields.update({key: parts[0][key] for key in ("hands", "sizing", "batch") if key in parts[0]})
    return fields


def bench_turn(
    situations: int,
    iterations: int,
    algorithm: str,
    device: str,
    check: bool = False,
    processes: int = 1,
    dcfr: tuple[float, float, float] = GENERATE_DCFR,
    batch: int | None = 1,
    round_: int = 2,
    river_net: str | None = None,
    net_precision: str = "auto",
    updates: str = "auto",
) -> dict[str, Any]:
    """Turn (``round_`` 2) or river (3) situations solved as ``deepstack generate --street turn``
    (``river``) solves them (to the end of
    the game, average values only) and timed. With ``check``, the average strategy is kept too and
    each solve's exploitability (% of the pot) is reported: how accurate the targets are. With
    ``processes`` > 1, that many processes solve ``situations`` draws each at the same time (their
    own random streams), as generation runs one process per core: the row's rate is theirs summed.
    ``batch``: situations per solver call (forests; None: as many as the device's memory allows).
    ``river_net``: turn situations solved to the end of the turn with that river network at the
    leaves (``deepstack generate --street turn --river-net``), one at a time, multiplying in
    ``net_precision`` (:data:`agent.nets.valuenet.NET_PRECISIONS`) with ``updates`` as generate's ``--updates``."""
    if check and batch != 1:
        raise ValueError("--check measures one solve at a time: it needs --batch 1")
    if river_net is not None and (round_ != 2 or batch != 1):
        raise ValueError("--river-net is for the turn row, one situation at a time (--batch 1)")
    dev = pick_device(device)
    precision = resolve_precision(net_precision, dev)
    alternating = alternating_updates(updates, river_net is not None)
    common = (iterations, algorithm, dev.type, check, dcfr, batch, round_, river_net, precision, alternating)
    if processes == 1:
        fields = _turn_draws(0, situations, *common)
    else:
        with worker_pool(processes, mp_context=multiprocessing.get_context("spawn")) as pool:
            jobs = [pool.submit(_turn_draws, k, situations, *common) for k in range(processes)]
            fields = _combined([job.result() for job in jobs])
    if check:
        fields["timed_with"] = "average strategy and exploitability check"
    cores = os.cpu_count() or 1
    if round_ == 3:  # the river: goal of issue 32; DeepStack had no river network to compare with
        reference: dict[str, Any] = {"goal_cpu": 20.0}
    else:
        reference = {
            "goal_cpu": 0.25,
            "goal_h100": 100.0,
            "deepstack_core_s_per_situation": DEEPSTACK_CORE_S_PER_TURN_SITUATION,
            "deepstack_rate_on_these_cores": round(cores / DEEPSTACK_CORE_S_PER_TURN_SITUATION, 5),
        }
    return _row(
        "generate.river" if round_ == 3 else "generate.turn",
        _measured_rate(fields),
        "situations/s",
        dev.type,
        iterations=iterations,
        algorithm=algorithm,
        **_dcfr_field(algorithm, dcfr),
        **fields,
        threads=1,
        processes=processes,
        leaves="end of the game"
        if river_net is None
        else {"river_net": river_net, "sha256": checked_file(river_net)[1]["sha256"], "precision": precision},
        updates="alternating" if alternating else "simultaneous",
        **reference,
        cpu_cores=cores,
    )


def _hunl_config(
    algorithm: str, iterations: int, device: str, dcfr: tuple[float, float, float], alternating: bool = True
) -> SolverConfig:
    """The solver settings of hold'em generation (float32), as ``deepstack generate`` makes them."""
    alpha, beta, gamma = dcfr
    return SolverConfig(
        algorithm=algorithm,
        alternating=alternating,
        iterations=iterations,
        device=device,
        dtype="float32",
        alpha=alpha,
        beta=beta,
        gamma=gamma,
    )


def _dcfr_field(algorithm: str, dcfr: tuple[float, float, float]) -> dict[str, str]:
    """The DCFR parameters as ``ALPHA,BETA,GAMMA`` text (``-inf`` is not JSON), for DCFR rows."""
    return {"dcfr": format_dcfr(dcfr)} if algorithm in ("dcfr", "dcfr+") else {}


def bench_flop(
    situations: int,
    iterations: int,
    algorithm: str,
    turn_net: str,
    dcfr: tuple[float, float, float] = GENERATE_DCFR,
    net_precision: str = "auto",
    updates: str = "auto",
) -> dict[str, Any]:
    """Flop situations solved as ``deepstack generate --street flop`` solves them (the flop's
    betting, the turn network at the leaves for each of the 49 turn cards; CPU) and timed."""

    space = HandSpace(load_game("hunl"))
    precision = resolve_precision(net_precision, "cpu")
    leaf = _next_street_leaf("hunl", turn_net, 1, precision)
    _, entry = checked_file(turn_net)
    alternating = alternating_updates(updates, True)
    config = _hunl_config(algorithm, iterations, "cpu", dcfr, alternating)

    def solve(sit: Situation) -> None:
        solve_situation(space, 1, sit, config, leaf)

    with _one_thread():
        fields = _timed_draws(1, situations, solve)
    return _row(
        "generate.flop",
        _measured_rate(fields),
        "situations/s",
        "cpu",
        iterations=iterations,
        algorithm=algorithm,
        **_dcfr_field(algorithm, dcfr),
        **fields,
        threads=1,
        turn_net=turn_net,
        precision=precision,
        updates="alternating" if alternating else "simultaneous",
        net=entry.get("net"),
        net_training_situations=entry.get("training_situations"),
    )


def bench_aux(situations: int, flop_net: str, aux_flops: int | None = None, net_precision: str = "auto") -> dict[str, Any]:
    """Auxiliary targets made as ``deepstack generate --street preflop-aux`` makes them (the
    flop network averaged over all 22100 flops, or a seeded sample of ``aux_flops``) and timed.
    The first situation also buckets the suit-canonical flops it needs (once per process): it
    is reported apart."""

    game = load_game("hunl")
    space = HandSpace(game)
    _, entry = checked_file(flop_net)
    precision = resolve_precision(net_precision, "cpu")
    rng = np.random.default_rng([1, 0])
    times = []
    with _one_thread():
        net, flops = _flop_network(flop_net)
        run = NetOnDevices(net, precision)
        for _ in range(situations + 1):
            sit = draw_situation(space, 0, rng)
            rows = None if aux_flops is None else np.sort(rng.choice(len(ALL_FLOPS), aux_flops, replace=False))
            start = time.perf_counter()
            aux_values(
                run,
                flops,
                sit.ranges / sit.ranges.sum(axis=1, keepdims=True),
                float(sit.pot),
                float(sum(game.stack)),
                flop_rows=rows,
            )
            times.append(time.perf_counter() - start)
    first, rest = times[0], times[1:]
    rate = len(rest) / sum(rest) if rest and sum(rest) > 0 else 0.0
    return _row(
        "generate.preflop-aux",
        rate,
        "situations/s",
        "cpu",
        situations=len(rest),
        flops=aux_flops or len(ALL_FLOPS),
        canonical_flops=flops.canonical_flops,
        first_situation_seconds=round(first, 2),
        seconds_per_situation=[round(t, 2) for t in rest],
        threads=1,
        flop_net=flop_net,
        precision=precision,
        net=entry.get("net"),
        net_training_situations=entry.get("training_situations"),
    )


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``deepstack bench generate`` (also shown by ``deepstack bench generate --help``)."""
    p = argparse.ArgumentParser(
        prog="deepstack bench generate",
        description=" ".join(__doc__.split("\n\n")[0].split()),
        epilog=example("deepstack bench generate --street leduc --leduc-situations 200"),
        formatter_class=HelpFormatter,
    )
    p.add_argument(
        "--street",
        action="append",
        choices=["leduc", "river", "turn", "flop", "preflop-aux"],
        default=None,
        help="which rows, repeatable (default: leduc and turn)",
    )
    p.add_argument(
        "--device", default="auto", choices=["auto", "cpu", "cuda"], help="where the turn solves run (auto: CUDA when present)"
    )
    p.add_argument("--leduc-situations", type=int, default=2000, help="Leduc situations solved in one batch")
    p.add_argument("--turn-situations", type=int, default=3, help="turn situations to draw (default 3)")
    p.add_argument(
        "--river-situations", type=int, default=40, help="river situations to draw (default 40; iterations: --turn-iterations)"
    )
    p.add_argument("--iterations", type=int, default=1000, help="CFR iterations per situation (default 1000)")
    p.add_argument(
        "--turn-algorithm",
        default="cfr+",
        help="CFR variant of the river, turn and flop solves (default cfr+, as the first benchmark rows; "
        "deepstack generate runs dcfr)",
        choices=["cfr+", "dcfr", "hybrid", "dcfr+"],
    )
    p.add_argument(
        "--turn-iterations", type=int, default=None, help="iterations of the turn and flop solves (default: --iterations)"
    )
    p.add_argument(
        "--dcfr",
        default=format_dcfr(GENERATE_DCFR),
        metavar="ALPHA,BETA,GAMMA",
        help=f"turn and flop rows with --turn-algorithm dcfr / dcfr+: DCFR's parameters (default {format_dcfr(GENERATE_DCFR)}, "
        "as deepstack generate)",
    )
    p.add_argument("--flop-situations", type=int, default=3, help="flop situations to draw (default 3)")
    p.add_argument(
        "--turn-net", default="models/holdem/turn.pt", help="flop row: the turn network (default models/holdem/turn.pt)"
    )
    p.add_argument(
        "--river-net",
        default=None,
        help="turn row: solved to the end of the turn with this river network at the leaves, as deepstack generate "
        "--street turn --river-net (default: none, to the end of the game)",
    )
    add_network_leaf_options(p, "the turn row with --river-net, the flop row (and, precision only, preflop-aux)")
    p.add_argument(
        "--aux-situations", type=int, default=3, help="preflop-aux row: situations to time after the first (default 3)"
    )
    p.add_argument(
        "--flop-net", default="models/holdem/flop.pt", help="preflop-aux row: the flop network (default models/holdem/flop.pt)"
    )
    p.add_argument(
        "--aux-flops", type=int, default=None, help="preflop-aux row: flops averaged per situation (default all 22100)"
    )
    p.add_argument(
        "--processes",
        type=int,
        default=1,
        help="turn row: processes solving side by side, each its own draws (default 1; 2 on a 2-core machine "
        "measures it as deepstack generate loads it)",
    )
    p.add_argument(
        "--batch",
        default="1",
        metavar="N|auto",
        help="turn row: situations per solver call, solved as one forest as deepstack generate --batch does "
        "(default 1; auto: as many as half the GPU's free memory holds, 1 on the CPU)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="also report each turn solve's exploitability (%% of pot); the timing then includes the strategy averages",
    )
    return p


def main(argv: list[str]) -> int:
    """Run ``deepstack bench generate``: print one JSON line per row of the streets asked for; 2 on bad options."""
    p = build_parser()
    args = p.parse_args(argv)
    streets = args.street or ["leduc", "turn"]
    if (
        min(
            args.leduc_situations,
            args.turn_situations,
            args.river_situations,
            args.iterations,
            args.aux_situations,
            args.aux_flops or 1,
            args.processes,
            1 if args.turn_iterations is None else args.turn_iterations,
        )
        <= 0
    ):
        print("deepstack bench generate: error: counts and --iterations must be positive", file=sys.stderr)
        return 2
    if args.aux_flops is not None and args.aux_flops > 22100:
        print(f"deepstack bench generate: error: --aux-flops {args.aux_flops}: there are 22100 flops", file=sys.stderr)
        return 2
    iters = args.turn_iterations or args.iterations
    try:
        batch = parse_batch(args.batch)
    except ValueError as exc:
        print(f"deepstack bench generate: error: --batch: {exc}", file=sys.stderr)
        return 2
    if args.check and batch != 1:
        print("deepstack bench generate: error: --check measures one solve at a time: it needs --batch 1", file=sys.stderr)
        return 2
    if args.river_net is not None and batch != 1:
        print(
            "deepstack bench generate: error: --river-net is for the turn row, one situation at a time (--batch 1)",
            file=sys.stderr,
        )
        return 2
    try:
        dcfr = parse_dcfr(args.dcfr)
    except ValueError as exc:
        print(f"deepstack bench generate: error: --dcfr: {exc}", file=sys.stderr)
        return 2
    # each network a row needs, checked before any row runs (a missing --turn-net was exit 1 after the others)
    needed = [("--river-net", args.river_net, "river", args.river_net is not None)]
    needed += [
        ("--turn-net", args.turn_net, "turn", "flop" in streets),
        ("--flop-net", args.flop_net, "flop", "preflop-aux" in streets),
    ]
    for flag, path, street, wanted in needed:
        try:
            if wanted:
                load_next_net(path, street)
        except ModelError as exc:
            print(f"deepstack bench generate: error: {flag}: {exc}", file=sys.stderr)
            return 2
    if "leduc" in streets:
        for row in bench_leduc(args.leduc_situations, args.iterations):
            print(json.dumps(row), flush=True)
    if "turn" in streets:
        print(
            json.dumps(
                bench_turn(
                    args.turn_situations,
                    iters,
                    args.turn_algorithm,
                    args.device,
                    args.check,
                    args.processes,
                    dcfr,
                    batch,
                    river_net=args.river_net,
                    net_precision=args.net_precision,
                    updates=args.updates,
                )
            ),
            flush=True,
        )
    if "river" in streets:
        river = bench_turn(
            args.river_situations, iters, args.turn_algorithm, args.device, args.check, args.processes, dcfr, batch, round_=3
        )
        print(json.dumps(river), flush=True)
    if "flop" in streets:
        try:
            print(
                json.dumps(
                    bench_flop(
                        args.flop_situations, iters, args.turn_algorithm, args.turn_net, dcfr, args.net_precision, args.updates
                    )
                ),
                flush=True,
            )
        except ModelError as exc:
            print(f"deepstack bench generate: flop skipped: flop situations need a turn network: {exc}", file=sys.stderr)
            return 1
    if "preflop-aux" in streets:
        try:
            print(json.dumps(bench_aux(args.aux_situations, args.flop_net, args.aux_flops, args.net_precision)), flush=True)
        except ModelError as exc:
            print(f"deepstack bench generate: preflop-aux skipped: auxiliary targets need a flop network: {exc}", file=sys.stderr)
            return 1
    return 0
