"""The ACPC client: connect to a dealer, hand every state to the bot, answer when it is our turn.

The client is deliberately small (transport + parser + bot). It owns two guarantees the
bot cannot break: a bad line from the dealer is logged and skipped instead of crashing
the match, and the action sent is always legal, because an exception or an illegal
action from the bot is replaced (and logged as an error) by the nearest legal action. The
one bad line that ends the match is a state of another shipped game: the seat was started
with the wrong ``--game``, and every later line would be misread or go unanswered.
Lines are bounded (:data:`MAX_LINE_BYTES`, on both sides of the wire: the dealer reads
with the same :class:`LineBuffer`), so a peer that never ends a line cannot fill memory.
"""

from __future__ import annotations

import math
import numbers
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from protocol.bot import Bot
from protocol.gamedef import SHORT_NAMES, Game, load_game
from protocol.logs import get_logger, process_seconds
from protocol.matchstate import MatchState, MatchStateError, parse_matchstate
from protocol.state import CALL, FOLD, Action, ActionKind, raise_to

VERSION_LINE = b"VERSION:2.0.0\r\n"
#: The longest line (bytes before its ``\n``) either side reads: the ACPC dealer's read buffer
#: (``READBUF_LEN``). The longest legal hold'em line, a reply included, is about 1.3 KB.
MAX_LINE_BYTES = 4096
log = get_logger("client")


def printable(text: str) -> str:
    """``text`` with every character outside printable ASCII written as ``\\xNN``: a peer's
    bytes go into logs and terminals, where control bytes (NUL, escape sequences) must not."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(c if " " <= c <= "~" else f"\\x{ord(c):02x}" for c in text)


@dataclass(frozen=True)
class LineTooLong:
    """A line that passed :data:`MAX_LINE_BYTES` before its end: dropped, only its start kept
    for the message (reported once, as soon as the limit is passed; the rest is skipped)."""

    head: str
    limit: int

    def __str__(self) -> str:
        return f"a line longer than {self.limit} bytes (it starts {self.head!r}) was dropped"


class LineBuffer:
    """Reassembles ``\\n``-terminated lines from arbitrarily chunked TCP reads.

    Lines come back as ASCII text (a byte outside ASCII reads as ``\\xNN``, so no line can fail
    to encode again); a line longer than ``max_line`` bytes comes back as a :class:`LineTooLong`
    and its bytes are dropped up to its end, so the buffer never holds much more than
    ``max_line`` bytes plus one read.
    """

    def __init__(self, max_line: int = MAX_LINE_BYTES) -> None:
        self._buf = bytearray()
        self.max_line = max_line
        self._skipping = False  # inside a line already reported too long: drop up to its end

    def feed(self, data: bytes) -> list[str | LineTooLong]:
        """Add one read's bytes; returns the lines it completed, in order (a partial last line waits
        for the next read)."""
        self._buf += data
        lines: list[str | LineTooLong] = []
        while True:
            end = self._buf.find(b"\n")
            if self._skipping:
                if end < 0:
                    self._buf.clear()
                    return lines
                del self._buf[: end + 1]
                self._skipping = False
                continue
            if (end < 0 and len(self._buf) > self.max_line) or end > self.max_line:
                head = self._buf[: min(60, end) if end >= 0 else 60]  # this line's start, not the next lines
                lines.append(LineTooLong(printable(head.decode("ascii", errors="backslashreplace")), self.max_line))
                self._skipping = True
                continue
            if end < 0:
                return lines
            raw = bytes(self._buf[:end])
            del self._buf[: end + 1]
            lines.append(raw.decode("ascii", errors="backslashreplace").rstrip("\r"))

    @property
    def pending(self) -> bytes:
        """Bytes of an unfinished line (the dealer always ends lines, so normally empty)."""
        return bytes(self._buf)


@dataclass
class ClientSummary:
    """What one seat saw in a match."""

    hands: int = 0
    chips_won: float = 0.0
    decisions: int = 0
    think_seconds: float = 0.0
    bad_lines: int = 0
    fallback_actions: int = 0
    #: how the match ended: ``complete`` (the dealer closed after a finished hand), ``lost`` (the
    #: connection ended or broke in the middle of a hand, or before the dealer sent a state),
    #: ``silent`` (no line within the read timeout), ``wrong_game`` (the dealer's states are those
    #: of another shipped game), ``interrupted`` (Ctrl-C or SIGTERM)
    ended: str = "complete"
    #: the last state the dealer sent: its hand number, and whether that hand was still being played
    last_hand: int | None = None
    last_betting: str = ""
    in_hand: bool = False
    error: str = ""

    @property
    def complete(self) -> bool:
        """True when the dealer closed after a finished hand; ``deepstack play`` reports any other end as an error."""
        return self.ended == "complete"

    @property
    def mean_think_ms(self) -> float:
        """Our own time per decision, in milliseconds (0 before the first decision)."""
        return 1000.0 * self.think_seconds / self.decisions if self.decisions else 0.0

    def line(self) -> str:
        """The one-line summary ``deepstack play`` prints at the end of a match (chips won, not mbb/g)."""
        text = (
            f"hands={self.hands} chips_won={self.chips_won:g} decisions={self.decisions} mean_think_ms={self.mean_think_ms:.2f}"
        )
        if self.bad_lines or self.fallback_actions:
            text += f" bad_lines={self.bad_lines} fallback_actions={self.fallback_actions}"
        return text


def connect(host: str, port: int, timeout_s: float = 30.0) -> socket.socket:
    """Connect, retrying with exponential backoff until ``timeout_s`` has passed."""
    return _dial(host, port, timeout_s)[0]


def _dial(host: str, port: int, timeout_s: float) -> tuple[socket.socket, float]:
    """:func:`connect`, and the seconds its TCP handshake took: about one round trip to the dealer,
    what a reply costs on the dealer's clock beyond our thinking."""
    deadline = time.monotonic() + timeout_s
    delay = 0.05
    while True:
        try:
            sock, handshake = _handshake(host, port, max(0.1, deadline - time.monotonic()))
        except OSError as exc:
            if time.monotonic() + delay > deadline:
                raise ConnectionError(f"could not connect to {host}:{port} within {timeout_s:g} s: {exc}") from None
            time.sleep(delay)
            delay = min(1.0, delay * 2)
            continue
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock, handshake


