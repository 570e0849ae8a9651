"""The start cache: the re-solves of a game's first states, kept on disk so a bot starts at once.

The first state of every hand is the same, so its re-solves (one per position and deck
convention) are solved once and saved with the key of what they depend on: the game, the
bot's settings (model files by their sha256, not their path, so a checkout and an installed
package agree) and the source of the code that solves them. A file made by other settings or
code is ignored with a warning, never used. The device is not part of the key: CPU and CUDA
re-solves of the same settings differ in rounding only (as CPUs with and without bfloat16 do),
so the shipped cache, made on a CPU, also starts a bot on a GPU at once. Shipped caches live
under ``models/``, are listed in its manifest and are checked by their sha256 before they are
unpickled; the bot never writes there (``deepstack prepare`` does).
"""

from __future__ import annotations

import dataclasses
import hashlib
import pickle
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO

from agent.common.files import write_bytes
from agent.nets.manifest import checked_file, sha256_of
from models import MODELS_DIR
from protocol.gamedef import Game
from protocol.logs import get_logger

log = get_logger("start_cache")

#: the project root (a checkout) or site-packages (an installed package)
_ROOT = Path(__file__).resolve().parents[2]
#: source whose change can change a re-solve: the solver, the leaves, the networks' use,
#: continual re-solving, how the bot builds its settings, the rules and the C kernels
_CODE = (
    "agent/solver/*.py",
    "agent/leaves/*.py",
    "agent/nets/*.py",
    "agent/resolving/*.py",
    "agent/bots/settings.py",
    "native/*.py",
    "native/src/*.c",
    "native/src/*.h",
    "protocol/state.py",
    "protocol/actions.py",
    "protocol/gamedef.py",
)
#: matched by the patterns above but never used by a re-solve: a change to them keeps the caches
_NOT_CODE = frozenset({"native/bench.py", "native/build_ffi.py", "native/mccfr.py", "native/src/mccfr.c"})
#: the file's layout: a header line, the key, the payload's sha256, then the pickled payload
_MAGIC = b"deepstack-start-cache 2\n"


class StartCacheError(ValueError):
    """A start cache that cannot be written where it was asked for."""


@cache
def code_digest() -> str:
    """sha256 of the source that decides the re-solves (file names and bytes)."""
    h = hashlib.sha256()
    for pattern in _CODE:
        for path in sorted(_ROOT.glob(pattern)):
            if str(path.relative_to(_ROOT)) in _NOT_CODE:
                continue
            h.update(str(path.relative_to(_ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def fingerprint(settings: Any) -> Any:
    """``settings`` (a config dataclass) as plain data, with every model file replaced by its
    sha256 and output paths (logs, the cache itself) left out."""
    if dataclasses.is_dataclass(settings):
        out = {}
        for f in dataclasses.fields(settings):
            value = getattr(settings, f.name)
            kind = f.metadata.get("path")
            if kind == "output" or f.name == "start_cache":
                continue
            if kind == "model" and isinstance(value, str):
                out[f.name] = sha256_of(Path(value)) if Path(value).is_file() else f"missing:{value}"
            else:
                out[f.name] = fingerprint(value)
        return out
    return repr(settings)


def start_key(game: Game, settings: Any) -> str:
    """What a start cache depends on, as one sha256."""
    parts = [game.to_text(), repr(fingerprint(settings)), code_digest()]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def is_shipped(path: Path) -> bool:
    """Whether ``path`` is a shipped start cache (under ``models/``): checked against the manifest before
    it is read, and written by ``deepstack prepare`` only."""
    return path.resolve().is_relative_to(MODELS_DIR.resolve())


def load_start_cache(path: Path, key: str) -> dict | None:
    """The saved re-solves (``{convention: data}``) when ``path`` holds them for ``key``; None
    (with a warning naming the file and why) when it is missing, stale, damaged or unreadable.

    The key and the payload's sha256 are read before anything is unpickled: a stale or damaged
    file is never unpickled. A file that passes both is unpickled, so keep start caches where
    only you can write (as any pickle, a file made by someone else could run code)."""
    if not path.exists():
        log.warning("start_cache_missing", path=str(path), reason="solving the first states instead")
        return None
    try:
        if is_shipped(path):
            checked_file(path)  # sha256 against the manifest before anything is unpickled
        with open(path, "rb") as f:
            saved = _read_key(f)
            if saved is None:
                raise ValueError("not a start cache of this version (deepstack prepare writes one)")
            if saved != key:
                log.warning(
                    "start_cache_stale",
                    path=str(path),
                    reason="made by other settings, models or code; solving the first states instead "
                    "(deepstack prepare writes a cache for these settings)",
                )
                return None
            digest = f.readline().rstrip(b"\n").decode("ascii", "replace")
            payload = f.read()
        if hashlib.sha256(payload).hexdigest() != digest:
            raise ValueError("damaged: its contents do not match the sha256 it was written with")
        seats = pickle.loads(payload)
        if not isinstance(seats, dict) or not all(isinstance(v, dict) for v in seats.values()):
            raise ValueError("not a start cache")
    except Exception as exc:  # noqa: BLE001 - whatever a bad file raises, the bot solves instead
        log.warning(
            "start_cache_unreadable",
            path=str(path),
            error=f"{type(exc).__name__}: {exc}",
            reason="solving the first states instead",
        )
        return None
    return seats


def saved_key(path: Path) -> str | None:
    """The key a start cache was written for, read without unpickling it (None: not a cache
    of this version)."""
    with open(path, "rb") as f:
        return _read_key(f)


def _read_key(f: BinaryIO) -> str | None:
    """The key line after the header of an open cache file (None: not a cache of this version)."""
    if f.readline() != _MAGIC:
        return None
    return f.readline().rstrip(b"\n").decode("ascii", "replace")


def save_start_cache(path: Path, key: str, seats: dict, allow_shipped: bool = False) -> None:
    """Write ``seats`` with ``key`` to ``path`` atomically (a temporary file of a name no one else
    can take, then a rename). A path under ``models/`` is written only with ``allow_shipped``
    (``deepstack prepare``)."""
    if is_shipped(path) and not allow_shipped:
        raise StartCacheError(f"{path}: a shipped start cache is written by 'deepstack prepare' only")
    check_cache_path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = pickle.dumps(seats, protocol=pickle.HIGHEST_PROTOCOL)
    header = _MAGIC + key.encode("ascii") + b"\n" + hashlib.sha256(payload).hexdigest().encode("ascii") + b"\n"
    write_bytes(path, header + payload)


def check_cache_path(path: Path) -> None:
    """Refuse a start-cache path that can never be written, or whose file is not a start cache
    (a slip in the config must not replace someone's file), before anything is solved for it."""
    if path.is_dir():  # the rename would fail after the whole file was written, next to it
        raise StartCacheError(f"{path}: is a folder; give the start cache's file name")
    if path.is_file():
        try:
            with open(path, "rb") as f:
                head = f.read(len(_MAGIC))
        except OSError as exc:
            raise StartCacheError(f"{path}: cannot be read ({exc.strerror or exc})") from None
        # ours: this version's header, an earlier version's, or the bare pickle of the first format
        if head and not (head.startswith(_MAGIC.split(b" ")[0]) or head.startswith(b"\x80")):
            raise StartCacheError(
                f"{path}: exists and is not a start cache; it is not overwritten (give another file, or remove it)"
            )
