"""Value-network pipeline on Leduc: batched data generation, resumable shards, training,
TorchScript export and use as the depth-limit leaves of a re-solve."""

from __future__ import annotations

import json
import math
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from agent.leaves.handnet import HandNetLeafValues
from agent.nets.encoding import board_features, pot_scale
from agent.nets.manifest import load_value_net, sha256_of
from agent.nets.valuenet import NetOnDevices, NetSpec, ValueNet, resolve_precision
from agent.solver.batched import BatchSpot, solve_batch
from agent.solver.handspace import HandSpace
from agent.solver.resolve import SolverConfig, solve_ranges
from agent.solver.tree import FCPA
from agent.training.data_folder import load_shards, shard_files, shard_path
from agent.training.datagen import generate, solve_last_round_batch, solve_situation
from agent.training.generate_spec import GenerateSpec
from agent.training.situations import draw_situation
from agent.training.train import TrainSpec, train
from protocol.gamedef import Game, load_game
from protocol.state import HandState
from tests.conftest import interrupt_when


@pytest.mark.parametrize("name", ["leduc", "leduc-limit"])
def test_batched_solver_agrees_with_the_resolver(name: str) -> None:
    """The batched CFR gives the re-solver's values (same variant and iterations) for each
    situation of a batch that mixes tree shapes and boards."""
    game = load_game(name)
    space = HandSpace(game)
    rng = np.random.default_rng(5)
    config = SolverConfig(iterations=1000, device="cpu", dtype="float64")
    situations = []
    while len(situations) < 3:
        sit = draw_situation(space, 1, rng)
        if sit.pot // 2 < min(game.stack):
            situations.append(sit)
    batched = np.stack(solve_last_round_batch(space, 1, situations, config))
    reference = np.stack([solve_situation(space, 1, s, config) for s in situations])
    # both are 1000-iteration approximations; they differ by < 0.3% of the pot in practice
    assert np.abs(batched - reference).max() < 0.01
    for sit, values in zip(situations, batched):
        valid = space.valid(sit.board)
        assert np.all(values[:, ~valid] == 0)


