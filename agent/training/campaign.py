"""The hold'em value networks built bottom-up in one run, within a wall-clock budget.

River situations are solved exactly; each street above is solved only to its own end with the
network just trained for the street below at its leaves (river -> turn -> flop -> auxiliary
pre-flop), the way DeepHoldem and Supremus built theirs. Every stage generates on all the
worker processes until 70% of what is left of its share of the budget is used, then trains on what
it made until the rest is used; each stage ends at its cumulative share counted from the campaign's
start, so an overrun shortens the stages after it. A stage that finished is kept in
``OUT/campaign.json`` and skipped when the same command runs again (its data folders are resumed, not
repeated, and the seconds the earlier runs used count against the budget; other settings than the
budget are refused); the report
(``report.json``, ``report.md``, loss curves) compares each network with the shipped one on the
campaign's own held-out situations.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from concurrent.futures import Future, wait
from dataclasses import asdict, dataclass, field, replace
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from agent.common.files import write_json, write_text
from agent.common.workers import worker_pool
from agent.nets.encoding import SituationEncoder
from agent.nets.manifest import ModelError, check_registrable, checked_file, load_value_net, trained_seeds
from agent.nets.valuenet import masked_huber, resolve_precision
from agent.training.data_folder import shard_files
from agent.training.datagen import NEXT_STREET, generate
from agent.training.datasets import load_datasets
from agent.training.generate_spec import GenerateSpec, alternating_updates
from agent.training.streets import STREET_ROUND, street_abstraction
from agent.training.train import TrainSpec, train, validation_split
from protocol.gamedef import Game, load_game

#: the order the networks are built in: each street's leaves need the one before
STAGES = ("river", "turn", "flop", "preflop-aux")
#: each stage's share of the budget (solving a turn or flop situation costs more than a river one)
SHARES = {"river": 0.3, "turn": 0.35, "flop": 0.25, "preflop-aux": 0.1}
#: of a stage's share, the part spent generating (the rest trains)
GENERATE_FRACTION = 0.7
#: the networks the shipped bot uses, compared with the campaign's on its held-out situations
SHIPPED = {
    "river": "models/holdem/river-small.pt",
    "turn": "models/holdem/turn.pt",
    "flop": "models/holdem/flop.pt",
    "preflop-aux": "models/holdem/preflop-aux.pt",
}


@dataclass(frozen=True)
class CampaignSpec:
    """One campaign's settings (``deepstack campaign``): the wall-clock budget in seconds, the output folder,
    workers and device, and each street's iterations, shard sizes and network shape; only the budget may
    change when a campaign resumes."""

    budget_s: float
    out: Path
    workers: int = 1
    #: "cuda": the first ``gpu_workers`` workers solve on the GPU (one forest per shard), the
    #: others on the CPU cores beside it
    device: str = "cpu"
    seed: int = 0
    #: CFR iterations of each street's solves
    iterations: dict[str, int] = field(default_factory=lambda: {"river": 200, "turn": 300, "flop": 200, "preflop-aux": 0})
    #: situations per shard (the granularity at which a stage stops on time). River shards of 256
    #: (solved in forests of 8 on the CPU, measured fastest there) leave 32 times fewer files to
    #: read before training than shards of 8 did (docs/training.md, "The bottom-up chain ...")
    shard_size: dict[str, int] = field(default_factory=lambda: {"river": 256, "turn": 1, "flop": 1, "preflop-aux": 1})
    #: situations per shard of a GPU worker: one shard is one forest (one solver call), and a GPU
    #: is busy only on many situations at once (its time per iteration is launches, not arithmetic)
    gpu_shard_size: dict[str, int] = field(default_factory=lambda: {"river": 256, "turn": 8, "flop": 2, "preflop-aux": 1})
    #: workers that solve on the GPU when ``device`` is "cuda" (one was measured: the GPU busy 11%
    #: of the time on average; more share it)
    gpu_workers: int = 1
    river_buckets: int = 200
    #: flops averaged per auxiliary situation (a seeded sample of the 22100)
    aux_flops: int = 100
    hidden: int = 256
    layers: int = 4
    max_epochs: int = 200
    #: each network starts from the shipped one of its street (and takes its shape): a short window
    #: then adds its data to what the shipped network learned instead of starting over
    from_shipped: bool = False
    #: the stages run, in STAGES order; a stage whose street below is not run has the shipped network
    #: of that street at its leaves, and the budget is shared among the stages run. A GPU window spent
    #: on the river fine-tuned it one epoch (docs/gpu.md, third window): its time is better spent above
    streets: tuple[str, ...] = STAGES

    def __post_init__(self) -> None:
        if not self.streets or tuple(s for s in STAGES if s in self.streets) != tuple(self.streets):
            raise ValueError(f"streets {self.streets!r}: one or more of {', '.join(STAGES)}, each once, in that order")


def parse_streets(text: str) -> tuple[str, ...]:
    """``turn,flop`` -> the stages named, in the order the chain builds them; an unknown, repeated or
    missing name is refused."""
    names = [name.strip() for name in text.split(",")]
    unknown = [name for name in names if name not in STAGES]
    if unknown or len(set(names)) != len(names):  # '' splits to [''], an unknown name
        raise ValueError(f"--streets {text!r}: give one or more of {', '.join(STAGES)}, each once, separated by commas")
    return tuple(street for street in STAGES if street in names)


def leaves_below(spec: CampaignSpec, street: str) -> str | None:
    """The network at the leaves of ``street``'s solves, absolute: the one the campaign's stage below
    wrote (found in --out: the folder may have moved), or the shipped one where that stage is not run;
    None for the river (solved to the end of the game)."""
    below = NEXT_STREET.get(street)
    if below is None:
        return None
    if below in spec.streets:
        return str(_network_path(spec.out, below))
    try:
        return str(checked_file(SHIPPED[below])[0].resolve())
    except ModelError as exc:
        raise ModelError(
            f"the {street} stage's leaves, the shipped {below} network: {exc} (or add {below} to --streets to train it here)"
        ) from None


def parse_budget(text: str) -> float:
    """``90s``, ``9m``, ``2h`` or plain seconds -> seconds (> 0)."""
    units = {"s": 1.0, "m": 60.0, "h": 3600.0}
    t = text.strip().lower()
    try:
        value = float(t[:-1]) * units[t[-1]] if t and t[-1] in units else float(t)
    except ValueError:
        raise ValueError(f"budget {text!r}: give seconds, or a number with s, m or h (e.g. 9m)") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"budget {text!r} must be a positive, finite time")
    return value


#: situations a stage makes whatever its time (over all its workers): one held out, one trained on
MIN_STAGE_SITUATIONS = 2
#: held-out rows below which the report does not say whether a network beats the shipped one
MIN_COMPARED = 20


def _generate_until(
    spec: GenerateSpec,
    out: Path,
    deadline: float,
    on_shard: Callable[[int], None] | None = None,
    min_shards: int = 1,
) -> None:
    """One worker: shards of ``spec`` into ``out`` until ``deadline`` (``time.time()``), with at
    least ``min_shards`` in ``out`` (earlier runs' count: a resumed stage whose time is spent makes
    none, and its training checkpoint, made on that data, still holds). A shard the last one's
    time says would end past the deadline is not started. ``on_shard`` hears of each shard's
    situations (in-process runs: the progress bar)."""
    torch.set_num_threads(1)
    done = len(shard_files(out))
    last_s = 0.0
    while done < min_shards or time.time() + last_s < deadline:
        done += 1
        started = time.time()
        generate(replace(spec, situations=done * spec.shard_size), out, progress=False, command="deepstack campaign")
        last_s = time.time() - started
        if on_shard is not None:
            on_shard(spec.shard_size)


def _situations(folders: list[Path], specs: list[GenerateSpec]) -> int:
    """Situations written so far into the workers' ``folders`` (each worker its own shard size)."""
    return sum(len(shard_files(f)) * ws.shard_size for f, ws in zip(folders, specs))


