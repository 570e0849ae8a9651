"""Depth-limit leaf values from a hand-level value network (Leduc).

At a leaf (the end of a round, before the next cards), each possible next board is a
network query: both reaches are masked by the board, normalised, and fed with the pot and
the board; the network's values (fractions of the pot, for normalised ranges) are turned
back into counterfactual values (times the pot and the opponent's reach mass) and
averaged over the boards with the same chance weights as the lookahead.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from math import comb

import numpy as np
import torch

from agent.leaves.board_averages import BoardAverages
from agent.leaves.checkdown import CheckdownEvaluator
from agent.leaves.per_lookahead import PerLookahead
from agent.leaves.snapshot import LeafSnapshot
from agent.nets.encoding import board_features, canonical_permutation, pot_scale
from agent.nets.valuenet import NetOnDevices
from agent.solver.handspace import HandSpace
from agent.solver.lookahead import LeafInfo, Lookahead


def no_betting_left(spent: Sequence[int], stack: Sequence[int]) -> bool:
    """Whether a leaf (a round's end, the bets matched) leaves no betting: someone is all-in.
    With unequal stacks that is the short stack alone (the excess of a larger bet goes back);
    such a leaf is a showdown over the runouts for the smaller amount, not a network's question."""
    return any(s >= st for s, st in zip(spent, stack))


class _LeafBatch:
    """Per lookahead: one network row per (leaf, next board); leaves where both players are
    all-in are valued exactly (a showdown over the runouts), not by the network."""

    def __init__(self, adapter: HandNetLeafValues, leaves: LeafInfo, la: Lookahead) -> None:
        #: the per-board values (before the chance weights) the solver averages (track_average)
        self.averages = BoardAverages(torch.zeros(0, dtype=torch.long), [])
        space = adapter.space
        game = space.game
        k = game.num_hole_cards
        allin = np.array([no_betting_left(spent, game.stack) for spent in leaves.spent], dtype=bool)
        self.allin_leaves = torch.as_tensor(np.nonzero(allin)[0], device=la.device)
        self.exact = None
        if allin.any():
            idx = np.nonzero(allin)[0]
            self.exact = CheckdownEvaluator(
                space, la.hands, [leaves.boards[i] for i in idx], leaves.spent[idx], la.device, la.dtype
            )
        rows, boards, weights, feats, pots, perms = [], [], [], [], [], []
        for i, (board, spent, nxt) in enumerate(zip(leaves.boards, leaves.spent, leaves.next_round)):
            if allin[i]:
                continue
            n_new = game.board_cards_through(int(nxt)) - len(board)
            remaining = [c for c in space.deck if c not in board]
            w = 1.0 / comb(len(remaining) - 2 * k, n_new)
            for extra in combinations(remaining, n_new):
                full = tuple(board) + extra
                rows.append(i)
                boards.append(full)
                weights.append(w)
                if adapter.canonical:
                    hand_perm, deck_perm = canonical_permutation(space, full)
                else:
                    hand_perm, deck_perm = np.arange(space.size), np.arange(len(space.deck))
                feats.append(board_features(space, full)[deck_perm])
                perms.append(hand_perm)
                pots.append(float(sum(spent)))
        dev, dt = la.device, la.dtype
        self.rows = torch.as_tensor(np.array(rows, dtype=np.int64), device=dev)
        self.boards = boards
        self.averages = BoardAverages(self.rows, boards)
        self.count = len(rows)
        if not rows:
            return
        perm = np.stack(perms)
        self.perm = torch.as_tensor(perm, device=dev)  # canonical[i] = original[perm[i]]
        self.inverse = torch.as_tensor(np.argsort(perm, axis=1), device=dev)
        valid = np.stack([space.valid(b)[la.hands] for b in boards]).astype(np.float64)
        self.valid = torch.as_tensor(valid, dtype=dt, device=dev)  # [R, H] over the lookahead's hand list
        self.weights = torch.as_tensor(np.array(weights), dtype=dt, device=dev).unsqueeze(1)
        self.features = torch.as_tensor(np.stack(feats), dtype=torch.float32, device=dev)
        self.pots = torch.as_tensor(np.array(pots), dtype=dt, device=dev).unsqueeze(1)
        self.pot_input = (self.pots / pot_scale(game)).to(torch.float32)
        self.hands = torch.as_tensor(la.hands, device=dev)
        self.size = space.size


class HandNetLeafValues:
    """A :class:`agent.solver.cfr.LeafValueFn` backed by a TorchScript network over a game's hands."""

    def __init__(self, net: torch.jit.ScriptModule, space: HandSpace, canonical: bool = False) -> None:
        self.net = net
        self._run = NetOnDevices(net)
        self.space = space
        self.canonical = canonical
        #: per lookahead, by identity (not by ``id()`` alone: a new lookahead may get a freed one's address)
        self._batches: PerLookahead[_LeafBatch] = PerLookahead(size=64)

    def _batch(self, leaves: LeafInfo, la: Lookahead) -> _LeafBatch:
        return self._batches.get(la, lambda: _LeafBatch(self, leaves, la))

    @staticmethod
    def board_ranges(reach: torch.Tensor, batch: _LeafBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """Leaf reaches ``[2, L, H]`` -> each (leaf, next board)'s ranges ``[2, R, H]`` (masked by the
        board, normalised; uniform where a player has no mass) and masses ``[2, R, 1]``."""
        masked = reach.index_select(1, batch.rows) * batch.valid
        mass = masked.sum(dim=2, keepdim=True)
        uniform = batch.valid / batch.valid.sum(dim=1, keepdim=True).clamp(min=1)
        return torch.where(mass > 0, masked / mass.clamp(min=1e-30), uniform.unsqueeze(0)), mass

    def board_values(self, reach: torch.Tensor, batch: _LeafBatch) -> torch.Tensor:
        """``[2, R, H]`` counterfactual values at each (leaf, next board) for leaf reaches ``[2, L, H]``."""
        norm, mass = self.board_ranges(reach, batch)
        full = torch.zeros(2, norm.shape[1], batch.size, dtype=torch.float32, device=norm.device)
        full[:, :, batch.hands] = norm.to(torch.float32)
        full = full.gather(2, batch.perm.unsqueeze(0).expand_as(full))  # canonical suits
        x = torch.cat([batch.pot_input, full[0], full[1], batch.features], dim=1)
        out = self._run(x).to(reach.dtype)  # [R, 2*S]
        s = batch.size
        canon = torch.stack([out[:, :s], out[:, s:]])
        values = canon.gather(2, batch.inverse.unsqueeze(0).expand_as(canon))[:, :, batch.hands]  # [2, R, H]
        opp_mass = mass.flip(0)
        return values * batch.pots.unsqueeze(0) * opp_mass * batch.valid

    def __call__(self, reach: torch.Tensor, leaves: LeafInfo, la: Lookahead) -> torch.Tensor:
        batch = self._batch(leaves, la)
        out = torch.zeros_like(reach)
        if batch.count:
            values = self.board_values(reach, batch)
            batch.averages.record(values)
            out.index_add_(1, batch.rows, values * batch.weights.unsqueeze(0))
        if batch.exact is not None:
            out[:, batch.allin_leaves] = batch.exact(reach[:, batch.allin_leaves])
        return out

    def track_average(self, la: Lookahead, player: int, weight: float) -> None:
        """Called by the solver with each iteration's averaging weight, after ``player``'s values."""
        batch = self._batches.peek(la)
        if batch is not None:
            batch.averages.add(player, weight)

    def average_board_values(self, la: Lookahead, leaf: int) -> dict[tuple[int, ...], torch.Tensor] | None:
        """``{next board: [2, H]}`` at leaf index ``leaf``: the iteration-weighted average of the values
        the re-solve saw there (the lookahead's hand list); None where nothing was averaged."""
        batch = self._batches.peek(la)
        return None if batch is None else batch.averages.at_leaf(leaf)

    def chance_values(self, leaf: LeafSnapshot, board: tuple[int, ...]) -> np.ndarray:
        """``[2, hands]`` values at the start of the next round on ``board`` below a leaf, for the
        leaf's (average) reaches: what continual re-solving takes after the chance event.

        Where the re-solve kept them (``leaf.board_values``), the network's values on ``board``
        averaged over its iterations: asking the network again at the average reaches answers for
        another situation (it is not linear in the ranges), and measured, left the Leduc agent 274
        instead of 27.7 mbb/g exploitable (models/README.md)."""
        if leaf.board_values is not None and tuple(board) in leaf.board_values:
            return leaf.board_values[tuple(board)]
        space = self.space
        valid = space.valid(board).astype(np.float64)
        masked = leaf.reach * valid
        mass = masked.sum(axis=1, keepdims=True)
        if no_betting_left(leaf.spent, space.game.stack):
            hands = np.nonzero(valid)[0]
            ev = CheckdownEvaluator(space, hands, [board], np.array([leaf.spent]), torch.device("cpu"), torch.float64)
            out = np.zeros((2, space.size))
            out[:, hands] = ev(torch.as_tensor(masked[:, hands]).unsqueeze(1))[:, 0].numpy()
            return out
        norm = np.where(mass > 0, masked / np.where(mass > 0, mass, 1), valid / valid.sum())
        if self.canonical:
            hand_perm, deck_perm = canonical_permutation(space, board)
        else:
            hand_perm, deck_perm = np.arange(space.size), np.arange(len(space.deck))
        pot = float(sum(leaf.spent))
        x = np.concatenate(
            [[pot / pot_scale(space.game)], norm[0][hand_perm], norm[1][hand_perm], board_features(space, board)[deck_perm]]
        )
        out = self._run(torch.as_tensor(x, dtype=torch.float32).unsqueeze(0))[0].double().numpy()
        canon = np.stack([out[: space.size], out[space.size :]])
        values = canon[:, np.argsort(hand_perm)]
        return values * pot * mass[::-1] * valid