def _handshake(host: str, port: int, timeout_s: float) -> tuple[socket.socket, float]:
    """``socket.create_connection``, timing only the handshake of the address that answered: not the
    name lookup, nor an address that failed first (an IPv6 one timing out before IPv4 connects)."""
    error: OSError = OSError(f"no address found for {host}")
    for family, kind, proto, _, address in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(timeout_s)
            began = time.monotonic()
            sock.connect(address)
            return sock, time.monotonic() - began
        except OSError as exc:
            sock.close()
            error = exc
    raise error


def safe_action(bot: Bot, view: MatchState) -> tuple[Action, bool]:
    """The bot's action if it is legal; otherwise the nearest legal one, as the ACPC dealer would
    correct it (a raise's size clamped to the legal range; a raise where none is allowed, or a call
    given a size: a call; a fold with nothing to call: a check); a bot error or an answer that is no
    usable action: check, or fold to a bet. Second item: replaced?"""
    state = view.state
    # what replaces a failed or unusable decision costs nothing more: check, or fold to a bet (a
    # call could be of an all-in, the whole stack on a bug)
    cheapest = CALL if state.amount_to_call() == 0 else FOLD
    try:
        answer = bot.act(view)
    except Exception:  # a decision must never end the match
        log.exception("bot_error", hand=view.hand_id, betting=state.betting_string(), sent=str(cheapest))
        return cheapest, True
    action = _usable(answer, state.game.is_nolimit)
    if action is not None and state.is_legal(action):
        return action, False  # the same decision, written as the wire wants it (a limit raise: `r` alone)
    fallback = cheapest
    bounds = state.raise_bounds()
    if action is not None and action.kind is ActionKind.RAISE and bounds is not None:  # a no-limit size out of range
        fallback = raise_to(min(max(action.size, bounds[0]), bounds[1]))
    elif action is not None and action.kind is ActionKind.RAISE:  # no raise allowed: the call it meant
        fallback = CALL
    log.error(
        "illegal_action_replaced",
        hand=view.hand_id,
        betting=state.betting_string(),
        action=repr(answer) if action is None else str(action),
        sent=str(fallback),
    )
    return fallback, True


