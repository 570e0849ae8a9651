"""The dealer's transaction file (``NAME.tlog``, ``-T``): one line per action taken, enough to
resume an interrupted match (``-T -a``: the actions are replayed, then the match goes on live).

A line is ``ACTION HAND SEND RECV``, as the ACPC dealer writes it: the action as on the wire
(``c``, ``f``, ``r300``; limit raises ``r``), the hand number, and the wall-clock seconds at
which the state was sent and the reply arrived (six decimals); the replay charges the seat the
time between them, so the time limits hold across the interruption."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from protocol.client import printable

_LINE = re.compile(r"([fc]|r\d*) (\d+) (\d+\.\d{6}) (\d+\.\d{6})", re.ASCII)


class TransactionError(ValueError):
    """A transaction file that cannot be replayed."""


@dataclass(frozen=True)
class Transaction:
    """One line of the transaction file: the action as on the wire, its hand number, and the wall-clock
    seconds the state was sent and the reply arrived."""

    action: str
    hand_id: int
    send_time: float
    recv_time: float
    #: where it was read from (``FILE:LINE``), for errors
    where: str = ""

    @property
    def response_us(self) -> int:
        """The seat's time on this action; a clock that went backwards counts nothing (as the
        ACPC dealer does)."""
        return max(0, round((self.recv_time - self.send_time) * 1e6))

    def line(self) -> str:
        """The transaction-file line for this action, with its line end (times to the microsecond)."""
        return f"{self.action} {self.hand_id} {self.send_time:.6f} {self.recv_time:.6f}\n"


def drop_partial_line(path: Path) -> None:
    """Cut a last line without its end off ``path`` (the dealer was killed while writing it), so
    that the lines appended next start on a line of their own and the file stays readable."""
    with open(path, "rb+") as f:
        data = f.read()
        if data and not data.endswith(b"\n"):
            f.truncate(data.rfind(b"\n") + 1)


def read_transactions(path: Path) -> list[Transaction]:
    """Every action of ``path`` in order; a line that is not a transaction is refused, naming it.
    A last line without its end (the dealer was killed while writing it) is dropped: the action
    it was about is asked for again."""
    text = path.read_bytes().decode("ascii", errors="replace")
    lines = text.split("\n")
    lines.pop()  # the "" after the last line end, or a last line cut short
    out = []
    for number, line in enumerate(lines, start=1):
        found = _LINE.fullmatch(line.rstrip("\r"))
        if found is None:
            raise TransactionError(f"{path}:{number}: not a transaction line (ACTION HAND SEND RECV): {printable(line)!r}")
        action, hand, send, recv = found.groups()
        out.append(Transaction(action, int(hand), float(send), float(recv), where=f"{path}:{number}"))
    return out
