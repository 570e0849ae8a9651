"""A dealer that is wire-compatible with the ACPC dealer (``dealer.c``), plus per-seat statistics.

Same command line (``NAME GAME HANDS SEED NAME1 NAME2 [-p PORTS] [--t_response MS]
[--t_hand MS] [--t_per_hand MS] ...``), same first stdout line (the ports), same version
handshake, same ``MATCHSTATE`` traffic, same corrections of bad actions (each logged as a
``WARNING`` line), same time limits, same log file (4 header lines, one ``STATE`` line per
hand, ``SCORE``) and the same abort (``ERROR`` line, exit 1, no ``SCORE``) when a player
disconnects or runs out of time.

A seat's bytes are untrusted: lines are bounded (``protocol.client.MAX_LINE_BYTES``, as the
ACPC dealer's read buffer), and what the dealer prints of them has control bytes escaped.

One deliberate difference: cards are dealt from a generator seeded by ``(seed, hand)``, so
the deal of a hand does not depend on earlier hands. Seats alternate positions, hence
running the same seed with the names swapped is a duplicate match.
"""

from __future__ import annotations

import re
import select
import socket
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import numpy as np

from protocol.actions import correct_action
from protocol.client import LineBuffer, LineTooLong, printable
from protocol.gamedef import DeckConvention, Game
from protocol.judge import judge_response
from protocol.matchstate import format_matchstate, format_state_line
from protocol.state import HandState
from protocol.transactions import Transaction, TransactionError, drop_partial_line, read_transactions

#: the version line as the ACPC dealer reads it (numbers may have spaces or a sign before them)
VERSION_LINE = re.compile(r"VERSION:\s*([+-]?\d+)\.\s*([+-]?\d+)\.\s*([+-]?\d+)", re.ASCII)

DEFAULT_T_RESPONSE_MS = 600_000
DEFAULT_T_HAND_MS = 600_000
DEFAULT_T_PER_HAND_MS = 7_000
#: the longest time limit taken (~115 days): socket and select() timeouts overflow the platform's time_t
#: near 9.2e9 seconds, and a longer limit is a typo
MAX_TIME_MS = 10**10
#: the most hands a match may have: the ACPC dealer reads the count as a 32-bit integer, and hand
#: numbers past it would not fit the logs of the tools that read them
MAX_HANDS = 2**31 - 1


class DealerAbort(RuntimeError):
    """The match cannot go on (disconnect, timeout, bad version line)."""


def check_name(name: str, what: str, separators: str = ":|") -> None:
    """Refuse a name the log cannot hold: player names are fields of ``STATE``/``SCORE`` lines
    (``separators`` split them) and the match name is a word of the log's header, all ASCII."""
    if not name:
        raise ValueError(f"bad {what}: it is empty")
    for c in name:
        if not (c.isascii() and c.isprintable()) or c.isspace() or c in separators:
            rule = "printable ASCII, no spaces" + "".join(f", no {x!r}" for x in separators)
            raise ValueError(f"bad {what} '{printable(name)}': '{printable(c)}' is not allowed ({rule})")


@dataclass(frozen=True)
class Deal:
    """The cards of one hand: each position's hole cards and the whole board (dealt up front, revealed by round)."""

    hole_cards: tuple[tuple[int, ...], ...]
    board: tuple[int, ...]


def deal_hand(game: Game, deck: Sequence[int], seed: int, hand_id: int) -> Deal:
    """The cards of hand ``hand_id``: a function of ``(seed, hand_id)`` only."""
    rng = np.random.default_rng([seed, hand_id])
    order = rng.permutation(np.asarray(deck, dtype=np.int64))
    k = game.num_hole_cards
    holes = tuple(tuple(int(c) for c in order[p * k : (p + 1) * k]) for p in range(game.num_players))
    start = game.num_players * k
    board = tuple(int(c) for c in order[start : start + game.total_board_cards])
    return Deal(holes, board)


def format_value(value: float) -> str:
    """``%.6f`` with trailing zeros (and a trailing point) removed, as the ACPC dealer prints."""
    text = f"{value:.6f}".rstrip("0")
    return text.rstrip(".")


