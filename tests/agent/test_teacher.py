"""Situations labelled by a network (``deepstack generate --teacher``): data to distil a network
from, on the shipped river network (small and quick to load)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from agent.cli.main import main
from agent.nets.encoding import SituationEncoder
from agent.nets.manifest import load_value_net, trained_seeds
from agent.solver.handspace import HandSpace
from agent.training.data_folder import load_shards
from agent.training.datagen import solve_situation
from agent.training.datasets import load_datasets
from agent.training.generate_spec import GenerateSpec
from agent.training.situations import Situation, draw_situation, draw_situations
from agent.training.streets import street_abstraction
from agent.training.teacher import load_teacher
from agent.training.train import TrainSpec, train, validation_split
from protocol.gamedef import load_game

RIVER = "models/holdem/river-small.pt"


def _generate(*args: str) -> int:
    return main(["generate", "--game", "hunl", *args])


def test_labels_are_the_teachers_outputs_and_boards_are_shared(tmp_path: Path) -> None:
    """Through the training encoder, a labelled situation's targets are exactly the teacher's
    outputs on its inputs; ``--per-board`` situations share a board; both-all-in situations get
    the showdown's exact values, as solved data does; the folder records the teacher's sha256."""
    out = tmp_path / "t"
    assert (
        _generate(
            "--street", "river", "--teacher", RIVER, "--per-board", "4", "--situations", "24", "--seed", "3", "--out", str(out)
        )
        == 0
    )
    record = json.loads((out / "generate.json").read_text())
    assert record["teacher_sha256"] == load_value_net(RIVER)[1]["sha256"] and record["spec"]["per_board"] == 4
    part = next(iter(load_shards(out)))
    game = load_game("hunl")
    net, encoder, _ = load_teacher(RIVER, float(sum(game.stack)))
    x, y, m = encoder(part)
    with torch.no_grad():
        out_net = net(torch.as_tensor(x)).numpy()
    allin = part["pots"] // 2 >= game.stack[0]
    assert allin.any() and not allin.all()  # seed 3 draws both kinds
    np.testing.assert_allclose((y * m)[~allin], (out_net * m)[~allin], atol=1e-6)
    boards = [tuple(b) for b in part["boards"]]
    assert all(boards[i] == boards[i - i % 4] for i in range(24)) and len(set(boards)) == 6
    space = HandSpace(game)
    spec = GenerateSpec(game="hunl", round=3, situations=1)
    for i in np.nonzero(allin)[0]:
        sit = Situation(tuple(int(c) for c in part["boards"][i]), int(part["pots"][i]), part["ranges"][i].astype(np.float64))
        exact = solve_situation(space, 3, sit, spec.solver_config("float32"))
        np.testing.assert_allclose(part["values"][i], exact, atol=1e-5)


def test_situations_drawn_on_one_board_are_held_out_together(tmp_path: Path) -> None:
    """``--per-board`` situations share a board, so they are one group: the validation split holds out
    whole boards (a board's other situations in training would make the validation loss partly a
    training loss), where the split by row puts some boards on both sides."""
    out = tmp_path / "t"
    argv = ["--street", "river", "--teacher", RIVER, "--per-board", "4", "--situations", "40", "--shard-size", "20"]
    assert _generate(*argv, "--seed", "5", "--out", str(out)) == 0
    _, encoder, _ = load_teacher(RIVER, float(sum(load_game("hunl").stack)))
    rows = load_datasets([out], encoder)
    np.testing.assert_array_equal(rows.groups, np.arange(40) // 4)
    boards = np.concatenate([part["boards"] for part in load_shards(out)])
    assert all((boards[rows.groups == g] == boards[4 * g]).all() for g in range(10))
    spec = TrainSpec(validation_fraction=0.25, seed=2)
    val, kept = validation_split(40, spec, groups=rows.groups)
    assert len(val) == 12 and len(val) + len(kept) == 40  # 10 rows asked: three whole boards
    assert not set(rows.groups[val]) & set(rows.groups[kept])
    by_row, rest = validation_split(40, spec)
    assert set(rows.groups[by_row]) & set(rows.groups[rest])  # what the split by row did
    table, _, extra = street_abstraction("river", 200)
    run = TrainSpec(epochs=1, batch_size=8, hidden=16, layers=2, validation_fraction=0.25, seed=2)
    args = {"buckets": 200, "extra": 0, "spec": run, "model_name": "r", "progress": False, "extra_manifest": extra}
    train([out], tmp_path / "net", encoder=SituationEncoder(table, 40000.0), **args)
    assert load_value_net(tmp_path / "net" / "r.pt")[1]["training_situations"] == len(kept) == 28  # not 30


def test_rows_that_are_their_own_group_split_as_before() -> None:
    """Data drawn one situation per board keeps the split (and so the recorded validation losses) of
    every network trained before groups existed; one group alone is split by row."""
    spec = TrainSpec(validation_fraction=0.1, seed=7)
    for groups in (np.arange(50), np.zeros(50, dtype=np.int64)):
        val, kept = validation_split(50, spec, groups=groups)
        old_val, old_kept = validation_split(50, spec)
        np.testing.assert_array_equal(val, old_val)
        np.testing.assert_array_equal(kept, old_kept)
    uneven = np.repeat(np.arange(6), [1, 9, 2, 20, 3, 15])
    val, kept = validation_split(50, TrainSpec(validation_fraction=0.5, seed=1), groups=uneven)
    assert len(val) >= 25 and len(kept) > 0 and not set(uneven[val]) & set(uneven[kept])


def test_one_situation_per_board_draws_as_before() -> None:
    """``per_board`` 1 (solved data) draws exactly what generation always drew: old seeds still
    name the same situations."""
    space = HandSpace(load_game("hunl"))
    spec = GenerateSpec(game="hunl", round=2, situations=5)
    a = draw_situations(space, spec, np.random.default_rng([7, 0]), 5)
    rng = np.random.default_rng([7, 0])
    b = [draw_situation(space, 2, rng) for _ in range(5)]
    assert [(s.board, s.pot) for s in a] == [(s.board, s.pot) for s in b]
    assert all(np.array_equal(s.ranges, t.ranges) for s, t in zip(a, b))


def test_teacher_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Another street's teacher, a teacher beside a next network, several per board without a
    teacher and a Leduc teacher: refused with one line each, nothing written."""
    out = str(tmp_path / "x")
    cases = [
        (["--street", "river", "--teacher", "models/holdem/turn.pt"], "models/holdem/turn.pt"),
        (["--street", "turn", "--teacher", "models/holdem/turn.pt", "--river-net", RIVER], "no next network"),
        (["--street", "river", "--per-board", "3"], "teacher-labelled data"),
        (["--street", "river", "--teacher", RIVER, "--per-board", "0"], "at least one situation per board"),
    ]
    for args, message in cases:
        assert _generate(*args, "--situations", "2", "--out", out) == 2
        assert message in capsys.readouterr().err
    assert main(["generate", "--game", "leduc", "--teacher", "models/leduc/leduc.pt", "--situations", "2", "--out", out]) == 2
    assert "hold'em" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_a_student_trains_on_solved_and_labelled_folders_pooled(tmp_path: Path) -> None:
    """Solved and teacher-labelled folders of one street pool (different seeds); the student's
    manifest names both, the teacher by its sha256."""
    solved, labelled = tmp_path / "solved", tmp_path / "labelled"
    assert (
        _generate(
            "--street",
            "river",
            "--situations",
            "8",
            "--shard-size",
            "8",
            "--iterations",
            "20",
            "--seed",
            "1",
            "--out",
            str(solved),
        )
        == 0
    )
    assert (
        _generate(
            "--street",
            "river",
            "--teacher",
            RIVER,
            "--per-board",
            "8",
            "--situations",
            "32",
            "--seed",
            "2",
            "--out",
            str(labelled),
        )
        == 0
    )
    table, _, extra = street_abstraction("river", 200)
    spec = TrainSpec(epochs=2, batch_size=8, hidden=16, layers=2)
    encoder = SituationEncoder(table, 40000.0)
    stats = train(
        [solved, labelled],
        tmp_path / "net",
        buckets=200,
        extra=0,
        spec=spec,
        model_name="student",
        progress=False,
        encoder=encoder,
        extra_manifest=extra,
    )
    assert stats["situations"] == 40
    entry = load_value_net(tmp_path / "net" / "student.pt")[1]
    folders = entry["data"]["folders"]
    teacher = load_value_net(RIVER)[1]
    assert "teacher_sha256" not in folders[0] and folders[1]["teacher_sha256"] == teacher["sha256"]
    # a test folder drawn with a seed the teacher learned from is not held out for the student either
    assert trained_seeds(teacher) and trained_seeds(entry) == {1, 2} | trained_seeds(teacher)
