"""``native.bench --quick`` runs and prints one valid JSON object per line."""

from __future__ import annotations

import json

import pytest

from native import bench

REQUIRED = {"bench", "value", "unit", "impl", "device", "threads"}
EXPECTED = {
    ("native.eval_enumerate", "evals/s"),
    ("native.eval_random", "evals/s"),
    ("native.eval_random_per_call", "evals/s"),
    ("native.board_rank", "us"),
    ("native.showdown_river", "us/range"),
    ("native.showdown_river_batch64", "us/range"),
    ("native.showdown_turn_avg", "us/range"),
    ("native.equity_river", "ms"),
    ("native.equity_turn", "ms"),
    ("native.equity_flop", "ms"),
    ("native.nearest_l1_turn_board", "ms"),
}


def test_quick_bench_prints_json_lines(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--quick", "--repeat", "1"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert lines
    for line in lines:
        assert REQUIRED <= line.keys(), line
        assert isinstance(line["value"], float) and line["value"] > 0, line
        assert line["device"] == "cpu" and line["threads"] == 1
    seen = {(line["bench"], line["unit"]) for line in lines if line["impl"] == "ours"}
    assert EXPECTED <= seen, EXPECTED - seen
    torch_lines = [line for line in lines if line["impl"] == "ours-torch"]
    assert any(line["bench"] == "native.showdown_river_batch64" for line in torch_lines)
    assert any(line["bench"] == "native.nearest_l1_turn_board" and line["ratio"] > 0 for line in torch_lines)
    for peer in ("eval7", "phevaluator"):
        try:
            __import__(peer)
        except ImportError:
            continue
        peer_lines = [line for line in lines if line["impl"] == peer]
        assert {line["bench"] for line in peer_lines} == {"native.eval_random", "native.eval_enumerate"}
        assert all(line["ratio"] > 0 for line in peer_lines)
        per_call = next(line["value"] for line in lines if line["bench"] == "native.eval_random_per_call")
        for line in peer_lines:
            if "ratio_per_call" in line:  # ours per call over theirs, both printed
                assert line["ratio_per_call"] == pytest.approx(per_call / line["value"], rel=1e-3)


def test_bench_rejects_a_bad_repeat() -> None:
    with pytest.raises(SystemExit):
        bench.main(["--repeat", "0"])
