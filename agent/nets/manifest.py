"""The model manifest and safe loading of shipped TorchScript networks.

Every shipped network has an entry in ``manifest.json`` (next to it, or ``models/manifest.json``
for files under ``models/``): sha256, size, network shape, training data size, validation
loss, date and the command that produced it. Loading checks all of that up front, so a
missing, truncated or replaced file stops the bot at start-up with one clear message
instead of failing in the middle of a match.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import torch

from agent.common.files import write_json, write_torch
from agent.common.yaml_files import shown
from models import MODELS_DIR


class ModelError(RuntimeError):
    """A model file that cannot be used; the message names the file and the problem."""


def code_version() -> str:
    """The repository's short git commit, recorded beside each model and data run; "unknown" outside a checkout."""
    try:
        return (
            subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=Path(__file__).parent, timeout=5
            ).stdout.strip()
            or "unknown"
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def command_line() -> str:
    """The command that is running, as a user would type it: ``deepstack ...`` whether it was
    started as the console script (any path to it) or as ``python -m agent.cli.main`` or ``python -m
    agent.cli`` (a worktree's), so that a manifest's or a data folder's command can be run again as written."""
    if Path(sys.argv[0]).name in ("deepstack", "main.py") or Path(sys.argv[0]).parts[-3:] == ("agent", "cli", "__main__.py"):
        return " ".join(["deepstack", *sys.argv[1:]])
    return " ".join(sys.argv)


