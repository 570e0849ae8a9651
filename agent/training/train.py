"""Training a value network: Adam, a learning-rate drop, a validation split, the best epoch
kept, a loss-curve PNG, a progress bar, resumable checkpoints, and a TorchScript export
registered in the model manifest."""

from __future__ import annotations

import math
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from tqdm import tqdm

from agent.common.files import write_json, write_png, write_torch
from agent.nets.manifest import check_registrable, command_line, load_value_net, register_model, save_scripted
from agent.nets.valuenet import NetSpec, ValueNet, masked_huber, without_linear_pot
from agent.training.datasets import canonical_rows, check_data_game, data_fingerprint, data_provenance, load_datasets

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
    #: the pot feature of the network's body (:attr:`agent.nets.valuenet.NetSpec.pot`)
    pot: str = "linear"

    def record(self) -> dict:
        """The spec as a checkpoint records it: ``pot`` only where it is not "linear", so that a checkpoint
        left before the field existed still resumes."""
        return without_linear_pot(asdict(self))

    def lr_at(self, epoch: int, epochs: int | None = None) -> float:
        """The learning rate of ``epoch`` (0-based); ``epochs``: the run's length when a deadline
        cuts it short of ``self.epochs`` (the cosine schedule then ends with it)."""
        if self.schedule == "cosine":
            return self.lr * 0.5 * (1.0 + math.cos(math.pi * epoch / (epochs or self.epochs)))
        return self.lr if epoch < self.lr_drop_epoch else self.lr_late


def _checkpoint_changes(ckpt: Any, spec: TrainSpec, net_spec: NetSpec, fingerprint: str) -> str:
    """What differs between a checkpoint's run and this one, e.g. ``epochs 200 -> 100, the data``."""
    if not isinstance(ckpt, dict):
        return "not a checkpoint of deepstack train"
    changes = []
    for recorded, now in ((ckpt.get("spec"), asdict(spec)), (ckpt.get("net"), {**net_spec.to_dict(), "pot": net_spec.pot})):
        # a record without "pot" is a linear run's (or one from before the field)
        recorded = {"pot": "linear", **recorded} if isinstance(recorded, dict) else {}
        new = [f"{k} {recorded.get(k)} -> {v}" for k, v in now.items() if recorded.get(k) != v]
        changes += [c for c in new if c not in changes]  # hidden and layers are in both: named once
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


@dataclass
class _RunState:
    """What a run carries from epoch to epoch and its checkpoint keeps: the losses so far, the best
    validation loss and the weights that reached it, and the epochs done."""

    history: list[dict[str, float]] = field(default_factory=list)
    best: float = math.inf
    best_state: dict[str, torch.Tensor] | None = None
    epoch: int = 0