def _failures(jobs: list[Future], devices: list[str]) -> list[str]:
    """Each failed worker as one line (its device and error): a stage goes on with the data the
    others made, so that one broken worker (a GPU that refuses a solve, say) costs only its share."""
    lines = []
    for k, job in enumerate(jobs):
        exc = job.exception()
        if exc is not None:
            lines.append(f"worker {k} ({devices[k]}): {type(exc).__name__}: {exc}")
    return lines


def stage_network(spec: CampaignSpec, street: str) -> tuple[dict[str, int | str], Path | None]:
    """``(shape, init)`` of ``street``'s network, ``shape`` as :class:`TrainSpec` takes it (hidden, layers, pot):
    the campaign's shape from scratch, or with ``from_shipped`` the shipped network's shape and file to start from."""
    if not spec.from_shipped:
        return {"hidden": spec.hidden, "layers": spec.layers, "pot": "linear"}, None
    path, entry = checked_file(SHIPPED[street])
    net = entry.get("net") or {}
    if "hidden" not in net or "layers" not in net:
        raise ModelError(f"{path}: its manifest entry gives no network shape (net.hidden, net.layers)")
    return {"hidden": int(net["hidden"]), "layers": int(net["layers"]), "pot": str(net.get("pot", "linear"))}, path


def _held_out_loss(net_path: str | Path, folders: list[Path], encoder: SituationEncoder, train_spec: TrainSpec) -> float | None:
    """Huber loss of the network at ``net_path`` on the validation rows ``train`` held out of
    ``folders`` (the same split); None if the network cannot be loaded or sees other inputs."""
    try:
        net, _ = load_value_net(net_path)
    except ModelError:
        return None
    x, y, m, groups = load_datasets(folders, encoder)
    val = torch.as_tensor(validation_split(len(x), train_spec, groups=groups)[0])
    X, Y, M = (torch.as_tensor(a)[val] for a in (x, y, m))
    try:
        with torch.no_grad():
            return float(masked_huber(net(X), Y, M))
    except RuntimeError:  # another input size (another abstraction)
        return None


