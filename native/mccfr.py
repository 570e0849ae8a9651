"""External-sampling Monte Carlo CFR in C (native/src/mccfr.c) over a flat, card-free betting tree.

The tree's arrays are checked once (:class:`FlatTree`), the deals on every call; the regret and
strategy-sum accumulators are numpy float32 arrays updated in place."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from native.evaluator import ffi, lib

__all__ = ["DECISION", "FOLD", "SHOWDOWN", "CHANCE", "MAX_ACTIONS", "FlatTree", "run"]

DECISION, FOLD, SHOWDOWN, CHANCE = 0, 1, 2, 3
MAX_ACTIONS = 32


def _ptr(a: np.ndarray, kind: str) -> object:
    return ffi.cast(kind, ffi.from_buffer(a))


@dataclass(frozen=True)
class FlatTree:
    """Node ``n``: ``kind`` (DECISION, FOLD, SHOWDOWN, CHANCE), the acting ``player`` and the ``round``;
    children ``first_child[n] ..`` (``num_children[n]`` of them, after ``n``); a decision's information
    sets take ``num_buckets[round] * num_children`` slots from ``slot[n]``; ``fold_value0`` is player 0's
    payoff at a fold, ``stake`` what a showdown's winner wins."""

    kind: np.ndarray
    player: np.ndarray
    round: np.ndarray
    first_child: np.ndarray
    num_children: np.ndarray
    slot: np.ndarray
    fold_value0: np.ndarray
    stake: np.ndarray
    num_buckets: np.ndarray
    num_slots: int

    def __post_init__(self) -> None:
        types = {
            "kind": np.int8,
            "player": np.int8,
            "round": np.int8,
            "first_child": np.int32,
            "num_children": np.int8,
            "slot": np.int64,
            "fold_value0": np.float32,
            "stake": np.float32,
            "num_buckets": np.int32,
        }
        n = len(self.kind)
        for name, dtype in types.items():
            a = np.ascontiguousarray(getattr(self, name), dtype=dtype)
            if name != "num_buckets" and a.shape != (n,):
                raise ValueError(f"tree array {name} has shape {a.shape}, not ({n},)")
            object.__setattr__(self, name, a)
        bad = lib.ds_mccfr_check_tree(
            n,
            _ptr(self.kind, "int8_t *"),
            _ptr(self.player, "int8_t *"),
            _ptr(self.round, "int8_t *"),
            _ptr(self.first_child, "int32_t *"),
            _ptr(self.num_children, "int8_t *"),
            _ptr(self.slot, "int64_t *"),
            len(self.num_buckets),
            _ptr(self.num_buckets, "int32_t *"),
            self.num_slots,
        )
        if bad == -2:
            raise ValueError("a blueprint tree needs nodes, 1..8 rounds and at least one bucket per round")
        if bad >= 0:
            raise ValueError(f"blueprint tree node {bad} is malformed (children, actions, round or slots out of range)")

    @property
    def num_rounds(self) -> int:
        return len(self.num_buckets)


def run(
    tree: FlatTree,
    buckets: np.ndarray,
    outcome: np.ndarray,
    regrets: np.ndarray,
    strategy_sum: np.ndarray,
    seed: int,
) -> None:
    """One MCCFR iteration per deal (both positions traversed): ``buckets`` ``[deals, 2, rounds]`` (each
    position's bucket per round), ``outcome`` ``[deals]`` (+1 position 0 wins the showdown, -1 loses, 0
    ties). ``regrets`` and ``strategy_sum`` (float32, ``tree.num_slots``) are updated in place."""
    buckets = np.ascontiguousarray(buckets, dtype=np.int32)
    outcome = np.ascontiguousarray(outcome, dtype=np.int8)
    n = len(outcome)
    if buckets.shape != (n, 2, tree.num_rounds):
        raise ValueError(f"buckets must be [deals, 2, {tree.num_rounds}], not {buckets.shape}")
    for name, acc in (("regrets", regrets), ("strategy_sum", strategy_sum)):
        if acc.dtype != np.float32 or acc.shape != (tree.num_slots,) or not acc.flags.c_contiguous:
            raise ValueError(f"{name} must be a contiguous float32 array of {tree.num_slots} slots")
    rc = lib.ds_mccfr_run(
        len(tree.kind),
        _ptr(tree.kind, "int8_t *"),
        _ptr(tree.player, "int8_t *"),
        _ptr(tree.round, "int8_t *"),
        _ptr(tree.first_child, "int32_t *"),
        _ptr(tree.num_children, "int8_t *"),
        _ptr(tree.slot, "int64_t *"),
        _ptr(tree.fold_value0, "float *"),
        _ptr(tree.stake, "float *"),
        tree.num_rounds,
        _ptr(tree.num_buckets, "int32_t *"),
        n,
        _ptr(buckets, "int32_t *"),
        _ptr(outcome, "int8_t *"),
        tree.num_slots,
        _ptr(regrets, "float *"),
        _ptr(strategy_sum, "float *"),
        seed & 0xFFFFFFFFFFFFFFFF,
    )
    if rc >= 0:
        raise ValueError(f"deal {rc} has a bucket or an outcome out of range (the deals before it were played)")
    if rc != -1:
        raise ValueError(f"ds_mccfr_run failed ({rc})")
