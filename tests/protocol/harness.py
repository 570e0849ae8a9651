"""Test peers for the dealer: raw-socket clients that send exactly the bytes a test scripts.

They are not mocks of our components: the dealer under test is the real one, on real
loopback TCP; only the other end of the wire is scripted, like the ACPC capture's
scripted test client.
"""

from __future__ import annotations

import io
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from protocol.dealer import Dealer, DealerConfig, DealerResult
from protocol.gamedef import Game
from protocol.matchstate import MatchState, parse_matchstate

#: policy(line, view) -> the lines to send back (possibly several, possibly none)
Policy = Callable[[str, MatchState], list[str]]


def answer(action: str) -> Policy:
    """Reply ``action`` whenever it is our turn."""
    return lambda line, view: [f"{line}:{action}"] if view.is_our_turn else []


def calls() -> Policy:
    return answer("c")


@dataclass
class ScriptedSeat:
    policy: Policy
    received: list[str] = field(default_factory=list)
    version: bytes = b"VERSION:2.0.0\r\n"
    disconnect_after: int | None = None  # close the socket after this many received lines
    delay_s: float = 0.0

    def run(self, game: Game, port: int) -> None:
        try:  # a dealer that ended the match already may refuse or reset the seat: that test says so
            sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        except OSError:
            return
        try:
            sock.sendall(self.version)
            buf = b""
            while True:
                data = sock.recv(65536)
                if not data:
                    return
                buf += data
                while b"\n" in buf:
                    raw, buf = buf.split(b"\n", 1)
                    line = raw.decode().rstrip("\r")
                    self.received.append(line)
                    if self.disconnect_after is not None and len(self.received) >= self.disconnect_after:
                        return
                    view = parse_matchstate(line, game)
                    replies = self.policy(line, view)
                    if replies and self.delay_s:
                        time.sleep(self.delay_s)
                    for reply in replies:
                        sock.sendall(reply.encode() + b"\r\n")
        except OSError:
            return
        finally:
            sock.close()


@dataclass
class DealerRun:
    result: DealerResult
    err: str
    out: str
    seats: list[ScriptedSeat]
    log: str

    @property
    def warnings(self) -> list[str]:
        return [l for l in self.err.splitlines() if l.startswith("WARNING")]

    def states(self, seat: int) -> list[str]:
        return self.seats[seat].received


def run_dealer(
    game: Game,
    seats: list[ScriptedSeat],
    tmp: Path,
    hands: int = 1,
    seed: int = 7,
    names: tuple[str, str] = ("Alice", "Bob"),
    match_name: str = "test",
    **cfg: object,
) -> DealerRun:
    config = DealerConfig(
        match_name=match_name,
        game=game,
        game_label=game.name,
        hands=hands,
        seed=seed,
        names=names,
        log_dir=tmp,
        start_timeout_ms=20000,
        **cfg,  # type: ignore[arg-type]
    )
    err, out = io.StringIO(), io.StringIO()
    dealer = Dealer(config, out=out, err=err)
    ports = dealer.open()
    threads = [threading.Thread(target=s.run, args=(game, p), daemon=True) for s, p in zip(seats, ports)]
    for t in threads:
        t.start()
    result = dealer.run()
    for t in threads:
        t.join(timeout=30)
    log_path = tmp / f"{match_name}.log"
    return DealerRun(result, err.getvalue(), out.getvalue(), seats, log_path.read_text() if log_path.exists() else "")
