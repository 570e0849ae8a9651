"""Seed 001's distributed equilibrium finding: the trunk (the rounds before the split) on a head
process, each public cluster's continuations on a worker that alone holds and updates that
cluster's information sets, in the two-pass form of the seed.

Per batch of deals: the head deals the private cards and walks the trunk once (COLLECT) recording
where each traversal leaves it; every worker draws its clusters' boards for those deals (the card
work of the continuations is the workers', as in the seed) and values the exits with them,
updating its information sets as it goes; the head combines the values weighted by each
cluster's possible boards and walks the same trunk again (REPLAY: the same seed and strategy, so
the same samples), updating the trunk. Workers are plain objects here, Ray actors when a Ray connection is given
(local mode on one machine, a cluster address for many: the same code)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from tqdm import tqdm

from agent.blueprint.abstraction import Abstraction
from agent.blueprint.mccfr import Blueprint
from native import mccfr
from native.mccfr import Exits, FlatTree, Trunk


class ClusterWorker:
    """The continuations of ``clusters``: a copy of the accumulators of which it updates only those
    clusters' information sets."""

    def __init__(
        self,
        flat: FlatTree,
        abstraction: Abstraction,
        clusters: Sequence[int],
        regrets: np.ndarray,
        strategy_sum: np.ndarray,
    ) -> None:
        self.flat = flat
        self.abstraction = abstraction
        self.clusters = list(clusters)
        self.regrets = regrets.copy()
        self.strategy_sum = strategy_sum.copy()

    def run(self, trunk: Trunk, exits: Exits, seed: int, scale: float) -> dict[int, np.ndarray]:
        """Each of its clusters' value of every exit (after scaling both sums for linear averaging): the
        cluster's continuation of every deal drawn here (its board, the later cards, their buckets), then
        walked from each exit."""
        if scale != 1.0:
            self.regrets *= np.float32(scale)
            self.strategy_sum *= np.float32(scale)
        values = {}
        for k in self.clusters:
            rng = np.random.default_rng([seed, k])
            deals = trunk.deals(self.abstraction.split_round, {k: self.abstraction.continuation(trunk, k, rng)})
            walk_seed = int(rng.integers(2**63))
            values[k] = mccfr.continue_exits(self.flat, deals, self.regrets, self.strategy_sum, k, walk_seed, exits)
        return values

    def ready(self) -> bool:
        """Answers once the worker exists (its tables received): the start, timed apart from the work."""
        return True

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """This worker's regrets and strategy sums, once its iterations are done: the driver copies back
        only the slots its clusters own (through Ray when the workers are remote)."""
        return self.regrets, self.strategy_sum


def slot_owners(bp: Blueprint, clusters: int) -> np.ndarray:
    """Per slot: the public cluster whose worker holds it, or -1 for the trunk's."""
    flat = bp.tree.flat
    split = bp.abstraction.split_round
    owner = np.full(flat.num_slots, -1, dtype=np.int64)
    # each round's cluster per bucket, once; a decision's slots are its buckets' blocks of A actions
    by_round = {
        r: np.array([bp.abstraction.cluster_of(r, b, clusters) for b in range(int(flat.num_buckets[r]))])
        for r in range(split, flat.num_rounds)
    }
    for n in np.flatnonzero((flat.kind == mccfr.DECISION) & (flat.round >= split)):
        r, a, start = int(flat.round[n]), int(flat.num_children[n]), int(flat.slot[n])
        owner[start : start + len(by_round[r]) * a] = np.repeat(by_round[r], a)
    return owner


