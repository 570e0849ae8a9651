"""River data harvested from turn solves to the end of the game.

A turn situation solved to the end holds, below each turn betting line that ends in a call and
each river card, the root of a river subgame: a public state (board, pot), both players' ranges
there (their reach under the solve's average strategy) and both players' counterfactual values
(the average strategy's). Those are a river network's rows, made by a solve that runs anyway; but
they are values *inside* the larger solve, not of the river subgame solved alone with those
ranges, and a subgame the solve rarely reaches is solved only as well as its reach weighted it.
docs/training.md ("River data harvested from turn solves") measures both against the subgames
solved alone and against exact river data for a river network.
"""

from __future__ import annotations

import numpy as np
import torch

from agent.solver.resolve import Solution
from agent.solver.tree import NodeKind

#: the prefix of a turn shard's arrays that hold harvested river rows (written to their own folder)
PREFIX = "river_"
#: the folder, inside a turn data folder, of its harvested river shards (a river data folder itself)
FOLDER = "river"
#: a river root is kept only where both players reach it with at least this much of their range: below
#: it the subgame is solved worse than the river network already knows it (on 2000 harvested rows against
#: the subgames solved alone, Huber 0.0023 above a mass of 0.1, 0.0081 from 0.01 to 0.1 and 0.0205 below,
#: the shipped river network's 0.0064, 0.0079 and 0.0124: docs/training.md)
MIN_REACH = 0.1


def river_roots(sol: Solution) -> list[int]:
    """The lookahead rows where a river subgame starts: the decision below each river card."""
    la = sol.lookahead
    rows = []
    for row, node in enumerate(la.nodes):
        if node.kind is NodeKind.CHANCE and node.next_round == la.space.game.num_rounds - 1:
            rows.extend(child for child in la.children_of(row) if la.nodes[child].kind is NodeKind.DECISION)
    return rows


def harvest_river(sol: Solution, keep: int, rng: np.random.Generator, min_reach: float = MIN_REACH) -> dict[str, np.ndarray]:
    """Up to ``keep`` river subgames of a solve to the end (a uniform sample of those both players
    reach with at least ``min_reach`` of their range), as river data rows: ``boards``, ``pots``,
    ``ranges`` (normalised), ``values`` (per unit of pot against the normalised opponent range, the
    convention of the exact river data) and ``reach`` (each player's range mass there, of 1 at the
    turn's root). ``sol`` must keep its average strategy."""
    la, solver = sol.lookahead, sol.solver
    values = solver.evaluate(sol.result.root_reach, sol.result.average_strategy)
    reach = solver.reach
    roots = river_roots(sol)
    masses = {r: reach[:, r].sum(dim=1) for r in roots}
    rows = [r for r in roots if bool((masses[r] >= min_reach).all())]
    if len(rows) > keep:
        rows = sorted(rng.choice(rows, keep, replace=False).tolist())
    n_board = la.space.game.total_board_cards
    out: dict[str, list[np.ndarray]] = {"boards": [], "pots": [], "ranges": [], "values": [], "reach": []}
    for r in rows:
        mass = masses[r]
        ranges = sol.to_space(reach[:, r] / mass.unsqueeze(1))
        pot = la.nodes[r].pot
        # counterfactual values are linear in the opponent's reach: divide by its mass
        vals = sol.to_space(values[:, r] / torch.flip(mass, (0,)).unsqueeze(1)) / pot
        board = np.full(n_board, -1, dtype=np.int8)
        cards = la.boards[la.row_board[r]]
        board[: len(cards)] = cards
        out["boards"].append(board)
        out["pots"].append(np.array(pot, dtype=np.int32))
        out["ranges"].append(ranges.astype(np.float32))
        out["values"].append(vals.astype(np.float32))
        out["reach"].append(mass.to("cpu", torch.float32).numpy())
    if not rows:
        return empty_rows(n_board, la.space.size)
    return {key: np.stack(items) for key, items in out.items()}


def empty_rows(n_board: int, n_hands: int) -> dict[str, np.ndarray]:
    """No harvested rows, in the arrays' shapes (a situation with nothing to harvest)."""
    return {
        "boards": np.zeros((0, n_board), dtype=np.int8),
        "pots": np.zeros(0, dtype=np.int32),
        "ranges": np.zeros((0, 2, n_hands), dtype=np.float32),
        "values": np.zeros((0, 2, n_hands), dtype=np.float32),
        "reach": np.zeros((0, 2), dtype=np.float32),
    }


def split(arrays: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray] | None]:
    """A shard's own arrays and its harvested river rows (None where it has none)."""
    own = {k: v for k, v in arrays.items() if not k.startswith(PREFIX)}
    river = {k[len(PREFIX) :]: v for k, v in arrays.items() if k.startswith(PREFIX)}
    return own, (river or None)