def _training_rows(
    data_dirs: list[Path],
    encoder: Callable[[dict[str, np.ndarray]], tuple[np.ndarray, np.ndarray, np.ndarray]] | None,
    canonical_space: HandSpace | None,
    net_spec: NetSpec,
    progress: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The folders' rows (in canonical suit form with ``canonical_space``) and groups, refused when
    their widths are not the network's."""
    x, y, m, groups = load_datasets(data_dirs, encoder, progress)
    if canonical_space is not None:
        x, y, m = canonical_rows(x, y, m, canonical_space)
    if x.shape[1] != net_spec.inputs or y.shape[1] != net_spec.outputs:
        raise ValueError(
            f"{', '.join(map(str, data_dirs))}: data has {x.shape[1]} inputs / {y.shape[1]} outputs, "
            f"the network expects {net_spec.inputs} / {net_spec.outputs}"
        )
    return x, y, m, groups


def _optimizer(net: ValueNet, spec: TrainSpec) -> torch.optim.Optimizer:
    """AdamW with ``spec.weight_decay`` > 0, else plain Adam (as every network before weight decay)."""
    if spec.weight_decay > 0:
        return torch.optim.AdamW(net.parameters(), lr=spec.lr, weight_decay=spec.weight_decay)
    return torch.optim.Adam(net.parameters(), lr=spec.lr)


def _resume(
    ckpt_path: Path, net: ValueNet, opt: torch.optim.Optimizer, spec: TrainSpec, net_spec: NetSpec, fingerprint: str
) -> _RunState:
    """The state of the run that left ``ckpt_path``, loaded into ``net`` and ``opt``, when it was this
    run: the same settings on the same rows (retraining on more data with the same command must
    start afresh, not pick up the old network); else a fresh state, saying why on stderr."""
    if not ckpt_path.exists():
        return _RunState()
    try:
        ckpt = torch.load(ckpt_path, weights_only=False)
    except Exception as exc:  # noqa: BLE001 - whatever torch makes of a damaged file: start afresh
        print(f"{ckpt_path}: unreadable checkpoint ({type(exc).__name__}); training from the start", file=sys.stderr)
        return _RunState()
    same = isinstance(ckpt, dict) and (ckpt.get("spec"), ckpt.get("net"), ckpt.get("data")) == (
        spec.record(),
        net_spec.to_dict(),
        fingerprint,
    )
    if not same:
        changed = _checkpoint_changes(ckpt, spec, net_spec, fingerprint)
        print(f"{ckpt_path}: left by a run with other data or settings ({changed}); training from the start", file=sys.stderr)
        return _RunState()
    net.load_state_dict(ckpt["model"])
    opt.load_state_dict(ckpt["optimizer"])
    print(f"{ckpt_path}: resuming after epoch {ckpt['epoch']}", file=sys.stderr)
    return _RunState(ckpt["history"], ckpt["best"], ckpt["best_state"], ckpt["epoch"])


def _save_checkpoint(
    path: Path, spec: TrainSpec, net_spec: NetSpec, fingerprint: str, net: ValueNet, opt: torch.optim.Optimizer, run: _RunState
) -> None:
    """Write the run's checkpoint in place of the last one (a run killed mid-save leaves the last one whole)."""
    write_torch(
        path,
        lambda f: torch.save(
            {
                "spec": spec.record(),
                "net": net_spec.to_dict(),
                "data": fingerprint,
                "model": net.state_dict(),
                "optimizer": opt.state_dict(),
                "history": run.history,
                "best": run.best,
                "epoch": run.epoch,
                "best_state": run.best_state,
            },
            f,
        ),
    )


def _train_epoch(
    net: ValueNet, opt: torch.optim.Optimizer, X: torch.Tensor, Y: torch.Tensor, M: torch.Tensor, order: np.ndarray, batch: int
) -> float:
    """One pass over the training rows in ``order``, ``batch`` rows a step; the mean batch loss."""
    net.train()
    rows = torch.as_tensor(order)
    total, batches = 0.0, 0
    for i in range(0, len(rows), batch):
        idx = rows[i : i + batch]
        loss = masked_huber(net(X[idx]), Y[idx], M[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += float(loss.detach())
        batches += 1
    return total / max(batches, 1)


def _validation_loss(net: ValueNet, X: torch.Tensor, Y: torch.Tensor, M: torch.Tensor, val_idx: np.ndarray) -> float:
    """The masked Huber loss on the held-out rows."""
    net.eval()
    with torch.no_grad():
        vi = torch.as_tensor(val_idx)
        return float(masked_huber(net(X[vi]), Y[vi], M[vi]))


def _export(net: ValueNet, run: _RunState, out_dir: Path, model_name: str) -> Path:
    """The best epoch's network as TorchScript at ``out_dir/{model_name}.pt``, with its loss curve
    (PNG) and history (JSON) beside it."""
    assert run.best_state is not None
    net.load_state_dict(run.best_state)
    net.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # TorchScript is our deployment format
        scripted = torch.jit.script(net)
    model_path = out_dir / f"{model_name}.pt"
    save_scripted(scripted, model_path)
    plot_history(run.history, out_dir / f"{model_name}.loss.png", model_name)
    write_json(out_dir / f"{model_name}.history.json", run.history)
    return model_path


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
    check_registrable(out_dir / f"{model_name}.pt", model_name)  # before the work, not after it
    net_spec = NetSpec(buckets=buckets, extra=extra, hidden=spec.hidden, layers=spec.layers, pot=spec.pot)
    x, y, m, groups = _training_rows(data_dirs, encoder, canonical_space, net_spec, progress)
    n = len(x)
    rng = np.random.default_rng(spec.seed)
    val_idx, train_idx = validation_split(n, spec, rng, groups)
    if len(train_idx) == 0:  # every row held out: the "network" would be its random start
        raise ValueError(
            f"{', '.join(map(str, data_dirs))}: {n} situation(s), too few to train on "
            "(at least 2: one is held out for validation)"
        )
    X, Y, M = (torch.as_tensor(a) for a in (x, y, m))
    net = ValueNet(net_spec)
    init_record = initialize_from(net, net_spec, Path(init)) if init is not None else None
    opt = _optimizer(net, spec)
    out_dir.mkdir(parents=True, exist_ok=True)
    ckpt_path = out_dir / f"{model_name}.ckpt"
    fingerprint = data_fingerprint(x, y, m) + (f"+init:{init_record['sha256']}" if init_record else "")
    run = _resume(ckpt_path, net, opt, spec, net_spec, fingerprint)
    start_epoch = run.epoch
    for _ in range(start_epoch):  # the batch orders of the epochs done: a resumed run goes on as one run would
        rng.permutation(train_idx)
    # a with block: a bar left open when training fails printed itself again after the error message
    with tqdm(
        range(start_epoch, spec.epochs), desc=f"train {model_name}", disable=not progress, initial=start_epoch, total=spec.epochs
    ) as bar:
        started = time.perf_counter()
        run_epochs = spec.epochs
        for epoch in bar:
            if epoch >= run_epochs:
                break
            for group in opt.param_groups:
                group["lr"] = spec.lr_at(epoch, run_epochs)
            train_loss = _train_epoch(net, opt, X, Y, M, rng.permutation(train_idx), spec.batch_size)
            val = _validation_loss(net, X, Y, M, val_idx)
            if not math.isfinite(val):  # diverged: nothing after it is a network
                raise ValueError(
                    f"{model_name}: the validation loss is {val} after epoch {epoch + 1} (training diverged); "
                    f"try a lower learning rate than {spec.lr_at(epoch, run_epochs):g}"
                )
            run.history.append({"epoch": epoch + 1, "train": train_loss, "validation": val})
            run.epoch = epoch + 1
            if val < run.best:
                run.best = val
                run.best_state = {k: v.clone() for k, v in net.state_dict().items()}
            bar.set_postfix(train=f"{train_loss:.5f}", val=f"{val:.5f}", best=f"{run.best:.5f}")
            if deadline is not None:
                if epoch == start_epoch:  # the first epoch's time sets how many fit
                    per_epoch = time.perf_counter() - started
                    fit = epoch + 1 + int(max(0.0, deadline - time.time()) / max(per_epoch, 1e-6))
                    run_epochs = max(epoch + 1, min(spec.epochs, fit))
                elif time.time() >= deadline:
                    run_epochs = epoch + 1
            if (epoch + 1) % 10 == 0 or epoch + 1 == run_epochs:
                _save_checkpoint(ckpt_path, spec, net_spec, fingerprint, net, opt, run)
    model_path = _export(net, run, out_dir, model_name)
    best_epoch = min(run.history, key=lambda h: h["validation"])["epoch"]
    register_model(
        model_path,
        **data_provenance(data_dirs),
        name=model_name,
        net=net_spec.to_dict(),
        training_situations=int(len(train_idx)),
        canonical_suits=canonical_space is not None,
        **(extra_manifest or {}),
        **({"initialized_from": init_record} if init_record else {}),
        validation_situations=int(len(val_idx)),
        validation_loss=float(run.best),
        best_epoch=int(best_epoch),
        command=command or command_line(),
        seconds=time.perf_counter() - started,
    )
    return {"validation_loss": run.best, "best_epoch": best_epoch, "situations": n}


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
    write_png(path, fig, dpi=110)
    plt.close(fig)