def train_distributed(
    bp: Blueprint,
    iterations: int,
    clusters: int,
    workers: int,
    seed: int = 0,
    batch: int = 500,
    ray: Any = None,
    progress: bool = False,
    stats: dict[str, float] | None = None,
) -> float:
    """``iterations`` more iterations of the two-pass scheme with ``clusters`` public clusters on
    ``workers`` workers (cluster k on worker k mod workers; Ray actors with ``ray``, a connected
    Ray module), linear averaging; the workers' information sets are merged back into ``bp``.
    Returns the seconds taken. The same seed gives the same blueprint for any number of workers.
    The trunk's strategy is fixed within a batch (both passes must sample alike): smaller batches are
    fresher and cost more calls (limit Leduc, 2M iterations: 17.7 mbb/g with batches of 2000, 10.3 with 500).
    ``stats``, if given, receives the seconds of the workers' start (``start_s``) and of the final merge
    (``merge_s``): the rest is the steady work."""
    if not 1 <= workers <= clusters:
        raise ValueError(f"{workers} workers for {clusters} clusters: each worker needs a cluster")
    if batch < 1:  # a batch of no deals never advances: the loop below would not end
        raise ValueError(f"batch {batch}: a trunk update needs at least one deal")
    start = time.perf_counter()
    flat = bp.tree.flat
    groups = [list(range(w, clusters, workers)) for w in range(workers)]
    if ray is None:
        pool = [ClusterWorker(flat, bp.abstraction, g, bp.regrets, bp.strategy_sum) for g in groups]
    else:
        actor = ray.remote(ClusterWorker)
        pool = [actor.remote(flat, bp.abstraction, g, bp.regrets, bp.strategy_sum) for g in groups]
        ray.get([w.ready.remote() for w in pool])
    started = time.perf_counter()
    bar = tqdm(total=iterations, desc="MCCFR (distributed)", unit="it", unit_scale=True, disable=not progress)
    done = 0
    while done < iterations:
        n = min(batch, iterations - done)
        scale = bp.linear_scale(n)
        if scale != 1.0:
            bp.regrets *= np.float32(scale)
            bp.strategy_sum *= np.float32(scale)
        rng = np.random.default_rng([seed, bp.iterations])
        trunk = bp.abstraction.deal_trunk(rng, n, clusters)
        deals = trunk.deals(bp.abstraction.split_round)  # the trunk's buckets only: its walk reads nothing else
        trunk_seed = int(rng.integers(2**63))
        exits = mccfr.iterate(flat, deals, bp.regrets, None, trunk_seed, mode=mccfr.COLLECT)
        assert isinstance(exits, Exits)
        worker_seed = int(rng.integers(2**62))
        if ray is None:
            answers = [w.run(trunk, exits, worker_seed, scale) for w in pool]
        else:  # the batch is put in the object store once, not once per worker
            refs = ray.put(trunk), ray.put(exits)
            answers = ray.get([w.run.remote(*refs, worker_seed, scale) for w in pool])
        values = np.zeros((clusters, len(exits)))
        for answer in answers:
            for k, v in answer.items():
                values[k] = v
        weight = trunk.weight[exits.deal].T.astype(np.float64)  # [K, exits]
        combined = (weight * values).sum(axis=0) / np.maximum(weight.sum(axis=0), 1e-30)
        delta = np.zeros_like(bp.regrets)
        mccfr.iterate(
            flat, deals, bp.regrets, bp.strategy_sum, trunk_seed, mode=mccfr.REPLAY, regret_out=delta, exit_values=combined
        )
        bp.regrets += delta
        bp.iterations += n
        done += n
        bar.update(n)
    bar.close()
    merging = time.perf_counter()
    owner = slot_owners(bp, clusters)
    arrays = [w.arrays() for w in pool] if ray is None else ray.get([w.arrays.remote() for w in pool])
    for group, (regrets, sums) in zip(groups, arrays):
        mine = np.isin(owner, group)
        bp.regrets[mine] = regrets[mine]
        bp.strategy_sum[mine] = sums[mine]
    end = time.perf_counter()
    if stats is not None:
        stats.update(start_s=started - start, merge_s=end - merging)
    seconds = end - start
    bp.seconds += seconds
    return seconds
