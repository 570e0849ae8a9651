"""The protocol client over real loopback TCP against a scripted dealer-side peer."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field

import pytest

from agent.bots.baselines import CallBot
from protocol.bot import BaseBot
from protocol.client import LineBuffer, connect, play
from protocol.gamedef import Game
from protocol.matchstate import MatchState
from protocol.state import Action, raise_to

# Hand 2 of the capture, seen by position 0, and hand 3 (an all-in) seen by position 1.
HAND = [
    ("MATCHSTATE:0:2::8d9h|", None),
    ("MATCHSTATE:0:2:c:8d9h|", "c"),
    ("MATCHSTATE:0:2:cc/:8d9h|/TsQh8c", "c"),
    ("MATCHSTATE:0:2:cc/c:8d9h|/TsQh8c", None),
    ("MATCHSTATE:0:2:cc/cc/:8d9h|/TsQh8c/Ah", "c"),
    ("MATCHSTATE:0:2:cc/cc/c:8d9h|/TsQh8c/Ah", None),
    ("MATCHSTATE:0:2:cc/cc/cc/:8d9h|/TsQh8c/Ah/4d", "c"),
    ("MATCHSTATE:0:2:cc/cc/cc/c:8d9h|/TsQh8c/Ah/4d", None),
    ("MATCHSTATE:0:2:cc/cc/cc/cc:8d9h|9s6d/TsQh8c/Ah/4d", None),
    ("MATCHSTATE:1:3::|4h3c", "c"),
    ("MATCHSTATE:1:3:c:|4h3c", None),
    ("MATCHSTATE:1:3:cr12925:|4h3c", "c"),
    ("MATCHSTATE:1:3:cr12925c/:|4h3c/QsKsJs", None),
    ("MATCHSTATE:1:3:cr12925c/r20000:|4h3c/QsKsJs", "c"),
    ("MATCHSTATE:1:3:cr12925c/r20000c//:3hQh|4h3c/QsKsJs/Qc/9s", None),
]


def test_line_buffer_every_split_point() -> None:
    data = b"MATCHSTATE:0:0::8dJd|\r\n# comment\r\nMATCHSTATE:0:0:f:8dJd|\r\n"
    expected = ["MATCHSTATE:0:0::8dJd|", "# comment", "MATCHSTATE:0:0:f:8dJd|"]
    for i in range(len(data) + 1):
        for j in range(i, len(data) + 1):
            buf = LineBuffer()
            lines = buf.feed(data[:i]) + buf.feed(data[i:j]) + buf.feed(data[j:])
            assert lines == expected, (i, j)
            assert buf.pending == b""


@dataclass
class Peer:
    """Dealer side of the wire: sends the script one byte per TCP segment, checks replies."""

    script: list[tuple[str, str | None]]
    extra_lines: list[str] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    version: bytes = b""
    delay_start_s: float = 0.0

    def __post_init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]

    def serve(self) -> None:
        time.sleep(self.delay_start_s)
        self.sock.listen(1)
        conn, _ = self.sock.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        reader = conn.makefile("rb")
        self.version = reader.readline()
        for line in self.extra_lines:
            conn.sendall(line.encode() + b"\r\n")
        for line, expect in self.script:
            for byte in (line + "\r\n").encode():
                conn.sendall(bytes([byte]))
            if expect is not None:
                self.replies.append(reader.readline().decode().rstrip("\r\n"))
        conn.close()
        self.sock.close()


def run_peer(peer: Peer, bot, game: Game):
    t = threading.Thread(target=peer.serve, daemon=True)
    t.start()
    summary = play(game, bot, "127.0.0.1", peer.port, connect_timeout=10)
    t.join(5)
    return summary


def test_client_plays_byte_by_byte_stream(hunl: Game) -> None:
    peer = Peer(HAND)
    summary = run_peer(peer, CallBot(), hunl)
    assert peer.version == b"VERSION:2.0.0\r\n"
    assert peer.replies == [f"{line}:{a}" for line, a in HAND if a is not None]
    assert summary.hands == 2 and summary.decisions == 7
    assert summary.chips_won == 100 - 20000  # won the checked-down hand, lost the all-in
    assert summary.bad_lines == 0 and summary.fallback_actions == 0


def test_client_skips_comments_and_bad_lines(hunl: Game) -> None:
    peer = Peer(HAND[:3], extra_lines=["# hello", "; hi", "MATCHSTATE:0:2:zz:8d9h|", "garbage"])
    summary = run_peer(peer, CallBot(), hunl)
    assert summary.bad_lines == 2
    assert len(peer.replies) == 2


class Exploding(BaseBot):
    def act(self, view: MatchState) -> Action:
        raise RuntimeError("boom")


class Overbetting(BaseBot):
    def act(self, view: MatchState) -> Action:
        return raise_to(10**6)


def test_bot_errors_and_illegal_actions_are_replaced(hunl: Game) -> None:
    peer = Peer(HAND[:3])
    summary = run_peer(peer, Exploding(), hunl)
    assert summary.fallback_actions == 2
    assert [r.rsplit(":", 1)[1] for r in peer.replies] == ["c", "c"]
    peer = Peer(HAND[:3])
    summary = run_peer(peer, Overbetting(), hunl)
    assert [r.rsplit(":", 1)[1] for r in peer.replies] == ["r20000", "r20000"]


def test_connect_retries_until_the_dealer_listens(hunl: Game) -> None:
    peer = Peer(HAND[:1], delay_start_s=0.4)
    summary = run_peer(peer, CallBot(), hunl)
    assert summary.hands == 0 and peer.version.startswith(b"VERSION")


def test_connect_gives_up_with_a_clear_error() -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(ConnectionError, match=f"could not connect to 127.0.0.1:{port} within 0.3 s"):
        connect("127.0.0.1", port, timeout_s=0.3)
