"""Benchmarks of the native kernels: hand evaluation, board ranking, terminal values, equities, buckets.

``main(argv)`` prints one JSON object per line and measurement, with at least ``bench`` (a
dotted name), ``value``, ``unit``, ``impl`` (``"ours"``, ``"ours-torch"``, or a peer library:
``"eval7"``, ``"phevaluator"``), ``device`` and ``threads``, plus context fields. Every value
is the best of ``--repeat`` runs (other processes on the machine only ever slow a run down).
Everything runs on one CPU thread.

Peers are measured through their Python APIs (one call per hand: that is what they offer);
their lines carry ``ratio`` = ours / theirs in evals/s, computed against our batched C call,
and ``ratio_per_call`` against our own one-call-per-hand Python path (``evaluate_one``,
printed as ``native.eval_random_per_call``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from native import evaluator as ev
from native.board_tables import holdem_hands
from native.cards import card_to_str, holdem_hand_cards
from native.equity import equity_histograms, hand_equities
from native.evaluator import NUM_7CARD_HANDS, ffi, lib
from native.nearest import nearest_l1
from native.showdown import ChanceShowdownKernel, ShowdownKernel

SEED = 20240611


def _best(fn: Callable[[], Any], repeat: int, number: int = 1) -> float:
    """Best seconds per call of ``fn`` over ``repeat`` runs of ``number`` calls."""
    fn()  # warm-up (caches, lazy initialisation)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def _random_hands(rng: np.random.Generator, n: int, k: int = 7) -> np.ndarray:
    """``n`` rows of ``k`` distinct cards (uint8)."""
    return np.argsort(rng.random((n, 52)), axis=1)[:, :k].astype(np.uint8)


def _random_boards(rng: np.random.Generator, n: int, size: int) -> list[tuple[int, ...]]:
    return [tuple(int(c) for c in row) for row in _random_hands(rng, n, size)]


class _Out:
    def __init__(self, quick: bool, repeat: int) -> None:
        self.common = {"device": "cpu", "threads": 1, "quick": quick, "repeat": repeat}

    def emit(self, bench: str, value: float, unit: str, impl: str = "ours", **context: Any) -> dict[str, Any]:
        line = {"bench": bench, "value": float(f"{value:.6g}"), "unit": unit, "impl": impl, **self.common, **context}
        print(json.dumps(line), flush=True)
        return line


def _bench_evaluator(out: _Out, rng: np.random.Generator, quick: bool, repeat: int) -> None:
    # --- ours
    enum_s = _best(ev.enumerate7_checksum, max(1, min(repeat, 3)))
    ours_enum = NUM_7CARD_HANDS / enum_s
    out.emit("native.eval_enumerate", ours_enum, "evals/s", hands=NUM_7CARD_HANDS, api="C nested loops")
    n_random = 20_000 if quick else 200_000
    hands = _random_hands(rng, n_random)
    ours_random = n_random / _best(lambda: ev.evaluate(hands), repeat)
    out.emit("native.eval_random", ours_random, "evals/s", hands=n_random, api="batched C call (evaluate)")
    n_calls = 2_000 if quick else 20_000
    rows = [tuple(int(c) for c in h) for h in hands[:n_calls]]
    ours_per_call = n_calls / _best(lambda: [ev.evaluate_one(r) for r in rows], repeat)
    # the baseline of the peers' ratio_per_call, printed so that ratio can be checked
    out.emit("native.eval_random_per_call", ours_per_call, "evals/s", hands=n_calls, api="python per-hand calls (evaluate_one)")

    # --- peers (Python APIs, one call per hand)
    subset_cards = 14 if quick else 20
    subset = list(itertools.combinations(range(subset_cards), 7))
    subset_note = f"all C({subset_cards},7)={len(subset)} hands of the {subset_cards} lowest cards"
    try:
        import eval7
    except ImportError:  # pragma: no cover - optional peer
        eval7 = None
    if eval7 is not None:
        deck = [eval7.Card(s) for s in _card_strings()]
        hands_e7 = [[deck[c] for c in r] for r in rows]
        rate = n_calls / _best(lambda: [eval7.evaluate(h) for h in hands_e7], repeat)
        out.emit(
            "native.eval_random",
            rate,
            "evals/s",
            impl="eval7",
            hands=n_calls,
            api="python per-hand calls",
            ratio=ours_random / rate,
            ratio_per_call=ours_per_call / rate,
        )
        sub_e7 = [[deck[c] for c in r] for r in subset]
        rate = len(subset) / _best(lambda: [eval7.evaluate(h) for h in sub_e7], max(1, min(repeat, 3)))
        out.emit(
            "native.eval_enumerate",
            rate,
            "evals/s",
            impl="eval7",
            hands=len(subset),
            subset=subset_note,
            api="python per-hand calls",
            note="all 133,784,560 hands would take minutes through the Python API",
            ratio=ours_enum / rate,
        )
    try:
        from phevaluator import evaluate_cards
    except ImportError:  # pragma: no cover - optional peer
        evaluate_cards = None
    if evaluate_cards is not None:
        rate = n_calls / _best(lambda: [evaluate_cards(*r) for r in rows], repeat)
        out.emit(
            "native.eval_random",
            rate,
            "evals/s",
            impl="phevaluator",
            hands=n_calls,
            api="python per-hand calls",
            ratio=ours_random / rate,
            ratio_per_call=ours_per_call / rate,
        )
        rate = len(subset) / _best(lambda: [evaluate_cards(*r) for r in subset], max(1, min(repeat, 3)))
        out.emit(
            "native.eval_enumerate",
            rate,
            "evals/s",
            impl="phevaluator",
            hands=len(subset),
            subset=subset_note,
            api="python per-hand calls",
            note="all 133,784,560 hands would take minutes through the Python API",
            ratio=ours_enum / rate,
        )


def _card_strings() -> list[str]:
    return [card_to_str(c) for c in range(52)]


def _bench_board_rank(out: _Out, rng: np.random.Generator, quick: bool, repeat: int) -> None:
    hands = holdem_hands()
    boards = [np.asarray(b, dtype=np.uint8) for b in _random_boards(rng, 64, 5)]
    table = np.empty(2 * hands.size + 2, dtype=np.uint32)
    strength = np.empty(hands.size, dtype=np.int32)
    order = np.empty(hands.size, dtype=np.int32)
    t_ptr, s_ptr, o_ptr = (
        ffi.from_buffer(t, a) for t, a in (("uint32_t[]", table), ("int32_t[]", strength), ("int32_t[]", order))
    )
    b_ptrs = [ffi.from_buffer("uint8_t[]", b) for b in boards]

    def rank_all() -> None:
        for b in b_ptrs:
            lib.ds_board_rank(hands.size, 2, hands._ptr, b, 5, s_ptr, o_ptr, t_ptr)

    us = _best(rank_all, repeat, 5 if quick else 20) / len(boards) * 1e6
    out.emit(
        "native.board_rank",
        us,
        "us",
        hands=hands.size,
        board_cards=5,
        boards=len(boards),
        note="strengths, sorted order and packed table of all 1326 hands on one river board",
    )


def _bench_showdown(out: _Out, rng: np.random.Generator, quick: bool, repeat: int) -> None:
    H = holdem_hands().size
    boards = _random_boards(rng, 64, 5)
    kernel = ShowdownKernel(None, boards)
    reach = rng.random((64, H)).astype(np.float32)
    result = np.empty_like(reach)
    number = 50 if quick else 500

    one = ShowdownKernel(None, boards[0])
    r1, o1 = reach[0].copy(), np.empty(H, dtype=np.float32)
    us = _best(lambda: one.showdown(r1, out=o1), repeat, number * 4) * 1e6
    # the same C kernel called straight through cffi with prepared pointers: no argument checks
    zero = np.zeros(1, dtype=np.int32)
    raw = (
        H,
        1,
        one._packed_ptr,
        1,
        ffi.from_buffer("int32_t[]", zero),
        ffi.from_buffer("float[]", r1),
        ffi.NULL,
        ffi.from_buffer("float[]", o1),
    )
    kernel_us = _best(lambda: lib.ds_showdown_rows_packed(*raw), repeat, number * 4) * 1e6
    mixed = np.arange(64, dtype=np.int32)
    c_us = _best(lambda: kernel.showdown(reach, mixed, out=result), repeat, number // 10 or 1) / 64 * 1e6
    out.emit(
        "native.showdown_river",
        us,
        "us/range",
        hands=H,
        rows=1,
        api="ShowdownKernel.showdown (Python call)",
        kernel_us=kernel_us,
        kernel_note="one range, the C kernel called through cffi with prepared pointers",
    )
    same = np.zeros(64, dtype=np.int32)
    us = _best(lambda: kernel.showdown(reach, same, out=result), repeat, number // 10 or 1) / 64 * 1e6
    out.emit("native.showdown_river_batch64", us, "us/range", hands=H, rows=64, boards=1)
    out.emit("native.showdown_river_batch64_mixed", c_us, "us/range", hands=H, rows=64, boards=64)
    us = _best(lambda: kernel.fold(reach, same, out=result), repeat, number // 10 or 1) / 64 * 1e6
    out.emit("native.fold_river_batch64", us, "us/range", hands=H, rows=64, boards=1)
    us = _best(lambda: kernel.fold(reach, mixed, out=result), repeat, number // 10 or 1) / 64 * 1e6
    out.emit("native.fold_river_batch64_mixed", us, "us/range", hands=H, rows=64, boards=64)

    turn = _random_boards(rng, 1, 4)[0]
    t0 = time.perf_counter()
    chance = ChanceShowdownKernel(None, [turn])
    prepare_ms = (time.perf_counter() - t0) * 1e3
    r_turn, o_turn = reach[:1].copy(), np.empty((1, H), dtype=np.float32)
    us = _best(lambda: chance.showdown(r_turn, out=o_turn), repeat, 5 if quick else 50) * 1e6
    out.emit(
        "native.showdown_turn_avg",
        us,
        "us/range",
        hands=H,
        rivers=48,
        prepare_ms=prepare_ms,
        normalisation="sum over rivers / 44 (rivers left given both hands)",
    )

    try:
        import torch

        from native.torch_showdown import TorchShowdown
    except ImportError:  # pragma: no cover - torch is a dependency
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        ts = TorchShowdown(None, boards, device="cpu", dtype=torch.float32, backend="torch")
        t_reach = torch.from_numpy(reach)
        prepared = ts.prepare(torch.zeros(64, dtype=torch.long))
        us = _best(lambda: prepared.showdown(t_reach), repeat, 3 if quick else 20) / 64 * 1e6
        out.emit(
            "native.showdown_river_batch64",
            us,
            "us/range",
            impl="ours-torch",
            hands=H,
            rows=64,
            boards=1,
            backend="torch tensor ops (prepared rows)",
            torch=torch.__version__,
        )
        prepared = ts.prepare(torch.arange(64))
        us = _best(lambda: prepared.showdown(t_reach), repeat, 3 if quick else 20) / 64 * 1e6
        out.emit(
            "native.showdown_river_batch64_mixed",
            us,
            "us/range",
            impl="ours-torch",
            hands=H,
            rows=64,
            boards=64,
            backend="torch tensor ops (prepared rows)",
            torch=torch.__version__,
        )
    finally:
        torch.set_num_threads(threads)


def _bench_equity(out: _Out, rng: np.random.Generator, quick: bool, repeat: int) -> None:
    for name, size in (("river", 5), ("turn", 4), ("flop", 3)):
        board = _random_boards(rng, 1, size)[0]
        runs = 1 if (quick and size == 3) else repeat
        ms = _best(lambda: hand_equities(board), runs) * 1e3
        out.emit(f"native.equity_{name}", ms, "ms", hands=1326, opp_range="uniform", runouts={5: 1, 4: 46, 3: 1081}[size])
    flop = _random_boards(rng, 1, 3)[0]
    ms = _best(lambda: equity_histograms(flop, 50), 1 if quick else max(1, repeat // 2)) * 1e3
    out.emit("native.equity_histogram_flop", ms, "ms", hands=1326, bins=50, next_cards=49)


def _bench_buckets(out: _Out, rng: np.random.Generator, quick: bool, repeat: int) -> None:
    """One turn board's bucket lookup: 1081 hands' cumulative 50-bin histograms against 1000
    centroids (the shipped turn table's sizes; a flop re-solve with network leaves does 49)."""
    import torch

    n, k, d = (256, 1000, 50) if quick else (1081, 1000, 50)
    points = torch.as_tensor(np.cumsum(rng.dirichlet(np.ones(d), n), axis=1), dtype=torch.float32)
    centroids = torch.as_tensor(np.cumsum(rng.dirichlet(np.ones(d), k), axis=1), dtype=torch.float32)
    centroids_t = centroids.T.contiguous()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        ours = _best(lambda: nearest_l1(points, centroids_t), repeat) * 1e3
        peer = _best(lambda: torch.cdist(points, centroids, p=1).argmin(dim=1), repeat) * 1e3
    finally:
        torch.set_num_threads(threads)
    ctx = {"points": n, "centroids": k, "bins": d}
    out.emit("native.nearest_l1_turn_board", ours, "ms", **ctx)
    out.emit(
        "native.nearest_l1_turn_board",
        peer,
        "ms",
        impl="ours-torch",
        backend="torch.cdist(p=1).argmin",
        ratio=round(peer / ours, 2),
        torch=torch.__version__,
        **ctx,
    )


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``deepstack bench native`` (also shown by its ``--help``)."""
    parser = argparse.ArgumentParser(
        prog="deepstack bench native",
        description=__doc__.splitlines()[0],
        epilog="example:\n  deepstack bench native --quick",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="small sizes (for CI)")
    parser.add_argument("--repeat", type=int, default=None, help="runs per measurement, best kept (default 5, quick 2)")
    parser.add_argument(
        "--only",
        choices=("eval", "rank", "showdown", "equity", "buckets"),
        action="append",
        help="run only these groups, repeatable (default: all)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``deepstack bench native``: one JSON line per measurement of the C evaluator and kernels."""
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
    repeat = args.repeat if args.repeat is not None else (2 if args.quick else 5)
    if repeat < 1:
        parser.error("--repeat must be >= 1")
    out = _Out(args.quick, repeat)
    out.common["machine"] = platform.machine()
    rng = np.random.default_rng(SEED)
    holdem_hand_cards()  # warm the caches outside the timings
    groups = args.only or ["eval", "rank", "showdown", "equity", "buckets"]
    if "eval" in groups:
        _bench_evaluator(out, rng, args.quick, repeat)
    if "rank" in groups:
        _bench_board_rank(out, rng, args.quick, repeat)
    if "showdown" in groups:
        _bench_showdown(out, rng, args.quick, repeat)
    if "equity" in groups:
        _bench_equity(out, rng, args.quick, repeat)
    if "buckets" in groups:
        _bench_buckets(out, rng, args.quick, repeat)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
