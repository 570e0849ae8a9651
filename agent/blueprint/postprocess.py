"""Post-processing of a blueprint's action probabilities before play (seed 001, section 4): an
abstraction's equilibrium puts small, noisy mass on poor actions, and playing it as it is costs.

* ``none``: the average strategy as it is.
* ``threshold``: probabilities below ``threshold`` set to 0, the rest renormalised.
* ``purify``: the most probable action with probability 1 (ties broken at random).
* ``fold-bet`` (the seed's new family): fold outright if its probability exceeds ``threshold``;
  otherwise purify between fold, call and the meta-action "bet" (every bet size's mass together),
  and if bet wins, purify among the bet sizes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

PostProcess = Literal["none", "threshold", "purify", "fold-bet"]
POSTPROCESSING: tuple[str, ...] = ("none", "threshold", "purify", "fold-bet")


def postprocess(probs: np.ndarray, kinds: Sequence[str], method: str, threshold: float, rng: np.random.Generator) -> np.ndarray:
    """``probs`` over actions of ``kinds`` (``fold``, ``call`` or ``bet`` each) after ``method``."""
    p = np.asarray(probs, dtype=np.float64)
    if method == "none":
        return p / p.sum()
    if method == "threshold":
        kept = np.where(p >= threshold, p, 0.0)
        return kept / kept.sum() if kept.sum() > 0 else _purify(p, rng)
    if method == "purify":
        return _purify(p, rng)
    if method == "fold-bet":
        kinds_arr = np.asarray(kinds)
        fold = kinds_arr == "fold"
        if fold.any() and p[fold].sum() > threshold:
            return fold.astype(np.float64)
        classes = ("fold", "call", "bet")
        mass = np.array([p[kinds_arr == c].sum() for c in classes])
        chosen = classes[int(np.argmax(_purify(mass, rng)))]
        inside = np.where(kinds_arr == chosen, p, 0.0)
        return _purify(inside, rng)
    raise ValueError(f"unknown post-processing {method!r}; use one of {', '.join(POSTPROCESSING)}")


def _purify(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    best = np.flatnonzero(p >= p.max() - 1e-12)
    out = np.zeros(len(p))
    out[best[int(rng.integers(len(best)))]] = 1.0
    return out
