"""What every ``deepstack`` parser shares: the help layout (defaults shown, examples kept as written)
and argument types that refuse bad values with argparse's own one-line error."""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

from agent.bots.config import MAX_SEED
from agent.common.yaml_files import shown
from agent.nets.valuenet import NET_PRECISIONS
from agent.training.generate_spec import UPDATES
from protocol.gamedef import SHORT_NAMES, Game, GameDefError, load_game
from protocol.paths import os_reason

GAME_HELP = "game: " + ", ".join(SHORT_NAMES) + " or a path to a .game file"


class HelpFormatter(argparse.HelpFormatter):
    """Every option's default appended to its help (unless the help already says it), and text
    with line breaks (epilogs: exit codes, the example) printed as written.

    Descriptions are single paragraphs and are wrapped; an epilog is preformatted, as with
    ``RawDescriptionHelpFormatter``. A default is not appended to a flag (``store_true``), a
    required option, a positional or a default of None: for those the help says in words what
    happens when the option is left out."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if (
            "default" in text
            or not action.option_strings
            or action.required
            or action.default is None
            or action.default is argparse.SUPPRESS
            or isinstance(action.default, bool)
        ):
            return text
        return text + " (default: %(default)s)"


def load_game_or_exit(text: str, command: str) -> Game:
    """The game ``--game`` names; a bad one ends ``deepstack COMMAND`` with status 2, as any bad argument."""
    try:
        return load_game(text)
    except GameDefError as exc:
        print(f"deepstack {command}: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def example(command: str, note: str = "") -> str:
    """An epilog ending with one complete command; ``note`` (optional) says what it needs or does."""
    return f"example{' (' + note + ')' if note else ''}:\n  {command}"


def port(text: str) -> int:
    """A TCP port to connect to: 1..65535."""
    value = _whole(text)
    if value is None or not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (1..65535)")
    return value


def host(text: str) -> str:
    """A dealer's host name or address: not empty, no spaces (an empty one was looked up for the
    whole connect timeout before the error came)."""
    if not text.strip() or any(c.isspace() for c in text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a host name or address")
    return text


def _whole(text: str) -> int | None:
    """``text`` as a whole number, None where it is not one."""
    try:
        return int(text)
    except ValueError:
        return None


def path_arg(text: str) -> str:
    """A file or folder argument: an empty one is refused (it would fall back to a default or to the
    current folder without a word)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path")
    return text


def model_name(text: str) -> str:
    """A model's name, which names its files (OUT/NAME.pt, .ckpt, ...): letters, digits, ``-``, ``_``
    and ``.``, not starting with a dot, at most 100 characters (``../keep/notes`` wrote outside
    ``--out``; an empty name wrote the hidden file ``OUT/.pt``)."""
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}", text):
        raise argparse.ArgumentTypeError(
            f"{shown(text)} is not a model name (letters, digits, '-', '_' and '.', not starting with a dot, "
            "at most 100 characters)"
        )
    return text


def seed(text: str) -> int:
    """A seed of the deals and the bots' choices: 0..MAX_SEED (numpy and the dealer take 32 bits)."""
    value = _whole(text)
    if value is None or not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"{text!r} is not a seed (0..{MAX_SEED})")
    return value


def positive_int(text: str) -> int:
    """A count that must be at least 1 (0 or less would do nothing, divide by zero or never end)."""
    return _int_at_least(text, 1)


def count(text: str) -> int:
    """A count that may be 0 (nothing of it) but not negative."""
    return _int_at_least(text, 0)


def repeats(text: str) -> int:
    """How many times a benchmark repeats its work: 1 to 10000 (a typo of 20 digits ran until killed)."""
    value = _int_at_least(text, 1)
    if value > 10_000:
        raise argparse.ArgumentTypeError(f"{text!r} is more than 10000 repeats")
    return value


def bins(text: str) -> int:
    """Equity-histogram bins per hand, 1 to 1000 (a billion was a 9.65 TiB allocation traceback)."""
    value = _int_at_least(text, 1)
    if value > 1000:
        raise argparse.ArgumentTypeError(f"{text!r} is more than 1000 bins")
    return value


