"""Local matches: our dealer plus two seats on loopback, over real TCP.

A seat is a built-in bot (run in this process by the protocol client, in its own thread)
or ``cmd:`` followed by a command line with ``{host}`` and ``{port}`` placeholders, run as
a separate process without a shell. With ``duplicate`` every deal is played twice with
the seats swapped, and the per-deal average is the duplicate estimate.

Seats are named as the dealer names them, here and in ``deepstack eval plot``: seat 1 and
seat 2 are the dealer's first and second seat (the order of the names on its ``SCORE`` line
and in its log's first hand; the positions alternate every hand). The first bot of a match
sits in seat 1; the duplicate match swaps the seats.

Each match gets a folder of its own (:func:`new_log_dir`); :func:`check_log_dir` refuses a
folder that already holds a match's logs, so that no match is appended to another.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from agent.bots.config import Config
from agent.bots.registry import bot_names, make_bot
from agent.evaluation.clock import finite_number, read_events
from agent.evaluation.stats import estimate
from protocol.client import ClientSummary, play
from protocol.dealer import (
    DEFAULT_T_HAND_MS,
    DEFAULT_T_PER_HAND_MS,
    DEFAULT_T_RESPONSE_MS,
    Dealer,
    DealerConfig,
    DealerResult,
    SeatStats,
    format_value,
)
from protocol.dealer_log import dealer_logs, describe_games
from protocol.gamedef import DeckConvention, Game
from protocol.logs import get_logger

log = get_logger("match")


@dataclass(frozen=True)
class SeatSpec:
    """One seat: a built-in bot name, or a command line (``cmd:...``)."""

    text: str
    bot: str | None = None
    command: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The seat's short name: the bot's name, or the command's program file name (made safe for the
        dealer's log by the caller)."""
        return self.bot if self.bot else Path(self.command[0]).name


def parse_seat(text: str) -> SeatSpec:
    """A seat given on the command line: a built-in bot's name, or ``cmd:`` and a command line holding ``{port}``."""
    if text.startswith("cmd:"):
        try:
            args = tuple(shlex.split(text[4:]))
        except ValueError as exc:  # an unbalanced quote: shlex's message alone names no seat
            raise ValueError(f"seat {text!r}: {exc}") from None
        if not args:
            raise ValueError(f"seat {text!r}: empty command after 'cmd:'")
        if not any("{port}" in a for a in args):
            raise ValueError(f"seat {text!r}: the command must contain a {{port}} placeholder")
        return SeatSpec(text=text, command=args)
    if text not in bot_names():
        raise ValueError(f"unknown bot {text!r}; known bots: {', '.join(bot_names())}, or cmd:COMMAND")
    return SeatSpec(text=text, bot=text)


def check_seat_program(spec: SeatSpec) -> None:
    """A ``cmd:`` seat's program can be found (before the dealer opens its ports and its logs)."""
    if spec.command and shutil.which(spec.command[0]) is None:
        raise ValueError(f"seat {spec.text!r}: cannot start {spec.command[0]!r}: no such program (or it is not executable)")


