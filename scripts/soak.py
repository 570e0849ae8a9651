"""Soak test: a long match of the DeepStack bot as its own process, its memory sampled.

The bot plays through ``deepstack play`` (a ``cmd:`` seat of ``deepstack match``, as in a
competition: its own process, real TCP) against a built-in opponent. Every few seconds the
bot process's resident memory is sampled; at the end the script reports the hands played,
corrected actions, dealer aborts (time-outs), the bot's ``decision_failed`` and ``out_of_time``
events, and the RSS growth after warm-up, and draws the RSS curve (PNG). Not in the test suite:
it runs for hours.

    python scripts/soak.py hunl 10000 --out runs/soak-hunl [--opponent random] [--config FILE]

Exit status 0 when the match finished with no abort, no correction, no failed decision and an
RSS growth after warm-up under ``--max-growth-mb`` (default 100): the mean RSS over the last
tenth of the hands against the mean over the tenth after the warm-up.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path


def rss_mb(pid: int) -> float | None:
    """Resident memory of ``pid`` in MB (None once it has exited)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def find_bot(parent: int) -> int | None:
    """The ``deepstack play`` process below ``parent`` (the match's ``cmd:`` seat)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and b"play" in cmdline:
            return int(entry.name)
    return None


def hands_done(match_dir: Path) -> int:
    """Hands the dealer has logged so far (its ``STATE`` lines)."""
    n = 0
    for log in match_dir.glob("*.log"):
        with open(log, "rb") as f:
            n += sum(1 for line in f if line.startswith(b"STATE:"))
    return n


def count_events(path: Path, names: tuple[str, ...]) -> dict[str, int]:
    counts = dict.fromkeys(names, 0)
    if not path.exists():
        return counts
    for line in path.read_text(errors="replace").splitlines():
        try:
            event = json.loads(line).get("event")
        except (json.JSONDecodeError, AttributeError):
            continue
        if event in counts:
            counts[event] += 1
    return counts


def rss_growth(samples: list[tuple[float, int, float]], hands: int, warmup: float) -> tuple[float | None, ...]:
    """``(after warm-up, last tenth, growth)`` in MB: the mean RSS over the tenth of the hands
    that follows the warm-up, over the last tenth, and their difference. Means, not single
    samples: the RSS of one sample moves by tens of MB as re-solves come and go."""
    start = warmup * hands
    first = [mb for _, h, mb in samples if start <= h < start + hands / 10]
    last = [mb for _, h, mb in samples if h >= hands - hands / 10]
    if not first or not last:
        return None, None, None
    a, b = sum(first) / len(first), sum(last) / len(last)
    return round(a, 1), round(b, 1), round(b - a, 1)


def plot(samples: list[tuple[float, int, float]], warm: float | None, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    ax.plot([s[1] for s in samples], [s[2] for s in samples], lw=1)
    if warm is not None:
        ax.axhline(warm, color="grey", ls="--", lw=0.8, label=f"after warm-up: {warm:.0f} MB")
        ax.axhline(warm + 100, color="red", ls=":", lw=0.8, label="warm-up + 100 MB")
        ax.legend(loc="lower right")
    ax.set_xlabel("hands played")
    ax.set_ylabel("bot RSS (MB)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("game")
    p.add_argument("hands", type=int)
    p.add_argument("--opponent", default="random", help="the built-in bot in seat 2")
    p.add_argument("--config", default=None, help="the DeepStack bot's config (default: the shipped one)")
    p.add_argument("--out", required=True, help="a new folder: match logs, rss.csv, rss.png, soak.json")
    p.add_argument("--interval", type=float, default=5.0, help="seconds between RSS samples")
    p.add_argument("--warmup", type=float, default=0.1, help="fraction of the hands that counts as warm-up")
    p.add_argument("--max-growth-mb", type=float, default=100.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--t_per_hand", type=int, default=7000, help="the dealer's average ms per hand")
    args = p.parse_args()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=False)
    match_dir = out / "match"
    decisions = out / "bot.jsonl"
    exe = Path(sys.executable).parent / "deepstack"
    seat = f"cmd:{exe} play --host {{host}} --port {{port}} --game {args.game} --log-json {decisions}"
    if args.config:
        seat += f" --config {args.config}"
    cmd = [str(exe), "match", args.game, str(args.hands), seat, args.opponent, "--seed", str(args.seed)]
    cmd += ["--log-dir", str(match_dir), "--progress", str(max(1, args.hands // 20)), "--t_per_hand", str(args.t_per_hand)]
    if args.config:
        cmd += ["--config", args.config]
    print(" ".join(cmd), flush=True)
    start = time.monotonic()
    samples: list[tuple[float, int, float]] = []
    with open(out / "match.out", "w") as stdout, open(out / "match.err", "w") as stderr:
        proc = subprocess.Popen(cmd, stdout=stdout, stderr=stderr)
        bot = None
        with open(out / "rss.csv", "w") as csv:
            csv.write("seconds,hands,rss_mb\n")
            while proc.poll() is None:
                time.sleep(args.interval)
                bot = bot or find_bot(proc.pid)
                mb = rss_mb(bot) if bot else None
                if mb is None:
                    continue
                sample = (time.monotonic() - start, hands_done(match_dir), mb)
                samples.append(sample)
                csv.write(f"{sample[0]:.1f},{sample[1]},{sample[2]:.1f}\n")
                csv.flush()
    report = (out / "match.out").read_text()
    played = hands_done(match_dir)
    corrections = sum(int(n) for n in re.findall(r"corrected actions (\d+)", report))
    aborted = re.findall(r"ABORTED: (.*)", report)
    events = count_events(decisions, ("decision", "decision_failed", "out_of_time", "observe_failed"))
    warm, late, growth = rss_growth(samples, args.hands, args.warmup)
    result = {
        "game": args.game,
        "hands_asked": args.hands,
        "hands_played": played,
        "exit_code": proc.returncode,
        "aborted": aborted,
        "corrected_actions": corrections,
        **{f"events_{k}": v for k, v in events.items()},
        "rss_after_warmup_mb": warm,
        "rss_last_tenth_mb": late,
        "rss_max_mb": max((s[2] for s in samples), default=None),
        "rss_final_mb": samples[-1][2] if samples else None,
        "rss_growth_after_warmup_mb": growth,
        "seconds": round(time.monotonic() - start, 1),
        "command": " ".join(cmd),
    }
    (out / "soak.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    if samples:
        plot(samples, warm, out / "rss.png", f"soak: {args.game}, {played} hands vs {args.opponent}")
    ok = (
        proc.returncode == 0
        and played == args.hands
        and not aborted
        and corrections == 0
        and events["decision_failed"] == 0
        and growth is not None
        and growth < args.max_growth_mb
    )
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
