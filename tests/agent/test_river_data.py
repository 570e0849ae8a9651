"""River training situations: `deepstack generate --street river` (solved exactly) and its benchmark row."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from agent.cli.main import main
from agent.solver.handspace import HandSpace
from agent.training.data_folder import load_shards
from protocol.gamedef import load_game


def test_generate_river_writes_exactly_solved_river_situations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "river"
    argv = ["generate", "--game", "hunl", "--street", "river", "--situations", "6", "--shard-size", "3"]
    assert main(argv + ["--iterations", "60", "--batch", "3", "--out", str(out)]) == 0
    capsys.readouterr()
    shards = list(load_shards(out))
    assert len(shards) == 2
    space = HandSpace(load_game("hunl"))
    for shard in shards:
        assert shard["boards"].shape == (3, 5) and (shard["boards"] >= 0).all()  # five board cards
        assert shard["values"].shape == shard["ranges"].shape == (3, 2, 1326)
        for board, ranges, values in zip(shard["boards"], shard["ranges"], shard["values"]):
            valid = space.valid(tuple(int(c) for c in board))
            assert not values[:, ~valid].any()  # hands that share a board card have no value
            r = ranges * valid
            r = r / r.sum(axis=1, keepdims=True)
            # values are fractions of the pot for each player's hands: the game is zero-sum
            total = float((r[0] * values[0]).sum() + (r[1] * values[1]).sum())
            assert abs(total) < 0.05
    recorded = json.loads((out / "generate.json").read_text())
    assert recorded["spec"]["round"] == 3


def test_bench_generate_river_row(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bench", "generate", "--street", "river", "--river-situations", "3", "--turn-iterations", "20"]
    assert main(argv + ["--turn-algorithm", "dcfr"]) == 0
    row = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert row["bench"] == "generate.river" and row["unit"] == "situations/s" and row["impl"] == "ours"
    assert row["value"] > 0 and row["goal_cpu"] == 20.0 and row["iterations"] == 20
    assert np.isfinite(row["seconds"])


def test_river_buckets_are_equity_steps() -> None:
    from agent.nets.buckets import RiverStrength
    from native.cards import cards_from_str

    board = tuple(cards_from_str("QsJh2h8d3c"))
    river = RiverStrength(10)
    ids, equity = river.assign(board), river.equity(board)
    valid = HandSpace(load_game("hunl")).valid(board)
    assert ((ids >= 0) == valid).all()  # blocked hands: -1
    assert np.array_equal(ids[valid], np.minimum((equity[valid] * 10).astype(int), 9))
    nuts = HandSpace(load_game("hunl")).index(tuple(cards_from_str("Ts9c")))  # the queen-high straight
    assert equity[nuts] > 0.99 and ids[nuts] == 9  # ties with the other T9 count half
    worst = HandSpace(load_game("hunl")).index(tuple(cards_from_str("4c5d")))
    assert equity[worst] < 0.05 and ids[worst] == 0
    assert river.assign(board) is ids  # cached per board


def test_train_river_network_on_river_situations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Generate, then train; both record the command as ``deepstack ...`` even when started as
    ``python -m agent.cli.main`` from a worktree (the manifest's command is run again as written)."""
    data, out = tmp_path / "data", tmp_path / "net"
    gen = ["generate", "--game", "hunl", "--street", "river", "--situations", "8", "--shard-size", "4"]
    gen += ["--iterations", "40", "--out", str(data)]
    monkeypatch.setattr(sys, "argv", ["/work/wt/agent/cli/main.py", *gen])
    assert main(gen) == 0
    argv = ["train", "--game", "hunl", "--street", "river", "--river-buckets", "20", "--data", str(data)]
    argv += ["--out", str(out), "--name", "river-test", "--epochs", "2", "--hidden", "16", "--layers", "2"]
    monkeypatch.setattr(sys, "argv", ["/opt/venv/bin/deepstack", *argv])
    assert main(argv) == 0
    assert "best validation loss" in capsys.readouterr().out
    manifest = json.loads((out / "manifest.json").read_text())["models"]["river-test"]
    assert manifest["street"] == "river" and manifest["river_buckets"] == 20
    assert manifest["net"]["buckets"] == 20
    assert manifest["command"] == " ".join(["deepstack", *argv])
    assert manifest["data"]["command"] == " ".join(["deepstack", *gen])
