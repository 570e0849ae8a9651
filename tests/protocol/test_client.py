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
from protocol.state import Action, ActionKind, raise_to

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
    #: after the script, keep the connection open and silent this long before closing it
    silent_s: float = 0.0

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
        try:  # a client that ends the match at once (a state of another game) closes under us
            for line in self.extra_lines:
                conn.sendall(line.encode() + b"\r\n")
            for line, expect in self.script:
                for byte in (line + "\r\n").encode():
                    conn.sendall(bytes([byte]))
                if expect is not None:
                    self.replies.append(reader.readline().decode().rstrip("\r\n"))
            time.sleep(self.silent_s)
        except OSError:
            pass
        conn.close()
        self.sock.close()


def run_peer(peer: Peer, bot, game: Game, read_timeout: float | None = None):
    t = threading.Thread(target=peer.serve, daemon=True)
    t.start()
    summary = play(game, bot, "127.0.0.1", peer.port, connect_timeout=10, read_timeout=read_timeout)
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
    assert summary.ended == "complete" and summary.complete and not summary.in_hand


def test_a_close_in_the_middle_of_a_hand_is_a_lost_match_not_a_finished_one(hunl: Game) -> None:
    """The ACPC dealer ends a match by closing after a finished hand; closing while a hand is
    being played (the dealer killed while we think, or while we wait) is a lost connection."""
    for cut, betting in ((3, "cc/"), (4, "cc/c")):  # just after our action / while the opponent acts
        summary = run_peer(Peer(HAND[:cut]), CallBot(), hunl)
        assert summary.ended == "lost" and not summary.complete
        assert summary.last_hand == 2 and summary.last_betting == betting and summary.in_hand
        assert summary.error == "the dealer closed the connection"
    summary = run_peer(Peer(HAND[:9]), CallBot(), hunl)  # after hand 2 ended: a match of one hand
    assert summary.ended == "complete" and summary.hands == 1


def test_a_silent_dealer_ends_the_match_only_with_a_read_timeout(hunl: Game) -> None:
    # the peer closes after 3 s: a client still waiting then would call it "lost", not "silent"
    summary = run_peer(Peer(HAND[:2], silent_s=3.0), CallBot(), hunl, read_timeout=0.5)
    assert summary.ended == "silent" and "0.5 s" in summary.error
    summary = run_peer(Peer(HAND[:2], silent_s=0.8), CallBot(), hunl)  # no timeout: waits it out
    assert summary.ended == "lost" and summary.decisions == 1


def test_an_interrupted_match_ends_its_log_with_the_match_end_not_a_half_received_line(hunl: Game) -> None:
    """Ctrl-C or SIGTERM while the next state is half received: the log's last record is the
    match's end (what a person reading it looks for), and a line we cut is no dealer fault."""
    import structlog

    from protocol.client import play_session

    class Interrupted(BaseBot):
        def act(self, view: MatchState) -> Action:
            raise KeyboardInterrupt

    ours, dealer = socket.socketpair()
    dealer.sendall(f"{HAND[1][0]}\r\n{HAND[2][0][:20]}".encode())
    with structlog.testing.capture_logs() as logs:
        summary = play_session(ours, hunl, Interrupted())
    dealer.close()
    assert summary.ended == "interrupted"
    assert [entry["event"] for entry in logs] == ["match_not_finished"]
    # the dealer closing in the middle of a line still says so, before the match's end
    ours, dealer = socket.socketpair()
    dealer.sendall(f"{HAND[1][0]}\r\n{HAND[2][0][:20]}".encode())
    dealer.shutdown(socket.SHUT_WR)
    with structlog.testing.capture_logs() as logs:
        summary = play_session(ours, hunl, CallBot())
    dealer.close()
    assert summary.ended == "lost"
    assert [entry["event"] for entry in logs if entry["event"] != "startup"] == [
        "unterminated_line_at_eof",
        "match_not_finished",
    ]
    # a local match stopped on purpose: the line cut is ours again
    ours, dealer = socket.socketpair()
    dealer.sendall(f"{HAND[1][0]}\r\n{HAND[2][0][:20]}".encode())
    dealer.shutdown(socket.SHUT_WR)
    with structlog.testing.capture_logs() as logs:
        summary = play_session(ours, hunl, CallBot(), stopped=lambda: True)
    dealer.close()
    assert summary.ended == "interrupted"
    assert [entry["event"] for entry in logs if entry["event"] != "startup"] == ["match_stopped"]