#: spec fields a resumed campaign may change: the budget (the earlier runs' seconds count against
#: it, so a larger one gives the resumed run more time) and the spelling of the output folder
RESUMABLE = ("budget_s", "out")
#: what a finished stage's record must hold for the report, and of what kind ("number?": a number or null)
STAGE_KEYS = {
    "situations": "int",
    "solved_per_s": "number?",
    "epochs": "int",
    "validation_loss": "number",
    "held_out": "int",
    "shipped_validation_loss": "number?",
    "loss_curve": "path",
    "beats_shipped": "bool?",
}


_KINDS: dict[str, tuple[type, ...]] = {"int": (int,), "number": (int, float), "str": (str,)}


def _is(value: Any, kind: str) -> bool:
    if kind.endswith("?") and value is None:
        return True
    if kind.startswith("bool"):
        return isinstance(value, bool)
    if kind == "path":  # OUT/street/network/street.loss.png: the report links it from OUT
        return isinstance(value, str) and len(Path(value).parts) >= 3
    return not isinstance(value, bool) and isinstance(value, _KINDS[kind.rstrip("?")])


def spec_record(spec: CampaignSpec) -> dict[str, Any]:
    """The spec as ``campaign.json`` records it (paths as text, as JSON reads it back)."""
    return json.loads(json.dumps({k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(spec).items()}))


def load_state(path: Path) -> dict[str, Any]:
    """``campaign.json`` (a fresh state where there is none); a damaged one is refused, naming it."""
    if not path.exists():
        return {"stages": {}}
    try:
        state = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: unreadable campaign record ({exc}); move it away to start the campaign again") from None
    if not isinstance(state, dict) or not isinstance(state.get("stages"), dict):
        raise ValueError(f"{path}: not a campaign record (an object with a 'stages' mapping)")
    for street, stage in state["stages"].items():
        if street not in STAGES or not isinstance(stage, dict) or not all(_is(stage.get(k), t) for k, t in STAGE_KEYS.items()):
            raise ValueError(
                f"{path}: stage {street!r} is not a finished stage's record (one of {', '.join(STAGES)}, with "
                f"{', '.join(STAGE_KEYS)}); move the file away to start the campaign again"
            )
    elapsed = state.get("elapsed_s", 0.0)
    if isinstance(elapsed, bool) or not isinstance(elapsed, (int, float)) or not 0 <= elapsed < float("inf"):
        raise ValueError(f"{path}: elapsed_s {elapsed!r} is not a number of seconds")
    return state


