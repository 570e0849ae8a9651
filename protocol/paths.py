"""What an OSError about a path says, for a person: the dealer's log folder and every command's outputs."""

from __future__ import annotations

import os
from pathlib import Path


def os_reason(exc: OSError) -> str:
    """The reason of an OSError about a path, saying which file stands where a folder is needed
    (``afile is a file, not a folder``, not ``[Errno 17] File exists: 'afile'``)."""
    if isinstance(exc, (FileExistsError, NotADirectoryError)) and isinstance(exc.filename, (str, os.PathLike)):
        blocker = next((p for p in (Path(exc.filename), *Path(exc.filename).parents) if p.is_file()), None)
        if blocker is not None:
            return f"{blocker} is a file, not a folder"
    return str(exc.strerror or exc)


def not_there(path: Path, want: str = "folder") -> str:
    """Why ``path`` is not the ``want`` (``folder`` or ``file``) asked for: missing, or the other kind
    (``README.md is a file, not a folder``, not ``no such folder`` of a path that exists)."""
    if path.is_dir() and want != "folder":
        return f"{path} is a folder, not a {want}"
    if path.exists() and want == "folder":
        return f"{path} is a file, not a folder"
    if path.exists() and not path.is_file():
        return f"{path} is not a regular file"  # a device, a pipe
    return f"{path}: no such {want}"
