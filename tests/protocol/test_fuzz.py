"""Fuzzing the two ends of the wire that face a stranger: our client (what ``deepstack play`` runs)
against a hostile dealer, and our dealer against a hostile client.

Hostile lines are made from real ones: hands dealt and played at random by the rules engine,
then truncated, padded past the line limit, moved to another game, given illegal betting, bad
or repeated cards, NUL and other control bytes, invalid UTF-8, damaged fields, or replaced by
junk; streams of them are cut at arbitrary points, one byte per read or many lines per read.
The line-level layers (``LineBuffer``, the client's line handler, the dealer's reply judge and
action correction) take most of the lines in-process; real loopback TCP takes fewer, heavier
examples, through ``play``, ``deepstack play`` and ``Dealer.run``.

Properties: no uncaught exception, no hang (every socket has a timeout), every line either
accepted or rejected with a logged reason, every action the client sends legal, every action the
dealer applies legal, lines and buffers bounded. Each test counts the lines it tried and their
outcomes; with ``FUZZ_COUNTS=path`` set the counts are written there as JSON when the module ends.
Hypothesis runs derandomized (the same examples every run) and without its example database.
"""

from __future__ import annotations

import json
import os
import random
import re
import shlex
import socket
import sys
import threading
import tracemalloc
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from protocol.actions import correct_action
from protocol.bot import BaseBot
from protocol.client import MAX_LINE_BYTES, ClientSummary, LineBuffer, LineTooLong, _handle_line, play, shipped_game_of
from protocol.gamedef import Game, load_game
from protocol.judge import judge_response
from protocol.matchstate import MatchState, MatchStateError, format_matchstate, parse_matchstate
from protocol.state import CALL, FOLD, LIMIT_RAISE, Action, ActionKind, HandState, raise_to
from tests.protocol.harness import DealerRun, ScriptedSeat, calls, run_dealer

GAME_NAMES = ("hunl", "hul", "leduc", "leduc-limit")
GAMES = {name: load_game(name) for name in GAME_NAMES}
DECKS = {name: list(game.deck()) for name, game in GAMES.items()}

#: lines tried and their outcomes, per target; written to $FUZZ_COUNTS when the module ends
COUNTS: defaultdict[str, Counter[str]] = defaultdict(Counter)

FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
SEEDS = st.integers(min_value=0, max_value=2**63)


@pytest.fixture(scope="module", autouse=True)
def _write_counts() -> Iterator[None]:
    yield
    path = os.environ.get("FUZZ_COUNTS")
    if not path:
        return
    report: dict[str, dict[str, int]] = {key: dict(sorted(c.items())) for key, c in sorted(COUNTS.items())}
    for side in ("client", "dealer"):
        report[f"{side}.total"] = {"lines": sum(c["lines"] for key, c in COUNTS.items() if key.startswith(side + "."))}
    report["total"] = {"lines": sum(c["lines"] for c in COUNTS.values())}
    Path(path).write_text(json.dumps(report, indent=1) + "\n")


# ---------------------------------------------------------------------- real lines, then hostile ones
def random_action(state: HandState, rng: random.Random) -> Action:
    """A legal action, calls and small raises weighted up so that some hands run long."""
    kinds = state.legal_kinds()
    kind = rng.choices(kinds, weights=[{ActionKind.FOLD: 1, ActionKind.CALL: 4, ActionKind.RAISE: 3}[k] for k in kinds])[0]
    if kind is ActionKind.FOLD:
        return FOLD
    if kind is ActionKind.CALL:
        return CALL
    if state.game.is_limit:
        return LIMIT_RAISE
    low, high = state.raise_bounds() or (0, 0)
    return raise_to(rng.choice([low, low, high, rng.randint(low, high)]))


def random_hand(game: Game, rng: random.Random, hand_id: int) -> list[HandState]:
    """Every state of one hand, dealt and played at random by the rules engine as our dealer does."""
    deck = list(DECKS[game.name])
    rng.shuffle(deck)
    k = game.num_hole_cards
    holes = [tuple(deck[p * k : (p + 1) * k]) for p in range(game.num_players)]
    board = deck[game.num_players * k :][: game.total_board_cards]
    state = HandState.initial(game, hand_id, hole_cards=holes).with_board(board[: game.board_cards_through(0)])
    states = [state]
    while not state.finished:
        state = state.apply(random_action(state, rng))
        if state.board_cards_needed:
            state = state.with_board(board[: game.board_cards_through(state.round)])
        states.append(state)
    return states


def dealer_lines(game: Game, rng: random.Random, viewer: int, hands: int) -> list[str]:
    """What a dealer sends ``viewer`` over ``hands`` hands (hand numbers not always from 0)."""
    first = rng.choice([0, rng.randrange(10**6)])
    return [format_matchstate(s, viewer) for h in range(hands) for s in random_hand(game, rng, first + h)]


#: real lines of every game, both seats, a few hands each: the "line of another game" a hostile peer sends
POOL = [
    line.encode()
    for name in GAME_NAMES
    for viewer in (0, 1)
    for line in dealer_lines(GAMES[name], random.Random(viewer), viewer, 3)
]