def check_same_campaign(out: Path, state: dict[str, Any], spec: CampaignSpec) -> None:
    """Refuse to resume a campaign with other settings: its finished stages and data were made with
    the recorded ones (fields an older record lacks are not compared)."""
    old = state.get("spec")
    if not isinstance(old, dict):
        return
    old = {"streets": list(STAGES), **old}  # recorded before --streets: every stage was run
    new = spec_record(spec)
    differ = [f"{k} {old[k]!r} -> {new[k]!r}" for k in new if k not in RESUMABLE and k in old and old[k] != new[k]]
    if differ:
        raise ValueError(
            f"{out} holds a campaign run with other settings ({'; '.join(differ)}); resuming would mix them: "
            "give another --out, or the campaign's settings"
        )


def stage_deadline(budget_s: float, street: str, streets: tuple[str, ...] = STAGES) -> float:
    """Seconds into the campaign at which ``street``'s stage ends: the budget times the shares of the
    stages run up to it (over the shares of all the stages run), so that a stage that overran
    shortens the ones after it instead of adding up."""
    run = [s for s in STAGES if s in streets]
    return budget_s * sum(SHARES[s] for s in run[: run.index(street) + 1]) / sum(SHARES[s] for s in run)


def worker_seeds(seed: int, workers: int, avoid: set[int]) -> list[int]:
    """The workers' seeds: ``seed * 1000 + k``, skipping the seeds in ``avoid`` (the shipped network's
    training seeds: data drawn with one holds its training situations and would flatter it)."""
    seeds: list[int] = []
    candidate = seed * 1000
    while len(seeds) < workers:
        if candidate not in avoid:
            seeds.append(candidate)
        candidate += 1
    return seeds


def _shipped_seeds(street: str) -> set[int]:
    try:
        return trained_seeds(checked_file(SHIPPED[street])[1])
    except ModelError:  # no shipped network to compare with (its score is then None)
        return set()


def run_campaign(spec: CampaignSpec, progress: bool = True) -> dict[str, Any]:
    """Build the networks stage by stage within ``spec.budget_s``; returns the report.

    A resumed campaign continues its budget: ``campaign.json`` keeps the seconds the earlier runs
    used (``elapsed_s``), and each stage ends at its cumulative share of the budget counted from the
    campaign's start (:func:`stage_deadline`), however many runs it took."""
    start = time.time()
    out = spec.out
    state_path = out / "campaign.json"
    state = load_state(state_path)
    check_same_campaign(out, state, spec)
    stages = state["stages"]
    game = load_game("hunl")
    elapsed_before = float(state.get("elapsed_s", 0.0))
    origin = start - elapsed_before  # the campaign's start, as if every run had been one
    for street in spec.streets:  # a manifest the networks could not be entered in, or shipped leaves missing:
        if street not in stages:  # refused before the first stage's data (and before OUT is made)
            check_registrable(_network_path(out, street), street)
            leaves_below(spec, street)
    out.mkdir(parents=True, exist_ok=True)
    if any(street not in stages for street in spec.streets):
        state["spec"] = spec_record(spec)
        write_json(state_path, state)
        try:
            _run_stages(spec, state, origin, game, progress)
        finally:  # also when stopped (Ctrl-C) or failed: the time it used counts against the budget
            state["elapsed_s"] = elapsed_before + time.time() - start
            write_json(state_path, state)
    report = {
        "budget_s": spec.budget_s,
        # every run of the campaign (a rerun of a finished one adds nothing)
        "seconds": float(state.get("elapsed_s", time.time() - start)),
        "workers": spec.workers,
        "device": spec.device,
        "cpus": os.cpu_count(),
        "streets": list(spec.streets),
        "stages": stages,
    }
    write_json(out / "report.json", report)
    write_text(out / "report.md", report_markdown(report))
    return report


