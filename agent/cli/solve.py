"""``deepstack solve`` (one spot, grid output) and ``deepstack bench solver`` (JSON lines)."""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from agent.cli.common import HelpFormatter, count, example, non_negative_float, positive_int, pot_fractions, repeats
from agent.common.yaml_files import load_yaml, shown
from agent.evaluation.plots import strategy_grids_png
from agent.solver.handspace import HandSpace
from agent.solver.ranges import RANKS_DESC, class_label, grid
from agent.solver.resolve import SolverConfig, SpotError, pick_device, solve_ranges
from agent.solver.spots import Spot, load_spots, make_spot
from agent.solver.tree import DEEPSTACK_SIZING
from native.cards import cards_from_str, cards_to_str
from protocol.gamedef import load_game
from protocol.state import ActionKind, HandState

#: The standard benchmark spots, shipped with the package.
DEFAULT_SPOTS = Path(__file__).resolve().parent / "spots.yaml"


def action_name(state: HandState, action) -> str:
    if action.kind is ActionKind.FOLD:
        return "fold"
    if action.kind is ActionKind.CALL:
        return "check" if state.amount_to_call() == 0 else "call"
    p = state.current_player
    assert p is not None
    if action.size >= state.game.stack[p]:
        return f"all-in {action.size}"
    return f"{'bet' if state.amount_to_call() == 0 else 'raise'} to {action.size}"


