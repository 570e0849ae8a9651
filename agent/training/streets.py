"""Hold'em value networks per street: the card abstraction each one sees.

The river network's buckets are equity steps computed per board, the auxiliary pre-flop
network's the 169 pre-flop classes, the flop and turn networks' the k-means tables of
``models/holdem``; ``deepstack train`` and ``deepstack campaign`` both build their encoders here.
"""

from __future__ import annotations

from agent.bots.config import HoldemModels
from agent.bots.settings import data_file
from agent.nets.buckets import BucketTable, PreflopClasses, RiverStrength

#: the round at whose start each network's situations are drawn
STREET_ROUND = {"river": 3, "turn": 2, "flop": 1, "preflop-aux": 0}


#: equity steps of a river network's buckets (train --river-buckets)
RIVER_BUCKETS = 1000


def street_abstraction(
    street: str, river_buckets: int = RIVER_BUCKETS, buckets_file: str | None = None
) -> tuple[BucketTable | PreflopClasses | RiverStrength, str | None, dict[str, object]]:
    """The buckets of ``street``'s network, the bucket table file it records (None where the
    buckets are computed) and the manifest fields that say which. ``buckets_file``: a table in
    place of the shipped one (flop and turn only)."""
    if street not in STREET_ROUND:
        raise ValueError("hold'em networks need --street turn, flop, preflop-aux or river")
    extra: dict[str, object] = {"street": street}
    if street == "river":
        if buckets_file:
            raise ValueError("--buckets: the river's buckets are equity steps (--river-buckets)")
        extra["river_buckets"] = river_buckets
        return RiverStrength(river_buckets), None, {**extra, "buckets_file": None}
    if street == "preflop-aux":
        if buckets_file:
            raise ValueError("--buckets: the auxiliary network's buckets are the 169 pre-flop classes")
        return PreflopClasses(), None, {**extra, "buckets_file": None}
    path = buckets_file or (HoldemModels().turn_buckets if street == "turn" else HoldemModels().flop_buckets)
    return BucketTable.load(data_file(path)), path, {**extra, "buckets_file": path}