CONTROL = [bytes([b]) for b in (*range(0, 10), *range(11, 32), 127)]  # every control byte but the line end
INVALID_UTF8 = [b"\xff", b"\xfe", b"\x80", b"\xc3\x28", b"\xe2\x28\xa1", b"\xf0\x28\x8c\xbc", b"\xc0\xaf", b"\xed\xa0\x80"]
#: '²' (a digit to str.isdigit(), not to int()), Arabic 3, fullwidth 1, right-to-left override, é, a playing card
NON_ASCII = [c.encode() for c in ("\u00b2", "\u0663", "\uff11", "\u202e", "\u00e9", "\U0001f0a1")]
NUMBERS = ["", "-1", "+1", "01", "2", "3", " 0", "0 ", "0x1", "1e3", "9" * 19, "9" * 40, "4294967296", "\u00b2", "\u0663"]
TOKENS = "f c r r0 r1 r-5 r+5 r99 r20000 r20001 k b x / // rr cf".split() + ["r" + "9" * 25]
CARD_CHARS = "23456789TJQKAtjqkacdhsCDHSxX10 ?|/"


def mutate(line: bytes, rng: random.Random, others: list[bytes]) -> bytes:
    """One hostile variant of a real line (``others``: real lines of other games, or other states)."""
    how = rng.randrange(16)
    fields = line.split(b":")
    if how == 0:  # truncated anywhere
        return line[: rng.randrange(len(line) + 1)]
    if how == 1:  # past the line limit, just or far
        return line + b"x" * (MAX_LINE_BYTES - len(line) + rng.choice([1, 2, rng.randrange(1, 4 * MAX_LINE_BYTES)]))
    if how == 2:  # a line of another game, or another state of this one
        return rng.choice(others) if others else line
    if how == 3 and len(fields) >= 5:  # illegal betting: a token inserted or replacing the betting
        betting = fields[3]
        at = rng.randrange(len(betting) + 1)
        token = rng.choice(TOKENS).encode() * rng.choice([1, 1, 2, 70])
        fields[3] = betting[:at] + token + betting[at:] if rng.random() < 0.7 else token
        return b":".join(fields)
    if how == 4 and len(fields) >= 5:  # bad cards: a card changed, repeated, dropped or one too many
        cards = bytearray(fields[4])
        op = rng.randrange(4)
        if op == 0 and cards:
            at = rng.randrange(len(cards))
            cards[at] = ord(rng.choice(CARD_CHARS))
        elif op == 1 and len(cards) >= 2:
            at = rng.randrange(0, len(cards) - 1)
            cards += cards[at : at + 2]
        elif op == 2 and cards:
            del cards[rng.randrange(len(cards))]
        else:
            cards += rng.choice([b"As", b"/Kd", b"|2c", b"/", b"|"])
        fields[4] = bytes(cards)
        return b":".join(fields)
    if how == 5 and len(fields) >= 3:  # position or hand number out of range, signed, huge, non-ASCII
        fields[rng.choice([1, 2])] = rng.choice(NUMBERS).encode() if rng.random() < 0.9 else b"9" * rng.randrange(20, 3000)
        return b":".join(fields)
    if how == 6:  # control bytes, NUL among them, anywhere
        out = bytearray(line)
        for _ in range(rng.randint(1, 4)):
            out[rng.randrange(len(out) + 1) : 0] = rng.choice(CONTROL)
        return bytes(out)
    if how == 7:  # invalid UTF-8 or non-ASCII characters anywhere
        out = bytearray(line)
        out[rng.randrange(len(out) + 1) : 0] = rng.choice(INVALID_UTF8 + NON_ASCII)
        return bytes(out)
    if how == 8:  # a field dropped, repeated, or the separator changed
        if len(fields) > 1 and rng.random() < 0.5:
            del fields[rng.randrange(len(fields))]
        else:
            at = rng.randrange(len(fields))
            fields.insert(at, fields[at])
        return rng.choice([b":", b":", b";", b"::"]).join(fields)
    if how == 9:  # the prefix spelt otherwise
        return rng.choice([b"matchstate", b"MATCHSTATES", b"MATCH", b"", b" MATCHSTATE", b"VERSION"]) + line[len(b"MATCHSTATE") :]
    if how == 10:  # junk
        return bytes(rng.choice([*range(0, 10), *range(11, 256)]) for _ in range(rng.randrange(120)))
    if how == 11:  # comments and empty lines, which are skipped
        return rng.choice([b"#", b";", b"", b"\r", b"# " + line, b";" + line[:10]])
    if how == 12:  # several of the above at once
        for _ in range(rng.randint(2, 4)):
            line = mutate(line, rng, others)
        return line
    return line  # unchanged: a real line, as most lines of a match are


def cut(stream: bytes, rng: random.Random) -> list[bytes]:
    """The stream as TCP reads might deliver it: cut at random points, byte by byte, or whole."""
    how = rng.randrange(4)
    if how == 0:
        return [stream]
    if how == 1 and len(stream) < 8_000:  # longer streams: the random cuts below
        return [stream[i : i + 1] for i in range(len(stream))]
    if how == 2:
        return [stream[i : i + 65536] for i in range(0, len(stream), 65536)]
    points = sorted(rng.sample(range(1, len(stream)), min(len(stream) - 1, rng.randint(1, 300)))) if len(stream) > 1 else []
    return [stream[a:b] for a, b in zip([0, *points], [*points, len(stream)])]


