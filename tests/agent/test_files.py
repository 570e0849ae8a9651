"""Files written whole or not at all: a write that fails leaves the previous file and no debris."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import numpy as np
import pytest

from agent.common.files import save_npz, write_bytes, write_json
from agent.nets.buckets import BucketTable


def test_a_failed_write_keeps_the_previous_file(tmp_path, monkeypatch) -> None:
    path = tmp_path / "sub" / "table.npz"
    save_npz(path, x=np.arange(3))
    assert np.load(path)["x"].tolist() == [0, 1, 2]

    def half_written(f, **arrays):
        f.write(b"PK\x03\x04 truncated")
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez_compressed", half_written)
    with pytest.raises(OSError, match="disk full"):
        save_npz(path, x=np.arange(5))
    assert np.load(path)["x"].tolist() == [0, 1, 2]
    assert sorted(p.name for p in path.parent.iterdir()) == ["table.npz"]


def test_uncompressed_and_the_bucket_table_round_trip(tmp_path) -> None:
    save_npz(tmp_path / "raw.npz", compressed=False, y=np.ones(2))
    assert np.load(tmp_path / "raw.npz")["y"].tolist() == [1.0, 1.0]
    table = BucketTable("turn", np.random.default_rng(0).random((4, 10)).astype(np.float32))
    table.save(tmp_path / "t.npz")
    again = BucketTable.load(tmp_path / "t.npz")
    assert again.street == "turn" and np.array_equal(again.centroids, table.centroids)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["raw.npz", "t.npz"]


def test_a_failed_json_write_keeps_the_previous_record_and_no_debris(tmp_path) -> None:
    path = tmp_path / "run.json"
    write_json(path, {"a": 1})
    with pytest.raises(TypeError):
        write_json(path, {"b": object()})  # not JSON: fails before anything is renamed
    assert json.loads(path.read_text()) == {"a": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]


def test_the_file_gets_the_users_permissions_and_a_planted_link_is_not_followed(tmp_path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep")
    path = tmp_path / "cache.bin"
    for fixed_name in (f".{path.name}.part", f"{path.name}.tmp", f".{path.name}"):
        (tmp_path / fixed_name).symlink_to(victim)  # the temporary names a predictable writer would use
    write_bytes(path, b"new")
    assert path.read_bytes() == b"new" and victim.read_text() == "keep"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask  # as any file the user writes
    assert not path.is_symlink()


def test_a_link_the_user_made_is_written_through_and_a_missing_folder_is_named(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("{}")
    (tmp_path / "link.json").symlink_to(real)
    write_json(tmp_path / "link.json", {"a": 1})
    assert (tmp_path / "link.json").is_symlink() and json.loads(real.read_text()) == {"a": 1}
    with pytest.raises(FileNotFoundError, match="nowhere/x.json: its folder .*nowhere does not exist"):
        write_json(tmp_path / "nowhere" / "x.json", {})


def test_a_write_the_machine_refuses_is_named_by_the_file_asked_for(tmp_path: Path) -> None:
    """A write past the file-size limit (as a full disk) said ``[Errno 27] File too large`` and no file."""
    import errno
    import resource

    path = tmp_path / "cache.bin"
    write_bytes(path, b"old")
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, hard))  # Python ignores SIGXFSZ: the write fails instead
    try:
        with pytest.raises(OSError) as caught:
            write_bytes(path, b"x" * 100_000)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert caught.value.errno == errno.EFBIG and caught.value.filename == str(path)
    assert path.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["cache.bin"]


def test_a_temporary_file_that_cannot_be_made_is_named_by_the_file_asked_for() -> None:
    """A folder no one may create files in (read-only disk, a folder of another user's) named the hidden
    ``.name.xxxxxx.part`` the user never asked for."""
    if not Path("/sys/kernel").is_dir():
        pytest.skip("needs /sys, where not even root may create a file")
    with pytest.raises(OSError) as caught:
        write_json("/sys/kernel/run.json", {})
    assert caught.value.filename == "/sys/kernel/run.json" and ".part" not in str(caught.value)


def test_a_torch_save_the_machine_refuses_is_an_os_error_naming_the_file(tmp_path: Path) -> None:
    """torch's writer, refused mid-file, raised ``RuntimeError: ... unexpected pos 11200 vs 11094``: a
    traceback from `deepstack train` whose checkpoint hit the file-size limit (as a full disk)."""
    import resource

    import torch

    from agent.common.files import write_torch

    path = tmp_path / "net.ckpt"
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, hard))
    try:
        with pytest.raises(OSError) as caught:
            write_torch(path, lambda f: torch.save({"w": torch.zeros(10_000)}, f))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert caught.value.filename == str(path) and list(tmp_path.iterdir()) == []
    write_torch(path, lambda f: torch.save({"w": torch.ones(3)}, f))
    assert torch.load(path)["w"].tolist() == [1.0, 1.0, 1.0]


def test_a_file_where_the_folder_should_be_is_named(tmp_path: Path) -> None:
    """It said the folder ``afile`` did not exist."""
    (tmp_path / "afile").write_text("kept")
    with pytest.raises(FileNotFoundError, match=f"afile/sub/x.json: {tmp_path / 'afile'} is a file, not a folder"):
        write_json(tmp_path / "afile" / "sub" / "x.json", {})


def test_a_plot_stopped_mid_write_leaves_the_previous_one(tmp_path: Path) -> None:
    """Plots were saved in place: a run stopped while one was written left a cut-off PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from agent.common.files import write_png

    path = tmp_path / "loss.png"
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3])
    write_png(path, fig, dpi=50)
    plt.close(fig)
    before = path.read_bytes()
    assert before.startswith(b"\x89PNG")

    class StoppedFigure:
        def savefig(self, f, **kwargs) -> None:  # type: ignore[no-untyped-def]
            Path(f).write_bytes(b"\x89PNG cut")
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_png(path, StoppedFigure(), dpi=50)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["loss.png"]
