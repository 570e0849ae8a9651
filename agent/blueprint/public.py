"""Public buckets of seed 001 (its Algorithms 2 and 3): public states clustered by how a base abstraction
buckets their private states.

The seed's distance between two public states (flops) i and j is the share of private states *not* put in
a common bucket of the base abstraction A: with ``T[i][b]`` the number of hands that flop i sends to bucket
b, ``d(i, j) = (V - sum_b min(T[i][b], T[j][b])) / V``. Unlike an L2 distance between per-hand transition
tables it does not care *which* hands land in a bucket, only how many, so two flops that map similar (but
different) hands alike are close. The clustering starts from k-means++ seeds chosen by these distances and
then moves every flop to the cluster of least distance until nothing moves. The seed's pseudocode sums
the distances to a cluster's members; we average them, since a sum favours small clusters (an empty one
would take every point).
"""

from __future__ import annotations

import numpy as np
import torch


def transition_table(rows: np.ndarray, buckets: int) -> np.ndarray:
    """``T[i][b]``: how many private states of public state i the base abstraction puts in bucket b.

    ``rows`` is ``[M, V']`` bucket ids of every private state (negative where blocked)."""
    if rows.ndim != 2:
        raise ValueError(f"expected [public states, private states] bucket ids, got shape {rows.shape}")
    if rows.max(initial=-1) >= buckets:
        raise ValueError(f"a bucket id {int(rows.max())} outside 0..{buckets - 1}")
    table = np.zeros((len(rows), buckets), dtype=np.int32)
    for i, row in enumerate(rows):
        table[i] = np.bincount(row[row >= 0], minlength=buckets)
    return table


def board_distances(table: np.ndarray, chunk: int = 32) -> np.ndarray:
    """``[M, M]`` seed distances ``(V - sum_b min(T_i, T_j)) / V`` (V: the private states per public state,
    the same for every row, as for flops: 1,176 hands)."""
    t = torch.as_tensor(table, dtype=torch.float32)
    v = t.sum(dim=1)
    if len(v) and not bool(torch.all(v == v[0])):
        raise ValueError("every public state needs the same number of private states")
    out = torch.empty(len(t), len(t))
    for i in range(0, len(t), chunk):
        shared = torch.minimum(t[i : i + chunk, None, :], t[None, :, :]).sum(dim=2)
        out[i : i + chunk] = (v[0] - shared) / v[0]
    return out.numpy()


def cluster_public(distance: np.ndarray, clusters: int, rng: np.random.Generator, iterations: int = 100) -> np.ndarray:
    """``[M]`` cluster of each public state: k-means++ seeds by ``distance``, then each state moves to the
    cluster of least mean distance (itself left out), one state at a time, until a pass moves none or
    ``iterations`` passes end. A state alone in its cluster stays, so all ``clusters`` stay in use."""
    m = len(distance)
    if not 1 <= clusters <= m:
        raise ValueError(f"{clusters} clusters for {m} public states")
    dist = np.asarray(distance, dtype=np.float64)
    centers = [int(rng.integers(m))]
    nearest = dist[centers[0]].copy()
    for _ in range(1, clusters):
        weight = nearest**2
        total = weight.sum()
        pick = int(rng.choice(m, p=weight / total)) if total > 0 else int(rng.integers(m))
        centers.append(pick)
        nearest = np.minimum(nearest, dist[pick])
    assign = dist[:, centers].argmin(axis=1)
    sums = dist @ np.eye(clusters)[assign]  # [M, C]: each state's summed distance to each cluster's members
    counts = np.bincount(assign, minlength=clusters).astype(np.float64)
    for _ in range(iterations):
        moved = 0
        for i in range(m):  # one state at a time, so a cluster is never emptied by simultaneous moves
            own = assign[i]
            if counts[own] == 1:
                continue
            others = counts.copy()
            others[own] -= 1  # i left out of its own cluster (d(i, i) = 0 adds nothing to the sum)
            mean = np.where(others > 0, sums[i] / np.maximum(others, 1), np.inf)
            best = int(mean.argmin())
            if mean[best] < mean[own]:
                sums[:, own] -= dist[:, i]
                sums[:, best] += dist[:, i]
                counts[own] -= 1
                counts[best] += 1
                assign[i] = best
                moved += 1
        if not moved:
            break
    return assign.astype(np.int64)


def within_cluster_distance(distance: np.ndarray, assign: np.ndarray) -> float:
    """The mean distance between two different public states of a cluster (pairs weighted equally): what
    the clustering makes small, to compare clusterings of the same states."""
    same = assign[:, None] == assign[None, :]
    np.fill_diagonal(same, False)
    pairs = int(same.sum())
    return float(distance[same].sum() / pairs) if pairs else 0.0