@dataclass
class DealerConfig:
    """One match's dealer settings, as ``deepstack dealer``'s command line gives them (or ``deepstack match``):
    game, hands, seed, seat names and ports, the ACPC time limits in ms, and where the logs go."""

    match_name: str
    game: Game
    game_label: str
    hands: int
    seed: int
    names: tuple[str, ...]
    ports: tuple[int, ...] = ()
    host: str = "127.0.0.1"
    t_response_ms: int = DEFAULT_T_RESPONSE_MS
    t_hand_ms: int = DEFAULT_T_HAND_MS
    t_per_hand_ms: int = DEFAULT_T_PER_HAND_MS
    start_timeout_ms: int = -1
    log_dir: Path | None = Path(".")
    append: bool = False
    quiet: bool = False
    fixed_seats: bool = False
    deck: DeckConvention = "high"
    #: the transaction file (``-T``): every action is written to it; with ``append``, the actions
    #: already in it are replayed first (a match resumed after an interruption)
    transactions: Path | None = None


@dataclass
class SeatStats:
    """What the dealer measured for one seat."""

    total: float = 0.0
    corrections: int = 0
    #: replies skipped with a warning (unreadable, not the state sent, too long)
    ignored: int = 0
    decisions: int = 0
    think_us: int = 0

    @property
    def mean_think_ms(self) -> float:
        """The seat's response time per decision as the dealer clocked it, in milliseconds (0 before its first)."""
        return self.think_us / 1000.0 / self.decisions if self.decisions else 0.0


@dataclass
class DealerResult:
    """How a match ended: whether it completed (else the error that aborted it), the hands played, each
    seat's statistics, and each hand's values per seat in chips (for confidence intervals)."""

    ok: bool
    error: str | None
    hands_played: int
    seats: list[SeatStats]
    #: per hand, the value of each seat (seat order), for confidence intervals
    hand_values: list[tuple[float, ...]] = field(default_factory=list)
    log_path: Path | None = None


