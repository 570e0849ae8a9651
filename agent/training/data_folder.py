"""The data folder of a generation run: shards of solved situations written whole, the settings they
were generated with (a resume that changes them is refused), which shards are missing, and the
shards read back for training."""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import numpy as np

from agent.common.files import NPZ_ERRORS, npz_problem, save_npz, write_json
from agent.nets.manifest import ModelError, checked_file, code_version, command_line, trained_seeds
from agent.training import harvest
from agent.training.generate_spec import LEGACY_SPEC_FIELDS, GenerateSpec
from protocol.paths import not_there


def shard_path(out: Path, index: int) -> Path:
    """The file of shard ``index`` in ``out``; :func:`shard_files` reads exactly these names."""
    return out / f"shard-{index:05d}.npz"


SHARD_NAME = re.compile(r"shard-\d+\.npz")


def shard_files(out: Path) -> list[Path]:
    """The finished shards in ``out``, in order: exactly the names :func:`shard_path` gives, so a
    file left half-written by a killed run (or by older code, ``shard-N.tmp.npz``) is never read."""
    if not out.is_dir():
        return []
    return sorted(p for p in out.iterdir() if SHARD_NAME.fullmatch(p.name))


def write_shard(out: Path, index: int, arrays: dict[str, np.ndarray], meta: dict) -> None:
    """Shard ``index`` of ``out``; rows harvested from it go to the same shard of ``out/river``
    first, so a shard that exists has its harvest beside it (a killed run redoes both)."""
    own, river = harvest.split(arrays)
    if river is not None:
        folder = out / harvest.FOLDER
        folder.mkdir(exist_ok=True)
        write_atomic(shard_path(folder, index), river, {**_harvest_meta(meta), "shard": index})
    write_atomic(shard_path(out, index), own, meta)


def _harvest_meta(meta: dict) -> dict:
    """What a harvested river folder records: river data (round 3 of the game), harvested from the turn
    data described by ``meta``. No seed of its own: the exact river data of any seed pools with it."""
    spec = meta["spec"]
    river_spec = {"game": spec["game"], "round": spec["round"] + 1, "harvested_from": spec, "min_reach": harvest.MIN_REACH}
    return {"spec": river_spec, **{k: meta[k] for k in ("code_version", "command") if k in meta}}


def _start_harvest(folder: Path, meta: dict) -> None:
    """Record what the harvested folder holds; refuse to add rows kept by another threshold."""
    record = folder / "generate.json"
    if record.exists() and shard_files(folder):
        try:
            old = json.loads(record.read_text()).get("spec", {}).get("min_reach")
        except (OSError, json.JSONDecodeError, AttributeError) as exc:
            raise DataFolderError(f"{record}: unreadable ({exc})") from exc
        if old != harvest.MIN_REACH:
            raise DataFolderError(
                f"{folder} holds river rows kept at a reach of at least {old}, this code keeps {harvest.MIN_REACH}: "
                "resuming would mix them; give another --out"
            )
    folder.mkdir(exist_ok=True)
    write_json(record, meta)


def write_atomic(path: Path, arrays: dict[str, np.ndarray], meta: dict) -> None:
    """Written under a hidden name, then renamed: a run killed mid-write leaves no shard."""
    save_npz(path, compressed=False, meta=np.array(json.dumps(meta)), **arrays)


#: spec fields a resumed run may change: how many situations (shards are a function of the seed
#: and their index, so asking for more extends the same sequence), where the solves run and how
#: many share a solver call (a batch changes values only by rounding: :mod:`agent.solver.forest`)
RESUMABLE_FIELDS = ("situations", "device", "threads", "batch")


#: a recorded field as the command line sets it, where the two names differ
OPTION_OF = {
    "round": "round (--round or --street)",
    "alternating": "alternating updates (--updates)",
    "next_net": "next street's network (--river-net, --turn-net or --flop-net)",
    "shard_size": "--shard-size",
    "harvest_river": "--harvest-river",
}


class DataFolderError(ValueError):
    """An output folder holds data generated with other settings (resuming would mix them)."""