def as_stream(lines: list[bytes], rng: random.Random) -> bytes:
    return b"".join(line + rng.choice([b"\r\n", b"\r\n", b"\n"]) for line in lines)


def hostile_dealer_stream(game: Game, rng: random.Random, hands: int) -> bytes:
    """What a hostile dealer sends one seat: real states of ``hands`` hands, most of them mutated."""
    viewer = rng.randrange(game.num_players)
    lines = [line.encode() for line in dealer_lines(game, rng, viewer, hands)]
    rate = rng.choice([0.05, 0.3, 0.7, 1.0])
    out = [mutate(line, rng, POOL + lines) if rng.random() < rate else line for line in lines]
    return as_stream(out, rng)


# ---------------------------------------------------------------------- what our side must do
class WildBot(BaseBot):
    """The bot seat of the client filled with chaos (illegal actions, non-actions, exceptions), so
    that the client's guarantee of a legal reply is tested with more than a well-behaved bot."""

    name = "wild"

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def act(self, view: MatchState) -> Action:
        roll = self.rng.random()
        if roll < 0.05:
            raise RuntimeError("the wild bot fails")
        if roll < 0.1:
            return "r100"  # type: ignore[return-value]  # not an Action at all
        kind = self.rng.choice(list(ActionKind))
        return Action(kind, self.rng.choice([0, -1, 1, 199, 200, 5000, 20000, 10**9]))


def reply_action(text: str, game: Game) -> Action:
    """The action of a reply's last field, as the wire writes it (the client writes only these forms)."""
    if text in ("f", "c"):
        return FOLD if text == "f" else CALL
    if game.is_limit:
        assert text == "r", text
        return LIMIT_RAISE
    m = re.fullmatch(r"r([0-9]+)", text)
    assert m, text
    return raise_to(int(m.group(1)))


def check_client_reply(line: str, reply: str, game: Game) -> None:
    """A reply is the state line as received, then a legal action for that state."""
    assert reply.startswith(line + ":"), (line, reply)
    view = parse_matchstate(line, game)
    assert view.is_our_turn, line
    action = reply_action(reply[len(line) + 1 :], game)
    assert view.state.is_legal(action), (line, reply)


def client_outcome(line: str | LineTooLong, game: Game, bot: BaseBot, summary: ClientSummary, counts: Counter[str]) -> str | None:
    """Run one line through the client's handler; count what became of it; check the reply."""
    counts["lines"] += 1
    bad = summary.bad_lines
    reply = _handle_line(line, game, bot, summary)
    if isinstance(line, LineTooLong):
        counts["rejected_too_long"] += 1
        assert summary.bad_lines == bad + 1 and reply is None
        return None
    # at most MAX_LINE_BYTES bytes; a byte outside ASCII reads as the 4 characters \xNN
    assert line.isascii() and len(line) <= 4 * MAX_LINE_BYTES, line
    if not line or line[0] in "#;":
        counts["skipped_comment_or_empty"] += 1
    elif summary.bad_lines > bad:
        counts["rejected_bad_matchstate"] += 1
    else:
        counts["accepted"] += 1
    if reply is not None:
        counts["answered_legal_action"] += 1
        check_client_reply(line, reply, game)
    return reply


# ---------------------------------------------------------------------- the client, in-process
@settings(FUZZ, max_examples=600)
@given(seed=SEEDS, game_name=st.sampled_from(GAME_NAMES))
@example(seed=1406, game_name="hunl")  # a line of 4096 bytes with non-ASCII ones: longer as text
def test_client_line_handling_survives_hostile_streams(seed: int, game_name: str) -> None:
    """The client's reading path (``LineBuffer``, then the line handler and the bot) on hostile
    streams cut at arbitrary points: every line accepted or rejected with a logged reason, every
    reply legal, the buffer never above the line limit."""
    rng = random.Random(seed)
    game = GAMES[game_name]
    stream = hostile_dealer_stream(game, rng, hands=rng.randint(4, 20))
    counts = COUNTS["client.in_process"]
    summary = ClientSummary()
    bot = WildBot(seed)
    bot.start_match(game)
    buffer = LineBuffer()
    seen = 0
    with structlog.testing.capture_logs() as logs:
        for chunk in cut(stream, rng):
            for line in buffer.feed(chunk):
                seen += 1
                client_outcome(line, game, bot, summary, counts)
            assert len(buffer.pending) <= MAX_LINE_BYTES
    assert seen == stream.count(b"\n") and buffer.pending == b""
    rejections = [e for e in logs if e["event"] in ("bad_matchstate", "line_too_long")]
    assert len(rejections) == summary.bad_lines
    assert all(e["log_level"] == "error" and (e.get("reason") or e.get("limit")) for e in rejections)


