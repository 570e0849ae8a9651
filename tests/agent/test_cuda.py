"""The GPU path: the re-solver, network leaves, generation and the bot on CUDA give what the CPU
gives. The CUDA tests skip where no CUDA device is present (CI); ``scripts/gpu-check.sh`` runs
them on a GPU machine. The CPU test beside them checks the parity harness itself."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from agent.cli.bench_parity import CASES, compare, make_case
from agent.cli.main import main

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")

#: The CPU and CUDA may differ by what rounding moves the solve itself (the parity row's
#: ``rounding_*`` fields: the CPU solve with its inputs changed at rounding level; see
#: agent.cli.bench_parity), a factor for luck, and a floor for solves that rounding barely moves.
#: Set from the H200 rows of 2026-11-26 (docs/gpu.md): the largest device/rounding ratio seen was
#: 12.7 (river, float64: 1.9e-10 against 1.5e-11). On 2026-11-27 the Leduc re-solve with its
#: network (float32) differed by 0.0115-0.0129 of the pot in three H200 runs against one rounding
#: draw's 0.0002, while other draws move that solve 0.002-0.03 on the CPU alone: the rounding
#: fields are now the largest of three draws (not yet re-run on a GPU).
ROUNDING_FACTOR = 20
VALUE_FLOOR = {"float64": 1e-8, "float32": 1e-5}
NET_MAX_DIFF = 1e-4


def test_pick_device_names_and_refusals() -> None:
    from agent.solver.resolve import SpotError, pick_device

    assert pick_device("cpu") == torch.zeros(1).device
    assert pick_device(torch.device("cpu")).type == "cpu"
    assert pick_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    for bad in ("tpu", "cpu:0", "cuda:x", "cuda:"):
        with pytest.raises(SpotError, match="must be auto, cpu, cuda or cuda:N"):
            pick_device(bad)
    if not torch.cuda.is_available():
        for name in ("cuda", "cuda:0"):
            with pytest.raises(SpotError, match="no CUDA device"):
                pick_device(name)
    else:
        assert pick_device("cuda") == pick_device("cuda:0") == torch.zeros(1, device="cuda").device


def test_devices_compare_equal_to_their_tensors_devices() -> None:
    """``cuda`` kept without an index never equals a tensor's ``cuda:0``: every device the solver
    keeps carries its index (the first bug the GPU machine found)."""
    from native.torch_showdown import canonical_device

    assert torch.device("cuda") != torch.device("cuda:0")
    assert canonical_device("cuda", current_index=0) == torch.device("cuda:0")
    assert canonical_device(torch.device("cuda:1")) == torch.device("cuda:1")
    assert canonical_device("cpu") == torch.zeros(1).device


def test_parity_harness_repeats_a_solve_exactly_on_the_cpu(capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("river", "leduc-exact", "leduc-resolve"):
        row = compare(make_case(name, 10), "float32", devices=("cpu", "cpu"))
        assert row["max_strategy_diff"] == 0 and row["max_value_diff_pot"] == 0
        assert row["iterations"] == 10 and row["hands"] > 0
        assert row.get("net_max_diff", 0.0) == 0.0
        assert row["device"] == "cpu" and row["threads"] >= 1
    # the rounding move is the largest over the draws: never below the first draw's alone
    case = make_case("leduc-resolve", 40)
    one, three = (compare(case, "float32", devices=("cpu", "cpu"), rounding_draws=n) for n in (1, 3))
    assert one["rounding_draws"] == 1 and three["rounding_draws"] == 3
    assert three["rounding_value_diff_pot"] >= one["rounding_value_diff_pot"] > 0
    assert three["rounding_strategy_diff"] >= one["rounding_strategy_diff"]
    if not torch.cuda.is_available():
        assert main(["bench", "parity"]) == 0
        rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert [r["bench"] for r in rows] == [f"parity.{c}" for c in CASES]
        assert all(r["skipped"].startswith("no CUDA device") for r in rows)
        assert all(r["device"] == "cuda" and r["threads"] >= 1 for r in rows)


@needs_cuda
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", CASES)
def test_cuda_solves_as_the_cpu_does(name: str, dtype: str) -> None:
    row = compare(make_case(name, 40 if name != "flop-net" else 5), dtype)
    print(json.dumps(row))
    assert row["max_value_diff_pot"] <= ROUNDING_FACTOR * row["rounding_value_diff_pot"] + VALUE_FLOOR[dtype], row
    worst_cpu = max(row["exploitability_pct_cpu"], row["rounding_exploitability_pct_cpu"])
    assert row["exploitability_pct_cuda"] <= 1.5 * worst_cpu + 0.02, row
    if "net_max_diff" in row:
        assert row["net_max_diff"] <= NET_MAX_DIFF, row


@needs_cuda
def test_turn_generation_on_cuda_matches_the_cpu(tmp_path: Path) -> None:
    """Turn situations solved as a forest on CUDA give the CPU's one-at-a-time targets."""
    outs = {}
    for device in ("cpu", "cuda"):
        out = tmp_path / device
        code = main(
            [
                "generate",
                "--game",
                "hunl",
                "--street",
                "turn",
                "--situations",
                "2",
                "--shard-size",
                "2",
                "--iterations",
                "20",
                "--seed",
                "3",
                "--device",
                device,
                "--batch",
                "2" if device == "cuda" else "1",
                "--out",
                str(out),
            ]
        )
        assert code == 0
        shard = sorted(out.glob("*.npz"))[0]
        outs[device] = dict(np.load(shard, allow_pickle=False))
    for key in ("targets", "inputs"):
        if key in outs["cpu"]:
            np.testing.assert_allclose(outs["cuda"][key], outs["cpu"][key], atol=5e-3)


@needs_cuda
def test_hunl_bot_plays_on_cuda_without_corrections(tmp_path: Path) -> None:
    from agent.bots.config import load_config
    from agent.evaluation.match import run_match
    from protocol.gamedef import load_game

    config = dataclasses.replace(load_config(None), device="cuda")
    report = run_match(
        load_game("hunl"), "hunl", 3, ["deepstack", "random"], seed=4, duplicate=True, log_dir=tmp_path, bot_config=config
    )
    assert report.ok
    assert report.corrections(0) == 0
    assert "decision_failed" not in "".join(p.read_text() for p in tmp_path.glob("*.jsonl"))
