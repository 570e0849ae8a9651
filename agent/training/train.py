"""Training a value network: Adam, a learning-rate drop, a validation split, the best epoch
kept, a loss-curve PNG, a progress bar, resumable checkpoints, and a TorchScript export
registered in the model manifest."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import torch
from tqdm import tqdm

from agent.common.files import replacing, write_json
from agent.nets.encoding import canonical_permutation
from agent.nets.manifest import command_line, load_value_net, register_model, save_scripted
from agent.nets.valuenet import NetSpec, ValueNet, masked_huber
from agent.training.data_folder import load_shards, shard_files
from protocol.gamedef import GameDefError, load_game

if TYPE_CHECKING:
    from agent.solver.handspace import HandSpace


@dataclass(frozen=True)
class TrainSpec:
    """The hyperparameters of one value network's training (``deepstack train``, each campaign stage):
    epochs, batch, learning-rate schedule, validation split, network shape and seed."""

    epochs: int = 200
    batch_size: int = 1000
    lr: float = 1e-3
    lr_late: float = 1e-4
    lr_drop_epoch: int = 150
    validation_fraction: float = 0.1
    hidden: int = 500
    layers: int = 7
    seed: int = 0
    #: "step" (``lr`` until ``lr_drop_epoch``, then ``lr_late``) or "cosine" (``lr`` decayed to 0
    #: along half a cosine over the epochs; tried on Leduc: models/README.md, "Retraining")
    schedule: str = "step"
    #: AdamW's decoupled weight decay; 0 is plain Adam (every network before it was trained so)
    weight_decay: float = 0.0

    def lr_at(self, epoch: int, epochs: int | None = None) -> float:
        """The learning rate of ``epoch`` (0-based); ``epochs``: the run's length when a deadline
        cuts it short of ``self.epochs`` (the cosine schedule then ends with it)."""
        if self.schedule == "cosine":
            return self.lr * 0.5 * (1.0 + math.cos(math.pi * epoch / (epochs or self.epochs)))
        return self.lr if epoch < self.lr_drop_epoch else self.lr_late


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
    for part in load_shards(data_dir):
        if "inputs" in part:
            x, y, m = part["inputs"], part["targets"], part["masks"]
        elif encoder is not None:
            x, y, m = encoder(part)
        else:
            raise ValueError(f"{data_dir}: shards hold situations, and no bucket encoder was given")
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
        if "game" in spec and not same_game(str(spec["game"]), game):
            raise ValueError(f"{folder}: data of the game {spec['game']!r} (its generate.json), not {game!r}")
        if round_ is not None and "round" in spec and spec["round"] != round_:
            raise ValueError(f"{folder}: situations at the start of round {spec['round']} (its generate.json), not {round_}")


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
    bar = tqdm(desc="read rows", unit="row", disable=not progress)
    for folder in folders:
        try:
            parts.append(load_dataset(folder, encoder, bar))
        except (ValueError, IndexError, KeyError) as exc:
            message = str(exc)
            raise ValueError(message if message.startswith(str(folder)) else f"{folder}: {message}") from exc
    bar.close()
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


def _checkpoint_changes(ckpt: Any, spec: TrainSpec, net_spec: NetSpec, fingerprint: str) -> str:
    """What differs between a checkpoint's run and this one, e.g. ``epochs 200 -> 100, the data``."""
    if not isinstance(ckpt, dict):
        return "not a checkpoint of deepstack train"
    changes = []
    for recorded, now in ((ckpt.get("spec"), asdict(spec)), (ckpt.get("net"), net_spec.to_dict())):
        recorded = recorded if isinstance(recorded, dict) else {}
        changes += [f"{k} {recorded.get(k)} -> {v}" for k, v in now.items() if recorded.get(k) != v]
    if ckpt.get("data") != fingerprint:
        changes.append("the data (or the --init network)")
    return ", ".join(changes) or "unknown"