#: any Unicode text, the characters of the line grammar (and look-alike digits: '²', Arabic 3, fullwidth 1) weighted up
LOOKALIKES = "\u00b2\u0663\uff11"
WIRE_TEXT = st.text(st.characters() | st.sampled_from("0123456789:/|rcf \r\x00AKQJT98765432shdc" + LOOKALIKES), max_size=120)
#: the fields of a line, each from its own part of the grammar or from anything
NUMBER_FIELD = st.text("0123456789+- " + LOOKALIKES, max_size=5)
BETTING_FIELD = st.text("rcf/0123456789" + LOOKALIKES, max_size=30)
CARDS_FIELD = st.text("AKQJT98765432akqjtshdcSHDC|/x ", max_size=24)
ANY_FIELD = st.text(max_size=20)


@settings(FUZZ, max_examples=1000)
@given(
    raw=WIRE_TEXT | st.binary(max_size=120).map(lambda b: b.decode("latin-1")),
    fields=st.tuples(NUMBER_FIELD | ANY_FIELD, NUMBER_FIELD | ANY_FIELD, BETTING_FIELD | ANY_FIELD, CARDS_FIELD | ANY_FIELD),
    extra=st.lists(ANY_FIELD, max_size=2),
    game_name=st.sampled_from(GAME_NAMES),
)
def test_matchstate_parser_refuses_any_text_with_its_own_error(
    raw: str, fields: tuple[str, ...], extra: list[str], game_name: str
) -> None:
    """Any text at all (any Unicode, not only what ``LineBuffer`` passes on), raw or built field by
    field from the line grammar: the parser either reads it, and formats it back to the same state,
    or refuses it with a ``MatchStateError`` saying why, never another exception."""
    game = GAMES[game_name]
    counts = COUNTS["client.parser_any_text"]
    for line in (raw, "MATCHSTATE:" + raw, ":".join(("MATCHSTATE", *fields)), ":".join(("MATCHSTATE", *fields, *extra))):
        try:
            counts["lines"] += 1
            view = parse_matchstate(line, game)
        except MatchStateError as exc:
            assert exc.reason and exc.line == line
            counts["rejected"] += 1
            continue
        counts["accepted"] += 1
        assert parse_matchstate(view.to_line(), game).state == view.state


def test_line_buffer_memory_is_bounded_by_the_line_limit() -> None:
    """16 MB without a line end, in 64 KB reads, then a real line: one report, the real line
    whole, and the buffer's memory stays near one read, not the 16 MB."""
    buffer = LineBuffer()
    tracemalloc.start()
    try:
        reports = [x for _ in range(256) for x in buffer.feed(b"A" * 65536)]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(reports) == 1 and isinstance(reports[0], LineTooLong) and reports[0].head.startswith("AAAA")
    assert str(reports[0]).startswith(f"a line longer than {MAX_LINE_BYTES} bytes")
    assert peak < 1_000_000 and len(buffer.pending) == 0
    assert buffer.feed(b"A\r\nMATCHSTATE:0:0::AsKs|\r\n") == ["MATCHSTATE:0:0::AsKs|"]  # the rest of the long line skipped
    line = "x" * MAX_LINE_BYTES  # exactly at the limit: still a line
    assert LineBuffer().feed(line.encode() + b"\n") == [line]
    COUNTS["client.in_process"]["lines"] += 3
    COUNTS["client.in_process"]["rejected_too_long"] += 1
    COUNTS["client.in_process"]["accepted"] += 2