@dataclass
class MatchReport:
    """The outcome of one local match (and its duplicate, seats swapped): the dealer's result and each
    seat's client summary per match (None for a ``cmd:`` seat); ``summary_lines`` gives the first bot's mbb/g."""

    game: Game
    names: tuple[str, str]
    results: list[DealerResult] = field(default_factory=list)
    clients: list[list[ClientSummary | None]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every match was played to its end (an aborted one still has its hands in ``results``)."""
        return bool(self.results) and all(r.ok for r in self.results)

    def first_bot_values(self, match: int) -> list[float]:
        """Per-hand value of the first bot in match ``match`` (0: it sits in seat 1; 1, the
        duplicate match: seat 2)."""
        return [v[match] for v in self.results[match].hand_values]

    def duplicate_values(self) -> list[float]:
        """Per-deal average of the first bot's value over the two seatings."""
        a, b = self.results[0].hand_values, self.results[1].hand_values
        return [(x[0] + y[1]) / 2 for x, y in zip(a, b)]

    def summary_lines(self) -> list[str]:
        """The report ``deepstack match`` prints: each match's SCORE (or why it aborted), the first bot's
        win rate per seating and duplicate (mbb/g, chips in a game without blinds), and each bot's clock
        and corrections."""
        unit = self.game.big_blind or None  # a game without blinds: chips, as mbb/g has no unit
        lines = []
        for r in self.results:
            names = self.names if r is self.results[0] else self.names[::-1]
            s = "|".join(format_value(seat.total) for seat in r.seats)
            lines.append(f"SCORE:{s}:{'|'.join(names)}" if r.ok else f"ABORTED: {r.error}")
        bot1 = self.names[0]
        hands = sum(r.hands_played for r in self.results)
        if self.ok:
            lines.append(f"hands: {hands}")
        elif hands:  # what was played before the abort is still a result (a seating, its hands)
            lines.append(f"hands completed before the abort: {hands}")
        for match, label in enumerate(("seat 1", "seat 2, swapped")[: len(self.results)]):
            values = self.first_bot_values(match)
            if values:
                ended = "" if self.results[match].ok else ", before the abort"
                lines.append(f"{bot1} ({label}): {estimate(values, unit)} over {len(values)} hands{ended}")
        if not self.ok:
            return lines
        if len(self.results) == 2:
            lines.append(f"{bot1} duplicate: {estimate(self.duplicate_values(), unit)} over {len(self.duplicate_values())} deals")
        for i, name in enumerate(self.names):
            stats = [self._stats_of(name_index=i, r=r) for r in self.results]
            decisions = sum(s.decisions for s in stats)
            think_ms = sum(s.think_us for s in stats) / 1000.0
            per_hand = think_ms / hands if hands else 0.0
            corrections = sum(s.corrections for s in stats)
            ignored = sum(s.ignored for s in stats)
            lines.append(
                f"{name}: mean think {think_ms / decisions if decisions else 0.0:.2f} ms/decision, "
                f"{per_hand:.2f} ms/hand, corrected actions {corrections}, ignored lines {ignored}"
            )
        return lines

    def _stats_of(self, name_index: int, r: DealerResult) -> SeatStats:
        seat = name_index if r is self.results[0] else 1 - name_index
        return r.seats[seat]

    def corrections(self, name_index: int) -> int:
        """Actions the dealer had to correct for bot ``name_index`` (0: the first bot), over both seatings."""
        return sum(self._stats_of(name_index, r).corrections for r in self.results)


class MatchProgress:
    """One progress line every ``every`` hands (and after the last): hands done of the total, the
    first bot's win rate so far with its 95% interval (in a duplicate match's second seating, per
    deal over the deals both seatings have played, as the final report computes it), each bot's
    mean think time per decision (as the dealer measured it) and the seconds since the start."""

    def __init__(
        self,
        names: Sequence[str],
        total: int,
        big_blind: float | None,
        every: int,
        write: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.names = tuple(names)
        self.total = total
        self.big_blind = big_blind
        self.every = every
        self.write = write
        self.clock = clock
        self.start = clock()
        self.values: list[float] = []
        self._finished: list[tuple[int, int]] = [(0, 0) for _ in names]  # (decisions, µs) of ended matches
        self._current: list[tuple[int, int]] = [(0, 0) for _ in names]
        self._first_bot_seat = 0
        self._first_match_hands = 0  # hands of the first seating, once the second has begun

    def start_match(self, first_bot_seat: int) -> Callable[[int, tuple[float, ...], list[SeatStats]], None]:
        """The dealer's per-hand callback for the next match, where the first bot sits in ``first_bot_seat``."""
        self._finished = [(a[0] + b[0], a[1] + b[1]) for a, b in zip(self._finished, self._current)]
        self._current = [(0, 0) for _ in self.names]
        self._first_bot_seat = first_bot_seat
        if first_bot_seat == 1:
            self._first_match_hands = len(self.values)
        return self._on_hand

    def _on_hand(self, hand_id: int, values: tuple[float, ...], stats: list[SeatStats]) -> None:
        seat = self._first_bot_seat
        self.values.append(values[seat])
        order = (seat, 1 - seat)  # the seat of each bot in this match
        self._current = [(stats[order[i]].decisions, stats[order[i]].think_us) for i in range(len(self.names))]
        done = len(self.values)
        if done % self.every == 0 or done == self.total:
            self.write(self.line())

    def line(self) -> str:
        """The progress line as of the last hand (called from the dealer's per-hand callback, so on the
        thread running the dealer)."""
        done = len(self.values)
        think = []
        for name, a, b in zip(self.names, self._finished, self._current):
            decisions, micros = a[0] + b[0], a[1] + b[1]
            think.append(f"{name} {micros / 1000.0 / decisions if decisions else 0.0:.1f}")
        first = self._first_match_hands
        if first and done > first:  # the duplicate's second seating: deal k is hands k and first + k
            second = self.values[first:]
            deals = [(a + b) / 2 for a, b in zip(self.values[:first], second)]
            rate = f"{self.names[0]} duplicate {estimate(deals, self.big_blind)} over {len(deals)} deals"
        else:
            rate = f"{self.names[0]} {estimate(self.values, self.big_blind)}"
        return (
            f"match: {done}/{self.total} hands ({100 * done / self.total:.0f}%), "
            f"{rate}, "
            f"think {' / '.join(think)} ms per decision, {self.clock() - self.start:.0f} s"
        )


def new_log_dir(game: Game, root: Path = Path("runs"), now: datetime | None = None) -> Path:
    """A new folder ``ROOT/match-GAME-YYYYmmddTHHMMSSZ`` (UTC; ``-2``, ``-3``, ... when taken), made now."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    base = f"match-{re.sub(r'[^A-Za-z0-9_.-]+', '-', game.name)}-{stamp}"
    root.mkdir(parents=True, exist_ok=True)
    for k in range(1, 1000):
        path = root / (base if k == 1 else f"{base}-{k}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"{root / base}: taken 999 times")


def check_log_dir(path: Path, default: str = "a new runs/match-GAME-TIME folder") -> None:
    """Refuse a folder that already holds the logs of a match (its dealer logs or its bots'
    ``bots.jsonl``): a new match there would be appended to another, of this game or another one.
    ``default`` says what leaving --log-dir out gives."""
    if path.exists() and not path.is_dir():
        raise ValueError(f"{path}: is a file, not a folder; give a new --log-dir, or leave it out for {default}")
    if not path.is_dir():
        return
    logs = dealer_logs(path)
    found = describe_games(logs) if logs else ""
    if not logs and (path / "bots.jsonl").exists():
        found = "bots.jsonl"
    if found:
        raise ValueError(
            f"{path}: already holds the logs of another match ({found}); each match is written to a folder of "
            f"its own: give a new --log-dir, or leave it out for {default}"
        )


def _seat_names(specs: Sequence[SeatSpec]) -> tuple[str, str]:
    """The seats' names in the dealer's log: a command's file name may hold characters a ``STATE``
    line cannot (spaces, ``:``, ``|``, non-ASCII), written as ``-``."""
    a, b = (re.sub(r"[^A-Za-z0-9_.+-]+", "-", spec.label) or "seat" for spec in specs[:2])
    if a == b:
        return f"{a}-1", f"{b}-2"
    return a, b


def run_single(
    game: Game,
    game_label: str,
    hands: int,
    specs: Sequence[SeatSpec],
    names: Sequence[str],
    seed: int,
    log_dir: Path,
    match_name: str,
    t_response_ms: int = DEFAULT_T_RESPONSE_MS,
    t_hand_ms: int = DEFAULT_T_HAND_MS,
    t_per_hand_ms: int = DEFAULT_T_PER_HAND_MS,
    deck: DeckConvention = "high",
    host: str = "127.0.0.1",
    connect_timeout_s: float = 600.0,
    bot_config: Config | None = None,
    on_hand: Callable[[int, tuple[float, ...], list[SeatStats]], None] | None = None,
) -> tuple[DealerResult, list[ClientSummary | None]]:
    """One match through our dealer; returns the dealer's result and the built-in seats' summaries."""
    log_dir.mkdir(parents=True, exist_ok=True)
    dealer_config = DealerConfig(
        match_name=match_name,
        game=game,
        game_label=game_label,
        hands=hands,
        seed=seed,
        names=tuple(names),
        host=host,
        t_response_ms=t_response_ms,
        t_hand_ms=t_hand_ms,
        t_per_hand_ms=t_per_hand_ms,
        start_timeout_ms=int(connect_timeout_s * 1000),
        log_dir=log_dir,
        quiet=True,
        deck=deck,
    )
    err_path = log_dir / f"{match_name}.dealer.err"
    summaries: list[ClientSummary | None] = [None] * len(specs)
    procs: dict[int, subprocess.Popen[bytes]] = {}
    threads: list[threading.Thread] = []
    # built before the dealer starts: a bot that cannot start (bad model, bad config) stops us here
    bots = {i: make_bot(spec.bot, game, bot_config, seed=seed * 2 + i) for i, spec in enumerate(specs) if spec.bot is not None}
    with open(err_path, "w", encoding="ascii") as err, open(log_dir / f"{match_name}.dealer.out", "w") as out:
        dealer = Dealer(dealer_config, out=out, err=err, on_hand=on_hand)
        ports = dealer.open()
        result_box: list[DealerResult] = []
        stopping = threading.Event()  # set when the match is stopped from here: the seats' ends are not errors
        dealer_done = threading.Event()

        def dealer_main() -> None:
            try:
                result_box.append(dealer.run())
            finally:
                dealer_done.set()

        dealer_thread = threading.Thread(target=dealer_main, name="dealer", daemon=True)
        dealer_thread.start()
        for i, spec in enumerate(specs):
            if spec.bot is not None:
                bot = bots[i]

                def seat_main(i: int = i, bot=bot) -> None:
                    try:
                        summaries[i] = play(game, bot, host, ports[i], connect_timeout=connect_timeout_s, stopped=stopping.is_set)
                    except OSError as exc:  # the dealer went away (an aborted match): its log says why
                        log.warning("seat_disconnected", seat=i + 1, error=str(exc))
                    except Exception:
                        log.exception("seat_failed", seat=i + 1)

                t = threading.Thread(target=seat_main, name=f"seat {i + 1}", daemon=True)
                t.start()
                threads.append(t)
            else:
                argv = [a.replace("{host}", host).replace("{port}", str(ports[i])) for a in spec.command]
                seat_log = open(log_dir / f"{match_name}.seat{i + 1}.log", "wb")
                try:
                    procs[i] = subprocess.Popen(argv, stdout=seat_log, stderr=subprocess.STDOUT)
                except OSError as exc:
                    seat_log.close()
                    reason = f"seat {i + 1}: cannot start {argv[0]!r}: {exc}"
                    dealer.stop_waiting(reason)
                    dealer_thread.join()  # its log is finished before the log files close
                    raise ValueError(reason) from None
                seat_log.close()
        try:
            _wait_for_dealer(dealer, dealer_thread, threads, procs, log_dir, match_name)
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: end the match, and let the bots' threads end before we do
            stopping.set()
            _stop_match(dealer, dealer_done, threads)
            raise
        for t in threads:
            t.join(timeout=30)
        for proc in procs.values():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    if not result_box:  # run() reports its own failures; this is only a last guard
        return DealerResult(False, "the dealer ended without a result", 0, [SeatStats() for _ in specs]), summaries
    return result_box[0], summaries


def _stop_match(dealer: Dealer, dealer_done: threading.Event, threads: Sequence[threading.Thread]) -> None:
    """The match stopped from here: the dealer ends it (its log whole up to the last hand) and the
    built-in bots' threads end at their next read or answer. A thread left inside torch when the
    process exits aborts it (status 134, 'terminate called without an active exception')."""
    dealer.stop("the match was interrupted")
    dealer_done.wait(timeout=30)  # not dealer_thread.join(): a join that Ctrl-C interrupted reports the thread ended
    for t in threads:
        t.join(timeout=30)


def _wait_for_dealer(
    dealer: Dealer,
    dealer_thread: threading.Thread,
    threads: Sequence[threading.Thread],
    procs: dict[int, subprocess.Popen[bytes]],
    log_dir: Path,
    match_name: str,
) -> None:
    """Wait for the match to end. A seat that dies before it connects (a built-in bot whose
    connection failed, a seat program that exited) stops the dealer's wait for the
    seats at once instead of at the start timeout; once the match runs, this changes nothing."""
    while dealer_thread.is_alive():
        dealer_thread.join(0.2)
        for t in threads:
            if not t.is_alive():
                dealer.stop_waiting(f"the built-in bot of {t.name} ended before the match started (see bots.jsonl)")
        for i, proc in procs.items():
            code = proc.poll()
            if code is not None:  # exit status 0 too: a program that ends before connecting never will
                dealer.stop_waiting(
                    f"the program of seat {i + 1} exited with code {code} before the match started "
                    f"(its output: {log_dir / f'{match_name}.seat{i + 1}.log'})"
                )


def run_match(
    game: Game,
    game_label: str,
    hands: int,
    seats: Sequence[str],
    seed: int = 0,
    duplicate: bool = False,
    log_dir: Path | str = "runs/match",
    progress: Callable[[str], None] | None = None,
    progress_every: int = 0,
    **options: object,
) -> MatchReport:
    """Play ``hands`` hands (twice, seats swapped, with ``duplicate``) and collect the results;
    with ``progress``, a :class:`MatchProgress` line goes to it every ``progress_every`` hands
    (0: every 10% of the match)."""
    specs = [parse_seat(s) for s in seats]
    if len(specs) != 2:
        raise ValueError("a match needs exactly two seats")
    names = _seat_names(specs)
    log_dir = Path(log_dir)
    report = MatchReport(game=game, names=names)
    base = f"{game.name}.{names[0]}.vs.{names[1]}.s{seed}"
    total = hands * (2 if duplicate else 1)
    tracker = (
        MatchProgress(names, total, game.big_blind or None, progress_every or max(1, total // 10), progress) if progress else None
    )
    on_hand = tracker.start_match(0) if tracker else None
    result, summaries = run_single(game, game_label, hands, specs, names, seed, log_dir, base, on_hand=on_hand, **options)  # type: ignore[arg-type]
    report.results.append(result)
    report.clients.append(summaries)
    if duplicate and result.ok:
        result, summaries = run_single(
            game,
            game_label,
            hands,
            specs[::-1],
            names[::-1],
            seed,
            log_dir,
            base + ".swapped",
            on_hand=tracker.start_match(1) if tracker else None,
            **options,  # type: ignore[arg-type]
        )
        report.results.append(result)
        report.clients.append(summaries)
    return report


def decision_solver_rates(decisions_log: Path, streets: Sequence[str]) -> dict[str, tuple[list[int], list[float]]]:
    """Per street, the iterations and solve seconds of each re-solved decision (cached answers
    left out) from a ``bots.jsonl``: how many iterations the solver reaches, and how fast."""
    out: dict[str, tuple[list[int], list[float]]] = {s: ([], []) for s in streets}
    for event in read_events([decisions_log]):
        street = event.get("street")
        if event.get("event") != "decision" or event.get("cached") or not finite_number(street):
            continue
        if 0 <= street < len(streets) and finite_number(event.get("iterations")) and finite_number(event.get("solve_ms")):
            its, secs = out[streets[int(street)]]
            its.append(int(event["iterations"]))
            secs.append(float(event["solve_ms"]) / 1000.0)
    return out


def decision_think_times(decisions_log: Path, streets: Sequence[str]) -> dict[str, list[float]]:
    """Seconds per decision by street (``streets[round]``) from the bots' JSON-lines log
    (``bots.jsonl`` of a match folder); cached answers, out-of-time answers (a re-solve thrown
    away took its time) and failed decisions included, other lines skipped."""
    out: dict[str, list[float]] = {s: [] for s in streets}
    for event in read_events([decisions_log]):
        street, think_ms = event.get("street"), event.get("think_ms")
        if event.get("event") not in ("decision", "out_of_time", "decision_failed"):
            continue
        if finite_number(street) and finite_number(think_ms) and 0 <= street < len(streets):
            out[streets[int(street)]].append(float(think_ms) / 1000.0)
    return out
