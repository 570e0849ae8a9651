"""``deepstack promote``: a trained network replaces a shipped one only when it wins on held-out
situations; a loser, data it trained on or an unknown entry change nothing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agent.cli.main import main
from agent.nets.manifest import checked_file, sha256_of


@pytest.fixture(scope="module")
def river(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tiny river data (training seed 1, test seed 2) and two networks on it: one trained, one
    barely moved from its initial weights."""
    root = tmp_path_factory.mktemp("promote")
    for seed, name, n in ((1, "train", "48"), (2, "test", "24")):
        argv = ["generate", "--game", "hunl", "--street", "river", "--situations", n, "--shard-size", n]
        assert main(argv + ["--iterations", "30", "--seed", str(seed), "--out", str(root / name)]) == 0
    base = ["train", "--game", "hunl", "--street", "river", "--river-buckets", "20", "--data", str(root / "train")]
    base += ["--hidden", "16", "--layers", "2", "--batch-size", "8"]
    assert main(base + ["--out", str(root / "good"), "--name", "good", "--epochs", "40", "--lr", "3e-3"]) == 0
    assert main(base + ["--out", str(root / "bad"), "--name", "bad", "--epochs", "1", "--lr", "1e-9"]) == 0
    # the "shipped" network: a copy of the bad one with its own manifest entry
    assert main(base + ["--out", str(root / "models"), "--name", "river-x", "--epochs", "1", "--lr", "1e-9"]) == 0
    return root


def _promote(river: Path, candidate: str, *extra: str) -> int:
    manifest = river / "models" / "manifest.json"
    return main(["promote", str(river / candidate), "--as", "river-x", "--manifest", str(manifest), *extra])