def _usable(answer: object, nolimit: bool) -> Action | None:
    """``answer`` as an :class:`Action` of an :class:`ActionKind` and a whole number of chips, or
    None: a plain int for the kind wrote a bare ``r`` for a raise, a size of 600.0 wrote ``r600.0``, and
    a raise of NaN or None raised out of the match. Only a no-limit raise has a size; any other's is
    dropped, as the dealer ignores it."""
    if not isinstance(answer, Action):
        return None
    try:
        kind = ActionKind(answer.kind)
    except ValueError:
        return None
    if kind is not ActionKind.RAISE or not nolimit:
        return Action(kind)
    size = answer.size
    if isinstance(size, bool) or not isinstance(size, numbers.Real):
        return None
    if isinstance(size, numbers.Integral):
        return Action(kind, int(size))  # however large: clamped to the stack by the caller
    return Action(kind, round(size)) if math.isfinite(size) else None


def open_session(host: str, port: int, connect_timeout: float = 30.0) -> socket.socket:
    """Connect to the dealer and send the version line: the seat is taken. The dealer's first
    state may then wait in the socket while the bot gets ready."""
    sock, handshake = _dial(host, port, connect_timeout)
    try:
        sock.sendall(VERSION_LINE)
    except OSError:
        sock.close()
        raise
    log.info(
        "startup",
        phase="connected",
        dealer=f"{host}:{port}",
        # about one round trip: bot.time.latency_ms (play --latency) for a remote dealer
        handshake_ms=round(1000 * handshake, 2),
        since_process_start_s=process_seconds(),
    )
    return sock


def play(
    game: Game,
    bot: Bot,
    host: str,
    port: int,
    connect_timeout: float = 30.0,
    read_timeout: float | None = None,
    stopped: Callable[[], bool] | None = None,
) -> ClientSummary:
    """Play a whole match on ``host:port``; returns when the dealer closes the connection
    (:func:`play_session` on a fresh :func:`open_session`)."""
    return play_session(open_session(host, port, connect_timeout), game, bot, read_timeout, stopped)


