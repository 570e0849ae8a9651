"""Replacing a shipped value network by a candidate, only when it beats the shipped one on
held-out situations that neither trained on.

A network's own validation loss chose its best epoch and was measured on its own split; the
shipped network's was measured on another. The comparison that decides is both networks on the
same test situations, per situation, with an interval: the one ``deepstack eval nets`` prints.
Promotion writes the files under hidden names first and renames them, then the manifest, so that
an interrupted promotion leaves either the old network or the new one (a file whose sha256 does
not match the manifest is refused by the bot with a message naming it, never loaded)."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path

from agent.common.files import replacing
from agent.nets.manifest import (
    MODELS_DIR,
    ModelError,
    checked_file,
    load_value_net,
    manifest_path_for,
    read_manifest,
    sha256_of,
    spec_seed,
    trained_folders,
    trained_seeds,
    unseeded_data,
    write_manifest,
)
from agent.training.heldout import HeldOutScore, score_networks

#: files that travel with a network: its TorchScript file, training history and loss curve
COMPANIONS = (".pt", ".history.json", ".loss.png")


class NotBetter(Exception):
    """The candidate does not beat the shipped network with 95% confidence; nothing was changed."""


@dataclass(frozen=True)
class Promotion:
    """What a promotion measured and did."""

    name: str
    target: Path
    shipped_loss: float
    candidate_loss: float
    #: mean per-situation loss, candidate minus shipped, and its 95% half-width
    difference: float
    half_width: float
    situations: int
    written: bool


def _test_records(test_dirs: Sequence[Path]) -> list[dict]:
    """Each test folder's ``generate.json`` (what drew it, and with which seed)."""
    records = []
    for folder in test_dirs:
        path = Path(folder) / "generate.json"
        try:
            record = json.loads(path.read_text())
        except FileNotFoundError:
            raise ValueError(f"{folder}: no generate.json: not a folder of 'deepstack generate'") from None
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: unreadable ({exc})") from None
        records.append(record if isinstance(record, dict) else {})
    return records


def held_out_problems(test_dirs: Sequence[Path], records: list[dict], entries: dict[str, dict]) -> list[str]:
    """Why each test folder is not held out from the networks of ``entries`` (one line each): it is
    one of the folders a network trained on, it was drawn with a seed one trained on (it holds the
    same situations), or its record or any of a network's data gives no seed to tell."""
    problems = []
    for folder, record in zip(test_dirs, records):
        seed = spec_seed(record.get("spec"))
        if seed is None:
            problems.append(f"{folder}: its generate.json gives no seed (nor harvested_from's): cannot tell it is held out")
            continue
        for who, entry in entries.items():
            if Path(folder).resolve() in trained_folders(entry):
                problems.append(f"{folder}: {who} trained on this folder: not held out")
            elif seed in trained_seeds(entry):
                problems.append(f"{folder}: drawn with seed {seed}, which {who} trained on: not held out")
            elif unseeded_data(entry):
                problems.append(
                    f"{folder}: {who}'s manifest entry records no seed for some of its training data: cannot tell it is held out"
                )
    return problems


def _check_held_out(test_dirs: Sequence[Path], records: list[dict], entries: dict[str, dict]) -> None:
    """Refuse a test folder that is not held out (:func:`held_out_problems`)."""
    problems = held_out_problems(test_dirs, records, entries)
    if problems:
        raise ValueError(problems[0])


def held_out_warnings(net_paths: Sequence[str | Path], test_dirs: Sequence[Path]) -> list[str]:
    """:func:`held_out_problems` of networks scored without recording (``deepstack eval nets``):
    said, not refused; a folder without a readable record is said too."""
    entries = {str(path): checked_file(path)[1] for path in net_paths}
    lines = []
    for folder in test_dirs:
        try:
            records = _test_records([folder])
        except ValueError as exc:
            lines.append(f"{exc}: cannot tell it is held out")
            continue
        lines += held_out_problems([folder], records, entries)
    return lines


