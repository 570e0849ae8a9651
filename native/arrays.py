"""Integer arrays handed to C, converted only after their values are checked.

``np.ascontiguousarray(x, dtype=np.uint8)`` wraps 268 onto 12 and truncates 12.9 to 12, so a bad
card, bucket or outcome would reach C as a valid one and give a wrong result without a word.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def exact_integers(values: npt.ArrayLike, dtype: npt.DTypeLike, name: str) -> np.ndarray:
    """``values`` as a C-contiguous array of the integer ``dtype``; ValueError naming ``name``
    when they are not integers or do not fit it."""
    try:
        arr = np.asarray(values)
    except (ValueError, TypeError) as exc:  # ragged nested lists and the like
        raise ValueError(f"{name} must be a rectangular array of integers: {exc}") from exc
    if arr.dtype.kind not in "iub":
        raise ValueError(f"{name} must have an integer dtype, got {arr.dtype}")
    info = np.iinfo(dtype)
    if arr.dtype.kind != "b" and arr.size and (arr.min() < info.min or arr.max() > info.max):
        bad = arr[(arr < info.min) | (arr > info.max)].flat[0]
        raise ValueError(f"{name}: {int(bad)} does not fit {np.dtype(dtype).name} ({info.min}..{info.max})")
    return np.ascontiguousarray(arr, dtype=dtype)
