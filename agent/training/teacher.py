"""Situations labelled by a network instead of solved: data to distil a network from.

The turn networks' error is mostly variance (docs/training.md: single networks on 15,768 to
23,144 situations score alike, the mean of two clearly better), and the mean of several networks
costs their sum at every leaf and in the repository. A network trained on situations that such a
mean labels, many more than were ever solved, can learn its smoother function at one network's
cost. Labelling a situation costs the bucket lookup of its board and a share of one batched
forward pass, not a solve; situations drawn several per board (``per_board``) share the lookup.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

import numpy as np
import torch

from agent.nets.encoding import SituationEncoder
from agent.nets.manifest import ModelError, load_value_net
from agent.training.streets import STREET_ROUND, street_abstraction

if TYPE_CHECKING:
    from agent.solver.handspace import HandSpace


class Situation(Protocol):
    """What a label needs of a training situation (:class:`agent.training.situations.Situation`)."""

    board: tuple[int, ...]
    pot: int
    ranges: np.ndarray


@lru_cache(maxsize=2)
def load_teacher(path: str, total_stacks: float) -> tuple[torch.jit.ScriptModule, SituationEncoder, dict]:
    """The network at ``path`` with the encoder of its street's buckets (from its manifest entry);
    loaded once per process."""
    net, entry = load_value_net(path)
    street = entry.get("street")
    if street not in STREET_ROUND or street == "preflop-aux":
        raise ModelError(f"{path}: a teacher must be a river, turn or flop network, this one is for {street!r}")
    table, _, _ = street_abstraction(str(street), int(entry.get("river_buckets") or 1000), entry.get("buckets_file"))
    return net, SituationEncoder(table, total_stacks), entry


def check_teacher(path: str, round_: int, total_stacks: float) -> None:
    """Refuse, naming the file, a teacher that cannot be loaded or is another street's network."""
    _, _, entry = load_teacher(path, total_stacks)
    if STREET_ROUND[entry["street"]] != round_:
        raise ModelError(f"{path}: a {entry['street']} network cannot label situations at the start of round {round_}")


def teacher_values(path: str, space: HandSpace, situations: Sequence[Situation]) -> list[np.ndarray]:
    """``[2, H]`` values per unit of pot of each situation, as a solve would give them: each
    valid hand gets its bucket's value from the network (so the encoder maps them back to exactly
    the network's outputs), blocked hands 0."""
    game = space.game
    net, encoder, _ = load_teacher(path, float(sum(game.stack)))
    boards = np.full((len(situations), game.total_board_cards), -1, dtype=np.int8)
    for i, sit in enumerate(situations):
        boards[i, : len(sit.board)] = sit.board
    part = {
        "boards": boards,
        "pots": np.array([sit.pot for sit in situations], dtype=np.int32),
        "ranges": np.stack([sit.ranges for sit in situations]).astype(np.float32),
        "values": np.zeros((len(situations), 2, space.size), dtype=np.float32),
    }
    x, _, _ = encoder(part)
    with torch.no_grad():
        out = net(torch.as_tensor(x)).double().numpy()
    k = encoder.table.num_buckets
    values = []
    for i, sit in enumerate(situations):
        ids = encoder.table.assign(sit.board)
        valid = ids >= 0
        v = np.zeros((2, space.size))
        for p in range(2):
            v[p, valid] = out[i, p * k + ids[valid]]
        values.append(v)
    return values
