"""Averaged value networks: one TorchScript file whose output is the mean of its members'.

Networks trained alike make errors of the same size but not the same errors; the bot's
exploitability follows the error at the states it reaches, so averaging them pays (Leduc limit:
27.7 mbb/g with one network, 24.7 with two, 19.9 with four; models/README.md). The result is a
value network like any other (same inputs, outputs and manifest fields), so nothing that loads
networks needs to know; its manifest entry lists every member with its own provenance.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import torch
from torch import nn

from agent.nets.manifest import ModelError, command_line, load_value_net, register_model, save_scripted


class MeanOfNets(nn.Module):
    """``forward(x)``: the mean of the members' outputs (each already zero-sum, so the mean is too)."""

    def __init__(self, members: list[torch.jit.ScriptModule]) -> None:
        super().__init__()
        self.members = nn.ModuleList(members)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The members' outputs averaged row by row (scripted as one network, so the ensemble ships as a
        single model file)."""
        return torch.stack([member(x) for member in self.members]).mean(dim=0)


#: manifest fields that must agree between members (a network's interface)
_INTERFACE = ("net", "canonical_suits", "street", "buckets_file", "river_buckets")


def _refuse_twice(members: list[str | Path], entries: list[dict]) -> None:
    """Refuse a network given twice, or a copy of one under another name (the same sha256): the mean
    of a network and itself is that network, and its manifest entry would count it as two members."""
    seen: dict[str, int] = {}
    for i, (member, entry) in enumerate(zip(members, entries)):
        first = seen.setdefault(entry["sha256"], i)
        if first == i:
            continue
        other = members[first]
        same = Path(member).resolve() == Path(other).resolve()
        how = f"given twice (as {other} too)" if same else f"a copy of {other} (the same sha256)"
        raise ModelError(f"{member}: {how}; an ensemble averages different networks")


def build_ensemble(members: list[str | Path], out: Path, name: str, command: str | None = None) -> Path:
    """Write ``out`` (TorchScript) averaging ``members`` (each checked against its manifest) and
    register it; returns the model path."""
    if len(members) < 2:
        raise ModelError("an ensemble needs at least two networks")
    loaded = [load_value_net(m) for m in members]
    _refuse_twice(members, [entry for _, entry in loaded])
    first = loaded[0][1]
    for path, (_, entry) in zip(members, loaded):
        for key in _INTERFACE:
            if entry.get(key) != first.get(key):
                raise ModelError(f"{path}: its {key} ({entry.get(key)!r}) differs from {members[0]}'s ({first.get(key)!r})")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # TorchScript is our deployment format
        scripted = torch.jit.script(MeanOfNets([net for net, _ in loaded]))
    out.parent.mkdir(parents=True, exist_ok=True)
    save_scripted(scripted, out)
    # members and initialized_from too: the held-out checks follow them down to every network's data
    keep = (
        "path",
        "sha256",
        "command",
        "data",
        "training_situations",
        "validation_loss",
        "date",
        "code_version",
        "members",
        "initialized_from",
    )
    register_model(
        out,
        name=name,
        **{key: first[key] for key in _INTERFACE if key in first},
        members=[{"file": str(m), **{k: entry[k] for k in keep if k in entry}} for m, (_, entry) in zip(members, loaded)],
        # members trained on the same data count it once (an averaged member: by its own members)
        training_situations=sum(
            {
                json.dumps(e.get("data") or e.get("members") or e.get("sha256"), sort_keys=True): int(
                    e.get("training_situations", 0)
                )
                for _, e in loaded
            }.values()
        ),
        command=command or command_line(),
    )
    return out