def test_a_hand_out_of_the_range_gets_the_value_of_playing_it_well(leduc_limit: Game) -> None:
    """A hand a range holds no mass on gets its counterfactual value (its best play against the
    opponent's strategy), as if it held a sliver of the range: the value a depth-limit leaf needs
    for hands the player folded earlier. Averaging its strategy by reach left it uniform, its value
    that of playing at random (a perfect Leduc network agent: 125 instead of 12 mbb/g)."""
    space = HandSpace(leduc_limit)
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(6):
        sit = draw_situation(space, 1, rng)
        valid = space.valid(sit.board)
        r = sit.ranges * valid
        r = r / r.sum(1, keepdims=True)
        hand = int(np.flatnonzero(valid)[int(rng.integers(valid.sum()))])
        sliver, zero = r.copy(), r.copy()
        sliver[0, hand] = 1e-9
        zero[0, hand] = 0.0
        state = HandState.at_round_start(leduc_limit, 1, (sit.pot // 2, sit.pot // 2), sit.board)
        out = solve_batch(space, [BatchSpot(state, sliver), BatchSpot(state, zero)], FCPA, SolverConfig().variant(), 300)
        assert abs(out[1, 0, hand] - out[0, 0, hand]) < 1e-3 * sit.pot, (out[1, 0, hand], out[0, 0, hand])
        checked += 1
    assert checked == 6


def test_batched_values_are_zero_sum_and_match_a_hand_computed_case(leduc_limit: Game) -> None:
    space = HandSpace(leduc_limit)
    rng = np.random.default_rng(2)
    spots = []
    for _ in range(6):
        sit = draw_situation(space, 1, rng)
        r = sit.ranges * space.valid(sit.board)
        spots.append(
            BatchSpot(
                HandState.at_round_start(leduc_limit, 1, (sit.pot // 2, sit.pot // 2), sit.board), r / r.sum(1, keepdims=True)
            )
        )
    out = solve_batch(space, spots, FCPA, SolverConfig().variant(), 300)
    ranges = np.stack([s.ranges for s in spots])
    np.testing.assert_allclose((out * ranges).sum(axis=(1, 2)), 0.0, atol=1e-9)
    # Player 0 holds only the pair (the nuts), player 1 only a card that cannot win: player 1
    # never puts more chips in, so the pair wins exactly the chips in already (contribution x1).
    board = (int(space.cards[0][0]),)
    pair = next(
        i for i in range(space.size) if int(space.cards[i][0]) >> 2 == board[0] >> 2 and int(space.cards[i][0]) != board[0]
    )
    loser = next(
        i
        for i in range(space.size)
        if space.strengths(board)[i] >= 0 and i != pair and space.strengths(board)[i] < space.strengths(board)[pair]
    )
    r = np.zeros((2, space.size))
    r[0, pair] = r[1, loser] = 1.0
    spot = BatchSpot(HandState.at_round_start(leduc_limit, 1, (5, 5), board), r)
    values = solve_batch(space, [spot], FCPA, SolverConfig().variant(), 2000)[0]
    assert values[0, pair] == pytest.approx(5.0, abs=0.02)
    assert values[1, loser] == pytest.approx(-5.0, abs=0.02)


def test_resumed_generation_gives_the_same_shards(tmp_path: Path) -> None:
    spec = GenerateSpec(game="leduc", round=1, situations=12, shard_size=4, seed=3, iterations=40)
    full, resumed = tmp_path / "full", tmp_path / "resumed"
    generate(spec, full, progress=False)
    generate(GenerateSpec(**{**spec.__dict__, "situations": 4}), resumed, progress=False)  # "interrupted" after one shard
    generate(spec, resumed, progress=False)
    for i in range(3):
        with np.load(shard_path(full, i)) as a, np.load(shard_path(resumed, i)) as b:
            for key in ("inputs", "targets", "masks"):
                np.testing.assert_array_equal(a[key], b[key])


def test_a_shard_left_half_written_is_never_read(tmp_path: Path) -> None:
    """A run killed while writing a shard (Ctrl-C, a lost machine) leaves its temporary file: it is
    hidden, neither read as data nor counted, and resuming writes the shard itself."""
    spec = GenerateSpec(game="leduc", round=1, situations=12, shard_size=4, seed=3, iterations=40)
    full, resumed = tmp_path / "full", tmp_path / "resumed"
    generate(spec, full, progress=False)
    assert not [p.name for p in full.iterdir() if p.name.startswith(".")]  # nothing left behind
    generate(GenerateSpec(**{**spec.__dict__, "situations": 4}), resumed, progress=False)
    (resumed / ".shard-00001.npz").write_bytes(b"PK\x03\x04 cut short")  # this code's temporary name
    (resumed / "shard-00002.tmp.npz").write_bytes(b"PK\x03\x04 cut short")  # older code's
    assert shard_files(resumed) == [shard_path(resumed, 0)]
    assert sum(len(part["inputs"]) for part in load_shards(resumed)) == 4
    generate(spec, resumed, progress=False)
    assert shard_files(resumed) == [shard_path(resumed, i) for i in range(3)]
    for i in range(3):
        with np.load(shard_path(full, i)) as a, np.load(shard_path(resumed, i)) as b:
            np.testing.assert_array_equal(a["targets"], b["targets"])


def test_more_situations_complete_a_short_last_shard(tmp_path: Path) -> None:
    """7 situations in shards of 5, then 12: the short shard of 2 is rewritten whole (5), so the
    folder equals one run of 12; a damaged shard is written again, and read it is named."""
    spec = GenerateSpec(game="leduc", round=1, situations=12, shard_size=5, seed=3, iterations=20)
    full, extended = tmp_path / "full", tmp_path / "extended"
    generate(spec, full, progress=False)
    generate(replace(spec, situations=7), extended, progress=False)
    generate(spec, extended, progress=False)
    assert [len(part["inputs"]) for part in load_shards(extended)] == [5, 5, 2]
    for i in range(3):
        with np.load(shard_path(full, i)) as a, np.load(shard_path(extended, i)) as b:
            np.testing.assert_array_equal(a["targets"], b["targets"])
    shard_path(extended, 1).write_bytes(shard_path(extended, 1).read_bytes()[:100])  # cut short
    with pytest.raises(ValueError, match=r"shard-00001.npz: unreadable shard"):
        list(load_shards(extended))
    generate(spec, extended, progress=False)
    with np.load(shard_path(full, 1)) as a, np.load(shard_path(extended, 1)) as b:
        np.testing.assert_array_equal(a["targets"], b["targets"])


def test_a_run_that_failed_before_its_first_shard_does_not_lock_its_folder(tmp_path: Path) -> None:
    """generate.json is written before the first shard: without shards it records no data, and a
    corrected command (other settings) runs."""
    out = tmp_path / "data"
    spec = GenerateSpec(game="leduc", round=1, situations=4, shard_size=4, seed=3, iterations=20)
    generate(spec, out, progress=False)
    shard_path(out, 0).unlink()  # as a run that failed in its first shard leaves it
    generate(replace(spec, iterations=10), out, progress=False)
    assert json.loads((out / "generate.json").read_text())["spec"]["iterations"] == 10
    assert shard_files(out) == [shard_path(out, 0)]


def test_a_hold_em_hand_out_of_both_sparse_ranges_gets_a_value_not_0() -> None:
    """One at a time (the CPU's default), a sparse situation was solved over the hands in a range
    only: the hands in neither (about a quarter with --sparse 1) came back as exactly 0 and were
    averaged into their buckets' targets. They are solved like every other hand now, as a forest
    solves them."""
    from agent.training.datagen import solve_situation
    from agent.training.situations import draw_situation

    game = load_game("hunl")
    space = HandSpace(game)
    rng = np.random.default_rng(5)
    sit = draw_situation(space, 3, rng, sparse=1.0)
    while sit.pot >= 2 * game.stack[0]:  # both all-in: valued without a solve
        sit = draw_situation(space, 3, rng, sparse=1.0)
    valid = space.valid(sit.board)
    neither = valid & (sit.ranges[0] == 0) & (sit.ranges[1] == 0)
    assert neither.sum() > 100
    values = solve_situation(
        space, 3, sit, GenerateSpec(game="hunl", round=3, situations=1, iterations=10).solver_config("float32")
    )
    assert (np.abs(values[:, neither]) > 0).mean() > 0.9


def test_sparse_situations_leave_hands_out_and_the_rest_of_the_data_as_it_was(tmp_path: Path) -> None:
    """--sparse 1: every situation's ranges hold no mass on some possible hands (what a network meets
    at re-solving leaves), the boards and pots are the draws without it; --sparse 0 draws what
    data made before the option drew."""
    from agent.cli.main import main

    space = HandSpace(load_game("leduc-limit"))
    plain = [draw_situation(space, 1, np.random.default_rng([3, 0]))]
    assert main(["generate", "--game", "leduc-limit", "--situations", "8", "--shard-size", "8", "--iterations", "20",
                 "--seed", "3", "--sparse", "1", "--out", str(tmp_path / "s")]) == 0  # fmt: skip
    with np.load(shard_path(tmp_path / "s", 0)) as shard:
        x, m = shard["inputs"], shard["masks"]
    h = space.size
    ranges = x[:, 1 : 1 + 2 * h]
    assert ((ranges == 0) & (m > 0)).any(axis=1).all()  # some possible hand left out in each
    assert np.allclose(ranges[:, :h].sum(1), 1) and np.allclose(ranges[:, h:].sum(1), 1)
    first = plain[0]  # the first situation draws its board and pot before anything sparse draws
    assert x[0, 0] == pytest.approx(first.pot / pot_scale(space.game))
    np.testing.assert_array_equal(x[0, 1 + 2 * h :], board_features(space, first.board))
    assert not np.allclose(
        ranges[0, :h], first.ranges[0] * space.valid(first.board) / (first.ranges[0] * space.valid(first.board)).sum()
    )
    assert (
        main(["generate", "--game", "leduc-limit", "--situations", "8", "--out", str(tmp_path / "bad"), "--sparse", "1.5"]) == 2
    )
    assert not (tmp_path / "bad").exists()


def test_a_data_folder_resumes_only_with_its_own_settings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Resuming with other solver settings would mix two kinds of targets in one folder: refused
    (by the CLI with a message and exit 2), nothing written; more situations extend it, and
    every run is kept in generate.json."""
    from agent.cli.main import main
    from agent.training.data_folder import DataFolderError

    out = tmp_path / "data"
    spec = GenerateSpec(game="leduc", round=1, situations=4, shard_size=4, seed=3, iterations=20)
    generate(spec, out, progress=False, command="first")
    before = (out / "generate.json").read_text()
    with pytest.raises(DataFolderError, match=r"iterations 20 -> 30"):
        generate(GenerateSpec(**{**spec.__dict__, "situations": 8, "iterations": 30}), out, progress=False)
    assert (out / "generate.json").read_text() == before and not shard_path(out, 1).exists()
    # a record of another shape was taken for none (null) or was a traceback (a list, a spec that is a number)
    for damaged in ("null", "[1]", '{"spec": 5}'):
        (out / "generate.json").write_text(damaged)
        with pytest.raises(DataFolderError, match="generate.json: not a generate record"):
            generate(GenerateSpec(**{**spec.__dict__, "situations": 8, "iterations": 30}), out, progress=False)
        assert not shard_path(out, 1).exists()
    (out / "generate.json").write_text(before)
    code = main(
        [
            "generate",
            "--game",
            "leduc",
            "--round",
            "1",
            "--situations",
            "8",
            "--shard-size",
            "4",
            "--seed",
            "4",
            "--iterations",
            "20",
            "--out",
            str(out),
        ]
    )
    assert code == 2 and "seed 3 -> 4" in capsys.readouterr().err and not shard_path(out, 1).exists()
    generate(GenerateSpec(**{**spec.__dict__, "situations": 8}), out, progress=False, command="second")
    record = json.loads((out / "generate.json").read_text())
    assert [r["command"] for r in record["runs"]] == ["first", "second"]
    assert record["command"] == "first" and record["spec"]["situations"] == 8 and shard_path(out, 1).exists()
    generate(GenerateSpec(**{**spec.__dict__, "situations": 4}), out, progress=False, command="third")  # adds nothing
    record = json.loads((out / "generate.json").read_text())
    assert record["spec"]["situations"] == 8 and [r["situations"] for r in record["runs"]] == [4, 8, 4]
    # a folder of shards without its record is checked against the shards' own metadata
    (out / "generate.json").unlink()
    with pytest.raises(DataFolderError, match="--shard-size 4 -> 2"):
        generate(GenerateSpec(**{**spec.__dict__, "shard_size": 2}), out, progress=False)
    with pytest.raises(DataFolderError, match=r"round \(--round or --street\) 1 -> 2; alternating updates \(--updates\)"):
        generate(GenerateSpec(**{**spec.__dict__, "round": 2, "alternating": False}), out, progress=False)


def test_a_data_folder_from_before_the_dcfr_fields_resumes_with_their_old_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Records written before the DCFR parameters were recorded hold data solved with DCFR's
    published (1.5, 0, 2): they refuse the generation default and resume with those."""
    from agent.cli.main import main
    from agent.training.data_folder import DataFolderError
    from agent.training.generate_spec import parse_dcfr

    out = tmp_path / "data"
    spec = GenerateSpec(game="leduc", round=1, situations=4, shard_size=4, seed=3, iterations=5, dcfr_beta=0.0, dcfr_gamma=2.0)
    generate(spec, out, progress=False)
    record = json.loads((out / "generate.json").read_text())
    for key in ("dcfr_alpha", "dcfr_beta", "dcfr_gamma"):
        del record["spec"][key]
    (out / "generate.json").write_text(json.dumps(record))
    with pytest.raises(DataFolderError, match=r"dcfr_beta 0.0 -> '-inf'; dcfr_gamma 2.0 -> 4.0"):
        generate(GenerateSpec(game="leduc", round=1, situations=8, shard_size=4, seed=3, iterations=5), out, progress=False)
    assert not shard_path(out, 1).exists()
    assert (
        main(
            [
                "generate",
                "--game",
                "leduc",
                "--round",
                "1",
                "--situations",
                "8",
                "--shard-size",
                "4",
                "--seed",
                "3",
                "--iterations",
                "5",
                "--dcfr",
                "1.5,0,2",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert shard_path(out, 1).exists()
    assert shard_path(out, 1).exists()
    fresh = tmp_path / "fresh"
    generate(GenerateSpec(game="leduc", round=1, situations=2, shard_size=2, seed=3, iterations=5), fresh, progress=False)

    def strict(text: str) -> dict:
        return json.loads(text, parse_constant=lambda c: pytest.fail(f"not JSON: {c}"))

    assert strict((fresh / "generate.json").read_text())["spec"]["dcfr_beta"] == "-inf"
    with np.load(shard_path(fresh, 0)) as z:
        assert strict(str(z["meta"]))["spec"]["dcfr_gamma"] == 4.0
    generate(GenerateSpec(game="leduc", round=1, situations=4, shard_size=2, seed=3, iterations=5), fresh, progress=False)
    assert parse_dcfr("1.5,-inf,4") == (1.5, -math.inf, 4.0)
    for bad in ("1.5,0", "a,b,c", "1.5,inf,2", "-1,0,2", "1.5,0,nan"):
        with pytest.raises(ValueError):
            parse_dcfr(bad)
    assert (
        main(
            ["generate", "--game", "leduc", "--round", "1", "--situations", "2", "--dcfr", "1.5,0", "--out", str(tmp_path / "x")]
        )
        == 2
    )
    assert "--dcfr: DCFR parameters must be ALPHA,BETA,GAMMA" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_zero_sum_layer() -> None:
    net = ValueNet(NetSpec(buckets=6, extra=6, hidden=16, layers=2))
    x = torch.rand(5, 1 + 12 + 6)
    x[:, 1:7] /= x[:, 1:7].sum(1, keepdim=True)
    x[:, 7:13] /= x[:, 7:13].sum(1, keepdim=True)
    out = net(x)
    weighted = (x[:, 1:13] * out).sum(dim=1)
    torch.testing.assert_close(weighted, torch.zeros(5), atol=1e-6, rtol=0)


def test_tiny_generate_train_export_load_and_resolve(tmp_path: Path, leduc: Game) -> None:
    """Seconds-long end to end: solved situations -> trained net -> TorchScript + manifest ->
    checked load -> depth-limit leaves of a round-1 re-solve."""
    data, out = tmp_path / "data", tmp_path / "models"
    generate(GenerateSpec(game="leduc", round=1, situations=64, shard_size=32, seed=1, iterations=60), data, progress=False)
    space = HandSpace(leduc)
    stats = train(
        data,
        out,
        buckets=space.size,
        extra=len(space.deck),
        spec=TrainSpec(epochs=6, batch_size=16, hidden=32, layers=2, lr_drop_epoch=4),
        model_name="tiny",
        progress=False,
        canonical_space=space,
    )
    history = __import__("json").loads((out / "tiny.history.json").read_text())
    assert history[-1]["train"] < history[0]["train"]
    assert (out / "tiny.loss.png").stat().st_size > 0
    net, entry = load_value_net(out / "tiny.pt")
    assert entry["training_situations"] + entry["validation_situations"] == 64
    assert entry["validation_loss"] == pytest.approx(stats["validation_loss"])
    assert entry["data"]["spec"]["situations"] == 64 and entry["data"]["command"]
    leaf = HandNetLeafValues(net, space, canonical=True)
    uniform = np.ones(space.size) / space.size
    sol = solve_ranges(
        HandState.initial(leduc),
        [uniform, uniform],
        FCPA,
        SolverConfig(iterations=30, device="cpu", dtype="float64"),
        space=space,
        last_round=0,
        leaf_values=leaf,
    )
    strategy = sol.root_strategy()
    assert np.all(np.isfinite(strategy))
    np.testing.assert_allclose(strategy.sum(axis=0), 1.0, atol=1e-9)


def test_weight_decay_shrinks_the_weights(tmp_path: Path, leduc: Game) -> None:
    """--weight-decay trains with AdamW: the same run with a large decay ends with smaller
    weights than plain Adam's (0, the default, keeps every earlier network's recipe)."""
    data = tmp_path / "data"
    generate(GenerateSpec(game="leduc", round=1, situations=32, shard_size=32, seed=1, iterations=30), data, progress=False)
    space = HandSpace(leduc)
    norms = []
    for decay in (0.0, 50.0):
        out = tmp_path / f"wd{decay}"
        spec = TrainSpec(epochs=4, batch_size=8, hidden=16, layers=2, lr_drop_epoch=3, weight_decay=decay)
        train(data, out, buckets=space.size, extra=len(space.deck), spec=spec, model_name="tiny", progress=False)
        net, _ = load_value_net(out / "tiny.pt")
        norms.append(sum(float(p.detach().norm()) for name, p in net.named_parameters() if "weight" in name))
    assert norms[1] < 0.9 * norms[0]


def test_training_starts_from_another_networks_weights(tmp_path: Path, leduc: Game) -> None:
    """--init: a run starts where a network of the same shape stopped (its manifest entry says
    from which); a network of another shape is refused, naming the file."""
    data = tmp_path / "data"
    generate(GenerateSpec(game="leduc", round=1, situations=32, shard_size=32, seed=1, iterations=30), data, progress=False)
    space = HandSpace(leduc)
    spec = TrainSpec(epochs=3, batch_size=8, hidden=16, layers=2, lr_drop_epoch=2)
    kw = {"buckets": space.size, "extra": len(space.deck), "progress": False}
    first = train(data, tmp_path / "a", spec=spec, model_name="tiny", **kw)
    frozen = TrainSpec(epochs=1, batch_size=8, hidden=16, layers=2, lr=1e-12, lr_late=1e-12)
    again = train(data, tmp_path / "b", spec=frozen, model_name="tiny", init=tmp_path / "a" / "tiny.pt", **kw)
    assert again["validation_loss"] == pytest.approx(first["validation_loss"], rel=1e-6)
    entry = load_value_net(tmp_path / "b" / "tiny.pt")[1]
    assert entry["initialized_from"]["sha256"] == load_value_net(tmp_path / "a" / "tiny.pt")[1]["sha256"]
    fresh = train(data, tmp_path / "c", spec=frozen, model_name="tiny", **kw)
    assert fresh["validation_loss"] != pytest.approx(first["validation_loss"], rel=1e-3)
    with pytest.raises(ValueError, match="tiny.pt"):
        train(data, tmp_path / "d", spec=replace(frozen, hidden=8), model_name="tiny", init=tmp_path / "a" / "tiny.pt", **kw)
    # an averaged network (the shipped turn network is one) starts a run from its first member
    from agent.training.ensemble import build_ensemble

    ens = build_ensemble([tmp_path / "a" / "tiny.pt", tmp_path / "c" / "tiny.pt"], tmp_path / "e" / "ens.pt", "ens")
    from_mean = train(data, tmp_path / "f", spec=frozen, model_name="tiny", init=ens, **kw)
    assert from_mean["validation_loss"] == pytest.approx(first["validation_loss"], rel=1e-6)
    record = load_value_net(tmp_path / "f" / "tiny.pt")[1]["initialized_from"]
    assert record["member"] == 0 and record["path"] == str(ens)
    assert record["sha256"] == load_value_net(tmp_path / "a" / "tiny.pt")[1]["sha256"]


def test_a_log_pot_network_sees_the_pots_logarithm_and_its_entry_says_so(
    tmp_path: Path, leduc: Game, capsys: pytest.CaptureFixture[str]
) -> None:
    """--pot log: the body's first layer takes the pot's logarithm after the row (pots of 1% and 4% of the
    stacks are as far apart as 10% and 40%), the manifest's ``net`` says so, a linear network's entry is
    what it was before the option (the shipped entries compare equal), and --init across the two is refused."""
    with pytest.raises(ValueError, match="pot feature 'sqrt' is not one of linear, log"):
        NetSpec(buckets=3, pot="sqrt")
    data = tmp_path / "data"
    generate(GenerateSpec(game="leduc", round=1, situations=32, shard_size=32, seed=1, iterations=30), data, progress=False)
    space = HandSpace(leduc)
    kw = {"buckets": space.size, "extra": len(space.deck), "progress": False}
    linear = TrainSpec(epochs=2, batch_size=8, hidden=16, layers=2)
    train(data, tmp_path / "lin", spec=linear, model_name="tiny", **kw)
    train(data, tmp_path / "log", spec=replace(linear, pot="log"), model_name="tiny", **kw)
    lin_net, lin_entry = load_value_net(tmp_path / "lin" / "tiny.pt")
    log_net, log_entry = load_value_net(tmp_path / "log" / "tiny.pt")
    assert lin_entry["net"] == {"buckets": space.size, "extra": len(space.deck), "hidden": 16, "layers": 2}
    assert log_entry["net"] == {**lin_entry["net"], "pot": "log"}
    rows = 1 + 2 * space.size + len(space.deck)
    first = {name: p.shape for name, p in log_net.named_parameters()}["body.0.weight"]
    assert first == (16, rows + 1) and {n: p.shape for n, p in lin_net.named_parameters()}["body.0.weight"] == (16, rows)
    # the scripted network computes the feature itself: the callers' rows stay as they were
    x = torch.rand(4, rows)
    x[:, 0] = torch.tensor([0.01, 0.04, 0.1, 0.4])
    with torch.no_grad():
        raw = log_net.body(torch.cat([x, x[:, :1].log()], dim=1))
        ranges = x[:, 1 : 1 + 2 * space.size]
        expected = raw - 0.5 * (ranges * raw).sum(dim=1, keepdim=True)
        torch.testing.assert_close(log_net(x), expected)
    with pytest.raises(ValueError, match=r"lin/tiny.pt: --init network is .*'layers': 2}, this run trains .*'pot': 'log'"):
        train(data, tmp_path / "x", spec=replace(linear, pot="log"), model_name="tiny", init=tmp_path / "lin" / "tiny.pt", **kw)
    # a linear run's checkpoint is written as before the option (so one from before it resumes); a log run's
    # checkpoint left in the way of a linear run is named for what differs
    lin_ckpt, log_ckpt = (torch.load(tmp_path / d / "tiny.ckpt", weights_only=False) for d in ("lin", "log"))
    assert "pot" not in lin_ckpt["spec"] and "pot" not in lin_ckpt["net"] and log_ckpt["net"]["pot"] == "log"
    capsys.readouterr()
    train(data, tmp_path / "log", spec=linear, model_name="tiny", **kw)
    assert "(pot log -> linear); training from the start" in capsys.readouterr().err
    assert "pot" not in load_value_net(tmp_path / "log" / "tiny.pt")[1]["net"]


def test_training_resumes_its_own_run_and_restarts_on_other_data(
    tmp_path: Path, leduc: Game, capsys: pytest.CaptureFixture[str]
) -> None:
    """The checkpoint is picked up by the same command on the same data only: retraining on
    more data with the same command (the way the shipped networks are improved) starts afresh."""
    import json

    data, out = tmp_path / "data", tmp_path / "models"
    spec = GenerateSpec(game="leduc", round=1, situations=32, shard_size=16, seed=1, iterations=30)
    generate(GenerateSpec(**{**spec.__dict__, "situations": 16}), data, progress=False)
    space = HandSpace(leduc)
    tspec = TrainSpec(epochs=3, batch_size=8, hidden=16, layers=2, lr_drop_epoch=2)

    def run() -> list[dict]:
        train(data, out, buckets=space.size, extra=len(space.deck), spec=tspec, model_name="tiny", progress=False)
        return json.loads((out / "tiny.history.json").read_text())

    first = run()
    assert run() == first and "resuming after epoch 3" in capsys.readouterr().err  # finished: nothing left to do
    assert not list(out.glob(".*"))  # the checkpoint's temporary file is renamed, never left
    good = (out / "tiny.ckpt").read_bytes()
    (out / "tiny.ckpt").write_bytes(good[: len(good) // 2])  # cut short (a run killed by older code)
    assert run() == first  # trained again from the start: the same seed, the same run
    err = capsys.readouterr().err
    assert "tiny.ckpt: unreadable checkpoint" in err and "training from the start" in err and "other data" not in err
    generate(spec, data, progress=False)  # the same command, run longer: 32 situations
    again = run()
    assert "other data or settings (the data (or the --init network)); training from the start" in capsys.readouterr().err
    assert len(again) == 3 and again[0]["train"] != first[0]["train"]
    assert (
        load_value_net(out / "tiny.pt")[1]["training_situations"] + load_value_net(out / "tiny.pt")[1]["validation_situations"]
        == 32
    )
    tspec = TrainSpec(epochs=4, batch_size=8, hidden=16, layers=2, lr_drop_epoch=2)  # and the settings are named
    run()
    assert "other data or settings (epochs 3 -> 4); training from the start" in capsys.readouterr().err
    tspec = TrainSpec(epochs=4, batch_size=8, hidden=12, layers=2, lr_drop_epoch=2)
    run()  # the width is in the run's settings and the network's: named once
    assert "other data or settings (hidden 16 -> 12); training from the start" in capsys.readouterr().err


def test_an_interrupted_then_resumed_run_trains_the_network_of_one_run(
    tmp_path: Path, leduc: Game, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after its checkpoint of epoch 10, the run resumed goes on with the batch orders of
    epochs 11 and 12 (not epoch 1's again): the same history and weights as one run."""
    import agent.training.train as train_module

    data = tmp_path / "data"
    generate(GenerateSpec(game="leduc", round=1, situations=24, shard_size=24, seed=1, iterations=20), data, progress=False)
    space = HandSpace(leduc)
    tspec = TrainSpec(epochs=12, batch_size=8, hidden=8, layers=2, lr_drop_epoch=11)
    kw = {"buckets": space.size, "extra": len(space.deck), "spec": tspec, "model_name": "tiny", "progress": False}
    train(data, tmp_path / "one", **kw)
    real, calls = train_module.masked_huber, []

    def killed_in_epoch_11(*args: torch.Tensor) -> torch.Tensor:
        calls.append(1)
        if len(calls) > 10 * 4:  # 3 batches and a validation per epoch
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(train_module, "masked_huber", killed_in_epoch_11)
    with pytest.raises(KeyboardInterrupt):
        train(data, tmp_path / "two", **kw)
    monkeypatch.setattr(train_module, "masked_huber", real)
    train(data, tmp_path / "two", **kw)
    history = [json.loads((tmp_path / d / "tiny.history.json").read_text()) for d in ("one", "two")]
    assert history[0] == history[1]
    one, two = (load_value_net(tmp_path / d / "tiny.pt")[0].state_dict() for d in ("one", "two"))
    for key in one:
        torch.testing.assert_close(one[key], two[key], rtol=0, atol=0)


def test_training_refuses_data_of_another_game_and_runs_that_cannot_train(
    tmp_path: Path, leduc: Game, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rows of no-limit Leduc are as wide as limit Leduc's: the folder's record is what tells; no
    epoch or a diverging run is one line naming the problem, never a traceback."""
    from agent.cli.main import main

    data, out = tmp_path / "data", tmp_path / "models"
    generate(GenerateSpec(game="leduc", round=1, situations=16, shard_size=16, seed=1, iterations=20), data, progress=False)
    base = ["train", "--data", str(data), "--out", str(out), "--name", "x", "--hidden", "8", "--layers", "2"]
    assert main([*base, "--game", "leduc-limit", "--epochs", "1"]) == 2
    assert f"{data}: data of the game 'leduc' (its generate.json), not 'leduc-limit'" in capsys.readouterr().err
    assert not (out / "x.pt").exists()
    copied = tmp_path / "copied"  # shards copied by hand, without generate.json: their record tells
    copied.mkdir()
    for shard in data.glob("shard-*.npz"):
        shutil.copy(shard, copied / shard.name)
    assert main([*base, "--game", "leduc-limit", "--epochs", "1", "--data", str(copied)]) == 2
    assert f"{copied}: data of the game 'leduc' (its first shard's record), not 'leduc-limit'" in capsys.readouterr().err
    assert main([*base, "--game", "leduc", "--epochs", "0"]) == 2
    assert "--epochs and --batch-size must be at least 1" in capsys.readouterr().err
    assert main([*base, "--game", "leduc", "--epochs", "2", "--lr", "1e30"]) == 2
    err = capsys.readouterr().err  # after the progress bars, one line
    assert err.strip().splitlines()[-1].startswith("deepstack train: error: x: the validation loss is nan after epoch 1")
    assert "diverged" in err and "Traceback" not in err and not (out / "x.pt").exists()
    space = HandSpace(leduc)
    with pytest.raises(ValueError, match="epochs must be at least 1"):
        train(data, out, space.size, len(space.deck), TrainSpec(epochs=0), "x", progress=False)
    for option in (["--hidden", "0"], ["--layers", "-1"], ["--weight-decay", "-1"], ["--lr-drop-epoch", "-5"]):
        assert main([*base, "--game", "leduc", "--epochs", "1", *option]) == 2  # no network worth training
        err = capsys.readouterr().err
        assert f"{option[0]} {option[1]}" in err and "Traceback" not in err and not (out / "x.pt").exists()
    # one situation: all of it held out, nothing to train on (the random start was exported as trained)
    one = tmp_path / "one"
    generate(GenerateSpec(game="leduc", round=1, situations=1, shard_size=1, seed=1, iterations=20), one, progress=False)
    assert main(["train", "--data", str(one), "--out", str(out), "--name", "x", "--game", "leduc", "--epochs", "1"]) == 2
    assert "1 situation(s), too few to train on (at least 2" in capsys.readouterr().err
    assert not (out / "x.pt").exists()


def test_a_manifest_is_replaced_whole_or_not_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """register_model writes a temporary file and renames it: a failure before the rename leaves
    the manifest as it was."""
    import os

    from agent.nets.manifest import register_model

    model = tmp_path / "a.pt"
    model.write_bytes(b"x")
    manifest = register_model(model, "a")
    before = manifest.read_text()

    def failing_replace(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        register_model(model, "b")
    assert manifest.read_text() == before


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ("hello", "entry 'a' is not an object"),
        ({"path": "a.pt"}, "entry 'a' has no 'sha256'"),
        ({"path": 5, "sha256": "ab"}, "entry 'a' has no 'path'"),
        ({"path": "a.pt", "sha256": "ab", "net": "x"}, "entry 'a': 'net' must be an object"),
    ],
)
def test_a_malformed_manifest_entry_is_named_not_a_traceback(tmp_path: Path, entry: object, said: str) -> None:
    """KeyError, TypeError or AttributeError reached the user from a hand-edited manifest."""
    from agent.nets.manifest import ModelError

    (tmp_path / "a.pt").write_bytes(b"x")
    (tmp_path / "manifest.json").write_text(json.dumps({"models": {"a": entry}}))
    with pytest.raises(ModelError, match=f"manifest.json: {said}"):
        load_value_net(tmp_path / "a.pt")


def test_a_manifest_that_only_sits_above_the_output_is_not_changed(tmp_path: Path) -> None:
    """`train` and `campaign` recorded their networks in any manifest.json of a folder above --out
    (the current folder's, left by an earlier `ensemble --out my-ens.pt`); a copy of models/ is
    still written in its own top-level manifest."""
    import shutil

    from agent.nets.manifest import MODELS_DIR, read_manifest, register_model

    stray = tmp_path / "manifest.json"
    stray.write_text(json.dumps({"models": {"my-ens": {"path": "my-ens.pt", "sha256": "ab"}}}))
    before = stray.read_text()
    (tmp_path / "runs" / "c").mkdir(parents=True)
    net = tmp_path / "runs" / "c" / "river.pt"
    net.write_bytes(b"x")
    assert register_model(net, "river") == net.parent / "manifest.json"
    assert stray.read_text() == before
    copy = tmp_path / "copy" / "models"
    shutil.copytree(MODELS_DIR, copy, ignore=shutil.ignore_patterns("*.pt", "*.npz", "*.pkl", "*.png", "__pycache__"))
    (copy / "leduc" / "new.pt").write_bytes(b"y")
    assert register_model(copy / "leduc" / "new.pt", "new") == copy / "manifest.json"
    assert read_manifest(copy / "manifest.json")["models"]["new"]["path"] == "leduc/new.pt"


def test_a_folder_given_as_a_network_is_named(tmp_path: Path) -> None:
    from agent.nets.manifest import ModelError

    (tmp_path / "net.pt").mkdir()
    with pytest.raises(ModelError, match="net.pt: is a folder, not a model file"):
        load_value_net(tmp_path / "net.pt")


def test_training_pools_folders_of_different_seeds_and_refuses_shared_situations(
    tmp_path: Path, leduc: Game, capsys: pytest.CaptureFixture[str]
) -> None:
    """More data for a shipped network comes from new generation folders (another seed); a
    folder drawn with the same seed holds the same situations and would leak them into the
    validation split, so it is refused."""
    from agent.cli.main import main

    a, b, same, out = tmp_path / "a", tmp_path / "b", tmp_path / "same", tmp_path / "models"
    generate(GenerateSpec(game="leduc", round=1, situations=16, shard_size=8, seed=1, iterations=20), a, progress=False)
    generate(GenerateSpec(game="leduc", round=1, situations=8, shard_size=8, seed=2, iterations=20), b, progress=False)
    generate(GenerateSpec(game="leduc", round=1, situations=8, shard_size=8, seed=1, iterations=30), same, progress=False)
    space = HandSpace(leduc)
    tspec = TrainSpec(epochs=2, batch_size=8, hidden=16, layers=2, lr_drop_epoch=1)
    stats = train([a, b], out, buckets=space.size, extra=len(space.deck), spec=tspec, model_name="pooled", progress=False)
    assert stats["situations"] == 24
    entry = load_value_net(out / "pooled.pt")[1]
    assert entry["training_situations"] + entry["validation_situations"] == 24
    folders = entry["data"]["folders"]
    assert [f["folder"] for f in folders] == [str(a), str(b)] and [f["spec"]["seed"] for f in folders] == [1, 2]
    assert all(f["command"] for f in folders)
    # one folder keeps the manifest's one-folder form
    train(a, out, buckets=space.size, extra=len(space.deck), spec=tspec, model_name="single", progress=False)
    assert load_value_net(out / "single.pt")[1]["data"]["spec"]["seed"] == 1
    # one seed: refused from the folders' records, before any row is read ...
    with pytest.raises(ValueError, match="generated with seed 1, as .*a was"):
        train([a, same], out, buckets=space.size, extra=len(space.deck), spec=tspec, model_name="leak", progress=False)
    assert not (out / "leak.pt").exists()
    assert (
        main(["train", "--game", "leduc", "--data", str(a), str(same), "--out", str(out), "--name", "leak", "--epochs", "1"]) == 2
    )
    assert "another --seed" in capsys.readouterr().err
    # ... and row by row where a folder has no record
    (same / "generate.json").unlink()
    with pytest.raises(ValueError, match=r"holds \d+ situations that .*a holds too"):
        train([a, same], out, buckets=space.size, extra=len(space.deck), spec=tspec, model_name="leak", progress=False)
    assert not (out / "leak.pt").exists()
    with pytest.raises(ValueError, match="given twice"):
        train(
            [a, tmp_path / "." / "a"], out, buckets=space.size, extra=len(space.deck), spec=tspec, model_name="x", progress=False
        )
    limit = tmp_path / "limit"  # rows as wide as no-limit Leduc's, values of another game
    generate(GenerateSpec(game="leduc-limit", round=1, situations=8, shard_size=8, seed=3, iterations=20), limit, progress=False)
    with pytest.raises(ValueError, match="not data of the same network as .*game 'leduc' there, 'leduc-limit' here"):
        train([a, limit], out, buckets=space.size, extra=len(space.deck), spec=tspec, model_name="x", progress=False)
    assert main(["train", "--game", "leduc", "--data", str(a), str(tmp_path / "none"), "--out", str(out), "--name", "x"]) == 2
    assert f"{tmp_path / 'none'}: no such folder" in capsys.readouterr().err


def test_bench_generate_prints_json_rows(capsys: pytest.CaptureFixture[str]) -> None:
    from agent.cli.main import main

    assert main(["bench", "generate", "--street", "leduc", "--leduc-situations", "20", "--iterations", "20"]) == 0
    rows = [__import__("json").loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["mode"] for r in rows} == {"batched", "one-per-solver-call"}
    for r in rows:
        assert r["bench"] == "generate.leduc" and r["unit"] == "situations/s" and r["impl"] == "ours" and r["value"] > 0
        assert {"device", "threads", "iterations"} <= r.keys()
    assert main(["bench", "generate", "--iterations", "0"]) == 2
    capsys.readouterr()
    # a network a row needs is checked before any row runs, an argument error (it was exit 1 after the others)
    argv = ["bench", "generate", "--street", "leduc", "--street", "preflop-aux", "--flop-net", "models/holdem/no-such-flop.pt"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err == "deepstack bench generate: error: --flop-net: models/holdem/no-such-flop.pt: model file is missing\n"
    assert captured.out == ""
    assert main(["bench", "generate", "--street", "flop", "--turn-net", "models/holdem/flop.pt"]) == 2
    assert "error: --turn-net: models/holdem/flop.pt: this needs the turn network" in capsys.readouterr().err


def test_bench_generate_turn_row_side_by_side(capsys: pytest.CaptureFixture[str]) -> None:
    """generate.turn with two processes at once: their own draws, their rates summed, every
    draw (both-all-in ones too) timed."""
    from agent.cli.main import main

    assert (
        main(["bench", "generate", "--street", "turn", "--turn-situations", "2", "--turn-iterations", "2", "--processes", "2"])
        == 0
    )
    row = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert row["bench"] == "generate.turn" and row["impl"] == "ours" and row["processes"] == 2 and row["threads"] == 1
    assert row["situations"] + row["allin_draws"] == 4 and len(row["rate_per_process"]) == 2
    assert row["value"] == pytest.approx(sum(row["rate_per_process"]), rel=1e-3) and row["rate_all_draws"] > 0
    assert len(row["seconds_per_situation"]) == len(row["pots"]) == row["situations"]
    assert main(["bench", "generate", "--street", "turn", "--processes", "0"]) == 2
    capsys.readouterr()
    # DCFR rows name their parameters as text (strict JSON: no -Infinity)
    assert (
        main(
            [
                "bench",
                "generate",
                "--street",
                "turn",
                "--turn-situations",
                "1",
                "--turn-iterations",
                "2",
                "--turn-algorithm",
                "dcfr",
            ]
        )
        == 0
    )
    line = capsys.readouterr().out.splitlines()[-1]
    assert json.loads(line, parse_constant=lambda c: pytest.fail(f"not JSON: {c}"))["dcfr"] == "1.5,-inf,4"
    assert main(["bench", "generate", "--street", "turn", "--dcfr", "1,2"]) == 2
    assert "--dcfr" in capsys.readouterr().err


def test_tiny_holdem_turn_pipeline(tmp_path: Path, hunl: Game, capsys: pytest.CaptureFixture[str]) -> None:
    """Turn situations (full 1326-hand ranges, solved to the end) -> a bucketed turn network
    trained through the CLI -> checked load -> the depth-limit leaves of a flop re-solve."""
    from agent.bots.config import HoldemModels
    from agent.bots.settings import data_file
    from agent.cli.main import main
    from agent.leaves.holdem import BucketNetLeafValues
    from agent.nets.buckets import BucketTable

    data, out = tmp_path / "turn", tmp_path / "models"
    assert (
        main(
            [
                "generate",
                "--game",
                "hunl",
                "--street",
                "turn",
                "--situations",
                "4",
                "--shard-size",
                "2",
                "--iterations",
                "8",
                "--out",
                str(data),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "train",
                "--game",
                "hunl",
                "--street",
                "turn",
                "--data",
                str(data),
                "--out",
                str(out),
                "--name",
                "turn",
                "--epochs",
                "2",
                "--hidden",
                "16",
                "--layers",
                "2",
                "--batch-size",
                "2",
            ]
        )
        == 0
    )
    assert "best validation loss" in capsys.readouterr().out
    # eval nets: the shipped turn network and this one on the same situations, paired
    shipped = data_file(HoldemModels().turn_net)
    assert main(["eval", "nets", str(shipped), str(out / "turn.pt"), str(out / "turn.pt"), "--data", str(data), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["networks"]
    assert [r["situations"] for r in rows] == [rows[0]["situations"]] * 3 and 1 <= rows[0]["situations"] <= 4
    assert rows[1]["loss"] == rows[2]["loss"] and rows[1]["difference"] == rows[2]["difference"]
    assert all(r["abstraction"][0] == "turn" and r["loss"] > 0 for r in rows) and "difference" not in rows[0]
    assert main(["eval", "nets", str(shipped), "--data", str(tmp_path / "nowhere")]) == 2
    assert "nowhere" in capsys.readouterr().err
    net, entry = load_value_net(out / "turn.pt")
    assert entry["street"] == "turn" and entry["net"]["buckets"] == 1000 and entry["data"]["spec"]["round"] == 2
    table = BucketTable.load(data_file(HoldemModels().turn_buckets))
    leaf = BucketNetLeafValues(net, hunl, table)
    space = HandSpace(hunl)
    board = (0, 13, 26)
    state = HandState.at_round_start(hunl, 1, (200, 200), board)
    rng = np.random.default_rng(0)
    ranges = [r * space.valid(board) for r in rng.random((2, space.size))]
    ranges = [r / r.sum() for r in ranges]
    from agent.solver.tree import DEEPSTACK_SIZING

    sol = solve_ranges(
        state,
        ranges,
        DEEPSTACK_SIZING["flop"],
        SolverConfig(iterations=4, device="cpu"),
        space=space,
        last_round=1,
        leaf_values=leaf,
    )
    strategy = sol.root_strategy()[:, space.valid(board)]
    assert np.all(np.isfinite(strategy))
    np.testing.assert_allclose(strategy.sum(axis=0), 1.0, atol=1e-5)

    # generate.flop: flop situations timed with this turn network at the leaves
    capsys.readouterr()
    assert (
        main(
            [
                "bench",
                "generate",
                "--street",
                "flop",
                "--turn-net",
                str(out / "turn.pt"),
                "--flop-situations",
                "1",
                "--turn-iterations",
                "2",
            ]
        )
        == 0
    )
    row = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert row["bench"] == "generate.flop" and row["unit"] == "situations/s" and row["impl"] == "ours"
    assert row["net"]["hidden"] == 16 and row["iterations"] == 2 and row["situations"] + row["allin_draws"] == 1
    # the flop network from flop situations solved with this turn network at the leaves ...
    flop_data = tmp_path / "flop"
    assert (
        main(
            [
                "generate",
                "--game",
                "hunl",
                "--street",
                "flop",
                "--turn-net",
                str(out / "turn.pt"),
                "--situations",
                "2",
                "--shard-size",
                "1",
                "--iterations",
                "4",
                "--out",
                str(flop_data),
            ]
        )
        == 0
    )
    with np.load(flop_data / "shard-00000.npz") as shard:
        assert (shard["boards"][0] >= 0).sum() == 3 and np.all(np.isfinite(shard["values"]))
    assert (
        main(
            [
                "train",
                "--game",
                "hunl",
                "--street",
                "flop",
                "--data",
                str(flop_data),
                "--out",
                str(out),
                "--name",
                "flop",
                "--epochs",
                "2",
                "--hidden",
                "16",
                "--layers",
                "2",
                "--batch-size",
                "1",
            ]
        )
        == 0
    )
    # ... and the auxiliary network from the flop network averaged over (a sample of) the flops
    aux_data = tmp_path / "aux"
    assert (
        main(
            [
                "generate",
                "--game",
                "hunl",
                "--street",
                "preflop-aux",
                "--flop-net",
                str(out / "flop.pt"),
                "--aux-flops",
                "6",
                "--situations",
                "2",
                "--shard-size",
                "2",
                "--out",
                str(aux_data),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "train",
                "--game",
                "hunl",
                "--street",
                "preflop-aux",
                "--data",
                str(aux_data),
                "--out",
                str(out),
                "--name",
                "aux",
                "--epochs",
                "2",
                "--hidden",
                "16",
                "--layers",
                "2",
                "--batch-size",
                "1",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert (
        main(
            [
                "bench",
                "generate",
                "--street",
                "preflop-aux",
                "--flop-net",
                str(out / "flop.pt"),
                "--aux-situations",
                "1",
                "--aux-flops",
                "6",
            ]
        )
        == 0
    )
    row = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert row["bench"] == "generate.preflop-aux" and row["unit"] == "situations/s" and row["value"] > 0
    assert row["situations"] == 1 and row["flops"] == 6 and row["canonical_flops"] == 1755 and row["net"]["hidden"] == 16
    aux, aux_entry = load_value_net(out / "aux.pt")
    assert aux_entry["street"] == "preflop-aux" and aux_entry["net"]["buckets"] == 169
    assert aux_entry["data"]["spec"]["aux_flops"] == 6 and aux_entry["data"]["spec"]["next_net"].endswith("flop.pt")
    # the data records which network made its targets, by content (the path may be retrained)
    assert aux_entry["data"]["next_net_sha256"] == sha256_of(out / "flop.pt")
    assert load_value_net(out / "flop.pt")[1]["data"]["next_net_sha256"] == sha256_of(out / "turn.pt")
    # a pre-flop re-solve with the auxiliary network at its leaves
    uniform = np.full(space.size, 1.0 / space.size)
    sol = solve_ranges(
        HandState.initial(hunl),
        [uniform, uniform],
        DEEPSTACK_SIZING["preflop"],
        SolverConfig(iterations=2, device="cpu"),
        space=space,
        last_round=0,
        leaf_values=BucketNetLeafValues(aux, hunl, None),
    )
    assert np.all(np.isfinite(sol.root_strategy()))
    # a network for the wrong street is refused before any solving
    capsys.readouterr()
    assert (
        main(
            [
                "generate",
                "--game",
                "hunl",
                "--street",
                "flop",
                "--turn-net",
                str(out / "flop.pt"),
                "--situations",
                "1",
                "--out",
                str(tmp_path / "bad"),
            ]
        )
        == 2
    )
    assert "needs the turn network" in capsys.readouterr().err


def test_generate_street_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from agent.cli.main import main

    missing = str(tmp_path / "no-such-turn.pt")
    assert (
        main(
            ["generate", "--game", "hunl", "--street", "flop", "--turn-net", missing, "--situations", "1", "--out", str(tmp_path)]
        )
        == 2
    )
    assert "model file is missing" in capsys.readouterr().err
    assert (
        main(
            ["generate", "--game", "hunl", "--street", "turn", "--turn-net", missing, "--situations", "1", "--out", str(tmp_path)]
        )
        == 2
    )
    assert "--turn-net for --street flop" in capsys.readouterr().err
    assert (
        main(
            [
                "generate",
                "--game",
                "hunl",
                "--street",
                "preflop-aux",
                "--flop-net",
                missing,
                "--aux-flops",
                "0",
                "--situations",
                "1",
                "--out",
                str(tmp_path),
            ]
        )
        == 2
    )
    assert main(["generate", "--game", "leduc", "--street", "turn", "--situations", "1", "--out", str(tmp_path)]) == 2
    capsys.readouterr()
    assert main(["generate", "--game", "hunl", "--situations", "1", "--out", str(tmp_path / "none")]) == 2
    assert "hold'em games need --street" in capsys.readouterr().err
    for bad in ("0", "2"):
        assert main(["generate", "--game", "leduc", "--round", bad, "--situations", "1", "--out", str(tmp_path / "none")]) == 2
        assert f"--round {bad}: situations start a later round of leduc (1..1)" in capsys.readouterr().err
    assert not (tmp_path / "none").exists()
    assert main(["train", "--game", "hunl", "--data", str(tmp_path), "--out", str(tmp_path), "--name", "x"]) == 2
    assert "--street turn" in capsys.readouterr().err
    # an --out that is a file: a message and exit 1, no traceback
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    assert (
        main(
            [
                "generate",
                "--game",
                "leduc",
                "--round",
                "1",
                "--situations",
                "2",
                "--shard-size",
                "2",
                "--iterations",
                "2",
                "--out",
                str(not_a_folder),
            ]
        )
        == 1
    )
    assert f"cannot write to {not_a_folder}" in capsys.readouterr().err
    data = tmp_path / "data"
    assert (
        main(
            [
                "generate",
                "--game",
                "leduc",
                "--round",
                "1",
                "--situations",
                "8",
                "--shard-size",
                "8",
                "--iterations",
                "2",
                "--out",
                str(data),
            ]
        )
        == 0
    )
    assert (
        main(["train", "--game", "leduc", "--data", str(data), "--out", str(not_a_folder), "--name", "x", "--epochs", "1"]) == 1
    )
    assert f"cannot write to {not_a_folder}" in capsys.readouterr().err


def test_an_ensemble_is_the_mean_of_its_members_and_names_them(tmp_path: Path) -> None:
    """`deepstack ensemble`: one TorchScript network giving the mean of its members' outputs,
    loadable as any value network, its manifest entry listing each member; members with another
    interface are refused."""
    from agent.cli.main import main
    from agent.nets.manifest import load_value_net, register_model
    from agent.nets.valuenet import NetSpec, ValueNet

    spec = NetSpec(buckets=6, extra=6, hidden=16, layers=2)
    paths = []
    for seed in (1, 2, 3):
        torch.manual_seed(seed)
        path = tmp_path / f"m{seed}.pt"
        torch.jit.script(ValueNet(spec).eval()).save(str(path))
        register_model(path, name=f"m{seed}", net=spec.to_dict(), canonical_suits=True, command=f"train {seed}")
        paths.append(path)
    out = tmp_path / "ens.pt"
    assert main(["ensemble", "--out", str(out), "--name", "ens", *map(str, paths)]) == 0
    ens, entry = load_value_net(out)
    x = torch.rand(5, spec.inputs)
    members = [load_value_net(p)[0] for p in paths]
    with torch.no_grad():
        expected = sum(m(x) for m in members) / 3
        np.testing.assert_allclose(ens(x).numpy(), expected.numpy(), atol=1e-6)
    assert entry["net"] == spec.to_dict() and entry["canonical_suits"] is True
    assert [m["command"] for m in entry["members"]] == ["train 1", "train 2", "train 3"]
    other = tmp_path / "other.pt"
    torch.jit.script(ValueNet(spec).eval()).save(str(other))
    register_model(other, name="other", net=spec.to_dict(), canonical_suits=False)
    assert main(["ensemble", "--out", str(tmp_path / "bad.pt"), "--name", "bad", str(paths[0]), str(other)]) == 2
    assert main(["ensemble", "--out", str(tmp_path / "one.pt"), "--name", "one", str(paths[0])]) == 2


def test_turn_situations_with_the_river_network_at_the_leaves(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``generate --street turn --river-net``: turn situations solved to the end of the turn with
    the shipped river network over every river card at the leaves; the folder records the network
    (refused with another one), a non-river network is refused, and ``bench generate`` times the same."""
    from agent.cli.main import main

    def hunl(*args: str) -> int:
        return main(["generate", "--game", "hunl", *args])

    river = "models/holdem/river-small.pt"
    data = tmp_path / "turn"
    small = ["--situations", "2", "--shard-size", "1", "--iterations", "3"]
    assert hunl("--street", "turn", "--river-net", river, *small, "--out", str(data)) == 0
    with np.load(data / "shard-00000.npz") as shard:
        assert (shard["boards"][0] >= 0).sum() == 4 and np.all(np.isfinite(shard["values"]))
        assert np.abs(shard["values"]).max() > 0
    record = json.loads((data / "generate.json").read_text())
    assert river in json.dumps(record) and "next_net_sha256" in json.dumps(record)
    assert record["spec"]["net_precision"] == resolve_precision("auto", "cpu")  # what ran, not "auto"
    assert record["spec"]["alternating"] is False  # --updates auto: simultaneous with network leaves
    capsys.readouterr()
    assert hunl("--street", "turn", "--river-net", "models/holdem/river.pt", *small, "--out", str(data)) == 2  # not mixed in
    capsys.readouterr()
    # a folder made before the precision was recorded multiplied in float32: resumed only that way
    del record["spec"]["net_precision"]
    (data / "generate.json").write_text(json.dumps(record))
    assert hunl("--street", "turn", "--river-net", river, *small, "--net-precision", "bfloat16", "--out", str(data)) == 2
    assert "net_precision 'float32' -> 'bfloat16'" in capsys.readouterr().err
    more = ["--situations", "3", "--shard-size", "1", "--iterations", "3"]
    assert hunl("--street", "turn", "--river-net", river, *more, "--net-precision", "float32", "--out", str(data)) == 0
    capsys.readouterr()
    assert (
        hunl("--street", "turn", "--river-net", "models/holdem/turn.pt", "--situations", "1", "--out", str(tmp_path / "b")) == 2
    )
    assert "needs the river network" in capsys.readouterr().err
    assert hunl("--street", "flop", "--river-net", river, "--situations", "1", "--out", str(tmp_path / "b")) == 2
    assert "--river-net is for --street turn" in capsys.readouterr().err
    # bench generate's turn row, the same way
    bench = ["bench", "generate", "--street", "turn", "--river-net", river, "--turn-situations", "1", "--turn-iterations", "2"]
    assert main(bench) == 0
    row = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert row["bench"] == "generate.turn" and row["leaves"]["river_net"] == river and row["iterations"] == 2
    assert row["leaves"]["precision"] == resolve_precision("auto", "cpu") and row["updates"] == "simultaneous"
    assert main(["bench", "generate", "--street", "turn", "--river-net", "models/holdem/turn.pt"]) == 2
    assert "needs the river network" in capsys.readouterr().err


def test_campaign_builds_the_networks_bottom_up_within_a_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``deepstack campaign --budget 30s`` on the CPU: river, turn (river network at its leaves),
    flop (turn network) and auxiliary (flop network) networks, each with its manifest, and the
    report; a worker that fails (here: its river folder is a file) costs only its own data, and the
    report names it; run again, the finished stages are kept, not redone; a bad budget is refused."""
    from agent.cli.main import main
    from agent.nets.manifest import checked_file

    out = tmp_path / "campaign"
    (out / "river").mkdir(parents=True)
    (out / "river" / "data-1").write_text("not a folder")
    args = ["campaign", "--budget", "30s", "--out", str(out), "--workers", "2", "--iterations", "river=20,turn=10,flop=5"]
    assert main(args) == 0
    report = json.loads((out / "report.json").read_text())
    assert list(report["stages"]) == ["river", "turn", "flop", "preflop-aux"]
    [error] = report["stages"]["river"]["worker_errors"]
    assert error.startswith("worker 1 (cpu): ") and "data-1" in error
    assert all(not report["stages"][s]["worker_errors"] for s in ("turn", "flop", "preflop-aux"))
    assert report["stages"]["river"]["gpu_situations"] is None
    for street, stage in report["stages"].items():
        path, entry = checked_file(stage["network"])
        assert entry["street"] == street and stage["situations"] >= 1 and stage["epochs"] >= 1
        assert np.isfinite(stage["validation_loss"]) and Path(stage["loss_curve"]).exists()
    assert report["stages"]["turn"]["leaves"] == report["stages"]["river"]["network"]
    assert report["stages"]["flop"]["leaves"] == report["stages"]["turn"]["network"]
    text = (out / "report.md").read_text()
    assert text.count("\n| ") == 5 and "river/network/river.loss.png" in text and "deepstack promote" in text
    assert "- river: worker 1 (cpu): " in text
    capsys.readouterr()
    before = (out / "campaign.json").read_text()
    assert main(args) == 0  # every stage done: kept as it is
    assert (out / "campaign.json").read_text() == before
    # a stage resumed with its time long spent makes no more data (one epoch) and reports all its shards;
    # in a folder moved since (its leaves were the flop network's old absolute path)
    out = out.rename(tmp_path / "moved")
    args[args.index("--out") + 1] = str(out)
    state = json.loads(before)
    del state["stages"]["preflop-aux"]
    (out / "campaign.json").write_text(json.dumps(state))
    aux = sorted((out / "preflop-aux").glob("data-*"))
    earlier = sum(len(shard_files(d)) for d in aux)
    shard_files(aux[0])[-1].unlink()  # remade: the flop network at its leaves is opened
    assert main(args) == 0
    stage = json.loads((out / "report.json").read_text())["stages"]["preflop-aux"]
    total = sum(len(shard_files(d)) for d in aux)  # shards of one situation
    assert total == earlier and stage["situations"] == total  # no new data: its training checkpoint still holds
    assert json.loads((out / "campaign.json").read_text())["elapsed_s"] > state["elapsed_s"]
    capsys.readouterr()
    assert main([*args, "--seed", "1", "--layers", "3"]) == 2  # other settings: refused, naming them
    err = capsys.readouterr().err
    assert err.startswith(f"deepstack campaign: error: {out} holds a campaign run with other settings (seed 0 -> 1;")
    assert "layers 4 -> 3" in err and len(err.strip().splitlines()) == 1
    assert main(["campaign", "--budget", "soon", "--out", str(out)]) == 2
    assert "budget 'soon'" in capsys.readouterr().err
    assert main(["campaign", "--budget", "1m", "--out", str(out), "--iterations", "turn=x"]) == 2
    assert "--iterations: 'turn=x' is not STREET=N" in capsys.readouterr().err
    assert main(["campaign", "--budget", "1m", "--out", str(out), "--workers", "0"]) == 2
    assert capsys.readouterr().err == "deepstack campaign: error: --workers 0 is not from 1 to 1024\n"
    assert main(["campaign", "--budget", "1m", "--out", str(out), "--workers", "2", "--gpu-workers", "3"]) == 2
    assert capsys.readouterr().err == "deepstack campaign: error: --gpu-workers 3 is not from 1 to --workers (2)\n"
    assert main(["campaign", "--budget", "1m", "--out", str(out), "--hidden", "0", "--layers", "101"]) == 2
    assert "error: --hidden 0 is not from 1 to 16384; --layers 101 is not from 1 to 100" in capsys.readouterr().err


def test_campaign_deadlines_seeds_and_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Stages end at cumulative shares of the budget; a resumed campaign's clock starts at the
    seconds its earlier runs used (kept in campaign.json, also when a run is stopped); workers skip
    the shipped network's training seeds; a damaged campaign.json is one line naming it."""
    import time

    import agent.training.campaign as campaign
    from agent.cli.main import main

    assert campaign.stage_deadline(100.0, "river") == pytest.approx(30.0)
    assert campaign.stage_deadline(100.0, "preflop-aux") == pytest.approx(100.0)
    assert campaign.worker_seeds(0, 4, {1, 2}) == [0, 3, 4, 5] and campaign.worker_seeds(7, 2, set()) == [7000, 7001]
    turn_seeds = campaign._shipped_seeds("turn")
    assert turn_seeds and not set(campaign.worker_seeds(0, 20, turn_seeds)) & turn_seeds
    out = tmp_path / "c"
    spec = campaign.CampaignSpec(budget_s=60.0, out=out)
    out.mkdir()
    (out / "campaign.json").write_text(json.dumps({"stages": {}, "elapsed_s": 40.0}))
    origins = []

    def stopped(spec: object, state: object, origin: float, game: object, progress: bool) -> None:
        origins.append(origin)
        raise KeyboardInterrupt

    monkeypatch.setattr(campaign, "_run_stages", stopped)
    started = time.time()
    with pytest.raises(KeyboardInterrupt):
        campaign.run_campaign(spec, progress=False)
    assert origins[0] == pytest.approx(started - 40.0, abs=2.0)
    state = json.loads((out / "campaign.json").read_text())
    assert 40.0 <= state["elapsed_s"] < 42.0 and state["spec"]["budget_s"] == 60.0
    (out / "campaign.json").write_text('{"stages": ')
    assert main(["campaign", "--budget", "1m", "--out", str(out), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"deepstack campaign: error: {out / 'campaign.json'}: unreadable campaign record")
    assert len(err.strip().splitlines()) == 1
    finished = {  # a finished stage's record, as the report reads it
        "situations": 4,
        "solved_per_s": None,
        "epochs": 1,
        "validation_loss": 0.1,
        "held_out": 1,
        "shipped_validation_loss": None,
        "loss_curve": str(out / "river" / "network" / "river.loss.png"),
        "beats_shipped": None,
    }
    (out / "campaign.json").write_text(json.dumps({"stages": {"river": finished}}))
    assert campaign.load_state(out / "campaign.json")["stages"]["river"] == finished
    for damaged, named in (
        ({"stages": {"river": "x"}}, "stage 'river' is not a finished stage's record"),
        ({"stages": {"river": {}}}, "stage 'river' is not a finished stage's record"),
        ({"stages": {"rivr": {}}}, "stage 'rivr' is not a finished stage's record (one of river, turn, flop, preflop-aux"),
        ({"stages": {}, "elapsed_s": "x"}, "elapsed_s 'x' is not a number of seconds"),
        ({"stages": {"river": {**finished, "loss_curve": ""}}}, "stage 'river' is not a finished stage's record"),
        ({"stages": {"river": {**finished, "beats_shipped": "yes"}}}, "stage 'river' is not a finished stage's record"),
    ):  # were a TypeError, a KeyError or a ValueError not naming the file
        (out / "campaign.json").write_text(json.dumps(damaged))
        assert main(["campaign", "--budget", "1m", "--out", str(out), "--workers", "1"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"deepstack campaign: error: {out / 'campaign.json'}: {named}") and len(err.splitlines()) == 1
    (out / "campaign.json").unlink()
    (out / "manifest.json").write_text("{")  # the networks' manifest: refused before any data is made
    assert main(["campaign", "--budget", "1m", "--out", str(out), "--workers", "1"]) == 2
    assert "manifest.json: unreadable model manifest" in capsys.readouterr().err
    assert not (out / "river").exists()


def test_a_campaign_worker_makes_its_least_shards_and_no_more_once_its_time_is_spent(tmp_path: Path) -> None:
    """Whatever the budget, a stage has data to train on (here 2 shards of one situation); a
    resumed stage whose time is spent makes none (its training checkpoint, made on that data,
    still holds); a shard the previous one's time says would end past the deadline is not begun."""
    import time

    from agent.training.campaign import _generate_until

    spec = GenerateSpec(game="leduc", round=1, situations=1, shard_size=1, seed=3, iterations=5)
    out = tmp_path / "data"
    _generate_until(spec, out, deadline=0.0, min_shards=2)
    assert len(shard_files(out)) == 2
    _generate_until(spec, out, deadline=0.0, min_shards=2)
    assert len(shard_files(out)) == 2
    slow = replace(spec, iterations=400)
    ends = [time.time()]
    _generate_until(slow, tmp_path / "timed", deadline=0.0, on_shard=lambda n: ends.append(time.time()), min_shards=3)
    shard_s = min(b - a for a, b in zip(ends, ends[1:]))  # warmed up: the fastest of three
    # the first shard ends about a third of a shard before the deadline: the second is not begun
    _generate_until(slow, tmp_path / "slow", deadline=time.time() + 1.5 * shard_s)
    assert len(shard_files(tmp_path / "slow")) == 1


def test_campaign_from_shipped_starts_each_network_from_the_shipped_one(
    tmp_path: Path, leduc: Game, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--from-shipped``: each stage trains the shipped network's shape from its weights (the
    manifest says which shape, its pot feature included); without it, the campaign's own shape from scratch."""
    from agent.nets.manifest import checked_file
    from agent.training import campaign
    from agent.training.campaign import SHIPPED, CampaignSpec, stage_network

    fresh = CampaignSpec(budget_s=1, out=Path("."), hidden=64, layers=3)
    assert stage_network(fresh, "turn") == ({"hidden": 64, "layers": 3, "pot": "linear"}, None)
    tuned = replace(fresh, from_shipped=True)
    for street in ("river", "turn", "flop", "preflop-aux"):
        path, entry = checked_file(SHIPPED[street])
        shape = {"hidden": entry["net"]["hidden"], "layers": entry["net"]["layers"], "pot": "linear"}
        assert stage_network(tuned, street) == (shape, path)
    assert stage_network(tuned, "river")[0]["hidden"] == 256 and stage_network(tuned, "turn")[0]["layers"] == 7
    # a shipped network that sees the pot's logarithm is fine-tuned as one (--init of another shape is refused)
    data = tmp_path / "data"
    generate(GenerateSpec(game="leduc", round=1, situations=16, shard_size=16, seed=1, iterations=10), data, progress=False)
    space = HandSpace(leduc)
    spec = TrainSpec(epochs=1, batch_size=8, hidden=16, layers=2, pot="log")
    train(data, tmp_path / "log", buckets=space.size, extra=len(space.deck), spec=spec, model_name="tiny", progress=False)
    monkeypatch.setitem(campaign.SHIPPED, "river", str(tmp_path / "log" / "tiny.pt"))
    log_path = checked_file(tmp_path / "log" / "tiny.pt")[0]
    assert stage_network(tuned, "river") == ({"hidden": 16, "layers": 2, "pot": "log"}, log_path)


def test_a_campaign_of_chosen_streets_puts_the_shipped_network_below_at_the_leaves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--streets turn``: only the turn stage, its solves ending at the shipped river network, the whole
    budget its own; the streets are a setting of the campaign (a resume with others is refused); an
    unknown or repeated street is one line naming the option."""
    from agent.cli.main import main
    from agent.nets.manifest import checked_file
    from agent.training.campaign import (
        SHIPPED,
        CampaignSpec,
        check_same_campaign,
        leaves_below,
        parse_streets,
        report_markdown,
        spec_record,
        stage_deadline,
    )

    assert parse_streets("flop, turn") == ("turn", "flop")
    assert stage_deadline(120.0, "turn", ("turn", "flop")) == pytest.approx(120.0 * 0.35 / 0.6)
    assert stage_deadline(120.0, "flop", ("turn", "flop")) == pytest.approx(120.0)
    spec = CampaignSpec(budget_s=1, out=tmp_path, streets=("flop",))
    assert leaves_below(spec, "flop") == str(checked_file(SHIPPED["turn"])[0].resolve())
    assert leaves_below(spec, "river") is None
    assert leaves_below(CampaignSpec(budget_s=1, out=tmp_path), "flop") == str((tmp_path / "turn/network/turn.pt").resolve())
    with pytest.raises(ValueError, match="in that order"):
        CampaignSpec(budget_s=1, out=tmp_path, streets=("flop", "turn"))
    # a record written before --streets ran every stage: resuming it with fewer is refused
    old = {k: v for k, v in spec_record(CampaignSpec(budget_s=1, out=tmp_path)).items() if k != "streets"}
    with pytest.raises(ValueError, match=r"streets \['river', 'turn', 'flop', 'preflop-aux'\] -> \['turn'\]"):
        check_same_campaign(tmp_path, {"stages": {}, "spec": old}, CampaignSpec(budget_s=1, out=tmp_path, streets=("turn",)))
    check_same_campaign(tmp_path, {"stages": {}, "spec": old}, CampaignSpec(budget_s=1, out=tmp_path))
    # only the lowest stage run has the shipped network below it
    stage = {"situations": 2, "solved_per_s": 1.0, "epochs": 1, "validation_loss": 0.1, "held_out": 1}
    stage |= {"shipped_validation_loss": None, "beats_shipped": None, "leaves": "L"}
    report = {"budget_s": 9, "seconds": 9, "workers": 1, "device": "cpu", "cpus": 2, "stages": {}}
    for street in ("turn", "flop"):
        report["stages"][street] = {**stage, "loss_curve": f"/o/{street}/network/{street}.loss.png"}
    text = report_markdown(report)
    assert "- turn: the shipped river network at the leaves (L)." in text and "- flop: the shipped" not in text

    out = tmp_path / "turn-only"
    args = ["campaign", "--budget", "5s", "--out", str(out), "--workers", "1", "--streets", "turn", "--iterations", "turn=3"]
    args += ["--hidden", "32", "--layers", "2"]
    assert main(args) == 0
    report = json.loads((out / "report.json").read_text())
    assert list(report["stages"]) == ["turn"] and report["streets"] == ["turn"]
    assert report["stages"]["turn"]["leaves"] == str(checked_file(SHIPPED["river"])[0].resolve())
    assert checked_file(report["stages"]["turn"]["network"])[1]["street"] == "turn"
    assert "- turn: the shipped river network at the leaves (" in (out / "report.md").read_text()
    capsys.readouterr()
    assert main([*args[:-4], "--streets", "turn,flop", "--hidden", "32", "--layers", "2"]) == 2
    assert "streets ['turn'] -> ['turn', 'flop']" in capsys.readouterr().err
    for bad in ("turn,turn", "preflop", ""):
        assert main(["campaign", "--budget", "1m", "--out", str(tmp_path / "x"), "--streets", bad]) == 2
        assert f"--streets {bad!r}: give one or more of river, turn, flop, preflop-aux" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_a_campaign_whose_shipped_leaves_are_missing_is_refused_before_any_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import agent.training.campaign as campaign
    from agent.cli.main import main

    monkeypatch.setitem(campaign.SHIPPED, "river", str(tmp_path / "gone.pt"))
    out = tmp_path / "c"
    assert main(["campaign", "--budget", "5s", "--out", str(out), "--workers", "1", "--streets", "turn"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("deepstack campaign: error: the turn stage's leaves, the shipped river network: ")
    assert "gone.pt: model file is missing" in err and "(or add river to --streets to train it here)" in err
    assert not out.exists()


def test_ctrl_c_stops_a_campaign_and_keeps_its_shards(tmp_path: Path) -> None:
    """Ctrl-C to the campaign's process group while its workers generate: one line, status 130,
    no worker left, and the shards written so far whole (the same command resumes from them)."""
    river = tmp_path / "campaign" / "river"
    argv = [sys.executable, "-m", "agent.cli.main", "campaign", "--budget", "10m", "--out", str(tmp_path / "campaign")]
    argv += ["--workers", "2", "--iterations", "river=20,turn=10,flop=5"]
    returncode, err, left = interrupt_when(argv, lambda: sum(len(shard_files(d)) for d in river.glob("data-*")) >= 2)
    assert returncode == 130 and not left
    assert "deepstack campaign: interrupted" in err and "Traceback" not in err
    folders = sorted(river.glob("data-*"))
    assert sum(len(part["values"]) for d in folders if shard_files(d) for part in load_shards(d)) >= 2
    # a shard cut short is under a hidden name: no other data file beside the shards
    assert not [p for d in folders for p in d.glob("[!.]*.npz") if p not in shard_files(d)]


def test_network_precision_bfloat16_answers_float32_close_to_float32() -> None:
    """``NetOnDevices(net, "bfloat16")`` multiplies under autocast and answers float32 values within
    bfloat16's rounding of the float32 ones; ``auto`` is float32 on CUDA and bfloat16 on the CPU only
    where the CPU has it in hardware; an unknown name is refused at once."""
    torch.manual_seed(0)
    net = torch.jit.script(ValueNet(NetSpec(buckets=20, hidden=64, layers=3)).eval())
    x = torch.rand(50, 41)
    x[:, 1:] /= x[:, 1:21].sum(dim=1, keepdim=True)
    exact = NetOnDevices(net)(x)
    rounded = NetOnDevices(net, "bfloat16")(x)
    assert rounded.dtype == torch.float32 and not torch.equal(rounded, exact)
    assert float((rounded - exact).abs().max()) < 0.02 * float(exact.abs().max())
    assert torch.equal(NetOnDevices(net, "float32")(x), exact)
    assert resolve_precision("auto", "cuda") == "float32" and resolve_precision("bfloat16", "cuda") == "bfloat16"
    assert resolve_precision("auto", "cpu") in ("float32", "bfloat16")
    with pytest.raises(ValueError, match="not one of auto, float32, bfloat16"):
        NetOnDevices(net, "half")


def test_bench_generate_row_without_a_solved_situation_has_no_value(capsys: pytest.CaptureFixture[str]) -> None:
    """One turn draw, all-in: nothing was measured, so the value is null with a reason, not a rate of 0."""
    from agent.cli.bench_generate import _measured_rate
    from agent.cli.main import main

    assert _measured_rate({"rate": 2.5, "situations": 3}) == 2.5
    assert main(["bench", "generate", "--street", "turn", "--turn-situations", "1", "--turn-iterations", "5"]) == 0
    row = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert row["bench"] == "generate.turn" and row["situations"] == 0 and row["allin_draws"] == 1
    assert row["value"] is None and "nothing measured" in row["reason"]


def test_a_data_folder_resumes_with_its_network_named_by_another_path(tmp_path: Path) -> None:
    """``--river-net models/holdem/river.pt`` and the same file by its absolute path are one network
    (its sha256 decides); another file under the recorded name is refused, named by its option."""
    from agent.training.data_folder import DataFolderError, _check_same_data, spec_record

    spec = GenerateSpec(game="hunl", round=2, situations=1, shard_size=1, next_net="models/holdem/river.pt")
    recorded = {"spec": spec_record(spec), "next_net_sha256": "a" * 64}
    moved = replace(spec, next_net="/opt/deepstack/models/holdem/river.pt")
    _check_same_data(tmp_path, recorded, moved, "a" * 64)
    with pytest.raises(DataFolderError, match=r"next street's network \(--river-net, --turn-net or --flop-net\)"):
        _check_same_data(tmp_path, recorded, moved, "b" * 64)


def test_pot_scale_is_what_the_shipped_networks_were_trained_with() -> None:
    """The networks' pot input is the pot over this scale; the shipped files were trained with
    these values, so a change here would feed them inputs they never saw (the other tests compute
    their expectations with ``pot_scale`` itself and would not notice)."""
    assert pot_scale(load_game("leduc-limit")) == 26.0  # 2 x (blind 1 + 2 raises of 2 + 2 of 4)
    assert pot_scale(load_game("leduc")) == 2400.0  # both stacks of 1200
    assert pot_scale(load_game("hunl")) == 40000.0  # both stacks of 20000


def test_an_ensemble_of_one_network_twice_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``ensemble A.pt A.pt`` averaged a network with itself (exit 0), listed as two members, while ``train
    --data D D`` is refused; a copy of it under another name too (the same sha256)."""
    from agent.cli.main import main
    from agent.nets.manifest import register_model

    spec = NetSpec(buckets=6, extra=6, hidden=16, layers=2)
    torch.manual_seed(1)
    net = tmp_path / "a" / "m.pt"
    net.parent.mkdir()
    torch.jit.script(ValueNet(spec).eval()).save(str(net))
    register_model(net, name="m", net=spec.to_dict(), canonical_suits=True)
    copy = tmp_path / "b" / "m.pt"
    copy.parent.mkdir()
    shutil.copy(net, copy)
    register_model(copy, name="m", net=spec.to_dict(), canonical_suits=True)
    out = tmp_path / "ens.pt"
    dotted = str(tmp_path / "a" / "." / "m.pt")
    for members, why in (
        ([str(net), str(net)], f"{net}: given twice (as {net} too)"),
        ([str(net), dotted], f"{dotted}: given twice (as {net} too)"),
        ([str(net), str(copy)], f"{copy}: a copy of {net} (the same sha256)"),
    ):
        assert main(["ensemble", "--out", str(out), "--name", "ens", *members]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"deepstack ensemble: error: {why}; an ensemble averages different networks"]
        assert not out.exists()