def _recorded_meta(out: Path) -> dict | None:
    """What generated the data already in ``out``: its ``generate.json``, else (older or
    hand-copied folders) the metadata of a shard; None for a folder without data."""
    record = out / "generate.json"
    # a record without shards is a run that failed before its first shard: nothing to mix with
    if record.exists() and shard_files(out):
        try:
            meta = json.loads(record.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise DataFolderError(
                f"{record}: unreadable ({exc}); move it away only if the shards beside it "
                f"were made with the settings of this command"
            ) from exc
        # a record of another shape (null, a list, a spec that is no mapping) is no record: taken for
        # "none", the shards of other settings were resumed without a word
        if not isinstance(meta, dict) or not isinstance(meta.get("spec"), dict):
            raise DataFolderError(
                f"{record}: not a generate record (an object with a 'spec' mapping); move it away only if the "
                "shards beside it were made with the settings of this command"
            )
        return meta
    for shard in shard_files(out):
        try:
            with np.load(shard) as z:
                return json.loads(str(z["meta"]))
        except Exception as exc:  # noqa: BLE001 - any unreadable shard: refuse, never overwrite
            raise DataFolderError(f"{shard}: unreadable shard ({exc})") from exc
    return None


def spec_record(spec: GenerateSpec | dict) -> dict:
    """The spec as recorded in ``generate.json`` and the shards: infinite numbers (DCFR's beta)
    as text, since JSON has none."""
    fields = asdict(spec) if isinstance(spec, GenerateSpec) else dict(spec)
    return {k: (str(v) if isinstance(v, float) and not math.isfinite(v) else v) for k, v in fields.items()}


def _sha256_or_none(path: str | None) -> str | None:
    """Which network made (or labelled) the targets: the path alone may later hold a retrained one."""
    if path is None:
        return None
    try:
        return checked_file(path)[1]["sha256"]
    except ModelError:
        return None  # the solves (or the labels) refuse it, with the reason


def _check_same_data(
    out: Path, recorded: dict, spec: GenerateSpec, next_net_sha256: str | None, teacher_sha256: str | None = None
) -> None:
    new = spec_record(spec)
    recorded_spec = recorded.get("spec", {})
    # older records lack the DCFR fields, and the precision (their networks multiplied in float32)
    legacy = {**LEGACY_SPEC_FIELDS, "net_precision": "float32" if recorded_spec.get("next_net") else None}
    old = spec_record({**legacy, **recorded_spec})
    same_file = {  # a network named by another path (relative, absolute) is the same one when its bytes are
        "next_net": recorded.get("next_net_sha256") is not None and recorded.get("next_net_sha256") == next_net_sha256,
        "teacher": recorded.get("teacher_sha256") is not None and recorded.get("teacher_sha256") == teacher_sha256,
    }
    differ = [
        f"{OPTION_OF.get(key, key)} {old.get(key)!r} -> {new[key]!r}"
        for key in new
        if key not in RESUMABLE_FIELDS and old.get(key) != new[key] and not same_file.get(key)
    ]
    old_sha = recorded.get("next_net_sha256")
    if old_sha is not None and next_net_sha256 is not None and old_sha != next_net_sha256:
        differ.append(f"next network sha256 {old_sha[:12]}... -> {next_net_sha256[:12]}... (retrained)")
    old_teacher = recorded.get("teacher_sha256")
    if old_teacher is not None and teacher_sha256 is not None and old_teacher != teacher_sha256:
        differ.append(f"teacher sha256 {old_teacher[:12]}... -> {teacher_sha256[:12]}... (retrained)")
    if differ:
        raise DataFolderError(
            f"{out} holds data generated with other settings ({'; '.join(differ)}); "
            f"resuming would mix them: give another --out, or the folder's settings"
        )


def start_output(spec: GenerateSpec, out: Path, command: str | None) -> dict:
    """Create ``out`` (or resume it), record what generates it (``generate.json``) and return
    the metadata every shard carries.

    A folder that already holds data is resumed only with the same settings (any number of
    situations): otherwise :class:`DataFolderError`. Each run is appended to the record's
    ``runs``; the first run's command and code version stay its ``command`` and
    ``code_version`` (and a hand-written ``note`` is kept)."""
    recorded = _recorded_meta(out) if out.exists() else None
    next_net_sha256 = _sha256_or_none(spec.next_net)
    teacher_sha256 = _sha256_or_none(spec.teacher)
    if recorded is not None:
        _check_same_data(out, recorded, spec, next_net_sha256, teacher_sha256)
    out.mkdir(parents=True, exist_ok=True)
    run = {
        "command": command or command_line(),
        "code_version": code_version(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "situations": spec.situations,
    }
    meta_base = {"spec": spec_record(spec), "code_version": run["code_version"], "command": run["command"]}
    if next_net_sha256 is not None:
        meta_base["next_net_sha256"] = next_net_sha256
    if teacher_sha256 is not None:
        meta_base["teacher_sha256"] = teacher_sha256
        # what the teacher learned from, so that no test folder of those seeds passes as held out
        meta_base["teacher_seeds"] = sorted(trained_seeds(checked_file(spec.teacher)[1]))
    recorded = recorded or {}
    # a record from before `runs` existed (or a shard's metadata) counts as one earlier run
    earlier = recorded.get("runs") or [{k: recorded[k] for k in ("command", "code_version") if k in recorded}]
    kept = {k: recorded[k] for k in ("command", "code_version", "note") if k in recorded}
    record = {**meta_base, **kept, "runs": [r for r in earlier if r] + [run]}
    # the folder's size is the largest any run asked for (a run asking fewer adds nothing): what a
    # network trained on it records as its data
    asked = max([spec.situations] + [int(r["situations"]) for r in record["runs"] if isinstance(r.get("situations"), int)])
    record["spec"] = {**record["spec"], "situations": asked}
    write_json(out / "generate.json", record)
    if spec.harvest_river > 0:
        _start_harvest(out / harvest.FOLDER, _harvest_meta(record))
    return meta_base


def shard_count(path: Path) -> int | None:
    """Situations a shard holds, from its metadata; None where the file is missing or unreadable
    (cut short, damaged) or records no count (shards of older code: taken as whole)."""
    if not path.exists():
        return None
    try:
        with np.load(path) as z:
            count = json.loads(str(z["meta"])).get("count")
    except NPZ_ERRORS:
        return None
    return int(count) if isinstance(count, int) else -1


def missing_shards(spec: GenerateSpec, out: Path) -> list[tuple[int, int]]:
    """``(index, count)`` of the shards to write: those not written yet, unreadable ones, and the
    last shard of a shorter run that holds fewer situations than this run's shard of that index
    (a shard is a function of the seed and its index, so rewriting it gives what one run gives)."""
    n_shards = -(-spec.situations // spec.shard_size)
    todo = []
    for i in range(n_shards):
        count = min(spec.shard_size, spec.situations - i * spec.shard_size)
        have = shard_count(shard_path(out, i))
        # a turn shard whose harvested river shard is gone or damaged is redone with it (its
        # rows are a function of the seed and the index, like the turn shard's)
        lost_harvest = spec.harvest_river > 0 and have is not None and shard_count(shard_path(out / harvest.FOLDER, i)) is None
        if have is None or 0 <= have < count or lost_harvest:
            todo.append((i, count))
    return todo


def load_shards(data_dir: Path) -> Iterator[dict[str, np.ndarray]]:
    """Each finished shard's arrays in ``data_dir``, in order (:func:`read_shards` without the paths)."""
    for _, arrays in read_shards(data_dir):
        yield arrays


def read_shards(data_dir: Path) -> Iterator[tuple[Path, dict[str, np.ndarray]]]:
    """Each finished shard of ``data_dir`` and its arrays, in order; a missing, unreadable or inconsistent
    shard is an error that names it."""
    paths = shard_files(data_dir)
    if not paths and not Path(data_dir).is_dir():  # a typo, or a file given: said as such, not as a folder to fill
        raise FileNotFoundError(not_there(Path(data_dir)))
    if not paths:
        raise FileNotFoundError(f"{data_dir}: no shard-*.npz files (run deepstack generate first)")
    for p in paths:
        try:
            with np.load(p) as z:
                arrays = {k: z[k] for k in z.files if k != "meta"}
        except NPZ_ERRORS as exc:
            raise ValueError(
                f"{p}: unreadable shard ({npz_problem(exc)}); delete it and run deepstack generate again to redo it"
            ) from None
        for harvested in (False, True):  # a shard's rows, and the river rows harvested beside them
            rows = {k: len(v) for k, v in arrays.items() if v.ndim and k.startswith(harvest.PREFIX) == harvested}
            if len(set(rows.values())) > 1:
                counts = ", ".join(f"{k} {n}" for k, n in rows.items())
                raise ValueError(
                    f"{p}: its arrays have different numbers of rows ({counts}); not a shard deepstack generate wrote"
                )
        yield p, arrays