def sha256_of(path: Path) -> str:
    """The file's sha256 (hex), read in 1 MiB chunks: what a manifest entry records and start-up checks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def manifest_path_for(model_path: Path) -> Path:
    """The manifest that lists ``model_path``: the package's for a file under its ``models/``;
    elsewhere the nearest ``manifest.json`` in the file's folder or above it, so that a copy of
    the whole ``models/`` folder (a Docker image's, a checkout beside an installed package) is
    checked against its own top-level manifest; with none, a new one in the file's folder."""
    model_path = model_path.resolve()
    if model_path.is_relative_to(MODELS_DIR):
        return MODELS_DIR / "manifest.json"
    for folder in model_path.parents:
        if (folder / "manifest.json").is_file():
            return folder / "manifest.json"
    return model_path.parent / "manifest.json"


def read_manifest(path: Path) -> dict[str, Any]:
    """A manifest's contents, checked (a ``models`` mapping of entries with ``path`` and ``sha256``); an empty one
    for a missing file, a ModelError naming the file for a damaged one."""
    if not path.exists():
        return {"models": {}}
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ModelError(f"{path}: unreadable model manifest: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise ModelError(f"{path}: a manifest must be an object with a 'models' mapping")
    for name, entry in data["models"].items():
        if not isinstance(entry, dict):
            raise ModelError(f"{path}: entry {name!r} is not an object")
        for key in ("path", "sha256"):
            if not isinstance(entry.get(key), str) or not entry[key]:
                raise ModelError(f"{path}: entry {name!r} has no {key!r} (a string)")
        if not isinstance(entry.get("net", {}), dict):
            raise ModelError(f"{path}: entry {name!r}: 'net' must be an object")
    return data


def save_scripted(module: torch.jit.ScriptModule, path: Path) -> None:
    """Save a TorchScript network under a temporary name renamed over ``path``: a run killed
    mid-save leaves the network that was there whole (``--out models/...`` replaces a shipped one)."""
    write_torch(path, lambda f: torch.jit.save(module, f))


def write_manifest(manifest: Path, data: dict) -> None:
    """A manifest written whole or not at all (the bot refuses to start on a broken one)."""
    write_json(manifest, data, sort_keys=True)


def _manifest_to_write(model_path: Path) -> Path:
    """The manifest a new entry for ``model_path`` goes to: the package's for a file under its
    ``models/``; a manifest above the file's folder only when it already lists files of that
    folder (a copy of ``models/``); else the file's own folder's. A ``manifest.json`` that merely
    sits in a folder above (another run's, the current folder's) is not changed."""
    manifest = manifest_path_for(model_path)
    if model_path.is_relative_to(MODELS_DIR) or manifest.parent == model_path.parent:
        return manifest
    here = model_path.parent.relative_to(manifest.parent)
    if any(Path(e["path"]).parent == here for e in read_manifest(manifest)["models"].values()):
        return manifest
    return model_path.parent / "manifest.json"


def check_registrable(model_path: Path, name: str) -> Path:
    """The manifest that ``name``'s entry for ``model_path`` will go to, checked before any work is
    done: readable, and ``name`` not already the entry of another file (``train --out models/holdem
    --name buckets-flop`` replaced the flop bucket table's entry with a network's, which broke the bot)."""
    model_path = Path(model_path).resolve()
    manifest = _manifest_to_write(model_path)
    entry = read_manifest(manifest)["models"].get(name)
    if entry is not None and (manifest.parent / entry["path"]).resolve() != model_path:
        raise ModelError(
            f"{manifest}: the name {shown(name)} is the entry of {entry['path']}, not of {model_path.name}; "
            "give another name (or another output folder)"
        )
    return manifest


def register_model(model_path: Path, name: str, **info: Any) -> Path:
    """Add or replace the manifest entry of ``model_path``; returns the manifest path."""
    model_path = Path(model_path).resolve()
    manifest = check_registrable(model_path, name)
    data = read_manifest(manifest)
    data["models"][name] = {
        "path": str(model_path.relative_to(manifest.parent)),
        "sha256": sha256_of(model_path),
        "bytes": model_path.stat().st_size,
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "code_version": code_version(),
        **info,
    }
    # a temporary file renamed over it: a run killed mid-write leaves the old manifest whole
    write_manifest(manifest, data)
    return manifest


def checked_file(path: str | Path, missing_hint: str = "") -> tuple[Path, dict[str, Any]]:
    """A file of ``models/`` (path relative to the project or absolute) and its manifest entry,
    after checking that it exists, is listed and has the recorded sha256."""
    path = given = Path(path)
    try:
        if not path.is_absolute() and not path.exists():
            path = MODELS_DIR.parent / path
        if not path.exists():  # named as given: a relative path is looked for here first
            raise ModelError(f"{given}: model file is missing{missing_hint}")
        if not path.is_file():
            raise ModelError(f"{path}: is a folder, not a model file")
    except OSError as exc:  # a name too long for the file system, a folder we may not enter, ...
        raise ModelError(f"{shown(str(path))}: cannot be read: {exc.strerror or exc}") from None
    manifest = manifest_path_for(path)
    entries = read_manifest(manifest)["models"]
    entry = next((e for e in entries.values() if (manifest.parent / e["path"]).resolve() == path.resolve()), None)
    if entry is None and not manifest.exists():
        raise ModelError(
            f"{path}: no manifest.json in its folder or above it; every model file needs a manifest entry "
            "(its sha256), which deepstack train and deepstack promote write"
        )
    if entry is None:
        raise ModelError(f"{path}: not listed in {manifest}; every shipped model needs a manifest entry")
    digest = sha256_of(path)
    if digest != entry["sha256"]:
        raise ModelError(
            f"{path}: sha256 {digest[:12]}... does not match the manifest ({entry['sha256'][:12]}...): "
            "the file is corrupt or was replaced"
        )
    return path, entry


def load_value_net(path: str | Path, device: torch.device | str = "cpu") -> tuple[torch.jit.ScriptModule, dict[str, Any]]:
    """Load a TorchScript value network after checking it against its manifest entry."""
    path, entry = checked_file(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # TorchScript is our deployment format
            net = torch.jit.load(str(path), map_location=device)
    except Exception as exc:  # torch raises several types for bad archives
        raise ModelError(f"{path}: cannot be loaded as TorchScript: {exc}") from None
    net.eval()
    spec = entry.get("net", {})
    inputs = 1 + 2 * int(spec.get("buckets", 0)) + int(spec.get("extra", 0))
    try:
        with torch.no_grad():
            out = net(torch.zeros(1, inputs, device=device))
    except Exception as exc:
        raise ModelError(f"{path}: does not accept {inputs} inputs as its manifest says: {exc}") from None
    if tuple(out.shape) != (1, 2 * int(spec.get("buckets", 0))):
        raise ModelError(
            f"{path}: gives outputs of shape {tuple(out.shape)}, the manifest says {2 * int(spec.get('buckets', 0))}"
        )
    return net, entry


def spec_seed(spec: object) -> int | None:
    """The seed that drew a generation folder's situations (its ``generate.json`` spec): its own,
    or for river data harvested from turn solves the turn data's (it records none of its own);
    None where the spec says neither."""
    if not isinstance(spec, dict):
        return None
    if spec.get("seed") is not None:
        return int(spec["seed"])
    return spec_seed(spec.get("harvested_from"))


def _earlier(entry: dict) -> list[dict]:
    """An averaged network's members and a fine-tuned one's starting network."""
    return [*entry.get("members", []), *([entry["initialized_from"]] if entry.get("initialized_from") else [])]


def _data_records(entry: dict) -> list[dict]:
    """A network's own training-data records: one per folder it pooled; [] where it records none."""
    data = entry.get("data") or {}
    return data.get("folders", [data]) if data else []


def trained_seeds(entry: dict) -> set[int]:
    """Seeds of the generation folders a network's manifest entry says it learned from: its data's
    (a harvested river folder's: its turn data's), the seeds its teacher-labelled folders' teacher
    learned from, an averaged network's members' and a fine-tuned one's starting network's (a test
    folder drawn with any of them is not held out)."""
    seeds: set[int] = set()
    for folder in _data_records(entry):
        if (seed := spec_seed(folder.get("spec"))) is not None:
            seeds.add(seed)
        seeds.update(int(s) for s in folder.get("teacher_seeds", []))
    return seeds.union(*(trained_seeds(e) for e in _earlier(entry)))


def trained_games(entry: dict) -> set[str]:
    """The games (names or game files, as ``deepstack generate --game`` was given them) a
    network's manifest entry says its data was generated for, its members' and its starting
    network's included."""
    games = {str(f["spec"]["game"]) for f in _data_records(entry) if isinstance(f.get("spec"), dict) and f["spec"].get("game")}
    return games.union(*(trained_games(e) for e in _earlier(entry)))


def unseeded_data(entry: dict) -> bool:
    """Whether any data a network learned from (its own, an averaged network's members', a
    fine-tuned one's starting network's) records no seed: the seeds of the rest then cannot tell
    that a test folder is held out."""
    records, earlier = _data_records(entry), _earlier(entry)
    if not records and not earlier:  # nothing recorded at all
        return True
    if any(spec_seed(f.get("spec")) is None and not f.get("teacher_seeds") for f in records):
        return True
    return any(unseeded_data(e) for e in earlier)


def trained_folders(entry: dict) -> set[Path]:
    """The generation folders (resolved from where this runs) a network's manifest entry says it
    learned from, where it records them, and those of the networks it was made from."""
    folders = {Path(f["folder"]).resolve() for f in _data_records(entry) if isinstance(f.get("folder"), str)}
    return folders.union(*(trained_folders(e) for e in _earlier(entry)))