# ---------------------------------------------------------------------- the client, over TCP
class HostileDealer:
    """The dealer's end of a loopback connection, played by the fuzzer: it sends the chunks of a
    hostile stream (one ``sendall`` each), reads whatever the client writes, then closes."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(20)
        self.port = self.listener.getsockname()[1]
        self.received = b""
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        finally:
            self.listener.close()
        with conn:
            conn.settimeout(20)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            reader = threading.Thread(target=self._read, args=(conn,), daemon=True)
            reader.start()
            try:
                for chunk in self.chunks:
                    conn.sendall(chunk)
                conn.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            reader.join(20)

    def _read(self, conn: socket.socket) -> None:
        parts = []
        try:
            while data := conn.recv(65536):
                parts.append(data)
        except OSError:
            pass
        self.received = b"".join(parts)

    def replies(self) -> list[str]:
        self.thread.join(20)
        assert not self.thread.is_alive(), "the hostile dealer did not finish"
        lines = self.received.decode("ascii").split("\r\n")
        assert lines[0] == "VERSION:2.0.0" and lines[-1] == ""
        return lines[1:-1]


def expected_client(stream: bytes, game: Game) -> tuple[list[str], int, str]:
    """From the stream alone: the lines the client must answer, how many it must reject, and
    how the match ends: ``wrong_game`` at the first rejected line that is a state of another
    shipped game, else ``lost`` or ``complete`` as the last state it accepted was in the middle
    of a hand or not (``lost`` when it accepted none)."""
    answer, bad, in_hand, states = [], 0, False, 0
    for line in LineBuffer().feed(stream):
        if isinstance(line, LineTooLong):
            bad += 1
            continue
        if not line or line[0] in "#;":
            continue
        try:
            view = parse_matchstate(line, game)
        except MatchStateError:
            bad += 1
            if shipped_game_of(line, game) is not None:
                return answer, bad, "wrong_game"
            continue
        in_hand, states = not view.state.finished, states + 1
        if view.is_our_turn:
            answer.append(line)
    return answer, bad, ("lost" if in_hand or not states else "complete")


@settings(FUZZ, max_examples=40)
@given(seed=SEEDS, game_name=st.sampled_from(GAME_NAMES))
def test_client_over_tcp_answers_legally_and_ends_cleanly(seed: int, game_name: str) -> None:
    """``play`` against a hostile dealer on loopback: it answers exactly the lines that are its
    turn, each with a legal action, counts the rejected ones, and ends when the dealer closes
    (``complete`` or ``lost``, never a hang: a read timeout stands guard)."""
    rng = random.Random(seed)
    game = GAMES[game_name]
    stream = hostile_dealer_stream(game, rng, hands=rng.randint(10, 30))
    peer = HostileDealer(cut(stream, rng))
    with structlog.testing.capture_logs():
        summary = play(game, WildBot(seed), "127.0.0.1", peer.port, connect_timeout=10, read_timeout=20)
    replies = peer.replies()
    answer, bad, ended = expected_client(stream, game)
    assert [r.rsplit(":", 1)[0] for r in replies] == answer
    for line, reply in zip(answer, replies):
        check_client_reply(line, reply, game)
    assert summary.bad_lines == bad and summary.decisions == len(answer)
    assert summary.ended == ended, summary
    counts = COUNTS["client.tcp"]
    counts["lines"] += stream.count(b"\n")
    counts["rejected"] += bad
    counts["answered_legal_action"] += len(answer)
    counts[f"ended_{summary.ended}"] += 1


@settings(FUZZ, max_examples=12)
@given(seed=SEEDS)
def test_deepstack_play_ends_with_a_documented_exit_status(
    seed: int, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command itself (``deepstack play``, the random bot) against a hostile dealer: exit 0 when
    the dealer closes after a finished hand, 3 (with the hand named) in the middle of one, 2 at a
    state of another shipped game."""
    from agent.cli.main import main

    rng = random.Random(seed)
    game_name = rng.choice(GAME_NAMES)
    stream = hostile_dealer_stream(GAMES[game_name], rng, hands=rng.randint(1, 5))
    if rng.random() < 0.5:  # end in the middle of a hand: the last line a real unfinished state
        unfinished = [format_matchstate(s, 0) for s in random_hand(GAMES[game_name], rng, 99)[:-1]]
        stream += rng.choice(unfinished).encode() + b"\r\n"
    config = tmp_path_factory.mktemp("play") / "config.yaml"
    config.write_text("logging: {level: error}\nclient: {connect_timeout_s: 10, read_timeout_s: 20}\n")
    peer = HostileDealer(cut(stream, rng))
    capsys.readouterr()
    code = main(["play", "--game", game_name, "--bot", "random", "--port", str(peer.port), "--config", str(config)])
    out, err = capsys.readouterr()
    answer, bad, ended = expected_client(stream, GAMES[game_name])
    assert len(peer.replies()) == len(answer)
    assert code == {"complete": 0, "lost": 3, "wrong_game": 2}[ended], err
    assert "hands=" in out
    if code:
        assert f"deepstack play: error: the match did not finish ({ended})" in err
    counts = COUNTS["client.cli"]
    counts["lines"] += stream.count(b"\n")
    counts["rejected"] += bad
    counts["answered_legal_action"] += len(answer)
    counts[f"exit_{code}"] += 1


def test_client_skips_an_oversized_line_and_plays_on(hunl: Game) -> None:
    """Regression (fuzzing): the client buffered a line without end without limit; now a 1 MB line
    is one bad line, logged, and the state after it is answered."""
    line = "MATCHSTATE:1:2::|8d9h"  # position 1 acts first in hold'em
    peer = HostileDealer([b"MATCHSTATE:1:1::" + b"9" * 1_000_000 + b"\r\n", line.encode() + b"\r\n"])
    with structlog.testing.capture_logs() as logs:
        summary = play(hunl, WildBot(1), "127.0.0.1", peer.port, connect_timeout=10, read_timeout=20)
    assert summary.bad_lines == 1 and summary.decisions == 1
    assert [e["event"] for e in logs if e["log_level"] == "error"][:1] == ["line_too_long"]
    assert [r.rsplit(":", 1)[0] for r in peer.replies()] == [line]


# ---------------------------------------------------------------------- the dealer, in-process
#: action texts beside the plain ones: case, spacing, leading zeros, signs, extra fields
ODD_ACTIONS = [
    "",
    "F",
    "C",
    "R300",
    "b300",
    " r 300",
    "r\t300",
    "r0300",
    "r" + "0" * 30 + "250",
    "c:extra",
    "r300:r400",
    "r-" + "9" * 40,
]


def hostile_reply(state: HandState, actor: int, rng: random.Random, others: list[bytes]) -> bytes:
    """One line a hostile client might send when ``actor`` is to act in ``state``."""
    echo = format_matchstate(state, actor).encode()
    low_high = state.raise_bounds()
    legal = ["c", "f" if state.can_fold() else "c"]
    if low_high:
        legal += ["r" if state.game.is_limit else f"r{rng.randint(*low_high)}"]
    action = rng.choice([*legal, *TOKENS, *ODD_ACTIONS, "r" + "9" * rng.randrange(1, 6000)]).encode()
    if rng.random() < 0.25:
        action = mutate(action, rng, [])
    how = rng.randrange(10)
    if how < 5:
        return echo + b":" + action  # the state sent, and an action legal or not
    if how == 5:
        return echo  # no action part
    if how == 6:
        return mutate(echo, rng, others) + b":" + action  # a damaged state
    return mutate(echo + b":" + action, rng, others)


