"""External-sampling Monte Carlo CFR in C (native/src/mccfr.c) over a flat, card-free betting tree.

The tree's arrays are checked once (:class:`FlatTree`), the deals on every call; the regret and
strategy-sum accumulators are numpy float32 arrays updated in place."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from native.arrays import exact_integers
from native.evaluator import ffi, lib

__all__ = [
    "DECISION",
    "FOLD",
    "SHOWDOWN",
    "CHANCE",
    "MAX_ACTIONS",
    "FlatTree",
    "Deals",
    "Trunk",
    "Exits",
    "iterate",
    "continue_exits",
]

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
            value = getattr(self, name)
            a = (
                np.ascontiguousarray(value, dtype=dtype)
                if np.dtype(dtype).kind == "f"
                else exact_integers(value, dtype, f"tree array {name}")
            )
            if name != "num_buckets" and a.shape != (n,):
                raise ValueError(f"tree array {name} has shape {a.shape}, not ({n},)")
            object.__setattr__(self, name, a)
        bad = lib.ds_mccfr_check_tree(*_tree_args(self), self.num_slots)
        if bad == -2:
            raise ValueError("a blueprint tree needs nodes, 1..8 rounds and at least one bucket per round")
        if bad >= 0:
            raise ValueError(f"blueprint tree node {bad} is malformed (children, actions, round, slots or payoffs out of range)")

    @property
    def num_rounds(self) -> int:
        """Rounds of the tree's game (one bucket count per round); every deal's buckets have this many."""
        return len(self.num_buckets)


@dataclass(frozen=True)
class Deals:
    """Deals as MCCFR sees them: per deal, K continuations (one per public cluster of ``split_round``'s
    boards; K = 1 and ``split_round`` = the number of rounds: no split) with each position's bucket per
    round ``[n, K, 2, rounds]`` (the trunk's rounds the same in every continuation), the showdown's
    outcome ``[n, K]`` (+1: position 0 wins, -1: position 1 does, 0: a tie) and the cluster's weight
    ``[n, K]`` (its boards the dealt hands leave possible)."""

    buckets: np.ndarray
    outcome: np.ndarray
    weight: np.ndarray
    split_round: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "buckets", exact_integers(self.buckets, np.int32, "deal buckets"))
        object.__setattr__(self, "outcome", exact_integers(self.outcome, np.int8, "deal outcomes"))
        with np.errstate(over="ignore"):  # past float32's range is inf, refused just below
            object.__setattr__(self, "weight", np.ascontiguousarray(self.weight, dtype=np.float32))
        n, k = self.outcome.shape
        if self.buckets.shape[:3] != (n, k, 2) or self.weight.shape != (n, k):
            raise ValueError(f"deals: buckets {self.buckets.shape}, outcome {self.outcome.shape}, weight {self.weight.shape}")
        if not np.isfinite(self.weight).all():  # a weight past float32's range is inf: inf / inf regrets
            raise ValueError("deals: a weight is not finite (or too large for float32)")

    @property
    def n(self) -> int:
        """Number of deals."""
        return len(self.outcome)

    @property
    def K(self) -> int:
        """Continuations per deal: the public clusters, or 1 without a split."""
        return self.outcome.shape[1]


@dataclass(frozen=True)
class Trunk:
    """The part of ``n`` deals the trunk needs (dealt before the public clusters split them): the
    private cards ``[n, cards]`` (what a cluster's worker draws its board around), every position's
    buckets of the trunk's rounds ``[n, 2, rounds]`` (the later rounds 0) and each cluster's weight
    ``[n, K]``."""

    cards: np.ndarray
    buckets: np.ndarray
    weight: np.ndarray

    @property
    def clusters(self) -> int:
        """K, the public clusters the deals' continuations are split into."""
        return self.weight.shape[1]

    def deals(self, split_round: int, continuations: dict[int, tuple[np.ndarray, np.ndarray]] | None = None) -> Deals:
        """As :class:`Deals`: the trunk's buckets in every continuation, the given clusters' continuations
        ``{k: (buckets [n, 2, rounds], outcome [n])}`` in theirs (the head walks the trunk only)."""
        n, k = self.weight.shape
        buckets = np.repeat(self.buckets[:, None], k, axis=1)
        outcome = np.zeros((n, k), np.int8)
        for c, (b, o) in (continuations or {}).items():
            buckets[:, c], outcome[:, c] = b, o
        return Deals(buckets, outcome, self.weight, split_round)


@dataclass(frozen=True)
class Exits:
    """Where the trunk was left (COLLECT): the chance node, the traverser and the deal of each exit."""

    node: np.ndarray
    player: np.ndarray
    deal: np.ndarray

    def __len__(self) -> int:
        return len(self.node)


FULL, COLLECT, REPLAY, EVAL = 0, 1, 2, 3


def _tree_args(tree: FlatTree) -> list:
    return [
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
    ]


def _deal_args(tree: FlatTree, deals: Deals) -> list:
    if deals.buckets.shape[3:] != (tree.num_rounds,):
        raise ValueError(f"buckets must be [deals, K, 2, {tree.num_rounds}], not {deals.buckets.shape}")
    return [
        deals.split_round,
        deals.K,
        deals.n,
        _ptr(deals.buckets, "int32_t *"),
        _ptr(deals.outcome, "int8_t *"),
        _ptr(deals.weight, "float *"),
        tree.num_slots,
    ]


def _accumulator(tree: FlatTree, a: np.ndarray | None, name: str, written: bool = True) -> np.ndarray:
    if a is None or a.dtype != np.float32 or a.shape != (tree.num_slots,) or not a.flags.c_contiguous:
        raise ValueError(f"{name} must be a contiguous float32 array of {tree.num_slots} slots")
    if written and not a.flags.writeable:
        raise ValueError(f"{name} must be writeable (MCCFR updates it in place)")
    return a


def _check(rc: int, what: str) -> None:
    if rc == -1:
        return
    if rc >= 0:
        raise ValueError(f"deal {rc} has a bucket, an outcome or a weight out of range (nothing was played)")
    reasons = {
        -2: "bad arguments",
        -3: "a malformed tree",
        -4: "replayed values that do not match the trunk's exits",
        -6: "an exit that is not a chance node of the trunk",
    }
    raise ValueError(f"{what} failed: {reasons.get(rc, rc)}")


def iterate(
    tree: FlatTree,
    deals: Deals,
    regrets: np.ndarray,
    strategy_sum: np.ndarray | None,
    seed: int,
    mode: int = FULL,
    regret_out: np.ndarray | None = None,
    exit_values: np.ndarray | None = None,
    root_values: bool = False,
) -> Exits | np.ndarray | None:
    """One MCCFR iteration per deal (both positions traversed). FULL updates ``regrets`` and
    ``strategy_sum`` in place (the continuations walked here); COLLECT walks the trunk only and returns
    its :class:`Exits`; REPLAY walks it again with the exits' ``exit_values`` (in order), adding its regret
    increments to ``regret_out`` (the strategy stays ``regrets``'); EVAL updates nothing. With
    ``root_values``, returns the sampled root values ``[deals, 2]`` (FULL, EVAL)."""
    regrets = _accumulator(tree, regrets, "regrets", written=mode == FULL)
    updates = mode in (FULL, REPLAY)
    if updates:
        strategy_sum = _accumulator(tree, strategy_sum, "strategy_sum")
        regret_out = regrets if mode == FULL else _accumulator(tree, regret_out, "regret_out")
    values = np.zeros((deals.n, 2)) if root_values else None
    cap = 4 * deals.n * max(tree.num_rounds, 1) * 16 if mode == COLLECT else 0
    count = ffi.new("int64_t *")
    while True:
        ex_node, ex_player, ex_deal = np.empty(cap, np.int32), np.empty(cap, np.int8), np.empty(cap, np.int64)
        replay = np.ascontiguousarray(exit_values, dtype=np.float64) if exit_values is not None else np.zeros(0)
        rc = lib.ds_mccfr_iterate(
            *_tree_args(tree),
            *_deal_args(tree, deals),
            _ptr(regrets, "float *"),
            _ptr(regret_out, "float *") if updates else ffi.NULL,
            _ptr(strategy_sum, "float *") if updates else ffi.NULL,
            mode,
            seed & 0xFFFFFFFFFFFFFFFF,
            cap,
            _ptr(ex_node, "int32_t *"),
            _ptr(ex_player, "int8_t *"),
            _ptr(ex_deal, "int64_t *"),
            count,
            _ptr(replay, "double *") if mode == REPLAY else ffi.NULL,
            len(replay),
            _ptr(values, "double *") if values is not None else ffi.NULL,
        )
        if rc == -5:  # more exits than room: COLLECT changes nothing, so run it again with enough
            cap = int(count[0])
            continue
        _check(rc, "MCCFR")
        break
    if mode == COLLECT:
        n = int(count[0])
        return Exits(ex_node[:n].copy(), ex_player[:n].copy(), ex_deal[:n].copy())
    return values


def continue_exits(
    tree: FlatTree,
    deals: Deals,
    regrets: np.ndarray,
    strategy_sum: np.ndarray,
    cluster: int,
    seed: int,
    exits: Exits,
) -> np.ndarray:
    """Cluster ``cluster``'s worker: the value of each exit with that cluster's continuation of its deal,
    updating the cluster's information sets in ``regrets`` and ``strategy_sum``."""
    regrets = _accumulator(tree, regrets, "regrets")
    strategy_sum = _accumulator(tree, strategy_sum, "strategy_sum")
    node = np.ascontiguousarray(exits.node, dtype=np.int32)
    player = np.ascontiguousarray(exits.player, dtype=np.int8)
    deal = np.ascontiguousarray(exits.deal, dtype=np.int64)
    out = np.zeros(len(node))
    rc = lib.ds_mccfr_continue(
        *_tree_args(tree),
        *_deal_args(tree, deals),
        _ptr(regrets, "float *"),
        _ptr(strategy_sum, "float *"),
        cluster,
        seed & 0xFFFFFFFFFFFFFFFF,
        len(node),
        _ptr(node, "int32_t *"),
        _ptr(player, "int8_t *"),
        _ptr(deal, "int64_t *"),
        _ptr(out, "double *"),
    )
    _check(rc, "a cluster's continuation")
    return out
