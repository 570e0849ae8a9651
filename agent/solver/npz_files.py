"""NumPy ``.npz`` files the product writes (bucket tables, the pre-flop matrix, blueprints,
training shards), written whole or not at all.

Each is written under a hidden name beside the target and renamed over it, so a run killed
mid-write leaves the previous file (or none), never a truncated one that a later run would
load. Here, in the lowest layer of ``agent``, so every layer that writes one can use it.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np


def save_npz(path: str | Path, compressed: bool = True, **arrays: np.ndarray) -> None:
    """``arrays`` into ``path`` (its folder made if needed), atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.part")
    try:
        with open(tmp, "wb") as f:  # a file object: savez adds no ".npz" to the name
            (np.savez_compressed if compressed else np.savez)(f, **arrays)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
