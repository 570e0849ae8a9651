"""Random training situations: a public state at the start of a round (board, pot) and one range
per player from R(S, p), drawn from a seeded generator so that a shard is the same whenever it is
redone."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from agent.bots.config import HoldemModels
from agent.nets.manifest import checked_file
from agent.solver.handspace import HandSpace
from agent.training.generate_spec import GenerateSpec
from agent.training.rangegen import recursive_range, strength_order
from native.equity import hand_equities
from protocol.gamedef import Game, load_game


def possible_spent(game: Game, round_: int) -> list[int]:
    """Per-player contributions that can start ``round_`` (limit: enumerated; no-limit: a sample grid)."""
    if game.is_limit:
        amounts = {max(game.blind)}
        for r in range(round_):
            amounts = {a + k * game.raise_size[r] for a in amounts for k in range(game.max_raises[r] + 1)}
        return sorted(amounts)
    return []


def draw_pot(game: Game, round_: int, rng: np.random.Generator) -> int:
    """Pot at the start of ``round_``: uniform over the possible ones (limit), or an interval
    chosen uniformly then a value uniformly inside it (no-limit; all-in pots included)."""
    if game.is_limit:
        return 2 * int(rng.choice(possible_spent(game, round_)))
    stack = min(game.stack)
    low = max(game.blind)
    edges = [low, 2 * low, 4 * low, stack // 4, stack // 2, stack]
    intervals = [(a, b) for a, b in zip(edges, edges[1:]) if b > a] + [(stack, stack)]
    a, b = intervals[int(rng.integers(len(intervals)))]
    return 2 * int(rng.integers(a, b + 1))


@dataclass
class Situation:
    """One training situation at the start of a round: the board, the pot in chips (both players' shares)
    and both players' R(S, p) ranges over the hand space."""

    board: tuple[int, ...]
    pot: int
    ranges: np.ndarray  # [2, H]


def both_all_in(game: Game, sit: Situation) -> bool:
    """The pot holds both stacks: nothing is left to bet, the showdown decides."""
    return all(sit.pot // 2 >= s for s in game.stack)


def draw_situation(
    space: HandSpace, round_: int, rng: np.random.Generator, sparse: float = 0.0, board: tuple[int, ...] | None = None
) -> Situation:
    """A situation at the start of ``round_``: R(S, p) ranges of both players and a pot, on a
    random board (or on ``board``)."""
    game = space.game
    n_board = game.board_cards_through(round_)
    if board is None:
        board = tuple(int(c) for c in rng.choice(np.array(space.deck), n_board, replace=False))
    strength = space.strengths(board) if n_board == game.total_board_cards else _equity_strength(space, board)
    order = strength_order(strength, space.valid(board))
    ranges = np.stack([recursive_range(order, space.size, rng) for _ in range(2)])
    pot = draw_pot(game, round_, rng)
    if sparse > 0 and rng.random() < sparse:  # drawn only then: data without sparse ranges stays as it was
        while True:  # two ranges that can be dealt together
            dropped = np.stack([drop_hands(r, order, rng) for r in ranges])
            if dropped[0] @ space.compatible() @ dropped[1] > 0:
                ranges = dropped
                break
    return Situation(board, pot, ranges)


def drop_hands(range_: np.ndarray, order: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``range_`` with each of the hands ``order`` lists dropped with probability 1/2 (at least one
    kept), renormalised."""
    keep = rng.random(len(order)) < 0.5
    if not keep.any():
        keep[int(rng.integers(len(order)))] = True
    out = np.zeros_like(range_)
    out[order[keep]] = range_[order[keep]]
    return out / out.sum()


def _equity_strength(space: HandSpace, board: tuple[int, ...]) -> np.ndarray:
    if not board:
        return _preflop_strength()

    eq = np.asarray(hand_equities(board), dtype=np.float64)
    return np.where(np.isfinite(eq), eq, -1.0)


@lru_cache(maxsize=1)
def _preflop_strength() -> np.ndarray:
    """Pre-flop strength of each hand: its mean check-down result (-1 to 1, below zero for the
    weaker half) against every hand it can meet, from the shipped pre-flop check-down matrix
    (exact equities take minutes per call)."""

    path, _ = checked_file(HoldemModels().preflop_checkdown, " (deepstack buckets --street preflop builds it)")
    with np.load(path) as z:
        m = z["matrix"].astype(np.float64)
    compatible = HandSpace(load_game("hunl")).compatible()
    return (m * compatible).sum(axis=1) / compatible.sum(axis=1)


def draw_situations(space: HandSpace, spec: GenerateSpec, rng: np.random.Generator, count: int) -> list[Situation]:
    """``count`` situations of ``spec``, ``spec.per_board`` on each board drawn."""
    situations: list[Situation] = []
    for i in range(count):
        board = None if i % spec.per_board == 0 else situations[-1].board
        situations.append(draw_situation(space, spec.round, rng, spec.sparse, board))
    return situations
