"""Depth-limit leaf values for hold'em re-solves.

* :class:`CheckdownLeafValues`: the rest of the hand checked down, from hand-versus-hand
  check-down matrices (:mod:`agent.leaves.equity_matrix`); needs no network.
* :class:`BucketNetLeafValues`: DeepStack's networks: at a leaf before the turn (the flop
  re-solve) the turn network is queried for each of the next cards, with both ranges mapped
  to that board's buckets; at the end of the pre-flop, the auxiliary network over the 169
  pre-flop classes. Values come back per bucket, each hand taking its bucket's value.

Both also give the values at one chance outcome below a leaf (:meth:`chance_values`), which
continual re-solving needs after the cards come.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np
import torch

from agent.leaves.board_averages import BoardAverages
from agent.leaves.equity_matrix import CheckdownMatrices
from agent.leaves.per_lookahead import PerLookahead
from agent.leaves.snapshot import LeafSnapshot
from agent.nets.buckets import BucketTable, preflop_classes
from agent.nets.valuenet import NetOnDevices
from agent.solver.lookahead import LeafInfo, Lookahead
from native.cards import hands_blocked_by
from native.leaf_buckets import LeafBuckets
from protocol.gamedef import Game


class CheckdownLeafValues:
    """``value(h) = amount * sum_h' E[h, h'] r_opp(h')`` with the leaf board's check-down matrix."""

    def __init__(self, matrices: CheckdownMatrices) -> None:
        self.matrices = matrices
        self._prepared = PerLookahead()

    def _prepare(self, leaves: LeafInfo, la: Lookahead):
        return self._prepared.get(la, lambda: self._build(leaves, la))

    def _build(self, leaves: LeafInfo, la: Lookahead):
        groups = []
        hands = torch.as_tensor(la.hands)
        by_board: dict[tuple[int, ...], list[int]] = {}
        for i, b in enumerate(leaves.boards):
            by_board.setdefault(tuple(b), []).append(i)
        for board, idx in by_board.items():
            e = self.matrices.matrix(board)[hands][:, hands].to(device=la.device, dtype=la.dtype)
            groups.append((torch.as_tensor(idx, device=la.device), e))
        amount = torch.as_tensor(leaves.spent.min(axis=1), dtype=la.dtype, device=la.device).unsqueeze(1)
        return groups, amount

    def __call__(self, reach: torch.Tensor, leaves: LeafInfo, la: Lookahead) -> torch.Tensor:
        return torch.stack([self.one_player(reach, leaves, la, p) for p in range(2)])

    def one_player(self, reach: torch.Tensor, leaves: LeafInfo, la: Lookahead, player: int) -> torch.Tensor:
        """``player``'s ``[L, H]`` values alone: the matrix products are most of a flop or turn
        re-solve's time, and CFR's alternating updates use one player's values at a time."""
        groups, amount = self._prepare(leaves, la)
        out = torch.empty_like(reach[player])
        for idx, e in groups:
            out[idx] = reach[1 - player, idx] @ e.T
        return out.mul_(amount)

    def chance_values(self, leaf: LeafSnapshot, board: tuple[int, ...]) -> np.ndarray:
        """``[2, hands]`` values on ``board`` below ``leaf`` for the leaf's reaches, checked down from there:
        the matched amount times each player's matrix product with the other's reach (0 for blocked hands)."""
        e = self.matrices.matrix(tuple(board)).double().numpy()
        valid = ~hands_blocked_by(board)
        reach = leaf.reach * valid
        amount = float(min(leaf.spent))
        return np.stack([reach[1] @ e.T, reach[0] @ e.T]) * amount * valid


class BucketNetLeafValues:
    """Leaves valued by a bucketed network of the next round (turn network at flop leaves,
    auxiliary pre-flop network at pre-flop leaves, over its 169 classes)."""

    def __init__(self, net: torch.jit.ScriptModule, game: Game, buckets: BucketTable | None, precision: str = "float32") -> None:
        self.net = net
        self._run = NetOnDevices(net, precision)  # bfloat16: agent.nets.valuenet.NET_PRECISIONS
        self.game = game
        self.buckets = buckets  # None: pre-flop classes
        self.num_buckets = buckets.num_buckets if buckets is not None else 169
        self._classes = torch.as_tensor(preflop_classes())
        self._prepared = PerLookahead()

    def _ids(self, board: tuple[int, ...]) -> torch.Tensor:
        if self.buckets is None:
            return self._classes
        return torch.as_tensor(np.array(self.buckets.assign(board)))

    def _prepare(self, leaves: LeafInfo, la: Lookahead) -> dict:
        return self._prepared.get(la, lambda: self._build(leaves, la))

    def _build(self, leaves: LeafInfo, la: Lookahead) -> dict:
        rows, ids, weights, boards = [], [], [], []
        hands = torch.as_tensor(la.hands)
        for i, (board, nxt) in enumerate(zip(leaves.boards, leaves.next_round)):
            if self.buckets is None:  # pre-flop leaf: the auxiliary network averages the flops itself
                rows.append(i)
                ids.append(self._ids(())[hands])
                weights.append(1.0)
                continue
            n_new = self.game.board_cards_through(int(nxt)) - len(board)
            remaining = [c for c in range(52) if c not in board]
            w = 1.0 / comb(len(remaining) - 4, n_new)
            for extra in combinations(remaining, n_new):
                full = tuple(board) + extra
                assign = self._ids(full)[hands]
                rows.append(i)
                ids.append(assign)
                weights.append(w)
                boards.append(full)
        ids_t = torch.stack(ids).to(la.device)  # [R, H]
        prepared = {
            "rows": torch.as_tensor(rows, device=la.device),
            "ids": ids_t,
            "slots": ids_t.clamp(min=0),  # gather/scatter positions (impossible hands masked by "valid")
            "valid": (ids_t >= 0).to(la.dtype),
            "weights": torch.as_tensor(weights, dtype=la.dtype, device=la.device).unsqueeze(1),
            "pot": torch.as_tensor(leaves.spent.sum(axis=1), dtype=la.dtype, device=la.device),
        }
        if boards:  # the per-board values the solver averages (see track_average)
            prepared["averages"] = BoardAverages(prepared["rows"], boards)
        if la.device.type == "cpu" and la.dtype == torch.float32 and len(rows):
            prepared["native"] = LeafBuckets(
                prepared["rows"],
                prepared["slots"],
                prepared["valid"],
                prepared["pot"].index_select(0, prepared["rows"]),
                prepared["weights"],
                len(leaves.rows),
                self.num_buckets,
                float(sum(self.game.stack)),
            )
        return prepared

    def _values(
        self,
        reach: torch.Tensor,
        ids: torch.Tensor,
        pot: torch.Tensor,
        slots: torch.Tensor | None = None,
        valid: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """``[2, R, H]`` values for reaches ``[2, R, H]`` with bucket ids ``[R, H]`` and pots ``[R]``
        (``slots`` = ids clamped at 0 and ``valid`` = ids >= 0, when prepared once beforehand)."""
        if slots is None or valid is None:
            ids = ids.expand(reach.shape[1:])
            slots, valid = ids.clamp(min=0), (ids >= 0).to(reach.dtype)
        masked = reach * valid  # [2, R, H]
        mass = masked.sum(dim=2, keepdim=True)
        k = self.num_buckets
        b = torch.zeros(reach.shape[:2] + (k,), dtype=reach.dtype, device=reach.device)
        b.scatter_add_(2, slots.expand_as(masked), masked)
        b /= mass.clamp(min=1e-30)
        scale = float(sum(self.game.stack))
        x = torch.cat([(pot / scale).unsqueeze(1), b[0], b[1]], dim=1).float()
        out = self._run(x).to(reach.dtype).view(-1, 2, k).transpose(0, 1)  # [2, R, K]
        vals = out.gather(2, slots.expand(2, -1, -1))
        return vals.mul_(valid).mul_(pot.view(1, -1, 1)).mul_(mass.flip(0))

    def __call__(self, reach: torch.Tensor, leaves: LeafInfo, la: Lookahead) -> torch.Tensor:
        """Both players' ``[2, L, H]`` values from one network call; a second call with the same
        reach (simultaneous updates ask once per player) returns them again without one."""
        prep = self._prepare(leaves, la)
        last = prep.get("last")
        if last is not None and last[0].shape == reach.shape and torch.equal(last[0], reach):
            return last[1]
        native = prep.get("native")
        if native is not None and reach.is_contiguous():  # the C encoding and decoding, one pass each
            vals, out = native.decode(self._run(native.encode(reach)).float().contiguous())
            out = out.clone()
        else:
            r = reach.index_select(1, prep["rows"])
            vals = self._values(r, prep["ids"], prep["pot"].index_select(0, prep["rows"]), prep["slots"], prep["valid"])
            out = torch.zeros_like(reach)
            out.index_add_(1, prep["rows"], vals * prep["weights"].unsqueeze(0))
        if "averages" in prep:
            prep["averages"].record(vals)
        prep["last"] = (reach.clone(), out)
        return out

    def track_average(self, la: Lookahead, player: int, weight: float) -> None:
        """The solver's averaging step (see :meth:`agent.leaves.handnet.HandNetLeafValues.track_average`)."""
        prep = self._prepared.peek(la)
        if prep is not None and "averages" in prep:
            prep["averages"].add(player, weight)

    def average_board_values(self, la: Lookahead, leaf: int) -> dict[tuple[int, ...], torch.Tensor] | None:
        """``{next board: [2, H]}`` at leaf index ``leaf``, averaged over the re-solve's iterations
        (None for pre-flop leaves, whose auxiliary network averages the flops itself)."""
        prep = self._prepared.peek(la)
        return None if prep is None or "averages" not in prep else prep["averages"].at_leaf(leaf)

    def chance_values(self, leaf: LeafSnapshot, board: tuple[int, ...]) -> np.ndarray:
        """Values on ``board`` below the leaf: the re-solve's averaged ones where it kept them, else
        the network at the leaf's average reaches (see :meth:`agent.leaves.handnet.HandNetLeafValues.chance_values`)."""
        if leaf.board_values is not None and tuple(board) in leaf.board_values:
            return leaf.board_values[tuple(board)]
        ids = self._ids(tuple(board)).unsqueeze(0)
        reach = torch.as_tensor(leaf.reach).unsqueeze(1)
        pot = torch.as_tensor([float(sum(leaf.spent))], dtype=torch.float64)
        return self._values(reach, ids, pot)[:, 0].numpy()