def promote(
    candidate: Path,
    name: str,
    test_dirs: Sequence[Path],
    total_stacks: float,
    manifest: Path = MODELS_DIR / "manifest.json",
    force: bool = False,
    dry_run: bool = False,
    game: str | None = None,
) -> Promotion:
    """Score the network of manifest entry ``name`` and ``candidate`` on ``test_dirs``; when the
    candidate's mean per-situation loss is lower with 95% confidence (or ``force``), copy it and
    its companions over the shipped files and give the entry the candidate's record with the test.

    Raises ModelError (a file or entry that is not usable), ValueError (networks of different
    streets or abstractions, test data not held out or, with ``game``, of another game or round)
    or NotBetter (nothing written)."""
    candidate, manifest = Path(candidate), Path(manifest)
    # read_manifest takes a missing file for an empty manifest (one a first network starts): here there is
    # an entry to replace, so a mistyped path is said as such, not as "no entry"
    if manifest.is_dir():
        raise ModelError(f"{manifest}: a folder, not a manifest file (e.g. {manifest / 'manifest.json'})")
    if not manifest.exists():
        raise ModelError(f"{manifest}: no such manifest")
    entries = read_manifest(manifest)["models"]
    if name not in entries:
        raise ModelError(f"{manifest}: no entry {name!r} (entries: {', '.join(sorted(entries))})")
    target = manifest.parent / entries[name]["path"]
    _, shipped = load_value_net(target)
    _, new = load_value_net(candidate)
    kind = ("street", "buckets_file", "river_buckets")
    if [shipped.get(k) for k in kind] != [new.get(k) for k in kind]:
        raise ValueError(
            f"{candidate}: not the same kind of network as {target} "
            f"({', '.join(f'{k} {new.get(k)!r} against {shipped.get(k)!r}' for k in kind if shipped.get(k) != new.get(k))})"
        )
    records = _test_records(test_dirs)
    _check_held_out(test_dirs, records, {str(target): shipped, str(candidate): new})
    old_score, new_score = score_networks([target, candidate], list(test_dirs), total_stacks, game)
    diff, half = new_score.paired_difference(old_score)
    result = Promotion(name, target, old_score.loss, new_score.loss, diff, half, len(new_score.per_situation), False)
    if diff + half >= 0 and not force:
        raise NotBetter(
            f"{candidate}: not better than {target} on {result.situations} held-out situations "
            f"(Huber {new_score.loss:.5f} against {old_score.loss:.5f}; per situation {diff:+.5f} ± {half:.5f}); "
            "nothing changed"
        )
    if dry_run:
        return result
    record = dict(new)
    record["path"] = str(target.relative_to(manifest.parent))
    record["test"] = {
        "folders": [str(d) for d in test_dirs],
        "commands": [r.get("command") for r in records],
        "situations": result.situations,
        "huber": new_score.loss,
        "replaced_huber": old_score.loss,
        "difference_per_situation": [diff, half],
        "replaced_sha256": shipped["sha256"],
    }
    data = read_manifest(manifest)
    data["models"][name] = record
    stale = []
    # every file staged under a temporary name first (all removed if one fails), then renamed in the
    # reverse order: the network and its companions, the manifest last
    with ExitStack() as staged:
        staged.enter_context(replacing(manifest)).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        copies = []
        for suffix in COMPANIONS:
            src = candidate.with_name(candidate.name.removesuffix(".pt") + suffix)
            dst = target.with_name(target.name.removesuffix(".pt") + suffix)
            if suffix == ".pt" or src.exists():  # the network itself always (gone since it was scored: an error)
                # a link in models/ is replaced, not written through: the file it pointed to stays as it was
                copies.append(staged.enter_context(replacing(dst, through_links=False)))
                shutil.copyfile(src, copies[-1])
            elif dst.exists() or dst.is_symlink():
                stale.append(dst)  # the replaced network's loss curve would pass for the new one's
        if sha256_of(copies[0]) != new["sha256"]:
            raise ModelError(f"{candidate}: changed while it was copied")
    for path in stale:
        path.unlink()
    return replace(result, written=True)


def record_check(scores: Sequence[HeldOutScore], test_dirs: Sequence[Path]) -> dict:
    """Add the first network's score on ``test_dirs`` (and the others' against it) to that
    network's manifest entry, under ``checks``; returns the record.

    How a network that is kept shows that it still fits its street's targets after the network
    below it changed (the test folders name the network that made their targets): the chain of
    networks stays checked without retraining one that a candidate could not beat."""
    first = scores[0]
    path, entry = checked_file(first.path)
    records = _test_records(test_dirs)
    _check_held_out(test_dirs, records, {str(path): entry})
    record = {
        "date": time.strftime("%Y-%m-%d"),
        "folders": [str(d) for d in test_dirs],
        "commands": [r.get("command") for r in records],
        "next_net_sha256": sorted({r["next_net_sha256"] for r in records if r.get("next_net_sha256")}),
        "situations": len(first.per_situation),
        "huber": first.loss,
        "against": [
            {
                "net": s.path,
                "sha256": sha256_of(Path(s.path)),
                "huber": s.loss,
                "difference_per_situation": list(s.paired_difference(first)),
            }
            for s in scores[1:]
            if s.abstraction == first.abstraction and len(s.per_situation) == len(first.per_situation)
        ],
    }
    manifest = manifest_path_for(path)
    data = read_manifest(manifest)
    name = next(n for n, e in data["models"].items() if (manifest.parent / e["path"]).resolve() == path.resolve())
    data["models"][name].setdefault("checks", []).append(record)
    write_manifest(manifest, data)
    return record
