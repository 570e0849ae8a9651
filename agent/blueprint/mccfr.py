"""Training a blueprint: external-sampling MCCFR (in C) over a betting tree and a card abstraction,
with linear averaging, resumable from its checkpoint."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from agent.blueprint.abstraction import Abstraction
from agent.blueprint.tree import BlueprintTree
from native import mccfr


@dataclass
class Blueprint:
    """Regrets and average-strategy sums over ``tree``'s information sets (``tree.flat.num_slots``)."""

    tree: BlueprintTree
    abstraction: Abstraction
    regrets: np.ndarray = field(default=None)  # type: ignore[assignment]
    strategy_sum: np.ndarray = field(default=None)  # type: ignore[assignment]
    iterations: int = 0

    def __post_init__(self) -> None:
        if tuple(self.tree.flat.num_buckets) != tuple(self.abstraction.num_buckets):
            raise ValueError("the tree was laid out for other bucket counts than the abstraction's")
        slots = self.tree.flat.num_slots
        if self.regrets is None:
            self.regrets = np.zeros(slots, np.float32)
        if self.strategy_sum is None:
            self.strategy_sum = np.zeros(slots, np.float32)

    def train(self, iterations: int, seed: int = 0, batch: int = 20_000, linear: bool = True, progress: bool = False) -> float:
        """Run ``iterations`` more iterations (one deal each, both positions traversed); returns the
        seconds taken. ``linear``: iteration t weighs t in the regrets and the average (Linear CFR),
        applied between batches by scaling both sums by T / (T + batch)."""
        start = time.perf_counter()
        bar = tqdm(total=iterations, desc="MCCFR", unit="it", unit_scale=True, disable=not progress)
        done = 0
        while done < iterations:
            n = min(batch, iterations - done)
            if linear and self.iterations > 0:
                scale = np.float32(self.iterations / (self.iterations + n))
                self.regrets *= scale
                self.strategy_sum *= scale
            rng = np.random.default_rng([seed, self.iterations])
            buckets, outcome = self.abstraction.deal(rng, n)
            mccfr.run(self.tree.flat, buckets, outcome, self.regrets, self.strategy_sum, int(rng.integers(2**63)))
            self.iterations += n
            done += n
            bar.update(n)
        bar.close()
        return time.perf_counter() - start

    def average(self, n: int, bucket: int) -> np.ndarray:
        """The average strategy of decision ``n`` for ``bucket`` (uniform where never reached)."""
        s = self.strategy_sum[self.tree.info_set(n, bucket)].astype(np.float64)
        total = s.sum()
        return s / total if total > 0 else np.full(len(s), 1.0 / len(s))

    def save(self, path: str | Path) -> None:
        np.savez_compressed(path, regrets=self.regrets, strategy_sum=self.strategy_sum, iterations=self.iterations)

    def load(self, path: str | Path) -> None:
        """Resume from a checkpoint written by :meth:`save` for the same tree and abstraction."""
        with np.load(path) as f:
            regrets, sums = f["regrets"], f["strategy_sum"]
            if regrets.shape != self.regrets.shape or sums.shape != self.strategy_sum.shape:
                raise ValueError(f"{path}: a checkpoint of {regrets.shape[0]} slots, not this tree's {self.regrets.shape[0]}")
            self.regrets[:] = regrets
            self.strategy_sum[:] = sums
            self.iterations = int(f["iterations"])
