"""Between hands and buckets: how hold'em value networks see ranges and give back values.

A network input is, per player, the range mass of each bucket (the range normalised over
the hands possible on the board); a network output is a value per bucket, and every hand
takes the value of its bucket. Training targets per bucket are the range-weighted mean of
the hand values in it (the plain mean where the player's range puts no mass on it); a
bucket with no possible hand on the board is masked out of the loss.
"""

from __future__ import annotations

import numpy as np
import torch

from agent.solver.handspace import HandSpace
from protocol.gamedef import Game


def bucket_ranges(ranges: torch.Tensor, ids: torch.Tensor, buckets: int) -> torch.Tensor:
    """``[..., H]`` ranges (already masked) -> ``[..., K]`` bucket masses, normalised per row.

    ``ids`` ``[..., H]`` or ``[H]`` gives each hand's bucket (-1: impossible hand)."""
    ids = ids.expand_as(ranges)
    valid = ids >= 0
    out = torch.zeros(ranges.shape[:-1] + (buckets,), dtype=ranges.dtype, device=ranges.device)
    out.scatter_add_(-1, ids.clamp(min=0), ranges * valid)
    total = out.sum(dim=-1, keepdim=True)
    return out / total.clamp(min=1e-30)


def hand_values(bucket_values: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """``[..., K]`` bucket values -> ``[..., H]`` hand values (0 for impossible hands)."""
    ids = ids.expand(bucket_values.shape[:-1] + ids.shape[-1:])
    return bucket_values.gather(-1, ids.clamp(min=0)) * (ids >= 0)


def bucket_targets(values: np.ndarray, ranges: np.ndarray, ids: np.ndarray, buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-bucket targets ``[2, K]`` and mask ``[K]`` from hand values and ranges ``[2, H]``."""
    valid = ids >= 0
    mask = np.zeros(buckets)
    np.add.at(mask, ids[valid], 1.0)
    has = mask > 0
    targets = np.zeros((2, buckets))
    for p in range(2):
        w = ranges[p] * valid
        num = np.zeros(buckets)
        den = np.zeros(buckets)
        np.add.at(num, ids[valid], (values[p] * w)[valid])
        np.add.at(den, ids[valid], w[valid])
        plain = np.zeros(buckets)
        np.add.at(plain, ids[valid], values[p][valid])
        plain = np.where(has, plain / np.where(has, mask, 1), 0.0)
        targets[p] = np.where(den > 1e-12, num / np.where(den > 1e-12, den, 1), plain)
    return targets, has.astype(np.float64)


class SituationEncoder:
    """Network rows from hold'em shards (boards, pots, ranges, values per hand): both ranges
    and values mapped to the buckets of each situation's board.

    Input row: ``[pot / total stacks, bucket masses of player 0 (K), of player 1 (K)]``, as
    :class:`agent.leaves.holdem.BucketNetLeafValues` builds it at play time."""

    def __init__(self, table, total_stacks: float) -> None:
        self.table = table
        self.total_stacks = total_stacks

    def __call__(self, part: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One shard's rows: inputs ``[n, 1 + 2K]``, targets ``[n, 2K]`` and masks ``[n, 2K]`` (1 where
        the bucket holds a hand possible on the board), as :func:`agent.training.datasets.load_dataset` takes them."""
        k = self.table.num_buckets
        n = len(part["pots"])
        x = np.zeros((n, 1 + 2 * k), dtype=np.float32)
        y = np.zeros((n, 2 * k), dtype=np.float32)
        m = np.zeros((n, 2 * k), dtype=np.float32)
        for i in range(n):
            board = tuple(int(c) for c in part["boards"][i] if c >= 0)
            ids = self.table.assign(board)
            valid = ids >= 0
            ranges = part["ranges"][i].astype(np.float64) * valid
            masses = bucket_ranges(torch.as_tensor(ranges), torch.as_tensor(np.array(ids)), k).numpy()
            targets, mask = bucket_targets(part["values"][i].astype(np.float64), ranges, ids, k)
            x[i, 0] = float(part["pots"][i]) / self.total_stacks
            x[i, 1:] = masses.reshape(-1)
            y[i] = targets.reshape(-1)
            m[i] = np.concatenate([mask, mask])
        return x, y, m


def pot_scale(game: Game) -> float:
    """What the pot input is divided by: total stacks (no-limit) or the largest possible pot (limit)."""
    if game.is_nolimit:
        return float(sum(game.stack))
    per_player = max(game.blind) + sum(m * s for m, s in zip(game.max_raises, game.raise_size))
    return float(game.num_players * per_player)


def board_features(space: HandSpace, board: tuple[int, ...]) -> np.ndarray:
    """One-hot of the board cards over the deck (the public input of hand-level networks)."""
    feats = np.zeros(len(space.deck))
    for c in board:
        feats[space.deck.index(c)] = 1.0
    return feats


def canonical_permutation(space: HandSpace, board: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """``(hand_perm, deck_perm)`` renaming suits so that the board is canonical.

    The suits of the deck are renamed in order of first appearance on the board (board
    cards taken by ascending rank, then suit), unused suits keep their order. Index arrays:
    ``canonical[i] = original[perm[i]]`` for hands and deck positions."""
    suits = sorted({c & 3 for c in space.deck})
    order: list[int] = []
    for c in sorted(board, key=lambda c: (c >> 2, c & 3)):
        if (c & 3) not in order:
            order.append(c & 3)
    order += [s for s in suits if s not in order]
    rename = dict(zip(order, suits))  # original suit -> canonical suit
    back = {v: k for k, v in rename.items()}
    deck = list(space.deck)
    deck_perm = np.array([deck.index((c & ~3) | back[c & 3]) for c in deck])
    hand_perm = np.array([space.index([(int(c) & ~3) | back[int(c) & 3] for c in row]) for row in space.cards])
    return hand_perm, deck_perm
