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
import os
import pickle
from functools import cache
from pathlib import Path
from typing import Any

from agent.nets.manifest import ModelError, checked_file, sha256_of
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


class StartCacheError(ValueError):
    """A start cache that cannot be written where it was asked for."""


@cache
def code_digest() -> str:
    """sha256 of the source that decides the re-solves (file names and bytes)."""
    h = hashlib.sha256()
    for pattern in _CODE:
        for path in sorted(_ROOT.glob(pattern)):
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
    return path.resolve().is_relative_to(MODELS_DIR.resolve())


def load_start_cache(path: Path, key: str) -> dict | None:
    """The saved re-solves (``{convention: data}``) when ``path`` holds them for ``key``; None
    (with a warning naming the file and why) when it is missing, stale or unreadable."""
    if not path.exists():
        log.warning("start_cache_missing", path=str(path), reason="solving the first states instead")
        return None
    try:
        if is_shipped(path):
            checked_file(path)  # sha256 against the manifest before anything is unpickled
        with open(path, "rb") as f:
            saved = pickle.load(f)
        if not isinstance(saved, dict) or not isinstance(saved.get("seats"), dict):
            raise ValueError("not a start cache")
    except (OSError, ModelError, ValueError, pickle.UnpicklingError, EOFError, AttributeError) as exc:
        log.warning("start_cache_unreadable", path=str(path), error=str(exc), reason="solving the first states instead")
        return None
    if saved.get("key") != key:
        log.warning(
            "start_cache_stale",
            path=str(path),
            reason="made by other settings, models or code; solving the first states instead "
            "(deepstack prepare writes a cache for these settings)",
        )
        return None
    return saved["seats"]


def save_start_cache(path: Path, key: str, seats: dict, allow_shipped: bool = False) -> None:
    """Write ``seats`` with ``key`` to ``path`` atomically (a temporary file, then a rename).
    A path under ``models/`` is written only with ``allow_shipped`` (``deepstack prepare``)."""
    if is_shipped(path) and not allow_shipped:
        raise StartCacheError(f"{path}: a shipped start cache is written by 'deepstack prepare' only")
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir():  # the rename would fail after the whole file was written, next to it
        raise StartCacheError(f"{path}: is a folder; give the start cache's file name")
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as f:
            pickle.dump({"key": key, "seats": seats}, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except BaseException:  # no half-written or orphaned temporary file left behind
        tmp.unlink(missing_ok=True)
        raise