class _Seat:
    def __init__(self, index: int, conn: socket.socket) -> None:
        self.index = index
        self.conn = conn
        self.buffer = LineBuffer()
        self.lines: deque[str | LineTooLong] = deque()

    def send(self, line: str) -> None:
        self.conn.sendall(line.encode("ascii") + b"\r\n")

    def read_line(self, timeout_s: float | None) -> str | LineTooLong | None:
        """Next line, or None on disconnect or when ``timeout_s`` passes."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while not self.lines:
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                ready, _, _ = select.select([self.conn], [], [], remaining)
                if not ready:
                    return None
            try:
                data = self.conn.recv(65536)
            except OSError:
                return None
            if not data:
                return None
            self.lines.extend(self.buffer.feed(data))
        return self.lines.popleft()


class Dealer:
    """Runs one match. Call :meth:`open` (binds the ports), then :meth:`run`."""

    def __init__(
        self,
        config: DealerConfig,
        out: TextIO | None = None,
        err: TextIO | None = None,
        on_hand: Callable[[int, tuple[float, ...], list[SeatStats]], None] | None = None,
    ) -> None:
        """``on_hand(hand_id, values, stats)`` is called after every hand (a local match reports
        its progress from it): the hand's value per seat and each seat's totals so far."""
        if config.game.num_players != len(config.names):
            raise ValueError(f"{config.game.num_players} players need {config.game.num_players} names")
        if config.ports and len(config.ports) != config.game.num_players:
            raise ValueError(f"{len(config.ports)} ports given for {config.game.num_players} players")
        if config.hands <= 0:
            raise ValueError(f"invalid number of hands {config.hands}")
        if not 0 <= config.seed < 2**32:
            raise ValueError(f"invalid seed {config.seed}: the deal's seed is 0..{2**32 - 1}")
        check_name(config.match_name, "match name", separators="")
        for name in config.names:
            check_name(name, "player name")
        self.config = config
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.on_hand = on_hand
        self.listeners: list[socket.socket] = []
        self.ports: tuple[int, ...] = ()
        self.deck = config.game.deck(config.deck)
        self._stop_start: str | None = None
        #: the seats of the match being played (for :meth:`stop`, from another thread)
        self._live: list[_Seat] = []

    # ------------------------------------------------------------------ set-up
    def open(self) -> tuple[int, ...]:
        """Bind one listening socket per seat; returns the ports (in seat order)."""
        ports = []
        for i in range(self.config.game.num_players):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            port = self.config.ports[i] if self.config.ports else 0
            try:
                sock.bind((self.config.host, port))
            except OSError as exc:
                sock.close()
                self.close()
                raise DealerAbort(f"could not create listen socket for player {i + 1}: {exc}") from None
            sock.listen(1)
            self.listeners.append(sock)
            ports.append(sock.getsockname()[1])
        self.ports = tuple(ports)
        return self.ports

    def close(self) -> None:
        """Close the listening sockets still open; :meth:`run` calls it when the match ends, and it is safe to call twice."""
        for sock in self.listeners:
            sock.close()
        self.listeners = []

    def _e(self, text: str) -> None:
        self.err.write(text + "\n")
        self.err.flush()

    def stop(self, reason: str) -> None:
        """Called from another thread (a local match interrupted): the match ends now with
        ``reason``, whether the dealer is waiting for seats or playing; the seats' connections
        are shut, so their bots stop at their next read or answer."""
        self._stop_start = reason
        for seat in list(self._live):
            try:
                seat.conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def stop_waiting(self, reason: str) -> None:
        """Called from another thread (a local match whose seat program died before connecting):
        the dealer, if still waiting for seats, aborts with ``reason`` instead of waiting on."""
        self._stop_start = reason

    def _accept(self) -> list[_Seat]:
        """Each seat's connection in seat order; each listening socket is closed once its seat is
        taken, so a second client on that port is refused at once (as the ACPC dealer does)."""
        # as the ACPC dealer: below 0 no limit, 0 only clients already waiting
        timeout = self.config.start_timeout_ms / 1000.0 if self.config.start_timeout_ms >= 0 else None
        deadline = None if timeout is None else time.monotonic() + timeout
        seats = []
        for i, listener in enumerate(self.listeners):
            while True:
                if self._stop_start is not None:
                    raise DealerAbort(self._stop_start)
                remaining = 0.2 if deadline is None else min(0.2, max(0.0, deadline - time.monotonic()))
                ready, _, _ = select.select([listener], [], [], remaining)
                if ready:
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    raise DealerAbort(f"seat {i + 1} did not connect within the start timeout")
            conn, _ = listener.accept()
            listener.close()
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            seats.append(_Seat(i, conn))
        return seats

    def _check_version(self, seat: _Seat) -> None:
        timeout = self.config.start_timeout_ms / 1000.0 if self.config.start_timeout_ms > 0 else None
        line = seat.read_line(timeout)
        if line is None:
            raise DealerAbort(f"could not read version string from seat {seat.index + 1}")
        if isinstance(line, LineTooLong):
            raise DealerAbort(f"invalid version string from seat {seat.index + 1}: {line}")
        # as the ACPC dealer's sscanf("VERSION:%u.%u.%u"): three numbers, whatever follows them
        found = VERSION_LINE.match(line)
        if found is None:
            raise DealerAbort(f"invalid version string {printable(line)}")
        major, minor = int(found[1]), int(found[2])
        if major != 2 or minor > 0:
            self._e("ERROR: this server is currently using version 2.0.0")

    # ------------------------------------------------------------------ match
    def run(self) -> DealerResult:
        """Play the whole match on the ports :meth:`open` bound (opening them if not yet): accept the seats, play
        every hand, print the score; an abort is reported in the result, never raised."""
        cfg = self.config
        n = cfg.game.num_players
        stats = [SeatStats() for _ in range(n)]
        result = DealerResult(ok=False, error=None, hands_played=0, seats=stats)
        log_file: TextIO | None = None
        tlog: TextIO | None = None
        seats: list[_Seat] = []
        try:
            replay = self._replay_records()
            if not self.listeners:
                self.open()
            if cfg.log_dir is not None:
                cfg.log_dir.mkdir(parents=True, exist_ok=True)
            header = (
                f"# name/game/hands/seed {cfg.match_name} {cfg.game_label} {cfg.hands} {cfg.seed}\n"
                f"#--t_response {cfg.t_response_ms}\n#--t_hand {cfg.t_hand_ms}\n#--t_per_hand {cfg.t_per_hand_ms}\n"
            )
            self.err.write(header)
            seats = self._accept()
            self._live = seats
            for seat in seats:
                self._check_version(seat)
            # the files are opened once the seats are in: a start that fails (a seat that never
            # connects, a bad version line) leaves an earlier match's log of the same name whole
            if cfg.transactions is not None:
                if cfg.append and cfg.transactions.exists():
                    drop_partial_line(cfg.transactions)  # the action it was about is asked for again
                tlog = open(cfg.transactions, "a" if cfg.append else "w", encoding="ascii")
            if cfg.log_dir is not None:
                result.log_path = cfg.log_dir / f"{cfg.match_name}.log"
                log_file = open(result.log_path, "a" if cfg.append else "w", encoding="ascii")
                log_file.write(header)
                log_file.flush()
            if not cfg.quiet:
                self._e(f"STARTED at {time.time():.6f}")
            match_budget_us = cfg.t_per_hand_ms * 1000 * cfg.hands
            for hand_id in range(cfg.hands):
                values = self._play_hand(hand_id, seats, stats, match_budget_us, log_file, tlog, replay)
                result.hand_values.append(values)
                result.hands_played = hand_id + 1
                if self.on_hand is not None:
                    try:  # a report (e.g. a progress line to a closed pipe) must not end the match
                        self.on_hand(hand_id, values, stats)
                    except Exception as exc:  # noqa: BLE001
                        self.on_hand = None
                        self._e(f"WARNING: the per-hand report failed and is off for the rest of the match: {exc!r}")
            if not cfg.quiet:
                self._e(f"FINISHED at {time.time():.6f}")
            score = "SCORE:" + "|".join(format_value(s.total) for s in stats) + ":" + "|".join(cfg.names)
            self.out.write(score + "\n")
            self.out.flush()
            self._e(score)
            if log_file:
                log_file.write(score + "\n")
            result.ok = True
        except DealerAbort as exc:
            result.error = str(exc)
            self._e(f"ERROR: {exc}")
        except Exception as exc:  # noqa: BLE001 - a bug of ours: the match ends as an abort, with the log kept
            result.error = f"internal error: {exc!r}"
            self._e(f"ERROR: internal error after {result.hands_played} hands: {exc!r}")
            self.err.write(traceback.format_exc())
            self.err.flush()
        finally:
            if log_file:
                log_file.close()
            if tlog:
                tlog.close()
            for seat in seats:
                try:
                    seat.conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                seat.conn.close()
            self.close()
        return result

    def _play_hand(
        self,
        hand_id: int,
        seats: list[_Seat],
        stats: list[SeatStats],
        match_budget_us: int,
        log_file: TextIO | None,
        tlog: TextIO | None = None,
        replay: deque[Transaction] | None = None,
    ) -> tuple[float, ...]:
        """Play hand ``hand_id``; its first actions come from ``replay`` while it holds actions of
        this hand (nothing is sent for them), the rest from the seats (each written to ``tlog``).
        A hand replayed to its end was logged and sent by the interrupted run: neither again."""
        cfg = self.config
        replay = replay if replay is not None else deque()
        live = False
        n = cfg.game.num_players
        player0_seat = 0 if cfg.fixed_seats else hand_id % n
        seat_of = [(p + player0_seat) % n for p in range(n)]  # position -> seat
        deal = deal_hand(cfg.game, self.deck, cfg.seed, hand_id)
        state = HandState.initial(cfg.game, hand_id, hole_cards=deal.hole_cards)
        state = state.with_board(deal.board[: cfg.game.board_cards_through(0)])
        hand_used_us = [0] * n
        while not state.finished:
            actor = state.current_player
            assert actor is not None
            seat = seats[seat_of[actor]]
            if replay:
                state = self._replay_action(replay.popleft(), state, seat, stats, hand_used_us, match_budget_us)
                if state.board_cards_needed:
                    state = state.with_board(deal.board[: cfg.game.board_cards_through(state.round)])
                continue
            live = True
            send_time = send_wall = 0.0
            for other in seats:
                position = (other.index + n - player0_seat) % n
                line = format_matchstate(state, position)
                self._send(other, line)
                if position == actor:
                    send_time, send_wall = time.perf_counter(), time.time()
            action_text, response_us = self._read_response(seat, state, actor, send_time, stats, hand_used_us, match_budget_us)
            correction = correct_action(state, action_text)
            for warning in correction.warnings:
                self._e(f"WARNING: {warning} (seat {seat.index + 1}, hand {hand_id})")
            if correction.corrected:
                stats[seat.index].corrections += 1
            if tlog:
                tlog.write(Transaction(str(correction.action), hand_id, send_wall, send_wall + response_us / 1e6).line())
                tlog.flush()
            state = state.apply(correction.action)
            if state.board_cards_needed:
                state = state.with_board(deal.board[: cfg.game.board_cards_through(state.round)])
        values = state.payoffs()
        for p, v in enumerate(values):
            stats[seat_of[p]].total += v
        if not live:  # replayed to its end: logged and sent by the run that played it
            return tuple(values[(s + n - player0_seat) % n] for s in range(n))
        if log_file:
            names = "|".join(cfg.names[seat_of[p]] for p in range(n))
            log_file.write(f"{format_state_line(state)}:{'|'.join(format_value(v) for v in values)}:{names}\n")
            log_file.flush()
        for seat in seats:
            self._send(seat, format_matchstate(state, (seat.index + n - player0_seat) % n))
        return tuple(values[(s + n - player0_seat) % n] for s in range(n))

    def _send(self, seat: _Seat, line: str) -> None:
        try:
            seat.send(line)
        except OSError:
            raise DealerAbort(f"could not send state to seat {seat.index + 1}") from None
        if not self.config.quiet:
            self._e(f"TO {seat.index + 1} at {time.time():.6f} {line}")

    def _read_response(
        self,
        seat: _Seat,
        state: HandState,
        actor: int,
        send_time: float,
        stats: list[SeatStats],
        hand_used_us: list[int],
        match_budget_us: int,
    ) -> tuple[str | None, int]:
        """The action text of the acting seat's reply (None: the reply has no action part) and
        the microseconds it took."""
        cfg = self.config
        st = stats[seat.index]
        while True:
            elapsed_us = int((time.perf_counter() - send_time) * 1e6)
            allowed_us = min(
                cfg.t_response_ms * 1000,
                cfg.t_hand_ms * 1000 - hand_used_us[actor],
                match_budget_us - st.think_us,
            )
            line = seat.read_line(max(0.0, (allowed_us - elapsed_us) / 1e6))
            response_us = int((time.perf_counter() - send_time) * 1e6)
            if line is None:
                if self._stop_start is not None:
                    raise DealerAbort(self._stop_start)
                if response_us >= allowed_us:
                    raise DealerAbort(f"seat {seat.index + 1} ran out of time")
                raise DealerAbort(f"could not get action from seat {seat.index + 1}")
            if not cfg.quiet and isinstance(line, str):
                self._e(f"FROM {seat.index + 1} at {time.time():.6f} {printable(line)}")
            response = judge_response(line, state, actor)
            if response.kind == "comment":
                continue
            if response_us > allowed_us:
                raise DealerAbort(f"seat {seat.index + 1} ran out of time")
            if response.kind == "ignored":
                st.ignored += 1
                self._e(f"WARNING: {response.warning} (seat {seat.index + 1}, hand {state.hand_id})")
                continue
            st.decisions += 1
            st.think_us += response_us
            hand_used_us[actor] += response_us
            return response.action_text, response_us

    def _replay_records(self) -> deque[Transaction]:
        """The actions of the transaction file to replay (``-T -a`` with the file there), checked
        to be of this match's hands; an unreadable file ends the match before anyone connects."""
        cfg = self.config
        if cfg.transactions is None or not cfg.append or not cfg.transactions.exists():
            return deque()
        try:
            records = read_transactions(cfg.transactions)
        except (OSError, TransactionError) as exc:
            raise DealerAbort(f"cannot resume from the transaction file: {exc}") from None
        late = [r for r in records if r.hand_id >= cfg.hands]
        if late:
            raise DealerAbort(
                f"cannot resume from the transaction file: {late[0].where} is of hand {late[0].hand_id}, "
                f"the match has {cfg.hands}"
            )
        if records and not cfg.quiet:
            self._e(f"# replaying {len(records)} actions of {cfg.transactions}")
        return deque(records)

    def _replay_action(
        self,
        record: Transaction,
        state: HandState,
        seat: _Seat,
        stats: list[SeatStats],
        hand_used_us: list[int],
        match_budget_us: int,
    ) -> HandState:
        """``state`` after a replayed action: of this hand, legal as written, and within the time
        rules (the seat is charged the time it took then)."""
        cfg = self.config
        if record.hand_id != state.hand_id:
            raise DealerAbort(
                f"hand mismatch in the transaction file: {record.where} is of hand {record.hand_id}, not {state.hand_id}"
            )
        correction = correct_action(state, record.action)
        if correction.corrected:
            raise DealerAbort(
                f"invalid action in the transaction file: {record.where}: {record.action} ({correction.warnings[0]})"
            )
        actor = state.current_player
        assert actor is not None
        st = stats[seat.index]
        allowed_us = min(cfg.t_response_ms * 1000, cfg.t_hand_ms * 1000 - hand_used_us[actor], match_budget_us - st.think_us)
        if record.response_us > allowed_us:
            raise DealerAbort(f"seat {seat.index + 1} ran out of time in the transaction file ({record.where})")
        st.decisions += 1
        st.think_us += record.response_us
        hand_used_us[actor] += record.response_us
        return state.apply(correction.action)