def _int_at_least(text: str, low: int) -> int:
    value = _whole(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    if value < low:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least {low}")
    return value


#: the widest and deepest value network the training commands take: the shipped ones are 7 x 500, and
#: a million units or layers was an allocation traceback or memory growing until the machine gave out
MAX_HIDDEN = 16384
MAX_LAYERS = 100
#: the most worker processes a command starts (each is a process: a typo here was a fork bomb)
MAX_WORKERS = 1024
#: the most hands one evaluation run plays (eval lbr, eval aivat): 10^11 started a run of millennia
MAX_HANDS = 10**8


def positive_ms(text: str) -> float:
    """A finite positive number of milliseconds (0, negative, nan or inf drew nothing or overflowed)."""
    value = finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of ms")
    return value


def finite_float(text: str) -> float:
    """A number that is finite (inf and nan would overflow or poison sums later, far from the option)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def pot_fractions(text: str) -> str:
    """Bet sizes as text (``0.5,1`` or ``0.5,1;1/1``: ',' ';' '/' separate sizes, depths, rounds),
    each a finite number: inf overflowed into a traceback and nan slipped past the positivity check.
    The text is returned as given; the tree's own parser says what else is wrong with it."""
    for part in text.replace(";", ",").replace("/", ",").split(","):
        if not part.strip():
            continue
        try:
            value = float(part)
        except ValueError:
            continue  # not a number at all: named by the parser of the sizes, with the whole spec
        if not math.isfinite(value):
            where = "" if part.strip() == text.strip() else f"{text!r}: "
            raise argparse.ArgumentTypeError(f"{where}{part.strip()!r} is not a finite pot fraction")
    return text


def finite_json(value: Any) -> Any:
    """``value`` with every NaN or infinite float made None: JSON has no such numbers, and
    ``json.dumps`` would write ``NaN``/``Infinity`` that other readers refuse (a 95% interval of
    too few hands is infinite)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(v) for v in value]
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` of ``value`` with non-finite numbers as null, checked (``allow_nan=False``)."""
    return json.dumps(finite_json(value), allow_nan=False, **kwargs)


def non_negative_float(text: str) -> float:
    """A finite number >= 0 (a target exploitability: 0 means none)."""
    value = finite_float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 0")
    return value


def fraction(text: str) -> float:
    """A number in [0, 1] (a threshold on probabilities)."""
    value = finite_float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not in [0, 1]")
    return value


def add_network_leaf_options(p: argparse.ArgumentParser, which: str) -> None:
    """``--net-precision`` and ``--updates``: how solves with the next street's network at the leaves
    (``which``: the solves they apply to) multiply and update, as ``deepstack generate`` takes them."""
    p.add_argument(
        "--net-precision",
        choices=NET_PRECISIONS,
        default="auto",
        help=f"{which}: how the network multiplies: auto = bfloat16 on a CPU that has it in hardware (AVX512-BF16 "
        "or AMX; 3-4x faster), else float32 (default: auto)",
    )
    p.add_argument(
        "--updates",
        choices=UPDATES,
        default="auto",
        help=f"{which}: CFR's updates: auto = simultaneous with a network at the leaves (one network call per "
        "iteration, closer targets per CPU-second), else alternating (default: auto)",
    )


class Terminated:
    """SIGTERM (``docker stop``, ``kill``) ends a command as Ctrl-C does, with its status 143. As
    PID 1 in a container a process has no default action for SIGTERM: without this handler
    ``docker stop`` waits its grace period and kills the bot mid-write."""

    received = False
    pid = 0  # the process that installed the handler: forked workers inherit it, and die as usual

    @classmethod
    def handler(cls, signum: int, frame: object) -> None:
        """The SIGTERM handler: in the process that installed it, record the signal and raise KeyboardInterrupt;
        in a forked worker, die by SIGTERM's default instead."""
        if os.getpid() != cls.pid:  # a pool stopping its workers: SIGTERM's default, no traceback
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        cls.received = True
        raise KeyboardInterrupt


def os_problem(exc: OSError) -> str:
    """An OSError as a person reads it: the path, then what is wrong (``afile/m: afile is a file, not a
    folder``, not ``[Errno 20] Not a directory: 'afile/m'``); a message of our own as it is."""
    if exc.filename is None or not exc.strerror:
        return str(exc)
    # a rename's target is the file a person asked for (its source, a temporary file, is gone)
    name = exc.filename2 if exc.filename2 is not None else exc.filename
    reason = os_reason(exc)
    return reason if reason.startswith(f"{exc.filename} is a file") else f"{name}: {reason}"


def cannot_write(out: str | Path, exc: OSError) -> str:
    """``cannot write to OUT: what is wrong``, naming the file inside OUT when it was that one."""
    name = exc.filename2 if exc.filename2 is not None else exc.filename
    named = name is not None and os.path.normpath(str(name)) != os.path.normpath(str(out))
    return f"cannot write to {out}: {os_problem(exc) if named else os_reason(exc)}"


def make_folder(path: str | Path) -> list[Path]:
    """Make ``path`` and its missing parents (an OSError where the machine refuses); the folders made,
    deepest first, for :func:`remove_empty` when the command is then refused."""
    path = Path(path)
    missing = [p for p in (path, *path.parents) if not p.exists()]
    path.mkdir(parents=True, exist_ok=True)
    return missing


def remove_empty(folders: list[Path]) -> None:
    """Remove the folders :func:`make_folder` made that are still empty (a refused command leaves none)."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:  # not empty, or gone: left as it is
            return
