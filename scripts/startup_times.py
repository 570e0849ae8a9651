"""Start-up time of ``deepstack play``, measured from outside the bot (any version of it).

The script plays a minimal dealer: it listens on loopback, starts ``deepstack play`` and
records, from the moment the process is spawned, when it connects and when its first action
arrives (the first state of hand 0 puts the bot to act at once). Then it closes the connection.

    python scripts/startup_times.py --games leduc hunl --runs 3 [--python PY] [--pythonpath DIR]

``--pythonpath`` runs the bot from another checkout (e.g. a git worktree of an older commit) for
a before/after comparison on the same machine. One JSON line per game with the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

#: the first state of hand 0 in which the bot (its seat's position) acts first
FIRST_STATE = {"leduc": "MATCHSTATE:0:0::Ks|", "leduc-limit": "MATCHSTATE:0:0::Ks|", "hunl": "MATCHSTATE:1:0::|AsKd"}


def one_run(game: str, python: str, env: dict[str, str], cwd: str | None, timeout: float) -> dict[str, float]:
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(timeout)
    port = server.getsockname()[1]
    spawned = time.monotonic()
    proc = subprocess.Popen(
        [python, "-m", "agent.cli", "play", "--game", game, "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,  # `python -m` puts the working folder first on the path
    )
    try:
        conn, _ = server.accept()
        connected = time.monotonic() - spawned
        conn.settimeout(timeout)
        buf = b""
        while b"\n" not in buf:  # the version line
            buf += conn.recv(4096)
        conn.sendall(FIRST_STATE[game].encode() + b"\r\n")
        reply = b""
        while b"\n" not in reply:
            chunk = conn.recv(4096)
            if not chunk:
                raise RuntimeError(f"{game}: the bot closed the connection without acting")
            reply += chunk
        first_action = time.monotonic() - spawned
        conn.close()
    finally:
        server.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    return {"connected_s": connected, "first_action_s": first_action}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", nargs="+", default=["leduc", "hunl"], choices=sorted(FIRST_STATE))
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--pythonpath", default=None, help="a checkout to run the bot from")
    p.add_argument("--label", default="ours")
    p.add_argument("--timeout", type=float, default=600.0)
    args = p.parse_args()
    env = dict(os.environ)
    if args.pythonpath:
        env["PYTHONPATH"] = args.pythonpath
    for game in args.games:
        runs = [one_run(game, args.python, env, args.pythonpath, args.timeout) for _ in range(args.runs)]
        row = {
            "bench": f"startup.{game}",
            "impl": args.label,
            "unit": "s",
            "value": round(statistics.median(r["first_action_s"] for r in runs), 2),
            "connected_s": round(statistics.median(r["connected_s"] for r in runs), 2),
            "first_action_s": [round(r["first_action_s"], 2) for r in runs],
            "runs": args.runs,
            "cpus": os.cpu_count(),
        }
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