def _run_stages(spec: CampaignSpec, state: dict[str, Any], origin: float, game: Game, progress: bool) -> None:
    """The stages not finished yet, each recorded in ``state`` (and ``campaign.json``) as it ends."""
    out = spec.out
    state_path = out / "campaign.json"
    stages = state["stages"]
    ctx = get_context("spawn")  # the workers start clean: no threads or CUDA state inherited
    for street in spec.streets:
        if street in stages:
            continue
        stage_end = origin + stage_deadline(spec.budget_s, street, spec.streets)
        # what is left of the stage's time (nothing, after an overrun: one shard per worker, one epoch)
        gen_deadline = time.time() + GENERATE_FRACTION * max(0.0, stage_end - time.time())
        next_net = leaves_below(spec, street)
        gspec = GenerateSpec(
            game="hunl",
            round=STREET_ROUND[street],
            situations=spec.shard_size[street],
            shard_size=spec.shard_size[street],
            iterations=max(1, spec.iterations[street]),
            device=spec.device,
            next_net=next_net,
            alternating=alternating_updates("auto", next_net is not None and street != "preflop-aux"),
            aux_flops=spec.aux_flops if street == "preflop-aux" else None,
            batch=8 if street == "river" else None,
        )
        folders = [out / street / f"data-{k}" for k in range(spec.workers)]
        gen_started = time.time()
        devices = ["cuda" if spec.device == "cuda" and k < spec.gpu_workers else "cpu" for k in range(spec.workers)]
        gpu_size = spec.gpu_shard_size[street]
        by_device = {  # a GPU worker: one forest per (larger) shard
            "cpu": replace(gspec, device="cpu"),
            "cuda": replace(gspec, device="cuda", situations=gpu_size, shard_size=gpu_size, batch=None),
        }
        seeds = worker_seeds(spec.seed, spec.workers, _shipped_seeds(street))
        worker_specs = [
            replace(
                by_device[dev],
                seed=seeds[k],
                net_precision=resolve_precision("auto", dev) if next_net is not None else None,
            )
            for k, dev in enumerate(devices)
        ]
        before = [len(shard_files(f)) for f in folders]
        errors: list[str] = []

        def min_shards(ws: GenerateSpec) -> int:  # each worker's share of the stage's least situations
            return max(1, math.ceil(MIN_STAGE_SITUATIONS / (spec.workers * ws.shard_size)))

        bar = tqdm(desc=f"generate {street}", unit=" situations", disable=not progress)
        if spec.workers == 1:  # no process to start: in this one, on one thread
            threads = torch.get_num_threads()
            try:
                _generate_until(worker_specs[0], folders[0], gen_deadline, bar.update, min_shards(worker_specs[0]))
            finally:
                torch.set_num_threads(threads)
        else:
            with worker_pool(spec.workers, mp_context=ctx) as pool:  # Ctrl-C stops the workers at once
                jobs = [
                    pool.submit(_generate_until, ws, folder, gen_deadline, None, min_shards(ws))
                    for ws, folder in zip(worker_specs, folders)
                ]
                while wait(jobs, timeout=2.0).not_done:  # the shards written so far, as the workers go
                    bar.update(_situations(folders, worker_specs) - bar.n)
                errors = _failures(jobs, devices)
                bar.update(_situations(folders, worker_specs) - bar.n)
        bar.close()
        gen_seconds = time.time() - gen_started
        # counted from the shards on disk: a worker that failed keeps what it wrote
        made_by = [_situations([f], [ws]) - b * ws.shard_size for f, b, ws in zip(folders, before, worker_specs)]
        made = int(sum(made_by))
        if made == 0 and not any(before):
            raise ValueError(f"campaign stage {street}: no worker made a situation: {'; '.join(errors)}")
        folders = [f for f in folders if f.exists() and shard_files(f)]
        table, _, extra_manifest = street_abstraction(street, spec.river_buckets)
        encoder = SituationEncoder(table, float(sum(game.stack)))
        shape, init = stage_network(spec, street)
        tspec = TrainSpec(epochs=spec.max_epochs, schedule="cosine", **shape)
        net_dir = out / street / "network"
        # scored before training, inside the stage's time: training then gets what is left of it
        shipped = _held_out_loss(SHIPPED[street], folders, encoder, tspec)
        train_started = time.time()
        stats = train(
            folders,
            net_dir,
            buckets=table.num_buckets,
            extra=0,
            spec=tspec,
            model_name=street,
            progress=progress,
            command=f"deepstack campaign (stage {street})",
            encoder=encoder,
            extra_manifest=extra_manifest,
            deadline=max(stage_end, time.time() + 1.0),
            init=init,
            game="hunl",
            round_=STREET_ROUND[street],
        )
        network = _network_path(out, street)
        entry = checked_file(network)[1]
        situations = int(stats["situations"])  # every shard of the stage, this run's and earlier runs'
        held_out = len(validation_split(situations, tspec)[0])
        stages[street] = {
            "network": str(network),
            "situations": situations,
            "solved_per_s": made / gen_seconds if gen_seconds > 0 else None,
            "generate_seconds": gen_seconds,
            "train_seconds": time.time() - train_started,
            "epochs": len(json.loads((net_dir / f"{street}.history.json").read_text())),
            "validation_loss": float(stats["validation_loss"]),
            "held_out": held_out,
            "shipped": SHIPPED[street],
            "shipped_validation_loss": shipped,
            # on a handful of held-out rows the comparison says nothing: not made (None)
            "beats_shipped": None if shipped is None or held_out < MIN_COMPARED else float(stats["validation_loss"]) < shipped,
            "loss_curve": str(net_dir / f"{street}.loss.png"),
            "sha256": entry["sha256"],
            "leaves": next_net,
            "gpu_situations": sum(n for n, d in zip(made_by, devices) if d == "cuda") if "cuda" in devices else None,
            "worker_errors": errors,
            "initialized_from": None if init is None else str(init),
            # an averaged shipped network starts the run from one member (agent/training/train.py)
            "initialized_from_member": (entry.get("initialized_from") or {}).get("member"),
        }
        state["elapsed_s"] = time.time() - origin  # a kill -9 later still finds this stage's time counted
        write_json(state_path, state)


