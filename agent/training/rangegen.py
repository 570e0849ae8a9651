"""Random ranges for training situations: DeepStack's recursive generator R(S, p).

R(S, p): if |S| = 1 the hand gets p; otherwise draw p1 ~ U[0, p], give p1 to the weaker
half of S (by hand strength on the board) and p - p1 to the stronger half, recursively.
Called as R(all valid hands, 1), it yields ranges that are smooth in hand strength (as
real ranges are) yet cover all shapes. Implemented level by level on arrays.
"""

from __future__ import annotations

import numpy as np


def recursive_range(order: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """A range over ``size`` hands; ``order`` lists the valid hands from weakest to strongest."""
    order = np.asarray(order, dtype=np.int64)
    out = np.zeros(size)
    if len(order) == 0:
        raise ValueError("no valid hands to give a range to")
    starts = np.array([0])
    ends = np.array([len(order)])
    mass = np.array([1.0])
    while len(starts):
        length = ends - starts
        single = length == 1
        out[order[starts[single]]] = mass[single]
        starts, ends, mass = starts[~single], ends[~single], mass[~single]
        if not len(starts):
            break
        mid = starts + (ends - starts) // 2
        p1 = rng.random(len(starts)) * mass
        starts, ends, mass = np.concatenate([starts, mid]), np.concatenate([mid, ends]), np.concatenate([p1, mass - p1])
    return out


def strength_order(strength: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """The ``valid`` hands from weakest to strongest (ties in index order).

    Validity is a mask of its own, not a sign convention: a strength scale may be negative
    for possible hands (a mean check-down result is below zero for the weaker half)."""
    hands = np.flatnonzero(valid)
    return hands[np.argsort(np.asarray(strength)[hands], kind="stable")]