def test_a_better_network_replaces_the_shipped_one(river: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shipped = river / "models" / "river-x.pt"
    old = sha256_of(shipped)
    assert _promote(river, "good/good.pt", "--test", str(river / "test"), "--dry-run") == 0
    assert "dry run: nothing changed" in capsys.readouterr().out and sha256_of(shipped) == old
    assert _promote(river, "good/good.pt", "--test", str(river / "test")) == 0
    out = capsys.readouterr().out
    assert "promoted" in out and "per situation -" in out
    assert sha256_of(shipped) == sha256_of(river / "good" / "good.pt")
    _, entry = checked_file(shipped)  # the manifest agrees with the file
    assert entry["path"] == "river-x.pt" and entry["test"]["replaced_sha256"] == old
    assert entry["test"]["huber"] < entry["test"]["replaced_huber"] and entry["test"]["situations"] == 24
    # the test folder's generating command, from its generate.json
    record = json.loads((river / "test" / "generate.json").read_text())
    assert entry["test"]["commands"] == [record["command"]] and record["command"]
    assert (river / "models" / "river-x.loss.png").read_bytes() == (river / "good" / "good.loss.png").read_bytes()
    assert not list((river / "models").glob(".*"))  # no temporary left

    # now the shipped network is the good one: the bad one is refused and nothing changes
    manifest = (river / "models" / "manifest.json").read_text()
    assert _promote(river, "bad/bad.pt", "--test", str(river / "test")) == 1
    err = capsys.readouterr().err
    assert "not better than" in err and "nothing changed" in err and len(err.strip().splitlines()) == 1
    assert (river / "models" / "manifest.json").read_text() == manifest
    assert sha256_of(shipped) == sha256_of(river / "good" / "good.pt")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--test", "train"], "trained on this folder: not held out"),  # the training data is not held out
        (["--test", "test", "--as", "river-y"], "no entry 'river-y'"),
        (["--test", "nowhere"], "no generate.json"),
    ],
)
def test_what_cannot_be_promoted_is_one_line(
    river: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    manifest = river / "models" / "manifest.json"
    before = json.loads(manifest.read_text())
    args = [str(river / a) if a in ("train", "test", "nowhere") else a for a in args]
    if "--as" in args:
        argv = ["promote", str(river / "bad" / "bad.pt"), "--manifest", str(manifest), *args]
    else:
        argv = ["promote", str(river / "bad" / "bad.pt"), "--as", "river-x", "--manifest", str(manifest), *args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("deepstack promote: error: ") and message in err and len(err.strip().splitlines()) == 1
    assert json.loads(manifest.read_text()) == before


def test_an_unreadable_test_record_is_named(river: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = river / "broken"
    broken.mkdir(exist_ok=True)
    (broken / "generate.json").write_text("{not json")
    manifest = river / "models" / "manifest.json"
    argv = ["promote", str(river / "bad" / "bad.pt"), "--as", "river-x", "--manifest", str(manifest), "--test", str(broken)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"deepstack promote: error: {broken / 'generate.json'}: unreadable") and len(err.splitlines()) == 1


def test_an_averaged_network_takes_the_place_without_the_replaced_curves(river: Path) -> None:
    """An ensemble has no loss curve of its own: the replaced network's must not stay beside it."""
    ens = river / "ens" / "ens.pt"
    assert (
        main(["ensemble", "--out", str(ens), "--name", "ens", str(river / "good" / "good.pt"), str(river / "bad" / "bad.pt")])
        == 0
    )
    models = river / "models"
    assert (models / "river-x.loss.png").exists() and (models / "river-x.history.json").exists()
    assert _promote(river, "ens/ens.pt", "--test", str(river / "test"), "--force") == 0
    assert sha256_of(models / "river-x.pt") == sha256_of(ens)
    assert not (models / "river-x.loss.png").exists() and not (models / "river-x.history.json").exists()
    _, entry = checked_file(models / "river-x.pt")
    assert [m["sha256"] for m in entry["members"]] == [sha256_of(river / n / f"{n}.pt") for n in ("good", "bad")]


def test_a_kept_network_records_its_score_on_new_targets(river: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``deepstack eval nets --record``: the first network's score, and the others' against it, go into
    its manifest entry with the test folders' provenance; data it trained on is refused."""
    shipped = river / "models" / "river-x.pt"
    argv = ["eval", "nets", str(shipped), str(river / "bad" / "bad.pt"), "--record", "--data"]
    assert main(argv + [str(river / "test")]) == 0
    _, entry = checked_file(shipped)  # the file still matches the rewritten manifest
    (check,) = entry["checks"]
    record = json.loads((river / "test" / "generate.json").read_text())
    assert check["folders"] == [str(river / "test")] and check["commands"] == [record["command"]]
    assert check["situations"] == 24 and 0 < check["huber"] < 1 and check["next_net_sha256"] == []
    (other,) = check["against"]
    assert other["sha256"] == sha256_of(river / "bad" / "bad.pt") and other["huber"] > check["huber"]
    capsys.readouterr()
    assert main(argv + [str(river / "train")]) == 2
    assert "trained on this folder" in capsys.readouterr().err
    _, entry = checked_file(shipped)
    assert len(entry["checks"]) == 1


def test_a_folder_trained_on_is_not_held_out_whatever_its_seed_says(tmp_path: Path) -> None:
    """A harvested river folder has no seed of its own (its turn data's counts), a folder a network
    names as its training data is refused by its path, and a folder without a seed cannot pass."""
    from agent.training.promote import held_out_problems

    folder = tmp_path / "data"
    harvested = {"spec": {"game": "hunl", "round": 3, "harvested_from": {"seed": 5}}}
    assert held_out_problems([folder], [harvested], {"net": {"data": harvested}}) == [
        f"{folder}: drawn with seed 5, which net trained on: not held out"
    ]
    trained_here = {"data": {"folder": str(folder), "spec": {"seed": 9}}}
    assert held_out_problems([folder], [{"spec": {"seed": 2}}], {"net": trained_here}) == [
        f"{folder}: net trained on this folder: not held out"
    ]
    pooled = {"data": {"folders": [{"folder": str(tmp_path / "." / "data"), "spec": {"seed": 9}}]}}
    assert held_out_problems([folder], [{"spec": {"seed": 2}}], {"net": pooled})
    assert "gives no seed" in held_out_problems([folder], [{"spec": {"round": 3}}], {"net": {}})[0]
    assert held_out_problems([folder], [{"spec": {"seed": 2}}], {"net": trained_here | {"data": {"spec": {"seed": 1}}}}) == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"seed": None, "harvested_from": {"seed": 1}}, "drawn with seed 1, which"),
        ({"seed": None}, "gives no seed"),
        ({"game": "leduc"}, "data of the game 'leduc'"),
        ({"round": 2}, "turn situations (its generate.json), not river situations"),
    ],
)
def test_a_test_folder_of_training_data_or_another_game_is_refused(
    river: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict, message: str
) -> None:
    import shutil

    test = tmp_path / "test"
    shutil.copytree(river / "test", test)
    record = json.loads((test / "generate.json").read_text())
    record["spec"] = {k: v for k, v in {**record["spec"], **change}.items() if v is not None}
    (test / "generate.json").write_text(json.dumps(record))
    assert _promote(river, "bad/bad.pt", "--test", str(test), "--dry-run", "--force") == 2
    err = capsys.readouterr().err
    assert err.startswith("deepstack promote: error: ") and message in err and len(err.strip().splitlines()) == 1
    if "seed" not in message:  # eval nets refuses another game or round too
        assert main(["eval", "nets", str(river / "bad" / "bad.pt"), "--data", str(test)]) == 2
        assert message in capsys.readouterr().err