def check_correction(state: HandState, text: str | None, counts: Counter[str]) -> None:
    """The dealer's correction of an action text is legal, and flagged whenever it is not what was written."""
    correction = correct_action(state, text)
    assert state.is_legal(correction.action), (text, correction)
    state.apply(correction.action)
    if correction.corrected:
        counts["action_corrected_with_warning"] += 1
        assert all(w for w in correction.warnings)
    else:
        counts["action_taken_as_sent"] += 1
        written = (text or "")[:1].lower()
        kind = {"f": ActionKind.FOLD, "c": ActionKind.CALL, "k": ActionKind.CALL}.get(written, ActionKind.RAISE)
        assert correction.action.kind is kind, (text, correction)


#: the count of each warning of an ignored reply, by the warning's start
IGNORED = {
    "bad state format in resp": "ignored_bad_state",
    "ignoring un-requested re": "ignored_unrequested",
    "ignoring response: a lin": "ignored_too_long",
}


@settings(FUZZ, max_examples=300)
@given(seed=SEEDS, game_name=st.sampled_from(GAME_NAMES))
def test_dealer_reply_judging_and_correction_survive_hostile_lines(seed: int, game_name: str) -> None:
    """The dealer's reading of a seat's replies (``LineBuffer``, ``judge_response``,
    ``correct_action``) at random decisions: every line a comment, ignored with a warning, or an
    action that is corrected to a legal one (with a warning when changed)."""
    rng = random.Random(seed)
    game = GAMES[game_name]
    states = [s for s in random_hand(game, rng, rng.randrange(1000)) if not s.finished]
    counts = COUNTS["dealer.in_process"]
    others = POOL + [format_matchstate(s, p).encode() for s in states for p in (0, 1)]
    for state in states:
        actor = state.current_player
        assert actor is not None
        lines = [hostile_reply(state, actor, rng, others) for _ in range(rng.randint(10, 40))]
        stream = as_stream(lines, rng)
        buffer = LineBuffer()
        for chunk in cut(stream, rng):
            for line in buffer.feed(chunk):
                counts["lines"] += 1
                response = judge_response(line, state, actor)
                if response.kind == "comment":
                    counts["comment_skipped"] += 1
                elif response.kind == "ignored":
                    assert response.warning
                    counts[IGNORED[response.warning[:24]]] += 1
                else:
                    assert response.kind == "action" and isinstance(line, str)
                    counts["reply_accepted"] += 1
                    check_correction(state, response.action_text, counts)
            assert len(buffer.pending) <= MAX_LINE_BYTES


@settings(FUZZ, max_examples=800)
@given(text=WIRE_TEXT, seed=SEEDS, game_name=st.sampled_from(GAME_NAMES))
def test_action_correction_of_any_text_is_legal(text: str, seed: int, game_name: str) -> None:
    """Any action text at all (any Unicode): the dealer's correction is a legal action."""
    rng = random.Random(seed)
    states = [s for s in random_hand(GAMES[game_name], rng, 0) if not s.finished]
    state = rng.choice(states)
    counts = COUNTS["dealer.action_any_text"]
    for first in ("", "r", "R", "b", "f", "c"):
        counts["lines"] += 1
        check_correction(state, first + text, counts)


@settings(FUZZ, max_examples=150)
@given(digits=st.integers(min_value=1, max_value=6000), first=st.sampled_from("0123456789-+"))
def test_numbers_of_any_length_are_read_or_refused_with_a_reason(digits: int, first: str, hunl: Game) -> None:
    """Positions, hand numbers and raise sizes of any length, past Python's 4300-digit limit on
    int(): the parser refuses them with its own error, the dealer clamps a raise to the legal range."""
    number = first + "9" * (digits - 1)
    for line in (f"MATCHSTATE:{number}:1::AsKs|", f"MATCHSTATE:0:{number}::AsKs|", f"MATCHSTATE:1:1:r{number}:|AsKs"):
        COUNTS["client.parser_numbers"]["lines"] += 1
        try:
            parse_matchstate(line, hunl)
            COUNTS["client.parser_numbers"]["accepted"] += 1
        except MatchStateError as exc:
            assert exc.reason
            COUNTS["client.parser_numbers"]["rejected"] += 1
    COUNTS["dealer.action_numbers"]["lines"] += 1
    check_correction(HandState.initial(hunl), "r" + number, COUNTS["dealer.action_numbers"])


