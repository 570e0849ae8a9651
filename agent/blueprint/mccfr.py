"""Training a blueprint: external-sampling MCCFR (in C) over a betting tree and a card abstraction,
with linear averaging, saved to and resumed from one self-describing file."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from agent.blueprint.abstraction import Abstraction, make_abstraction
from agent.blueprint.tree import BlueprintTree
from agent.common.files import NPZ_ERRORS, npz_problem, save_npz
from agent.solver.tree import BetSizing
from native import mccfr
from protocol.gamedef import Game, GameDefError, parse_game

#: the file format written by :meth:`Blueprint.save`
FORMAT = "deepstack-blueprint-1"
#: deals per batch of single-process training (each batch draws with its own seed; linear averaging
#: rescales between batches)
BATCH = 20_000


class BlueprintFileError(ValueError):
    """A blueprint file that cannot be used (missing, corrupt, or for another game or tree)."""


@dataclass
class Blueprint:
    """Regrets and average-strategy sums over ``tree``'s information sets (``tree.flat.num_slots``)."""

    tree: BlueprintTree
    abstraction: Abstraction
    regrets: np.ndarray = field(default=None)  # type: ignore[assignment]
    strategy_sum: np.ndarray = field(default=None)  # type: ignore[assignment]
    iterations: int = 0
    seconds: float = 0.0

    def __post_init__(self) -> None:
        if tuple(self.tree.flat.num_buckets) != tuple(self.abstraction.num_buckets):
            raise ValueError("the tree was laid out for other bucket counts than the abstraction's")
        slots = self.tree.flat.num_slots
        if self.regrets is None:
            self.regrets = np.zeros(slots, np.float32)
        if self.strategy_sum is None:
            self.strategy_sum = np.zeros(slots, np.float32)

    @classmethod
    def create(cls, game: Game, sizing: BetSizing | tuple[BetSizing, ...], abstraction: str = "lossless") -> Blueprint:
        """A blueprint of ``game`` with no iterations yet."""
        ab = make_abstraction(abstraction, game)
        return cls(BlueprintTree.build(game, sizing, ab.num_buckets), ab)

    def train(
        self,
        iterations: int,
        seed: int = 0,
        batch: int = BATCH,
        linear: bool = True,
        progress: bool = False,
        clusters: int = 1,
    ) -> float:
        """Run ``iterations`` more iterations (one deal each, both positions traversed); returns the
        seconds taken. ``linear``: iteration t weighs t in the regrets and the average (Linear CFR),
        applied between batches by scaling both sums by T / (T + batch). ``clusters`` > 1: every
        deal continues once per public cluster below the trunk (seed 001's weighting, in one process)."""
        start = time.perf_counter()
        bar = tqdm(total=iterations, desc="MCCFR", unit="it", unit_scale=True, disable=not progress)
        done = 0
        while done < iterations:
            n = min(batch, iterations - done)
            if linear and self.iterations > 0:
                scale = np.float32(self.linear_scale(n))
                self.regrets *= scale
                self.strategy_sum *= scale
            rng = np.random.default_rng([seed, self.iterations])
            deals = self.abstraction.deal(rng, n, clusters)
            mccfr.iterate(self.tree.flat, deals, self.regrets, self.strategy_sum, int(rng.integers(2**63)))
            self.iterations += n
            done += n
            bar.update(n)
        bar.close()
        seconds = time.perf_counter() - start
        self.seconds += seconds
        return seconds

    def linear_scale(self, n: int) -> float:
        """The factor both sums take before ``n`` more iterations, for linear averaging."""
        return self.iterations / (self.iterations + n) if self.iterations > 0 else 1.0

    def average(self, n: int, bucket: int) -> np.ndarray:
        """The average strategy of decision ``n`` for ``bucket`` (uniform where never reached)."""
        s = self.strategy_sum[self.tree.info_set(n, bucket)].astype(np.float64)
        total = s.sum()
        return s / total if total > 0 else np.full(len(s), 1.0 / len(s))

    def save(self, path: str | Path) -> None:
        """Everything needed to play and to resume: the game, the betting and card abstractions, the
        regrets and average-strategy sums (written to a temporary file, then moved into place)."""
        path = Path(path)
        meta = {
            "format": FORMAT,
            "game": self.tree.game.to_text(),
            "sizing": [asdict(s) for s in self.tree.sizing],
            "abstraction": self.abstraction.name,
            "abstraction_sha256": getattr(self.abstraction, "sha256", None),
            "iterations": self.iterations,
            "seconds": round(self.seconds, 3),
        }
        save_npz(path, meta=np.array(json.dumps(meta)), regrets=self.regrets, strategy_sum=self.strategy_sum)

    @classmethod
    def open(cls, path: str | Path, game: Game | None = None) -> Blueprint:
        """The blueprint saved at ``path`` (for ``game`` when given: another game is refused)."""
        try:
            with np.load(path) as f:
                meta = json.loads(str(f["meta"]))
                regrets, sums = f["regrets"], f["strategy_sum"]
        except FileNotFoundError:
            raise BlueprintFileError(f"{path}: no such blueprint file") from None
        except NPZ_ERRORS as exc:
            raise BlueprintFileError(f"{path}: not a blueprint file ({npz_problem(exc)})") from None
        if meta.get("format") != FORMAT:
            raise BlueprintFileError(f"{path}: format {meta.get('format')!r}, expected {FORMAT!r}")
        try:
            saved_game = parse_game(meta["game"], source=str(path))
            sizing = tuple(_sizing(s) for s in meta["sizing"])
        except (GameDefError, KeyError, TypeError, ValueError) as exc:
            raise BlueprintFileError(f"{path}: bad game or bet sizes ({exc})") from None
        if game is not None and game.to_text() != saved_game.to_text():
            raise BlueprintFileError(f"{path}: a blueprint of another game than {game.name!r}")
        bp = cls.create(game or saved_game, sizing, meta.get("abstraction", ""))
        trained_on, now = meta.get("abstraction_sha256"), getattr(bp.abstraction, "sha256", None)
        if trained_on and now and trained_on != now:  # same shapes, other buckets: it would play on wrong cards
            raise BlueprintFileError(
                f"{path}: trained on the card abstraction {bp.abstraction.name!r} of sha256 {trained_on[:12]}..., "
                f"whose tables now have sha256 {now[:12]}... (rebuilt): not this blueprint's abstraction"
            )
        for name, saved, made in (("regrets", regrets, bp.regrets), ("strategy sums", sums, bp.strategy_sum)):
            if saved.shape != made.shape:
                raise BlueprintFileError(f"{path}: its {name} are of shape {saved.shape}, but its tree has {made.shape}")
            if saved.dtype.kind not in "iuf":  # strings failed inside isfinite with a traceback
                raise BlueprintFileError(f"{path}: its {name} are of {saved.dtype}, not numbers")
        if not (np.isfinite(regrets).all() and np.isfinite(sums).all()):  # it would play on NaN silently
            raise BlueprintFileError(f"{path}: its regrets or strategy sums hold NaN or infinite numbers")
        if (sums < 0).any():  # sums of probabilities: a negative one is not a strategy any training made
            raise BlueprintFileError(f"{path}: its strategy sums hold negative numbers")
        iterations, seconds = meta.get("iterations"), meta.get("seconds", 0.0)
        if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 0:
            raise BlueprintFileError(f"{path}: its iterations {iterations!r} are not a count")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds < float("inf"):
            raise BlueprintFileError(f"{path}: its seconds {seconds!r} are not a duration")
        bp.regrets[:] = regrets
        bp.strategy_sum[:] = sums
        bp.iterations = iterations
        bp.seconds = float(seconds)
        return bp


def _sizing(d: dict) -> BetSizing:
    raises = d.get("raises")
    return BetSizing(
        bets=tuple(tuple(float(x) for x in part) for part in d["bets"]),
        raises=None if raises is None else tuple(tuple(float(x) for x in part) for part in raises),
        all_in=bool(d.get("all_in", True)),
        max_raises=d.get("max_raises"),
        all_in_past_cap=bool(d.get("all_in_past_cap", False)),
    )