def test_eval_nets_warns_where_a_network_trained_on_the_data(river: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "nets", str(river / "bad" / "bad.pt"), "--data", str(river / "train")]) == 0
    err = capsys.readouterr().err
    assert "deepstack eval nets: warning: " in err and "trained on this folder" in err
    assert main(["eval", "nets", str(river / "bad" / "bad.pt"), "--data", str(river / "test")]) == 0
    assert "warning" not in capsys.readouterr().err


def test_an_entry_without_training_seeds_cannot_pass_a_test_folder(tmp_path: Path) -> None:
    from agent.training.promote import held_out_problems

    folder = tmp_path / "test"
    assert held_out_problems([folder], [{"spec": {"seed": 2}}], {"net": {}}) == [
        f"{folder}: net's manifest entry records no seed for some of its training data: cannot tell it is held out"
    ]
    seeded = {"data": {"folder": "/d/a", "spec": {"seed": 1}}}
    pooled = {"data": {"folders": [seeded["data"], {"folder": "/d/b"}]}}  # one of two folders without a seed
    averaged = {"members": [seeded, {"data": {}}]}  # one member without its data
    for entry in (pooled, averaged, {"data": {"spec": {"seed": 1}}, "initialized_from": {"sha256": "x"}}):
        assert held_out_problems([folder], [{"spec": {"seed": 2}}], {"net": entry}), entry
    assert held_out_problems([folder], [{"spec": {"seed": 2}}], {"net": {"members": [seeded, seeded]}}) == []


def test_held_out_checks_follow_nested_ensembles_and_copied_folders(river: Path, tmp_path: Path) -> None:
    """An averaged network's member that was fine-tuned, a member that is itself averaged, and a
    folder copied without its generate.json all still name the seeds their networks learned from."""
    import shutil

    from agent.nets.manifest import trained_seeds

    copied = tmp_path / "copied"  # seed 1's shards without their generate.json
    copied.mkdir()
    for shard in (river / "train").glob("shard-*.npz"):
        shutil.copy(shard, copied)
    base = ["train", "--game", "hunl", "--street", "river", "--river-buckets", "20", "--hidden", "16", "--layers", "2"]
    base += ["--batch-size", "8", "--epochs", "1", "--out", str(tmp_path)]
    assert main(base + ["--data", str(copied), "--name", "copied"]) == 0
    assert main(base + ["--data", str(river / "test"), "--name", "tuned", "--init", str(river / "good" / "good.pt")]) == 0
    ensemble = ["ensemble", "--out", str(tmp_path / "mean.pt"), "--name", "mean", str(tmp_path / "tuned.pt")]
    assert main(ensemble + [str(tmp_path / "copied.pt")]) == 0
    nested = ["ensemble", "--out", str(tmp_path / "nested.pt"), "--name", "nested", str(tmp_path / "mean.pt")]
    assert main(nested + [str(tmp_path / "copied.pt")]) == 0
    entries = json.loads((tmp_path / "manifest.json").read_text())["models"]
    assert trained_seeds(entries["copied"]) == {1}
    assert trained_seeds(entries["tuned"]) == {1, 2}  # its own data and its starting network's
    assert trained_seeds(entries["mean"]) == {1, 2}
    # the nested ensemble's first member is the mean: its record still reaches the tuned network's start
    assert trained_seeds({"members": entries["nested"]["members"][:1]}) == {1, 2}


