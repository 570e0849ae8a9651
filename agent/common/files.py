"""Files the product writes (networks, manifests, data shards, bucket tables, start caches, LBR
chunks, run records), written whole or not at all.

Each is written to a temporary file beside the target, under a hidden name no one else can take,
and renamed over it: a run killed mid-write leaves the previous file (or none), never a truncated
one that a later run would load, and a planted file or link of a predictable name is never
followed. A write that fails removes its temporary file, and its error names the file asked for.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

#: what ``np.load`` raises for a file that is not a whole ``.npz`` of ours (missing, empty, cut
#: short, another format, a key missing): callers turn these into one message naming the file
NPZ_ERRORS = (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile)


def npz_problem(exc: BaseException) -> str:
    """What one of :data:`NPZ_ERRORS` says about the file, for a message. ``np.load`` takes a file
    that is no archive for a pickle and answers with advice to load it unsafely: not repeated."""
    if isinstance(exc, ValueError) and "contains pickled" in str(exc):  # not "Object arrays cannot be loaded ..."
        return "not a NumPy .npz archive"
    return str(exc) or type(exc).__name__


def _read_umask() -> int:
    umask = os.umask(0)  # the only way to read it is to set it: done once, at import
    os.umask(umask)
    return umask


#: the mode of a file the user creates (mkstemp's own is 0600)
_MODE = 0o666 & ~_read_umask()


@contextmanager
def replacing(path: str | Path, through_links: bool = True) -> Iterator[Path]:
    """A temporary path to write ``path``'s new content to; renamed over ``path`` when the block
    ends, removed when it raises. The file gets the permissions any file the user writes gets; a
    ``path`` that is a link is written through (its target replaced, the link kept), or with
    ``through_links`` False replaced itself (its target left as it was)."""
    path = Path(path)
    if through_links and path.is_symlink():
        path = path.resolve()
    if not path.parent.is_dir():
        blocker = next((p for p in path.parents if p.is_file()), None)
        where = f"{blocker} is a file, not a folder" if blocker else f"its folder {path.parent} does not exist"
        raise FileNotFoundError(f"{path}: {where}")
    try:
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    except OSError as exc:  # a folder we may not write in, a read-only disk, no inodes left
        raise _named(exc, path, None) from exc
    tmp = Path(name)
    try:
        try:
            os.fchmod(fd, _MODE)
        finally:
            os.close(fd)
        yield tmp
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise _named(exc, path, tmp) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _named(exc: OSError, path: Path, tmp: Path | None) -> OSError:
    """``exc`` as about the file asked for, where it named the hidden temporary file or no file (a write
    with no space left); the same subclass, so callers catch it as before."""
    if exc.strerror and (exc.filename is None or tmp is None or str(exc.filename) == str(tmp)):
        return OSError(exc.errno, exc.strerror, str(path))
    return exc


def write_bytes(path: str | Path, data: bytes) -> None:
    """``data`` into ``path``, atomically."""
    with replacing(path) as tmp:
        tmp.write_bytes(data)


def write_torch(path: str | Path, save: Callable[[BinaryIO], None]) -> None:
    """What ``save`` writes (``torch.save`` or a TorchScript module's, to a file object) into ``path``,
    atomically. Saved to memory first: torch's own writer, refused a write, raises a RuntimeError that
    names no file ("unexpected pos ..."); written here, a refusal is an OSError naming ``path``."""
    buffer = io.BytesIO()
    save(buffer)
    write_bytes(path, buffer.getvalue())


def write_png(path: str | Path, figure: Any, dpi: int) -> None:
    """A matplotlib figure as a PNG into ``path``, atomically: a plot a run was stopped in the middle of
    is the previous one, not a cut-off image."""
    with replacing(path) as tmp:
        figure.savefig(tmp, dpi=dpi, format="png")


def write_text(path: str | Path, text: str) -> None:
    """``text`` into ``path``, atomically."""
    with replacing(path) as tmp:
        tmp.write_text(text)


def write_json(path: str | Path, data: Any, indent: int | None = 1, sort_keys: bool = False) -> None:
    """``data`` as JSON into ``path`` (a trailing newline when indented), atomically."""
    text = json.dumps(data, indent=indent, sort_keys=sort_keys)
    write_text(path, text + "\n" if indent is not None else text)


def save_npz(path: str | Path, compressed: bool = True, **arrays: np.ndarray) -> None:
    """``arrays`` into the ``.npz`` file ``path`` (its folder made if needed), atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with replacing(path) as tmp, open(tmp, "wb") as f:  # a file object: savez adds no ".npz" to the name
        (np.savez_compressed if compressed else np.savez)(f, **arrays)
