"""The rows a value network trains on: generated folders read (stored rows, or situations encoded as
they are read), pooled with checks that they are data of one network and share no situation, each
row's group for the validation split, and what the manifest records of where they came from."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from tqdm import tqdm

from agent.nets.encoding import canonical_permutation
from agent.training.data_folder import read_shards, shard_files
from agent.training.streets import STREET_ROUND
from protocol.gamedef import GameDefError, load_game

if TYPE_CHECKING:
    from agent.solver.handspace import HandSpace


class Rows(NamedTuple):
    """Network rows read from data folders, and each row's group: rows of one group (situations drawn on
    one board, river rows harvested from one turn solve) are not independent draws, so the validation
    split keeps a group on one side (:func:`validation_split`)."""

    inputs: np.ndarray
    targets: np.ndarray
    masks: np.ndarray
    groups: np.ndarray


def row_groups(part: dict[str, np.ndarray], rows: int, per_board: int) -> np.ndarray:
    """Each row's group within its shard: the turn situation a harvested river row came from (its
    ``source``), the board where ``per_board`` situations were drawn on each, else the row itself."""
    if "source" in part:
        return part["source"].astype(np.int64)
    return np.arange(rows, dtype=np.int64) // max(1, per_board)


def _apart(groups: Sequence[np.ndarray]) -> np.ndarray:
    """Group numbers of several shards or folders in one array, each part's shifted past the last's
    (each part numbers its groups from 0)."""
    shifts = np.cumsum([0] + [int(g.max()) + 1 if len(g) else 0 for g in groups[:-1]])
    return np.concatenate([g + shift for g, shift in zip(groups, shifts)])


def load_dataset(
    data_dir: Path,
    encoder: Callable[[dict[str, np.ndarray]], tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None,
    bar: tqdm | None = None,
) -> Rows:
    """Network rows of every shard: stored as they are, or made by ``encoder`` from situations
    (``bar`` advanced by each shard's rows); groups numbered from 0 across the folder."""
    xs, ys, ms, gs = [], [], [], []
    per_board = data_spec(data_dir).get("per_board", 1)
    per_board = per_board if isinstance(per_board, int) and not isinstance(per_board, bool) else 1
    for path, part in read_shards(data_dir):
        try:
            if "inputs" in part:
                x, y, m = part["inputs"], part["targets"], part["masks"]
            elif encoder is not None:
                x, y, m = encoder(part)
            else:
                raise ValueError(f"{data_dir}: shards hold situations, and no bucket encoder was given")
        except KeyError as exc:
            raise ValueError(f"{path}: no {exc.args[0]!r} array; not a shard deepstack generate wrote") from None
        _check_rows(path, x, y, m)
        if not (np.isfinite(x).all() and np.isfinite(y).all()):
            raise ValueError(f"{data_dir}: its rows hold NaN or infinite numbers; regenerate the data")
        if xs and (x.shape[1:], y.shape[1:]) != (xs[0].shape[1:], ys[0].shape[1:]):
            raise ValueError(
                f"{data_dir}: shards of different widths (inputs {xs[0].shape[1:]} and {x.shape[1:]}, targets "
                f"{ys[0].shape[1:]} and {y.shape[1:]}): data of two kinds in one folder"
            )
        groups = row_groups(part, len(x), per_board)
        if groups.shape != (len(x),) or (len(groups) and groups.min() < 0):
            raise ValueError(f"{data_dir}: a shard's source column does not give one group per row")
        gs.append(groups)
        xs.append(x)
        ys.append(y)
        ms.append(m)
        if bar is not None:
            bar.update(len(x))
    return Rows(np.concatenate(xs), np.concatenate(ys), np.concatenate(ms), _apart(gs))


def _check_rows(path: Path, x: np.ndarray, y: np.ndarray, m: np.ndarray) -> None:
    """Rows a network can take: tables of real numbers, a mask for each target (strings failed inside
    ``isfinite``, complex numbers inside the loss, a flat mask inside ``concatenate``)."""
    for name, a in (("inputs", x), ("targets", y), ("masks", m)):
        if a.ndim != 2 or a.dtype.kind not in "biuf":
            raise ValueError(
                f"{path}: its {name} are a {a.ndim}-D table of {a.dtype} (rows of real numbers expected); "
                "not a shard deepstack generate wrote"
            )
    if m.shape != y.shape:
        raise ValueError(f"{path}: masks {m.shape} and targets {y.shape} differ in shape; not a shard deepstack generate wrote")


def _generation_record(folder: Path) -> dict:
    """A folder's ``generate.json`` ({} where it has none or it is unreadable)."""
    gen = folder / "generate.json"
    if not gen.exists():
        return {}
    try:
        meta = json.loads(gen.read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    return meta if isinstance(meta, dict) else {}


def data_spec(folder: Path) -> dict:
    """What generated a folder's data: its ``generate.json`` spec, else (hand-copied folders) its
    first shard's; {} where neither says."""
    spec = _generation_record(folder).get("spec")
    if isinstance(spec, dict):
        return spec
    for shard in shard_files(folder)[:1]:
        try:
            with np.load(shard) as z:
                spec = json.loads(str(z["meta"])).get("spec")
        except Exception:  # noqa: BLE001 - an unreadable shard is named when the rows are read
            return {}
    return spec if isinstance(spec, dict) else {}


def same_game(a: str, b: str) -> bool:
    """Whether two game names (short names or files) are one game, whatever path named it."""
    if a == b:
        return True
    try:
        return dataclasses.replace(load_game(a), name="") == dataclasses.replace(load_game(b), name="")
    except GameDefError:
        return False


def check_data_game(data_dirs: Sequence[Path], game: str, round_: int | None = None) -> None:
    """Refuse, before anything is read, a folder whose data was generated for another game than
    ``game`` (or situations at the start of another round than ``round_``): rows of the same width
    would train, or score, a network on another game's values."""
    for folder in data_dirs:
        spec = data_spec(Path(folder))
        # what said so: a hand-copied folder without generate.json is told by its first shard's record
        said = (
            "its generate.json" if isinstance(_generation_record(Path(folder)).get("spec"), dict) else "its first shard's record"
        )
        if "game" in spec and not same_game(str(spec["game"]), game):
            raise ValueError(f"{folder}: data of the game {spec['game']!r} ({said}), not {game!r}")
        if round_ is not None and "round" in spec and spec["round"] != round_:
            raise ValueError(f"{folder}: {_situations_of(spec['round'])} ({said}), not {_situations_of(round_)}")


#: a hold'em network's street by the round its situations start (preflop-aux: the end of the pre-flop)
_STREET_OF_ROUND = {round_: street for street, round_ in STREET_ROUND.items()}


def _situations_of(round_: object) -> str:
    """What data of ``round_`` is, as a person names it: ``river situations`` for hold'em (the rounds
    of :func:`check_data_game` are a hold'em street's), the round's number where none is named."""
    street = _STREET_OF_ROUND.get(round_) if isinstance(round_, int) and not isinstance(round_, bool) else None
    return f"{street} situations" if street else f"situations at the start of round {round_}"


#: what pooled folders' specs must share: the same kind of situation (the next network they were
#: solved against is compared by its sha256, whatever path named it)
SHARED_SPEC = ("game", "round", "aux_flops")


def check_poolable(data_dirs: Sequence[Path]) -> None:
    """Refuse folders that cannot be pooled, before anything is loaded: one folder twice,
    folders of different games, streets or next networks, and folders drawn with one seed
    (a draw is a function of the seed and the shard, so they hold the same situations)."""
    resolved: dict[Path, Path] = {}
    for folder in data_dirs:
        real = Path(folder).resolve()
        if real in resolved:
            raise ValueError(f"{folder}: given twice (as {resolved[real]} too)")
        resolved[real] = Path(folder)
    records = [(Path(d), _generation_record(Path(d))) for d in data_dirs]
    specs = [(folder, rec.get("spec", {})) for folder, rec in records if isinstance(rec.get("spec"), dict)]
    if specs:
        first, a = specs[0]
        for other, b in specs[1:]:
            differ = [f"{key} {a.get(key)!r} there, {b.get(key)!r} here" for key in SHARED_SPEC if a.get(key) != b.get(key)]
            if differ:
                raise ValueError(f"{other}: not data of the same network as {first} ({'; '.join(differ)})")
    shas = {rec["next_net_sha256"] for _, rec in records if "next_net_sha256" in rec}
    if len(shas) > 1:
        raise ValueError(f"{', '.join(map(str, data_dirs))}: solved against different next networks (sha256 differ)")
    seeds: dict[object, Path] = {}
    for folder, spec in specs:
        if "seed" in spec:
            if spec["seed"] in seeds:
                raise ValueError(
                    f"{folder}: generated with seed {spec['seed']}, as {seeds[spec['seed']]} was, so both hold the same "
                    "situations; generate more data with another --seed"
                )
            seeds[spec["seed"]] = folder


def load_datasets(
    data_dirs: Sequence[Path],
    encoder: Callable[[dict[str, np.ndarray]], tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None,
    progress: bool = False,
) -> Rows:
    """The rows of several generation folders (in the order given, which fixes the validation
    split), refusing folders that cannot be pooled and any situation two folders share.

    Copies of one situation would land on both sides of the validation split and make the
    validation loss a training loss; folders without a readable ``generate.json`` are checked
    row by row only."""
    if not data_dirs:
        raise ValueError("no data folder given")
    folders = [Path(d) for d in data_dirs]
    if len(folders) > 1:
        check_poolable(folders)
    parts = []
    # hold'em rows are encoded (each board's buckets looked up) as they are read: minutes for 100,000s
    # closed before an error is shown (a bar left open printed itself again after the message)
    with tqdm(desc="read rows", unit="row", disable=not progress) as bar:
        for folder in folders:
            try:
                parts.append(load_dataset(folder, encoder, bar))
            except (ValueError, IndexError, KeyError) as exc:
                message = str(exc)
                raise ValueError(message if message.startswith(str(folder)) else f"{folder}: {message}") from exc
    widths = {(p[0].shape[1], p[1].shape[1]) for p in parts}
    if len(widths) > 1:
        raise ValueError(f"{', '.join(map(str, folders))}: rows of different widths {sorted(widths)} (different games)")
    if len(parts) > 1:
        # folders drawn with one seed share (nearly) every row; a few equal rows are chance: two
        # river situations whose ranges sit on one equity step each encode the same (measured:
        # 1 of 20,000 in two seeds)
        seen: dict[bytes, int] = {}
        for index, part in enumerate(parts):
            keys = {hashlib.sha1(np.ascontiguousarray(row).tobytes()).digest() for row in part.inputs}
            shared = [key for key in keys if key in seen]
            if len(shared) > max(1, len(keys) // 100):
                raise ValueError(
                    f"{folders[index]}: holds {len(shared)} situations that {folders[seen[shared[0]]]} holds too (folders "
                    "generated with one seed for the same street or round draw the same situations; generate more data "
                    "with another --seed)"
                )
            for key in keys:
                seen.setdefault(key, index)
    return Rows(*(np.concatenate([part[i] for part in parts]) for i in range(3)), _apart([part.groups for part in parts]))


def data_provenance(data_dirs: Sequence[Path]) -> dict:
    """What the manifest says about the training data: the folder's generating command, spec and
    next network; for pooled folders, each folder's under ``folders`` and the next network they
    share at the top."""
    sources = []
    for folder in data_dirs:
        meta = _generation_record(Path(folder))
        if not meta and (spec := data_spec(Path(folder))):
            meta = {"spec": spec}  # a hand-copied folder: its shards' spec still names the seed (held-out checks)
        sources.append(
            {
                key: meta[key]
                for key in (
                    "command",
                    "code_version",
                    "spec",
                    "next_net_sha256",
                    "teacher_sha256",
                    "teacher_seeds",
                    "note",
                    "runs",
                )
                if key in meta
            }
        )
    if len(sources) == 1:  # the folder too: a test folder that is this one is not held out (promote)
        return {"data": {"folder": str(data_dirs[0]), **sources[0]}} if sources[0] else {}
    pooled: dict = {"folders": [{"folder": str(folder), **src} for folder, src in zip(data_dirs, sources)]}
    shas = {src["next_net_sha256"] for src in sources if "next_net_sha256" in src}
    if len(shas) == 1:
        pooled["next_net_sha256"] = shas.pop()
    return {"data": pooled}


def data_fingerprint(*arrays: np.ndarray) -> str:
    """sha256 of the training rows: which data a checkpoint was trained on."""
    digest = hashlib.sha256()
    for a in arrays:
        digest.update(str((a.dtype, a.shape)).encode())
        digest.update(np.ascontiguousarray(a).tobytes())
    return digest.hexdigest()


def canonical_rows(x: np.ndarray, y: np.ndarray, m: np.ndarray, space: HandSpace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hand-level rows ``[pot, r0, r1, board one-hot]`` with suits renamed canonically.

    Renaming suits maps a situation to an equivalent one; putting every situation in its
    canonical form (see :func:`agent.nets.encoding.canonical_permutation`) makes the network
    exactly symmetric and halves what it must learn in Leduc."""

    H = space.size
    D = len(space.deck)
    xs, ys, ms = x.copy(), y.copy(), m.copy()
    boards = x[:, 1 + 2 * H : 1 + 2 * H + D] > 0.5
    for key in {tuple(np.nonzero(b)[0]) for b in boards}:
        rows = np.nonzero((boards == np.isin(np.arange(D), key)).all(axis=1))[0]
        hand_perm, deck_perm = canonical_permutation(space, tuple(space.deck[i] for i in key))
        cols_x = np.concatenate([[0], 1 + hand_perm, 1 + H + hand_perm, 1 + 2 * H + deck_perm])
        cols_y = np.concatenate([hand_perm, H + hand_perm])
        xs[rows] = x[rows][:, cols_x]
        ys[rows] = y[rows][:, cols_y]
        ms[rows] = m[rows][:, cols_y]
    return xs, ys, ms
