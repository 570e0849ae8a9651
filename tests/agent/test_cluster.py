"""``deepstack generate --ray-address``: the same shards as a local run, on Ray in local mode."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import numpy as np
import pytest

from agent.cli.main import main
from agent.training.cluster import generate_on_ray
from agent.training.data_folder import shard_path
from agent.training.datagen import generate
from agent.training.generate_spec import GenerateSpec

ARGS = ["generate", "--game", "leduc", "--situations", "12", "--shard-size", "4", "--iterations", "40", "--seed", "3"]


def _same_shards(a_dir: Path, b_dir: Path, n: int) -> None:
    for i in range(n):
        with np.load(shard_path(a_dir, i)) as a, np.load(shard_path(b_dir, i)) as b:
            for key in ("inputs", "targets", "masks"):
                np.testing.assert_array_equal(a[key], b[key])


def test_ray_local_mode_writes_the_same_shards_and_resumes(tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    local, cluster = tmp_path / "local", tmp_path / "ray"
    generate(GenerateSpec(game="leduc", round=1, situations=12, shard_size=4, seed=3, iterations=40), local, progress=False)
    assert main([*ARGS, "--out", str(cluster), "--ray-address", "local", "--ray-cpus", "2"]) == 0
    assert not ray.is_initialized()  # the instance the command started is shut down
    _same_shards(local, cluster, 3)
    for folder in (local, cluster):  # each shard records how long its solves took where they ran
        with np.load(shard_path(folder, 0)) as z:
            shard_meta = json.loads(str(z["meta"]))
        assert shard_meta["shard"] == 0 and shard_meta["count"] == 4 and shard_meta["seconds"] > 0
    meta = json.loads((cluster / "generate.json").read_text())
    assert meta["spec"]["seed"] == 3 and meta["spec"]["algorithm"] == "dcfr"
    # an interrupted cluster run: one shard missing, the others kept untouched; this time the
    # driver is already connected (a script that called ray.init): used and left open
    shard_path(cluster, 1).unlink()
    kept = shard_path(cluster, 2).stat().st_mtime_ns
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
    for sig, handler in handlers.items():  # ray.init's handlers would outlive this test in the process
        signal.signal(sig, handler)
    try:
        stats = generate_on_ray(
            GenerateSpec(game="leduc", round=1, situations=12, shard_size=4, seed=3, iterations=40),
            cluster,
            "ignored://when-connected",
            progress=False,
        )
        assert ray.is_initialized()
    finally:
        ray.shutdown()
    assert stats["situations"] == 4
    assert shard_path(cluster, 2).stat().st_mtime_ns == kept
    _same_shards(local, cluster, 3)


def test_missing_ray_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError, as without the extra
    assert main([*ARGS, "--out", str(tmp_path / "x"), "--ray-address", "local"]) == 1
    err = capsys.readouterr().err
    assert "needs Ray" in err and "pip install -e '.[ray]'" in err
    assert not list((tmp_path / "x").glob("shard-*"))


def test_bad_ray_cpus_is_rejected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*ARGS, "--out", str(tmp_path / "x"), "--ray-address", "local", "--ray-cpus", "0"]) == 2
    assert "--ray-cpus must be positive" in capsys.readouterr().err