def format_grid(values: np.ndarray) -> str:
    """A 13x13 grid of percentages ('  .' where the class is not in the range)."""
    lines = ["     " + "".join(f"{r:>4}" for r in RANKS_DESC)]
    for i, r in enumerate(RANKS_DESC):
        cells = "".join("   ." if math.isnan(v) else f"{100 * v:4.0f}" for v in values[i])
        lines.append(f"  {r}  {cells}")
    return "\n".join(lines)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``deepstack solve`` (one postflop spot from the command line or a spots.yaml file)."""
    p = sub.add_parser(
        "solve",
        help="solve a postflop spot and print the root strategy",
        description="Solve a spot given on the command line or taken from a spots.yaml file "
        "(--spots FILE --spot NAME). Prints the strategy of the player to act as 13x13 grids, the "
        "exploitability reached and the time.",
        epilog=example("deepstack solve --board QsJh2h8d3c --pot 10 --stack 95 --oop random --ip random --target 0.5"),
        formatter_class=HelpFormatter,
    )
    p.add_argument("--spots", default=None, help=f"a spots.yaml file (default with --spot: the shipped {DEFAULT_SPOTS.name})")
    p.add_argument("--spot", default=None, help="name of the spot in --spots, e.g. river, turn, flop (default: its first)")
    p.add_argument("--board", default=None, help="board cards, e.g. QsJh2h8d3c (default: none; give it or --spot)")
    p.add_argument("--pot", type=int, default=10, help="pot in chips (default 10)")
    p.add_argument("--stack", type=int, default=95, help="effective stack behind (default 95)")
    p.add_argument("--oop", default="random", help="out-of-position range (range notation or 'random')")
    p.add_argument("--ip", default="random", help="in-position range (range notation or 'random')")
    p.add_argument("--bets", type=pot_fractions, default="1", help="bet sizes as pot fractions, comma separated (default 1)")
    p.add_argument("--raises", type=pot_fractions, default="0.5", help="raise sizes as pot fractions (default 0.5)")
    p.add_argument("--max-bets", type=count, default=4, help="bets/raises per round (default 4)")
    p.add_argument(
        "--line",
        default="",
        help="actions already taken in this round, ACPC style with raise-to amounts "
        "(e.g. r15: out of position bet 10 into a pot of 10; the in-position player is then to act) "
        "(default: none, the round's first decision)",
    )
    p.add_argument("--no-allin", action="store_true", help="leave all-in out of the bet sizes")
    p.add_argument("--iterations", type=positive_int, default=1000, help="maximum CFR iterations (default 1000)")
    p.add_argument(
        "--target",
        type=non_negative_float,
        default=None,
        help="stop at this exploitability, in %% of the pot (default 0.3; 0: run exactly --iterations)",
    )
    p.add_argument("--algorithm", default="dcfr", choices=["dcfr", "cfr+", "dcfr+", "hybrid"], help="CFR variant")
    p.add_argument(
        "--device", default="auto", choices=["auto", "cpu", "cuda"], help="where the solve runs (auto: CUDA when present)"
    )
    p.add_argument("--plot", default=None, help="also draw the grids to this PNG file (default: none)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.set_defaults(func=run_solve)


#: the most chips a player may hold (half the pot plus the stack behind): the ACPC dealer's integers are 32-bit
MAX_CHIPS = 2**31 - 1


def _chips_problem(pot: int, stack: int, pot_name: str, stack_name: str) -> str | None:
    """Why a pot and effective stack cannot make a spot's game (each player's half of the pot plus the
    stack must fit the ACPC dealer's 32-bit integers); None when they can. Said with the option or key
    given, not as a line of the game definition made from them."""
    if pot // 2 >= MAX_CHIPS:
        return f"{pot_name} {pot}: at most {2 * (MAX_CHIPS - 1)} chips (half of it must fit the ACPC dealer's 32-bit integers)"
    if pot // 2 + stack > MAX_CHIPS:
        return (
            f"{stack_name} {stack}: the effective stack must be from 1 to {MAX_CHIPS - pot // 2} chips with {pot_name} {pot} "
            "(a player's half of the pot plus the stack must fit the ACPC dealer's 32-bit integers)"
        )
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check_spots_fields(path: Path) -> None:
    """The fields of a spots file that the loader would turn into a TypeError or a bare ValueError
    (a spot given as a string, ``bet_pct: 100``, ``pot: abc``), named with the file and the key or
    spot; what is left (cards, ranges, sizes) the loader names itself."""
    try:
        data = load_yaml(path.read_text())
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return  # the loader says so, with the file
    if not isinstance(data, dict) or not isinstance(data.get("spots"), dict):
        return
    for key in ("pot", "effective_stack"):
        if key in data and not (isinstance(data[key], int) and not isinstance(data[key], bool)):
            raise SpotError(f"{path}: {key}: expected a whole number of chips, not {shown(data[key])}")
    for key in ("bet_pct", "raise_pct"):
        if key in data and not (isinstance(data[key], list) and all(_is_number(x) for x in data[key])):
            raise SpotError(f"{path}: {key}: expected a list of finite pot percentages like [100], not {shown(data[key])}")
    if "max_bets_per_street" in data and data["max_bets_per_street"] is not None:
        if not isinstance(data["max_bets_per_street"], int) or isinstance(data["max_bets_per_street"], bool):
            raise SpotError(f"{path}: max_bets_per_street: expected a whole number, not {shown(data['max_bets_per_street'])}")
    if isinstance(data.get("pot"), int) and isinstance(data.get("effective_stack"), int):
        problem = _chips_problem(data["pot"], data["effective_stack"], "pot", "effective_stack")
        if problem:
            raise SpotError(f"{path}: {problem}")
    target = data.get("target_exploitability_pct_of_pot", 0.3)
    if not _is_number(target) or target < 0:
        raise SpotError(f"{path}: target_exploitability_pct_of_pot: expected a number >= 0, not {shown(target)}")
    for name, spec in data["spots"].items():
        if not isinstance(spec, dict) or "board" not in spec:
            raise SpotError(
                f"{path}: spot {shown(name)}: expected a mapping with a board, like {{board: QsJh2h8d3c}}, not {shown(spec)}"
            )


def read_spots(path: Path) -> tuple[dict[str, Spot], dict[str, Any]]:
    """``load_spots`` with every bad field one SpotError naming the file, so ``solve`` and
    ``bench solver`` refuse a bad file alike, before any solve."""
    if path.is_dir():
        raise SpotError(f"{path}: is a folder; give a spots file (.yaml)")
    _check_spots_fields(path)
    try:
        spots, meta = load_spots(path)
    except UnicodeDecodeError:  # a binary file given as the spots
        raise SpotError(f"{path}: not a text file (not UTF-8), so not a spots file") from None
    except (TypeError, ValueError) as exc:  # SpotError is a ValueError; a bad card or range is named in it
        text = str(exc)
        raise SpotError(text if text.startswith(str(path)) else f"{path}: {text}") from None
    return spots, meta


def check_spot_names(path: Path, spots: dict[str, Spot], names: list[str]) -> None:
    """Every name asked for is a spot of the file (else one SpotError listing the file's spots)."""
    for name in names:
        if name not in spots:
            raise SpotError(f"no spot {shown(name)} in {path}; it has {', '.join(spots)}")


#: the options that describe a spot of their own, with their defaults: given with --spot, ignored
SPOT_OPTIONS = {
    "board": None,
    "pot": 10,
    "stack": 95,
    "oop": "random",
    "ip": "random",
    "line": "",
    "no_allin": False,
    "max_bets": 4,
}


def _spot_from_args(args: argparse.Namespace) -> tuple[Spot, float]:
    if args.spots or args.spot:
        given = [f"--{k.replace('_', '-')}" for k, default in SPOT_OPTIONS.items() if getattr(args, k) != default]
        given += [f"--{k}" for k, text in (("bets", "1"), ("raises", "0.5")) if getattr(args, k) != pot_fractions(text)]
        if given:
            raise SpotError(
                f"{', '.join(given)}: options of a spot given on the command line, but with --spot/--spots the "
                "file's spot is solved: "
                "leave them out, or give the spot without --spot"
            )
        path = Path(args.spots) if args.spots else DEFAULT_SPOTS
        spots, meta = read_spots(path)
        name = args.spot or next(iter(spots))
        check_spot_names(path, spots, [name])
        target = args.target if args.target is not None else meta["target_pct"]
        return spots[name], target
    if not args.board:
        raise SpotError("give --board (and --pot/--stack/--oop/--ip), or --spots FILE --spot NAME")
    problem = _chips_problem(args.pot, args.stack, "--pot", "--stack")
    if problem:
        raise SpotError(problem)
    spot = make_spot(
        board=args.board,
        pot=args.pot,
        effective_stack=args.stack,
        oop_range=args.oop,
        ip_range=args.ip,
        bets=args.bets.split(","),
        raises=args.raises.split(",") if args.raises else None,
        all_in=not args.no_allin,
        max_bets=args.max_bets,
        name="spot",
        line=args.line,
    )
    return spot, (args.target if args.target is not None else 0.3)


def run_solve(args: argparse.Namespace) -> int:
    """Run ``deepstack solve``: solve the spot to ``--target`` (percent of the pot) or ``--iterations``, then print
    the acting player's root strategy as 13x13 grids and the exploitability in chips and % of the pot."""
    try:
        if args.plot is not None:  # checked before the solve, not after it
            plot = Path(args.plot)
            if plot.suffix.lower() != ".png":
                raise SpotError(f"--plot {shown(args.plot)}: give a .png file")
            if not plot.parent.is_dir() or not os.access(plot.parent, os.W_OK):
                raise SpotError(f"--plot {shown(args.plot)}: its folder {plot.parent} does not exist or is not writable")
        spot, target_pct = _spot_from_args(args)
        state = spot.state()
        config = SolverConfig(
            algorithm=args.algorithm, alternating=args.algorithm != "hybrid", iterations=args.iterations, device=args.device
        )
        # target 0: exactly --iterations, exploitability measured once at the end
        check_every = 10 if target_pct > 0 else max(1, args.iterations)
        sol = solve_ranges(
            state,
            list(spot.ranges),
            spot.sizing,
            config,
            target_exploitability=target_pct / 100 * spot.pot,
            check_every=check_every,
        )
    except (SpotError, ValueError) as exc:
        print(f"deepstack solve: error: {exc}", file=sys.stderr)
        return 2
    last = sol.history[-1]
    expl_pct = 100 * last["exploitability"] / spot.pot
    player = sol.root_player
    strategy = sol.root_strategy()
    own = spot.ranges[player] * sol.space.valid(spot.board)
    names = [action_name(state, a) for a in sol.root_actions]
    freqs = {n: float((strategy[i] * own).sum() / own.sum()) for i, n in enumerate(names)}
    grids = {n: grid(strategy[i], own) for i, n in enumerate(names)}
    if args.plot:
        strategy_grids_png(args.plot, grids, title=f"{spot.describe()} - {'OOP' if player == 0 else 'IP'} to act")
    if args.json:
        out: dict[str, Any] = {
            "spot": spot.name,
            "board": cards_to_str(spot.board),  # what was solved (a --spot's own board)
            "player": "oop" if player == 0 else "ip",
            "iterations": int(last["iterations"]),
            "seconds": round(last["seconds"], 4),
            "exploitability_chips": last["exploitability"],
            "exploitability_pct_pot": expl_pct,
            "actions": names,
            "frequencies": freqs,
            "grids": {n: [[None if math.isnan(v) else round(float(v), 4) for v in row] for row in g] for n, g in grids.items()},
        }
        print(json.dumps(out))
        return 0
    print(spot.describe())
    print(f"{'out of position' if player == 0 else 'in position'} to act; {len(sol.hands)} hands in play")
    for name, g in grids.items():
        print(f"\n{name}: {100 * freqs[name]:.1f}% of the range")
        print(format_grid(g))
    print(
        f"\nexploitability {last['exploitability']:.4f} chips = {expl_pct:.3f}% of the pot "
        f"after {int(last['iterations'])} iterations, {last['seconds']:.2f} s"
    )
    return 0


# ---------------------------------------------------------------------- bench solver
def _peak_mb() -> float:
    """Peak resident memory of this process so far (MB); on CUDA the device's peak is added."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if torch.cuda.is_available():
        peak += torch.cuda.max_memory_allocated() / 2**20
    return round(peak, 1)


def _context(device: torch.device) -> dict[str, Any]:
    context: dict[str, Any] = {"device": device.type, "threads": torch.get_num_threads()}
    if device.type == "cuda":
        context["gpu"] = torch.cuda.get_device_name(device)
        context["gpu_peak_mb"] = round(torch.cuda.max_memory_allocated(device) / 2**20, 1)
    return context


def bench_spots(path: Path, names: list[str], device: str) -> list[dict[str, Any]]:
    spots, meta = read_spots(path)
    check_spot_names(path, spots, names)
    rows = []
    dev = pick_device(device)
    for name in names:
        spot = spots[name]
        target = meta["target_pct"] / 100 * spot.pot
        config = SolverConfig(iterations=2000, device=device)
        sol = solve_ranges(spot.state(), list(spot.ranges), spot.sizing, config, target_exploitability=target, check_every=10)
        last = sol.history[-1]
        pct = 100 * last["exploitability"] / spot.pot
        rows.append(
            {
                "bench": "solver.spot",
                "spot": name,
                "value": round(last["seconds"], 4),
                "unit": "s",
                "impl": "ours",
                "exploitability_pct": round(pct, 4),
                "reached_target": bool(pct <= meta["target_pct"]),
                "target_pct": meta["target_pct"],
                "iterations": int(last["iterations"]),
                "check_every": 10,
                "algorithm": "dcfr (alternating)",
                "hands": int(len(sol.hands)),
                "rows": sol.lookahead.num_rows,
                "peak_mb": _peak_mb(),
                **_context(dev),
            }
        )
        for ref in meta["references"]:
            if ref["spot"] == name:
                rows.append(
                    {
                        "bench": "solver.spot",
                        "spot": name,
                        "value": ref["seconds"],
                        "unit": "s",
                        "impl": ref["tool"],
                        "exploitability_pct": ref["exploitability_pct"],
                        "device": "cpu",  # the recorded run's context, as the source below says
                        "threads": 2,
                        # a time from another machine: shown beside ours, never divided into a ratio
                        "recorded": True,
                        "source": f"recorded in {path.name} on the project's 2-core build machine (2 threads), not run here",
                    }
                )
    return rows


def bench_deepstack(device: str, iterations: dict[str, int]) -> list[dict[str, Any]]:
    """Full-range DeepStack re-solves (1326 hands each) on a real HUNL state."""

    game = load_game("hunl")
    space = HandSpace(game)
    sizing = [DEEPSTACK_SIZING[r] for r in ("preflop", "flop", "turn", "river")]
    rows = []
    dev = pick_device(device)
    for street, board, rnd in (("river", "QsJh2h8d3c", 3), ("turn", "QsJh2h8d", 2)):
        n = iterations.get(street, 0)
        if n <= 0:
            continue
        state = HandState.at_round_start(game, rnd, (500, 500), cards_from_str(board))
        uni = space.uniform(state.board)
        config = SolverConfig(algorithm="hybrid", alternating=False, iterations=n, skip=n // 2, device=device)
        start = time.perf_counter()
        sol = solve_ranges(state, [uni, uni], sizing, config)
        seconds = time.perf_counter() - start
        expl = sol.exploitability()["exploitability"]
        rows.append(
            {
                "bench": f"solver.deepstack_{street}",
                "value": round(seconds, 3),
                "unit": "s",
                "impl": "ours",
                "iterations": n,
                "per_iteration_ms": round(1000 * sol.result.seconds / n, 3),
                "exploitability_pct": round(100 * expl / state.pot, 4),
                "hands": int(len(sol.hands)),
                "rows": sol.lookahead.num_rows,
                "algorithm": "hybrid (simultaneous, uniform averaging)",
                "tree": "F,C,1/2P,P,2P,A (river) / F,C,1/2P,P,A then F,C,P,A (turn, river to the end)",
                "peak_mb": _peak_mb(),
                **_context(dev),
            }
        )
    return rows


def bench_parser() -> argparse.ArgumentParser:
    """The parser of ``deepstack bench solver`` (also shown by ``deepstack bench solver --help``)."""
    p = argparse.ArgumentParser(
        prog="deepstack bench solver",
        description="Solve the standard spots and DeepStack re-solves; JSON lines.",
        epilog=example("deepstack bench solver --quick"),
        formatter_class=HelpFormatter,
    )
    p.add_argument("--spots", default=str(DEFAULT_SPOTS), help="spots.yaml (default: the shipped standard spots)")
    p.add_argument("--spot", action="append", default=None, help="spot names, repeatable (default river and turn)")
    p.add_argument(
        "--device", default="auto", choices=["auto", "cpu", "cuda"], help="where the solves run (auto: CUDA when present)"
    )
    p.add_argument(
        "--deepstack-river-iterations",
        type=count,
        default=None,
        help="iterations of the full-range DeepStack river re-solve (0: skip it; default 2000, with --quick 20)",
    )
    p.add_argument(
        "--deepstack-turn-iterations",
        type=count,
        default=None,
        help="iterations of the full-range DeepStack turn re-solve (0: skip it; default 1000, with --quick 0)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="river spot only and short DeepStack re-solves (CI); explicit --spot and iteration flags still count",
    )
    p.add_argument(
        "--beside-busy",
        type=count,
        default=0,
        metavar="N",
        help="also solve the spots again beside N busy processes (each spins one core and stops itself after "
        "10 minutes) and report the slowdown against the quiet run of the same spot (default 0: quiet only)",
    )
    p.add_argument(
        "--repeat", type=repeats, default=1, help="solve each spot this many times, 1 to 10000 (quiet and busy alike; default 1)"
    )
    return p


#: a process that keeps one core busy and stops itself (so a benchmark that dies leaves nothing behind)
_BUSY = "import time\nend = time.monotonic() + 600\nwhile time.monotonic() < end: pass\n"


def bench_beside_busy(
    path: Path, names: list[str], device: str, busy: int, quiet: list[dict[str, Any]], repeat: int
) -> list[dict[str, Any]]:
    """The spots solved again while ``busy`` processes spin; each row carries the slowdown against
    the quiet rows of the same spot measured just before in this run (median against median)."""
    import statistics
    import subprocess

    procs = [subprocess.Popen([sys.executable, "-c", _BUSY]) for _ in range(busy)]
    try:
        time.sleep(0.5)  # let them start
        rows = [r for _ in range(repeat) for r in bench_spots(path, names, device) if r["impl"] == "ours"]
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    for row in rows:
        same = [r["value"] for r in quiet if r["impl"] == "ours" and r["spot"] == row["spot"]]
        loaded = [r["value"] for r in rows if r["spot"] == row["spot"]]
        row["bench"] = "solver.spot_beside_busy"
        row["busy_processes"] = busy
        row["slowdown"] = round(statistics.median(loaded) / statistics.median(same), 2) if same else None
    return rows


def bench_main(argv: list[str]) -> int:
    """Run ``deepstack bench solver``: the standard spots and the DeepStack river and turn re-solves, one JSON
    line per measurement; 2 on a bad spots file or name."""
    args = bench_parser().parse_args(argv)
    names = args.spot or (["river"] if args.quick else ["river", "turn"])
    defaults = {"river": 20, "turn": 0} if args.quick else {"river": 2000, "turn": 1000}
    given = {"river": args.deepstack_river_iterations, "turn": args.deepstack_turn_iterations}
    iters = {street: defaults[street] if n is None else n for street, n in given.items()}
    try:
        spots, _ = read_spots(Path(args.spots))  # a bad file or name: refused before any solve
        check_spot_names(Path(args.spots), spots, names)
        quiet = []
        for i in range(args.repeat):
            for row in bench_spots(Path(args.spots), names, args.device):
                if row["impl"] == "ours" or i == 0:
                    quiet.append(row)
                    print(json.dumps(row), flush=True)
        if args.beside_busy > 0:
            for row in bench_beside_busy(Path(args.spots), names, args.device, args.beside_busy, quiet, args.repeat):
                print(json.dumps(row), flush=True)
        for row in bench_deepstack(args.device, iters):
            print(json.dumps(row), flush=True)
    except (SpotError, ValueError, OSError) as exc:  # what `solve` catches, and a file it cannot read
        print(f"deepstack bench solver: error: {exc}", file=sys.stderr)
        return 2
    return 0


__all__ = ["add_parser", "run_solve", "bench_main", "bench_parser", "class_label"]