def validation_split(
    n: int, spec: TrainSpec, rng: np.random.Generator | None = None, groups: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The rows held out for validation and the rows trained on, of ``n`` (``rng``: the run's
    generator, ``np.random.default_rng(spec.seed)`` when not given): the same split for any
    caller that knows the run's spec and groups, e.g. to compare another network on the held-out rows.

    With ``groups`` (:class:`Rows`), whole groups are held out, drawn at random until they hold
    the validation fraction: a board's or a turn solve's other rows left in training would make the
    validation loss partly a training loss. Rows that are each their own group split as before."""
    rng = np.random.default_rng(spec.seed) if rng is None else rng
    n_val = max(1, int(round(spec.validation_fraction * n)))
    ids, inverse, counts = (None, None, None) if groups is None else np.unique(groups, return_inverse=True, return_counts=True)
    if ids is None or len(ids) in (1, n):  # one group cannot be split by group; singletons split by row
        perm = rng.permutation(n)
        return perm[:n_val], perm[n_val:]
    order = rng.permutation(len(ids))
    held = min(int(np.searchsorted(np.cumsum(counts[order]), n_val)) + 1, len(ids) - 1)
    is_held = np.zeros(len(ids), dtype=bool)
    is_held[order[:held]] = True
    rows = is_held[inverse]
    return np.flatnonzero(rows), np.flatnonzero(~rows)


def initialize_from(net: ValueNet, net_spec: NetSpec, path: Path) -> dict:
    """Copy the weights of the network at ``path`` into ``net``; what the manifest records of it.
    Refused, naming the file, when its shape is not ``net_spec``'s. An averaged network
    (``deepstack ensemble``) has no weights of one network: its first member's are taken (the
    mean of several networks' weights is no network), and the record names that member."""
    scripted, entry = load_value_net(path)
    if entry.get("net") != net_spec.to_dict():
        raise ValueError(f"{path}: --init network is {entry.get('net')}, this run trains {net_spec.to_dict()}")
    state = scripted.state_dict()
    record: dict = {"path": str(path)}
    if entry.get("members"):
        prefix = "members.0."
        state = {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}
        record["member"] = 0
        entry = entry["members"][0]
    try:
        net.load_state_dict(state)
    except RuntimeError as exc:
        raise ValueError(f"{path}: its weights do not fit a {net_spec.to_dict()} network: {exc}") from None
    keep = ("sha256", "validation_loss", "training_situations", "command", "data", "initialized_from", "members")
    return {**record, **{k: entry[k] for k in keep if k in entry}}


def train(
    data_dir: Path | Sequence[Path],
    out_dir: Path,
    buckets: int,
    extra: int,
    spec: TrainSpec,
    model_name: str,
    progress: bool = True,
    command: str | None = None,
    canonical_space: HandSpace | None = None,
    encoder: Callable[[dict[str, np.ndarray]], tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None,
    extra_manifest: dict | None = None,
    deadline: float | None = None,
    init: Path | None = None,
    game: str | None = None,
    round_: int | None = None,
) -> dict[str, float]:
    """Train on every shard of ``data_dir`` (a folder, or several folders pooled); write
    ``out_dir/{model_name}.pt`` (TorchScript).

    ``deadline`` (``time.time()`` seconds): as many epochs as fit before it (at least one; after
    the first, the run's length is set from its time, so that a cosine schedule still decays
    to its end), the best network so far then written as usual.

    With ``canonical_space`` (hand-level networks), every row is put in canonical suit form
    first; the manifest records it so that the bot does the same.

    ``init``: a network of the same shape (TorchScript, beside its manifest) whose weights the
    run starts from instead of random ones: a shipped network fine-tuned on new data keeps what
    it learned from data that may no longer exist.

    ``game`` / ``round_``: the game (and round) the network is for; folders generated for another
    are refused before anything is read (:func:`check_data_game`)."""
    if spec.epochs < 1:
        raise ValueError(f"epochs must be at least 1, not {spec.epochs}")
    torch.manual_seed(spec.seed)
    data_dirs = [Path(data_dir)] if isinstance(data_dir, (str, Path)) else [Path(d) for d in data_dir]
    if game is not None:
        check_data_game(data_dirs, game, round_)
    x, y, m, groups = load_datasets(data_dirs, encoder, progress)
    if canonical_space is not None:
        x, y, m = canonical_rows(x, y, m, canonical_space)
    net_spec = NetSpec(buckets=buckets, extra=extra, hidden=spec.hidden, layers=spec.layers)
    if x.shape[1] != net_spec.inputs or y.shape[1] != net_spec.outputs:
        raise ValueError(
            f"{', '.join(map(str, data_dirs))}: data has {x.shape[1]} inputs / {y.shape[1]} outputs, "
            f"the network expects {net_spec.inputs} / {net_spec.outputs}"
        )
    n = len(x)
    rng = np.random.default_rng(spec.seed)
    val_idx, train_idx = validation_split(n, spec, rng, groups)
    if len(train_idx) == 0:  # every row held out: the "network" would be its random start
        raise ValueError(
            f"{', '.join(map(str, data_dirs))}: {n} situation(s), too few to train on "
            "(at least 2: one is held out for validation)"
        )
    n_val = len(val_idx)
    X, Y, M = (torch.as_tensor(a) for a in (x, y, m))
    net = ValueNet(net_spec)
    init_record = initialize_from(net, net_spec, Path(init)) if init is not None else None
    opt = (
        torch.optim.AdamW(net.parameters(), lr=spec.lr, weight_decay=spec.weight_decay)
        if spec.weight_decay > 0
        else torch.optim.Adam(net.parameters(), lr=spec.lr)
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    ckpt_path = out_dir / f"{model_name}.ckpt"
    history: list[dict[str, float]] = []
    best = math.inf
    start_epoch = 0
    best_state = None
    fingerprint = data_fingerprint(x, y, m) + (f"+init:{init_record['sha256']}" if init_record else "")
    if ckpt_path.exists():
        try:
            ckpt = torch.load(ckpt_path, weights_only=False)
        except Exception as exc:  # noqa: BLE001 - whatever torch makes of a damaged file: start afresh
            ckpt = None
            print(f"{ckpt_path}: unreadable checkpoint ({type(exc).__name__}); training from the start", file=sys.stderr)
        # resume only the same run: the same settings on the same rows (retraining on more
        # data with the same command must start afresh, not pick up the old network)
        same = isinstance(ckpt, dict) and (ckpt.get("spec"), ckpt.get("net"), ckpt.get("data")) == (
            asdict(spec),
            net_spec.to_dict(),
            fingerprint,
        )
        if same:
            net.load_state_dict(ckpt["model"])
            opt.load_state_dict(ckpt["optimizer"])
            history, best, start_epoch, best_state = ckpt["history"], ckpt["best"], ckpt["epoch"], ckpt["best_state"]
            print(f"{ckpt_path}: resuming after epoch {start_epoch}", file=sys.stderr)
        elif ckpt is not None:  # an unreadable one is said above
            changed = _checkpoint_changes(ckpt, spec, net_spec, fingerprint)
            print(f"{ckpt_path}: left by a run with other data or settings ({changed}); training from the start", file=sys.stderr)
    for _ in range(start_epoch):  # the batch orders of the epochs done: a resumed run goes on as one run would
        rng.permutation(train_idx)
    bar = tqdm(
        range(start_epoch, spec.epochs), desc=f"train {model_name}", disable=not progress, initial=start_epoch, total=spec.epochs
    )
    started = time.perf_counter()
    run_epochs = spec.epochs
    for epoch in bar:
        if epoch >= run_epochs:
            break
        for group in opt.param_groups:
            group["lr"] = spec.lr_at(epoch, run_epochs)
        net.train()
        order = torch.as_tensor(rng.permutation(train_idx))
        total, batches = 0.0, 0
        for i in range(0, len(order), spec.batch_size):
            idx = order[i : i + spec.batch_size]
            loss = masked_huber(net(X[idx]), Y[idx], M[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach())
            batches += 1
        net.eval()
        with torch.no_grad():
            vi = torch.as_tensor(val_idx)
            val = float(masked_huber(net(X[vi]), Y[vi], M[vi]))
        if not math.isfinite(val):  # diverged: nothing after it is a network
            raise ValueError(
                f"{model_name}: the validation loss is {val} after epoch {epoch + 1} (training diverged); "
                f"try a lower learning rate than {spec.lr_at(epoch, run_epochs):g}"
            )
        history.append({"epoch": epoch + 1, "train": total / max(batches, 1), "validation": val})
        if val < best:
            best = val
            best_state = {k: v.clone() for k, v in net.state_dict().items()}
        bar.set_postfix(train=f"{total / max(batches, 1):.5f}", val=f"{val:.5f}", best=f"{best:.5f}")
        if deadline is not None:
            if epoch == start_epoch:  # the first epoch's time sets how many fit
                per_epoch = time.perf_counter() - started
                fit = epoch + 1 + int(max(0.0, deadline - time.time()) / max(per_epoch, 1e-6))
                run_epochs = max(epoch + 1, min(spec.epochs, fit))
            elif time.time() >= deadline:
                run_epochs = epoch + 1
        if (epoch + 1) % 10 == 0 or epoch + 1 == run_epochs:
            with replacing(ckpt_path) as tmp:  # a run killed mid-save leaves the last one whole
                torch.save(
                    {
                        "spec": asdict(spec),
                        "net": net_spec.to_dict(),
                        "data": fingerprint,
                        "model": net.state_dict(),
                        "optimizer": opt.state_dict(),
                        "history": history,
                        "best": best,
                        "epoch": epoch + 1,
                        "best_state": best_state,
                    },
                    tmp,
                )
    bar.close()
    assert best_state is not None
    net.load_state_dict(best_state)
    net.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # TorchScript is our deployment format
        scripted = torch.jit.script(net)
    model_path = out_dir / f"{model_name}.pt"
    save_scripted(scripted, model_path)
    plot_history(history, out_dir / f"{model_name}.loss.png", model_name)
    write_json(out_dir / f"{model_name}.history.json", history)
    best_epoch = min(history, key=lambda h: h["validation"])["epoch"]
    provenance = data_provenance(data_dirs)
    register_model(
        model_path,
        **provenance,
        name=model_name,
        net=net_spec.to_dict(),
        training_situations=int(len(train_idx)),
        canonical_suits=canonical_space is not None,
        **(extra_manifest or {}),
        **({"initialized_from": init_record} if init_record else {}),
        validation_situations=int(n_val),
        validation_loss=float(best),
        best_epoch=int(best_epoch),
        command=command or command_line(),
        seconds=time.perf_counter() - started,
    )
    return {"validation_loss": best, "best_epoch": best_epoch, "situations": n}


def plot_history(history: list[dict[str, float]], path: Path, title: str) -> None:
    """Draw the training and validation Huber loss (fraction of the pot) per epoch to the PNG ``path``."""
    # imported here: matplotlib costs ~0.5 s at import (measured), paid only when a PNG is drawn
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    epochs = [h["epoch"] for h in history]
    ax.plot(epochs, [h["train"] for h in history], label="training")
    ax.plot(epochs, [h["validation"] for h in history], label="validation")
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel("Huber loss (fraction of pot)")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