@pytest.mark.parametrize(("cut", "code"), [(9, 0), (3, 3)])
def test_play_exit_code_tells_a_finished_match_from_a_lost_one(
    hunl: Game, cut: int, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent.cli.main import main

    peer = Peer(HAND[:cut])
    t = threading.Thread(target=peer.serve, daemon=True)
    t.start()
    assert main(["play", "--bot", "call", "--port", str(peer.port)]) == code
    t.join(5)
    out, err = capsys.readouterr()
    assert "hands=" in out
    if code:
        assert "the match did not finish (lost) in hand 2 at betting 'cc/'" in err
    else:
        assert "error" not in err


def test_a_close_before_any_state_is_a_lost_connection_not_a_match(hunl: Game, capsys: pytest.CaptureFixture[str]) -> None:
    """A dealer that takes the version line and closes (it died, or refused the seat) played no
    match: exit 3 with the reason, not 0 with hands=0 as if a match had finished."""
    from agent.cli.main import main

    summary = run_peer(Peer([], extra_lines=["# hello"]), CallBot(), hunl)  # a comment is no state
    assert summary.ended == "lost" and not summary.complete and summary.hands == 0 and summary.last_hand is None
    assert summary.error == "the dealer closed the connection before sending a state"
    peer = Peer([])
    t = threading.Thread(target=peer.serve, daemon=True)
    t.start()
    assert main(["play", "--bot", "call", "--port", str(peer.port)]) == 3
    t.join(5)
    assert peer.version == b"VERSION:2.0.0\r\n"
    out, err = capsys.readouterr()
    assert "hands=0" in out
    assert err.strip().splitlines()[-1] == (
        "deepstack play: error: the match did not finish (lost): the dealer closed the connection before sending a state"
    )


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


def test_the_states_of_another_shipped_game_end_the_match_at_once(hunl: Game, capsys: pytest.CaptureFixture[str]) -> None:
    """A seat started with --game hunl against a limit dealer: the first limit raise is not a
    no-limit state. Skipping it would leave the dealer waiting for our reply (its per-reply
    limit, 10 minutes by default) and every later line misread; the seat stops, saying why."""
    from agent.cli.main import main

    limit_hand = [("MATCHSTATE:0:2::8d9h|", None), ("MATCHSTATE:0:2:r:8d9h|", None), ("MATCHSTATE:0:2:rc/:8d9h|/TsQh8c", None)]
    summary = run_peer(Peer(limit_hand), CallBot(), hunl)
    assert summary.ended == "wrong_game" and summary.bad_lines == 1 and summary.decisions == 0
    assert "is not one of game hunl" in summary.error and "start the seat with --game hul" in summary.error
    peer = Peer(limit_hand)
    t = threading.Thread(target=peer.serve, daemon=True)
    t.start()
    assert main(["play", "--bot", "call", "--port", str(peer.port)]) == 2
    t.join(5)
    assert "the match did not finish (wrong_game) in hand 2 at betting ''" in capsys.readouterr().err
    peer = Peer(limit_hand[1:])  # the first state is another game's: no hand to name
    t = threading.Thread(target=peer.serve, daemon=True)
    t.start()
    assert main(["play", "--bot", "call", "--port", str(peer.port)]) == 2
    t.join(5)
    assert "the match did not finish (wrong_game): the dealer's state 'MATCHSTATE:0:2:r:8d9h|'" in capsys.readouterr().err


def test_bot_errors_and_illegal_actions_are_replaced(hunl: Game) -> None:
    peer = Peer(HAND[:3])
    summary = run_peer(peer, Exploding(), hunl)
    assert summary.fallback_actions == 2
    assert [r.rsplit(":", 1)[1] for r in peer.replies] == ["c", "c"]
    peer = Peer(HAND[:3])
    summary = run_peer(peer, Overbetting(), hunl)
    assert [r.rsplit(":", 1)[1] for r in peer.replies] == ["r20000", "r20000"]


def test_a_bot_error_facing_a_bet_folds_instead_of_calling_the_stack(hunl: Game) -> None:
    """A bug must not cost more than what is in the pot: facing an all-in, a failed or unusable
    decision folds (a call was the whole stack); with nothing to call it checks."""
    from protocol.client import safe_action
    from protocol.matchstate import parse_matchstate

    class Garbage(BaseBot):
        def act(self, view: MatchState) -> Action:
            return "call"  # type: ignore[return-value]

    shove = parse_matchstate("MATCHSTATE:0:0:r20000:7h2c|", hunl)
    assert [str(safe_action(bot, shove)[0]) for bot in (Exploding(), Garbage())] == ["f", "f"]
    checked_to = parse_matchstate("MATCHSTATE:0:0:c:7h2c|", hunl)
    assert [str(safe_action(bot, checked_to)[0]) for bot in (Exploding(), Garbage())] == ["c", "c"]


def test_a_sized_limit_raise_goes_out_as_r_alone(hul: Game) -> None:
    """The bot may give a limit raise its raise-to amount (legal); the wire form is ``r``."""
    from protocol.client import safe_action
    from protocol.matchstate import parse_matchstate

    class SizedLimitRaise(BaseBot):
        def act(self, view: MatchState) -> Action:
            return raise_to(view.state.raise_bounds()[0])  # type: ignore[index]

    view = parse_matchstate("MATCHSTATE:1:0::|8d9h", hul)
    action, replaced = safe_action(SizedLimitRaise(), view)
    assert str(action) == "r" and not replaced


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


def test_a_wrong_action_is_corrected_as_the_dealer_would_and_a_malformed_one_never_ends_the_match(hunl: Game, hul: Game) -> None:
    """A raise where none is allowed, and a call given a size, went out as a fold (the dealer makes them a
    call); a raise of NaN or None raised out of the match (a traceback, the seat dropped mid-hand); a plain int
    for the kind wrote a bare ``r``, a float size ``r600.0``."""
    from protocol.client import safe_action
    from protocol.matchstate import parse_matchstate

    def answer(action: object, line: str, game: Game) -> tuple[str, bool]:
        class Fixed(BaseBot):
            def act(self, view: MatchState) -> Action:
                return action  # type: ignore[return-value]

        sent, replaced = safe_action(Fixed(), parse_matchstate(line, game))
        return str(sent), replaced

    shove = "MATCHSTATE:0:0:r20000:7h2c|"
    assert answer(raise_to(20000), shove, hunl) == ("c", True)  # no raise left: the call it meant
    assert answer(Action(ActionKind.CALL, 300), "MATCHSTATE:0:0:r300:7h2c|", hunl) == ("c", False)  # size dropped
    assert answer(Action(ActionKind.CALL, None), "MATCHSTATE:0:0:r300:7h2c|", hunl) == ("c", False)  # type: ignore[arg-type]
    assert answer(Action(ActionKind.RAISE, None), "MATCHSTATE:1:0::|8d9h", hul) == ("r", False)  # type: ignore[arg-type]
    assert answer(raise_to(10**400), "MATCHSTATE:1:0::|7h2c", hunl) == ("r20000", True)  # clamped, not an OverflowError
    assert answer(Action(ActionKind.RAISE), "MATCHSTATE:1:0:rrr:|8d9h", hul) == ("c", True)  # the cap reached
    assert answer(Action(ActionKind.FOLD), "MATCHSTATE:0:0:c:7h2c|", hunl) == ("c", True)  # nothing to call
    opening = "MATCHSTATE:1:0::|7h2c"
    assert answer(Action(2, 600), opening, hunl) == ("r600", False)  # type: ignore[arg-type]
    assert answer(Action(ActionKind.RAISE, 600.0), opening, hunl) == ("r600", False)  # type: ignore[arg-type]
    checked_to = "MATCHSTATE:0:0:cc/:7h2c|/2s3d4h"
    for size in (float("nan"), None, "600", float("inf")):  # no usable decision: check, or fold to a bet
        assert answer(Action(ActionKind.RAISE, size), checked_to, hunl) == ("c", True)  # type: ignore[arg-type]
        assert answer(Action(ActionKind.RAISE, size), shove, hunl) == ("f", True)  # type: ignore[arg-type]
