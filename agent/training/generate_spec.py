"""What one ``deepstack generate`` run is: the game, street, situations, solver settings and seed.

Kept apart from the generation itself because the data folder records it (and refuses a resume
that changes it), the campaign builds it, and the command lines parse into it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from agent.solver.resolve import SolverConfig
from agent.solver.variant import Variant


@dataclass(frozen=True)
class GenerateSpec:
    """What to generate. Leduc-style games (hands are their own buckets) write network rows;
    hold'em writes hand-level situations (board, pot, ranges, values) that training maps
    to buckets, so buckets can change without solving again."""

    game: str
    round: int
    situations: int
    shard_size: int = 500
    seed: int = 0
    iterations: int = 1000
    algorithm: str = "dcfr"
    device: str = "cpu"
    #: torch threads of this process (small solves run best on one; run one process per core)
    threads: int = 1
    #: hold'em: the next street's network (TorchScript file with a manifest entry): the river
    #: network for turn situations and the turn network for flop situations (depth-limit
    #: leaves), the flop network for the auxiliary pre-flop targets
    next_net: str | None = None
    #: CFR's updates: alternating (one player per pass) or simultaneous (both from one pass: with a
    #: network at the leaves one network call per iteration instead of two; on turn situations with
    #: the river network, simultaneous updates reach the targets of alternating ones closer per
    #: CPU-second: docs/training.md, "Updates with network leaves")
    alternating: bool = True
    #: how ``next_net`` multiplies: float32 or bfloat16 (:func:`agent.nets.valuenet.resolve_precision`
    #: turns the command line's ``auto`` into one of them before it is recorded); None without a network
    net_precision: str | None = None
    #: auxiliary targets: flops averaged per situation (None: all 22100, the exact average;
    #: fewer: a seeded uniform sample, an unbiased estimate)
    aux_flops: int | None = None
    #: DCFR's alpha, beta and gamma for the solves (algorithm dcfr or dcfr+): :data:`GENERATE_DCFR`
    dcfr_alpha: float = 1.5
    dcfr_beta: float = -math.inf
    dcfr_gamma: float = 4.0
    #: situations per solver call where each would get a lookahead of its own (hold'em river, turn
    #: and flop; not Leduc's last round, batched its own way): a forest, :mod:`agent.solver.forest`. None:
    #: one at a time on the CPU, on a GPU as many as half its free memory holds
    batch: int | None = None
    #: the fraction of situations whose ranges leave hands out (each possible hand of each player
    #: dropped with probability 1/2, one kept): at re-solving leaves a range holds no mass on the
    #: hands the player folded or never plays that way, which R(S, p) never draws (models/README.md)
    sparse: float = 0.0
    #: turn situations solved to the end: river subgames kept per situation as river data (a sample of
    #: those both players reach, written to the folder's ``river/``: :mod:`agent.training.harvest`); 0: none
    harvest_river: int = 0
    #: hold'em: label the situations with this network's values instead of solving them (data to
    #: distil the network from: :mod:`agent.training.teacher`); None: solved
    teacher: str | None = None
    #: situations drawn per board, each with its own ranges and pot (teacher-labelled data: the board's
    #: bucket lookup, most of a label's cost, is shared); 1: a board each, as solved data is drawn
    per_board: int = 1

    def solver_config(self, dtype: str) -> SolverConfig:
        """The CFR settings of this spec's solves in ``dtype`` (float64 for Leduc's hand-level data, float32
        for hold'em: :func:`agent.training.datagen.generate_shard`)."""
        return SolverConfig(
            algorithm=self.algorithm,
            alternating=self.alternating,
            iterations=self.iterations,
            device=self.device,
            dtype=dtype,  # type: ignore[arg-type]
            alpha=self.dcfr_alpha,
            beta=self.dcfr_beta,
            gamma=self.dcfr_gamma,
        )


#: DCFR parameters (alpha, beta, gamma) generation solves with by default: negative regrets reset
#: every iteration (beta = -inf) and the average weighted by t^4. On 34 turn draws (fold, call,
#: pot, all-in; 1326 hands) 450 such iterations leave the average strategy a little less
#: exploitable than 1000 CFR+ iterations; DCFR's published (1.5, 0, 2) falls just short of that
#: at 500 (docs/training.md: HUNL turn training situations)
GENERATE_DCFR = (GenerateSpec.dcfr_alpha, GenerateSpec.dcfr_beta, GenerateSpec.dcfr_gamma)


#: what data recorded before the DCFR fields existed was solved with (DCFR's published choice)
LEGACY_SPEC_FIELDS = {
    "dcfr_alpha": 1.5,
    "dcfr_beta": 0.0,
    "dcfr_gamma": 2.0,
    "sparse": 0.0,
    "alternating": True,
    "harvest_river": 0,
    "teacher": None,
    "per_board": 1,
}


#: ``--updates`` of the generation commands
UPDATES = ("auto", "alternating", "simultaneous")


def alternating_updates(updates: str, network_leaves: bool) -> bool:
    """Whether ``updates`` (:data:`UPDATES`) means alternating ones: ``auto`` = simultaneous where a
    network is at the leaves (one network call per iteration), alternating otherwise."""
    return updates == "alternating" or (updates == "auto" and not network_leaves)


def format_dcfr(dcfr: tuple[float, float, float]) -> str:
    """``ALPHA,BETA,GAMMA`` as the command lines take it (JSON has no -inf)."""
    return ",".join(f"{x:g}" for x in dcfr)


def parse_dcfr(text: str) -> tuple[float, float, float]:
    """``ALPHA,BETA,GAMMA`` (BETA may be -inf) for the command lines; ValueError if malformed."""
    parts = text.split(",")
    try:
        alpha, beta, gamma = (float(x) for x in parts)
    except ValueError:
        raise ValueError(f"DCFR parameters must be ALPHA,BETA,GAMMA (three numbers, BETA may be -inf), not {text!r}") from None

    Variant("dcfr", alpha=alpha, beta=beta, gamma=gamma)  # checks the values
    return alpha, beta, gamma


def parse_batch(text: str) -> int | None:
    """``--batch``: a positive number of situations per solver call, or ``auto`` (None)."""
    if text.strip().lower() == "auto":
        return None
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"expected a positive whole number or 'auto', got {text!r}") from None
    if value <= 0:
        raise ValueError(f"expected a positive whole number or 'auto', got {text!r}")
    return value