def play_session(
    sock: socket.socket,
    game: Game,
    bot: Bot,
    read_timeout: float | None = None,
    stopped: Callable[[], bool] | None = None,
) -> ClientSummary:
    """Play the match on ``sock`` (from :func:`open_session`) until the dealer closes it.

    The ACPC dealer ends a match by closing the connection after the last hand, and says nothing
    else, so the summary tells a finished match from a lost one by the last state it sent: a
    close (or a reset) after a finished hand is the match's end; one in the middle of a hand, or
    silence longer than ``read_timeout`` seconds (None: wait as long as the dealer takes, as the
    ACPC dealer may wait for the opponent), is not, nor is a close before the first state
    (``summary.ended``). ``stopped``: whether the match was stopped on purpose (a local match
    interrupted), which makes an unfinished end ``interrupted``, not an error.
    """
    sock.settimeout(read_timeout)
    summary = ClientSummary()
    buffer = LineBuffer()
    bot.start_match(game)
    try:
        while True:
            try:
                data = sock.recv(65536)
            except TimeoutError:
                summary.ended, summary.error = "silent", f"no line from the dealer for {read_timeout:g} s"
                break
            except OSError as exc:  # reset by the peer, ...
                summary.ended, summary.error = _ended_by_close(summary), str(exc)
                break
            if not data:
                summary.ended = _ended_by_close(summary)
                break
            received = time.perf_counter()
            for line in buffer.feed(data):
                reply = _handle_line(line, game, bot, summary)
                if summary.ended == "wrong_game":
                    break
                if reply is not None:
                    try:
                        sock.sendall(reply.encode("ascii") + b"\r\n")
                    except OSError as exc:
                        summary.ended, summary.error = "lost", f"sending our action failed: {exc}"
                        break
                    summary.think_seconds += time.perf_counter() - received
                    if summary.decisions == 1:
                        log.info("startup", phase="first_action", since_process_start_s=process_seconds())
                    received = time.perf_counter()
            if summary.ended != "complete":  # a line above ended the match
                break
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the summary and the log say where the match stood
        summary.ended, summary.error = "interrupted", "interrupted (Ctrl-C or SIGTERM)"
    finally:
        sock.close()
        bot.end_match()
    stopped_on_purpose = summary.ended == "lost" and stopped is not None and stopped()
    if buffer.pending and summary.ended != "interrupted" and not stopped_on_purpose:  # a line we cut is no news
        # before the match's end: that stays the last record
        log.warning("unterminated_line_at_eof", data=printable(buffer.pending[:200].decode("ascii", "backslashreplace")))
    if summary.ended == "lost" and summary.last_hand is None:
        summary.error = "the dealer closed the connection before sending a state" + (
            f" ({summary.error})" if summary.error else ""
        )
    elif summary.ended == "lost" and not summary.error:
        summary.error = "the dealer closed the connection"
    if stopped_on_purpose:
        summary.ended, summary.error = "interrupted", "the local match was stopped"
        log.info("match_stopped", hand=summary.last_hand, hands=summary.hands)
    elif summary.ended != "complete":
        log.error(
            "match_not_finished",
            ended=summary.ended,
            hand=summary.last_hand,
            betting=summary.last_betting,
            reason=summary.error,
            hands=summary.hands,
        )
    return summary


def _ended_by_close(summary: ClientSummary) -> str:
    """How a match closed by the dealer ended: the ACPC dealer ends one by closing after a finished
    hand; a close in the middle of a hand, or before any state (no match was played), is a lost one."""
    return "lost" if summary.in_hand or summary.last_hand is None else "complete"


@cache
def _shipped(name: str) -> Game:
    return load_game(name)


def shipped_game_of(line: str, game: Game) -> str | None:
    """The short name of a shipped game, other than ``game``, of which ``line`` is a state (a
    dealer started with another game than ours), else None."""
    for name in SHORT_NAMES:
        other = _shipped(name)
        if other.name == game.name:
            continue
        try:
            parse_matchstate(line, other)
        except MatchStateError:
            continue
        return name
    return None


def _handle_line(line: str | LineTooLong, game: Game, bot: Bot, summary: ClientSummary) -> str | None:
    """Process one line from the dealer; return the reply line if we must act."""
    if isinstance(line, LineTooLong):
        summary.bad_lines += 1
        log.error("line_too_long", limit=line.limit, start=line.head)
        return None
    if not line or line[0] in "#;":
        return None
    try:
        view = parse_matchstate(line, game)
    except MatchStateError as exc:
        summary.bad_lines += 1
        log.error("bad_matchstate", line=printable(exc.line), reason=printable(exc.reason))
        other = shipped_game_of(line, game)
        if other is not None:
            summary.ended = "wrong_game"
            summary.error = (
                f"the dealer's state {printable(line)!r} is not one of game {game.name} ({printable(exc.reason)}) "
                f"but one of game {other}: start the seat with --game {other}"
            )
        return None
    try:
        bot.observe(view)
    except Exception:
        log.exception("bot_observe_error", hand=view.hand_id, line=line)
    state = view.state
    summary.last_hand, summary.last_betting, summary.in_hand = view.hand_id, state.betting_string(), not state.finished
    if state.finished:
        summary.hands += 1
        try:
            summary.chips_won += state.payoffs()[view.position]
        except Exception as exc:  # e.g. a showdown line without the opponent's cards
            log.error("payoff_unknown", line=line, reason=str(exc))
        return None
    if not view.is_our_turn:
        return None
    action, replaced = safe_action(bot, view)
    summary.decisions += 1
    summary.fallback_actions += int(replaced)
    return f"{line}:{action}"