# ---------------------------------------------------------------------- the dealer, over TCP
class HostileSeat:
    """A client that hits our dealer: a hostile version line, then at each of its turns a burst of
    hostile lines before (usually) a reply with an action legal or not; now and then junk out of
    turn; in some matches it hangs up at a decision. Counts every line it sends."""

    def __init__(self, seed: int, burst: int, version: bytes = b"VERSION:2.0.0\r\n", hang_up: bool = False) -> None:
        self.rng = random.Random(seed)
        self.burst = burst
        self.version = version
        self.hang_up = hang_up
        self.sent = 0
        self.hung_up = False
        #: what went wrong on this side (a dealer line that does not parse, ...): checked by the test
        self.problems: list[str] = []

    def run(self, game: Game, port: int) -> None:
        rng = self.rng
        others = POOL
        sock = socket.create_connection(("127.0.0.1", port), timeout=20)
        try:
            self._send(sock, [self.version])
            self.sent += self.version.count(b"\n")
            buffer = LineBuffer()
            seen: list[bytes] = []
            while data := sock.recv(65536):
                for line in buffer.feed(data):
                    if not isinstance(line, str) or not line.isprintable():
                        self.problems.append(f"the dealer sent {line!r}")
                        return
                    view = parse_matchstate(line, game)  # the dealer's own lines must all parse
                    seen.append(line.encode())
                    if not view.is_our_turn:
                        if rng.random() < 0.05:  # junk out of turn, read at its next turn
                            self._lines(sock, [mutate(line.encode(), rng, others)])
                        continue
                    if self.hang_up and rng.random() < 0.1:
                        self.hung_up = True
                        return
                    state, actor = view.state, view.position
                    lines = [hostile_reply(state, actor, rng, others + seen) for _ in range(rng.randint(0, self.burst))]
                    # the turn ends with the state sent and an action, legal or not (the dealer corrects it)
                    lines.append(f"{line}:{rng.choice(['c', 'c', 'f', 'r', 'r250', *TOKENS])}".encode())
                    self._lines(sock, lines)
        except OSError:  # the dealer ended the match
            pass
        except Exception as exc:  # reported in the test's thread
            self.problems.append(repr(exc))
        finally:
            sock.close()

    def _lines(self, sock: socket.socket, lines: list[bytes]) -> None:
        stream = as_stream(lines, self.rng)
        self.sent += stream.count(b"\n")
        self._send(sock, cut(stream, self.rng))

    def _send(self, sock: socket.socket, chunks: list[bytes]) -> None:
        for chunk in chunks:
            sock.sendall(chunk)


#: what the dealer may end a match with when the hostile seat hangs up or sends no usable version
CLEAN_ABORTS = (
    "could not get action from seat 1",
    "could not send state to seat 1",
    "invalid version string",
    "could not read version string from seat 1",
)


def check_dealer_run(run: DealerRun, seat: HostileSeat, hands: int, counts: Counter[str]) -> None:
    """Every line the dealer read from the hostile seat has one logged outcome; the match either
    finished with a zero-sum score or ended with a clear error; what it printed is printable."""
    assert not seat.problems, seat.problems
    err = run.err.splitlines()
    assert all(l.isascii() and l.isprintable() for l in err), [l for l in err if not l.isprintable()][:3]
    read = [l.split(" ", 4)[4] for l in err if l.startswith("FROM 1 at ")]
    too_long = sum(1 for l in err if l.startswith("WARNING: ignoring response: a line longer than"))
    ignored = too_long + sum(
        1 for l in err if l.startswith(("WARNING: bad state format in response (", "WARNING: ignoring un-requested response ("))
    )
    assert run.result.seats[0].ignored == ignored
    comments = sum(1 for l in read if l[:1] in ("#", ";"))
    decisions = run.result.seats[0].decisions
    assert len(read) + too_long == comments + ignored + decisions
    assert len(read) + too_long <= seat.sent
    assert run.result.seats[1].corrections == 0
    corrections = sum(1 for l in err if l.startswith("WARNING:")) - ignored
    assert corrections >= run.result.seats[0].corrections
    if run.result.ok:
        states = [l for l in run.log.splitlines() if l.startswith("STATE:")]
        assert len(states) == hands and run.out.startswith("SCORE:")
        a, b = (float(x) for x in run.out.split(":")[1].split("|"))
        assert a + b == 0
        assert not seat.hung_up
    else:
        assert run.result.error and run.result.error.startswith(CLEAN_ABORTS), run.result.error
        assert f"ERROR: {run.result.error}" in err
    counts["lines"] += seat.sent
    counts["read_by_dealer"] += len(read) + too_long
    counts["comment_skipped"] += comments
    counts["ignored_with_warning"] += ignored
    counts["ignored_too_long"] += too_long
    counts["reply_accepted"] += decisions
    counts["reply_corrected"] += run.result.seats[0].corrections
    counts["match_finished" if run.result.ok else "match_aborted_cleanly"] += 1