def _network_path(out: Path, street: str) -> Path:
    """Where ``street``'s stage writes its network, absolute: the next stage's leaves, wherever its workers run."""
    return (out / street / "network" / f"{street}.pt").resolve()


BEATS = {True: "yes", False: "no", None: f"- (under {MIN_COMPARED} held out)"}


def report_markdown(report: dict[str, Any]) -> str:
    """The report as a table a person reads, with the loss curves linked."""
    lines = [
        "# Campaign report",
        "",
        f"Budget {report['budget_s']:.0f} s, took {report['seconds']:.0f} s; {report['workers']} worker process(es) "
        f"on {report['device']} ({report['cpus']} CPUs)."
        + (
            f" Over the budget: every stage makes at least {MIN_STAGE_SITUATIONS} situations (a river shard "
            "is 256) and trains at least one epoch, whatever its share of the time."
            if report["seconds"] > 1.05 * report["budget_s"]
            else ""
        ),
        "",
        "| network | situations | solved/s | epochs | validation Huber | held out | shipped on them | beats it | curve |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for street in STAGES:
        s = report["stages"].get(street)
        if s is None:
            continue
        shipped = "-" if s["shipped_validation_loss"] is None else f"{s['shipped_validation_loss']:.4f}"
        rate = "-" if s["solved_per_s"] is None else f"{s['solved_per_s']:.2f}"
        curve = Path(s["loss_curve"]).relative_to(Path(s["loss_curve"]).parents[2])
        lines.append(
            f"| {street} | {s['situations']} | {rate} | {s['epochs']} | {s['validation_loss']:.4f} | {s['held_out']} | "
            f"{shipped} | {'-' if s['shipped_validation_loss'] is None else BEATS[s['beats_shipped']]} | [{curve}]({curve}) |"
        )
    for street in STAGES:
        s = report["stages"].get(street)
        if s is None:
            continue
        if s.get("initialized_from"):
            member = s.get("initialized_from_member")
            of = (
                ""
                if member is None
                else f" (member {member} of that averaged network: the mean of networks has no weights of one)"
            )
            lines.append(f"- {street}: fine-tuned from {s['initialized_from']}{of}.")
        below = NEXT_STREET.get(street)
        if s.get("leaves") and below not in report["stages"]:
            lines.append(f"- {street}: the shipped {below} network at the leaves ({s['leaves']}).")
        if s.get("gpu_situations") is not None:
            lines.append(f"- {street}: {s['gpu_situations']} of the {s['situations']} situations solved on the GPU.")
        lines += [f"- {street}: {error}" for error in s.get("worker_errors", [])]
    lines += [
        "",
        "'beats it' compares on the campaign's own held-out rows. To ship a network, score it on situations of "
        "another seed: `deepstack generate ... --seed S --out TEST`, then `deepstack promote NETWORK --as ENTRY "
        "--test TEST` (it replaces the shipped file only when the network wins there).",
    ]
    return "\n".join(lines) + "\n"