def test_a_network_without_a_street_is_named(tmp_path: Path) -> None:
    """``promote ... --game leduc`` said "not a hold'em network: its manifest entry names no street" without
    saying which of the two networks."""
    from agent.training.heldout import score_networks

    with pytest.raises(ValueError, match=r"^models/leduc/leduc.pt: not a hold'em network \(its manifest entry names no street\)"):
        score_networks(["models/leduc/leduc.pt"], [tmp_path], 2400.0, "leduc")


def test_eval_nets_splits_each_networks_loss_by_pot(river: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``eval nets --pot-bands N``: each network's loss in N bands of the test pots, as many situations each; the
    bands' counts add up to the situations and one band is the pooled loss itself (the weights are right)."""
    nets = [str(river / "good" / "good.pt"), str(river / "bad" / "bad.pt")]
    for bands in (1, 3):
        assert main(["eval", "nets", *nets, "--data", str(river / "test"), "--json", "--pot-bands", str(bands)]) == 0
        rows = json.loads(capsys.readouterr().out)["networks"]
        for row in rows:
            assert len(row["by_pot"]) == bands and sum(b["situations"] for b in row["by_pot"]) == row["situations"]
            assert [b["pots"] for b in row["by_pot"]] == [b["pots"] for b in rows[0]["by_pot"]]  # the same bands
            assert all(lo < hi for lo, hi in (b["pots"] for b in row["by_pot"]))
            if bands == 1:
                assert row["by_pot"][0]["loss"] == pytest.approx(row["loss"], rel=1e-5)
        # the second network's paired differences, band by band, recombine into its overall one
        assert all("difference" not in b for b in rows[0]["by_pot"])
        diffs = [(b["difference"], b["situations"]) for b in rows[1]["by_pot"]]
        assert sum(d * n for d, n in diffs) / rows[1]["situations"] == pytest.approx(rows[1]["difference"], rel=1e-6)
    assert main(["eval", "nets", *nets, "--data", str(river / "test"), "--pot-bands", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 4 and out[1].startswith("  by pot (chips): ") and out[1].count(": ") == 3
    assert " ± " not in out[1] and out[3].count(" ± ") == 2  # the second network's bands, paired with the first's
    assert main(["eval", "nets", *nets, "--data", str(river / "test")]) == 0
    assert "by pot" not in capsys.readouterr().out  # only when asked
    assert main(["eval", "nets", *nets, "--data", str(river / "test"), "--pot-bands", "101"]) == 2
    assert capsys.readouterr().err == "deepstack eval nets: error: --pot-bands 101: from 0 (none) to 100\n"
    # the bands recombine into the pooled loss, lower bands hold lower pots, and equal pots are never split
    from agent.training.heldout import pot_bands, score_networks

    (score,) = score_networks(nets[:1], [river / "test"], 40000.0, "hunl")
    edges = pot_bands(score.pots, 3)
    bands = score.by_pot(edges)
    weights = [
        score.weights[(score.pots >= lo) & ((score.pots < hi) | (hi == edges[-1]))].sum() for lo, hi in zip(edges, edges[1:])
    ]
    pooled = sum(loss * w for (_, loss), w in zip(bands, weights)) / sum(weights)
    assert pooled == pytest.approx(score.loss, rel=1e-5) and sum(n for n, _ in bands) == len(score.pots)
    ties = np.array([200.0] * 3 + [1000.0, 3000.0] + [40000.0] * 10)
    tied = pot_bands(ties, 8)
    assert tied == sorted(set(tied)) and len(tied) < 9  # fewer bands, none empty, none of a pot twice
    from dataclasses import replace as with_

    counts = [n for n, _ in with_(score, pots=ties, weights=np.ones(15), per_situation=np.ones(15)).by_pot(tied)]
    assert sum(counts) == 15 and all(counts)
    assert pot_bands(np.array([500.0, 500.0]), 4) == [500.0, 500.0]
    with pytest.raises(ValueError, match="no situation with a value"):
        pot_bands(np.array([]), 4)


def test_a_promotion_that_fails_midway_changes_nothing_and_leaves_no_debris(river: Path, tmp_path: Path) -> None:
    """Each file was copied to a fixed name beside its target and the manifest written to another; a copy
    that failed left those behind (and a planted link of such a name would have been written through)."""
    import shutil

    cand = tmp_path / "cand"
    shutil.copytree(river / "good", cand)
    (cand / "good.history.json").unlink()
    (cand / "good.history.json").mkdir()  # its copy fails after the network's
    models = river / "models"
    before = {p.name: p.read_bytes() for p in models.iterdir() if p.is_file()}
    assert main(["promote", str(cand / "good.pt"), "--as", "river-x", "--manifest", str(models / "manifest.json"),
                 "--test", str(river / "test"), "--force"]) == 1  # fmt: skip
    assert {p.name: p.read_bytes() for p in models.iterdir()} == before  # every file as it was, nothing beside them


def test_a_linked_network_in_models_is_replaced_not_written_through(river: Path, tmp_path: Path) -> None:
    """Promotion writes the candidate over the link itself, as a rename always did: the file the link pointed
    to (another run's output, with its own manifest) stays as it was."""
    import shutil

    models = river / "models"
    run = tmp_path / "run"
    shutil.copytree(river / "bad", run)
    kept = (run / "bad.pt").read_bytes()
    (models / "river-x.pt").unlink()
    (models / "river-x.pt").symlink_to(run / "bad.pt")
    assert _promote(river, "good/good.pt", "--test", str(river / "test"), "--force") == 0
    assert not (models / "river-x.pt").is_symlink() and (run / "bad.pt").read_bytes() == kept
    assert sha256_of(models / "river-x.pt") == sha256_of(river / "good" / "good.pt")


def test_a_manifest_that_is_missing_or_a_folder_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A mistyped --manifest said "no entry 'river-small' (entries: )", as if the file were an empty manifest."""
    missing = tmp_path / "nope" / "manifest.json"
    for manifest, message in (
        (missing, f"{missing}: no such manifest"),
        (tmp_path, f"{tmp_path}: a folder, not a manifest file"),
    ):
        argv = ["promote", "models/holdem/river-small.pt", "--as", "river-small", "--test", str(tmp_path)]
        assert main([*argv, "--manifest", str(manifest)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"deepstack promote: error: {message}")
    assert not missing.parent.exists()


def test_data_of_another_street_is_named_by_its_street(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``eval nets models/holdem/turn.pt --data RIVERDATA`` said "situations at the start of round 3 (its
    generate.json), not 2": hold'em data is named by its street."""
    from agent.training.datasets import check_data_game

    folder = tmp_path / "river"
    folder.mkdir()
    (folder / "generate.json").write_text(json.dumps({"spec": {"game": "hunl", "round": 3, "seed": 5}}))
    assert main(["eval", "nets", "models/holdem/turn.pt", "--data", str(folder)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"deepstack eval nets: error: {folder}: river situations (its generate.json), not turn situations"]
    with pytest.raises(ValueError, match=r"preflop-aux situations \(its generate.json\), not flop situations$"):
        (folder / "generate.json").write_text(json.dumps({"spec": {"game": "hunl", "round": 0}}))
        check_data_game([folder], "hunl", 1)
    with pytest.raises(ValueError, match=r"situations at the start of round 7 \(its generate.json\), not river situations$"):
        (folder / "generate.json").write_text(json.dumps({"spec": {"game": "hunl", "round": 7}}))
        check_data_game([folder], "hunl", 3)