@settings(FUZZ, max_examples=30)
@given(seed=SEEDS, game_name=st.sampled_from(GAME_NAMES))
def test_dealer_over_tcp_keeps_going_or_ends_cleanly(seed: int, game_name: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """``Dealer.run`` with a hostile client in seat 1 and a calling one in seat 2, on loopback."""
    rng = random.Random(seed)
    hands = rng.randint(1, 4)
    seat = HostileSeat(seed, burst=rng.choice([5, 40, 120]), hang_up=rng.random() < 0.2)
    run = run_dealer(
        GAMES[game_name],
        [seat, ScriptedSeat(calls())],
        tmp_path_factory.mktemp("dealer"),
        hands=hands,
        seed=seed % 1000,
        quiet=False,
        t_response_ms=30_000,
        t_per_hand_ms=30_000,
    )
    check_dealer_run(run, seat, hands, COUNTS["dealer.tcp"])


VERSIONS = [b"VERSION:2.0.0", b"VERSION:2.0", b"VERSION:", b"VERSION:2.0.0.0", b"version:2.0.0", b"VERSION:3.1.4", b"", b"\x00"]


@settings(FUZZ, max_examples=40)
@given(
    version=st.sampled_from(VERSIONS) | st.binary(max_size=40).filter(lambda b: b"\n" not in b),
    tail=st.sampled_from([b"\r\n", b"\n", b"x" * MAX_LINE_BYTES + b"\r\n"]),
    seed=SEEDS,
)
def test_dealer_version_line_is_accepted_or_refused_cleanly(
    version: bytes, tail: bytes, seed: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The first line a seat sends, read before any time limit but the start timeout: a bad one
    ends the match with the ACPC dealer's error, a good one starts it."""
    seat = HostileSeat(seed, burst=2, version=version + tail)
    run = run_dealer(GAMES["leduc"], [seat, ScriptedSeat(calls())], tmp_path_factory.mktemp("v"), hands=1, quiet=False)
    check_dealer_run(run, seat, 1, COUNTS["dealer.version"])
    if len(tail) > MAX_LINE_BYTES:
        assert (run.result.error or "").startswith(f"invalid version string from seat 1: a line longer than {MAX_LINE_BYTES}")


def test_dealer_ignores_an_oversized_reply_and_plays_on(hunl: Game, tmp_path: Path) -> None:
    """Regression (fuzzing): the dealer buffered a reply without end without limit (2 MB here); now
    it warns once, drops it, and takes the reply after it."""

    def flood(line: str, view: MatchState) -> list[str]:
        return ["r" * 2_000_000, f"{line}:c"] if view.is_our_turn else []

    run = run_dealer(hunl, [ScriptedSeat(flood), ScriptedSeat(calls())], tmp_path)
    assert run.result.ok, run.err
    dropped = f"WARNING: ignoring response: a line longer than {MAX_LINE_BYTES} bytes (it starts {'r' * 60!r}) was dropped"
    assert [w.split(" (seat 1, hand ")[0] for w in run.warnings] == [dropped] * 4
    assert run.result.seats[0].ignored == 4


# ---------------------------------------------------------------------- regressions of what the fuzzing found
@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("MATCHSTATE:\u00b2:1::AsKs|", "position '\u00b2' is not 0..1"),
        ("MATCHSTATE:0:\u00b2::AsKs|", "hand number '\u00b2' is not a non-negative integer of at most 18 digits"),
        ("MATCHSTATE:0:" + "9" * 5000 + "::AsKs|", "hand number '" + "9" * 24 + "' is not a non-negative"),
        ("MATCHSTATE:1:1:r" + "9" * 5000 + ":|AsKs", "raise size " + "9" * 24 + "... has more than 18 digits"),
    ],
    ids=["superscript-position", "superscript-hand", "hand-5000-digits", "raise-5000-digits"],
)
def test_numbers_int_cannot_read_are_refused_by_the_parser(line: str, reason: str, hunl: Game) -> None:
    """Regression (fuzzing): ``str.isdigit()`` passed '²', and 5000 digits passed the regular
    expressions; ``int()`` then raised a bare ValueError out of the parser (a crash of the client,
    and of the dealer reading a reply, over TCP: lines had no length limit)."""
    with pytest.raises(MatchStateError) as info:
        parse_matchstate(line, hunl)
    assert reason in info.value.reason


def test_a_raise_of_5000_digits_is_clamped_by_the_dealer(hunl: Game) -> None:
    """Regression (fuzzing): ``correct_action`` raised ValueError on it, which ended ``Dealer.run``."""
    correction = correct_action(HandState.initial(hunl), "r" + "9" * 5000)
    assert correction.action == raise_to(20000)
    assert correction.warnings == ("raise of 1000000000000000000 decreased to 20000",)
    assert correct_action(HandState.initial(hunl), "r" + "0" * 5000 + "300").action == raise_to(300)


def test_a_seat_sending_bytes_outside_ascii_gets_a_clear_abort(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Regression (fuzzing): a ``cmd:`` seat's version line with byte 0xff became U+FFFD, which the
    match's ASCII dealer log could not write: the dealer thread died and ``deepstack match`` crashed
    with an IndexError. Now the byte reads as ``\\xff``, control bytes are escaped too, and the match
    ends with the dealer's error."""
    from agent.cli.main import main

    script = (
        "import socket, sys; s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=20); "
        "s.sendall(b'VERSION:2.0.\\xff\\x1b[2J\\r\\n'); s.recv(1)"
    )
    seat = f"cmd:{sys.executable} -c {shlex.quote(script)} {{port}}"
    code = main(["match", "leduc", "3", "call", seat, "--log-dir", str(tmp_path), "--start-timeout", "20"])
    out = capsys.readouterr().out
    assert code == 1
    assert "ABORTED: invalid version string VERSION:2.0.\\xff\\x1b[2J" in out
    err = next(tmp_path.glob("*.dealer.err")).read_text(encoding="ascii")
    assert "ERROR: invalid version string VERSION:2.0.\\xff\\x1b[2J" in err
