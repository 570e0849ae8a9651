"""River data harvested from turn solves to the end (`deepstack generate --street turn --harvest-river K`)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agent.cli.main import main
from agent.nets.encoding import SituationEncoder
from agent.solver.handspace import HandSpace
from agent.solver.resolve import solve_ranges
from agent.solver.tree import FCPA
from agent.training import harvest
from agent.training.data_folder import load_shards, shard_path
from agent.training.datagen import solve_and_harvest, solve_situation
from agent.training.datasets import check_poolable, load_datasets
from agent.training.generate_spec import GenerateSpec
from agent.training.situations import Situation, draw_situation
from agent.training.streets import street_abstraction
from protocol.gamedef import load_game
from protocol.state import HandState


@pytest.fixture(scope="module")
def space() -> HandSpace:
    return HandSpace(load_game("hunl"))


def _deep_pot_turn(space: HandSpace) -> Situation:
    """A turn situation with a pot bet left behind: a small tree, solved in a fraction of a second."""
    sit = draw_situation(space, 2, np.random.default_rng(7))
    return Situation(sit.board, 36_000, sit.ranges)


def test_harvested_rows_are_the_river_subgames_of_the_solve(space: HandSpace) -> None:
    sit = _deep_pot_turn(space)
    config = GenerateSpec(game="hunl", round=2, situations=1).solver_config("float32")
    config = type(config)(**{**config.__dict__, "iterations": 200})
    values, kept = solve_and_harvest(space, 2, sit, config, 1000, np.random.default_rng(0))
    # the turn's own targets are those of the solve without harvesting
    assert np.allclose(values, solve_situation(space, 2, sit, config), atol=1e-6)
    assert (kept["reach"] >= harvest.MIN_REACH).all()
    ranges = sit.ranges * space.valid(sit.board)
    ranges = ranges / ranges.sum(axis=1, keepdims=True)
    sol = solve_ranges(HandState.at_round_start(space.game, 2, (sit.pot // 2,) * 2, sit.board), list(ranges), FCPA, config)
    rows = harvest.harvest_river(sol, 1000, np.random.default_rng(0), min_reach=1e-3)
    n = len(rows["pots"])
    assert n >= 44  # at least the check-check line below every river card
    assert all(len(rows[key]) == n for key in ("boards", "ranges", "values", "reach"))
    assert len(kept["pots"]) == int((rows["reach"] >= harvest.MIN_REACH).all(axis=1).sum())
    for board, pot, ranges, vals in zip(rows["boards"], rows["pots"], rows["ranges"], rows["values"]):
        assert tuple(board[:4]) == sit.board and board[4] not in sit.board
        assert pot >= sit.pot
        valid = space.valid(tuple(int(c) for c in board))
        assert np.allclose(ranges.sum(axis=1), 1.0, atol=1e-5) and not ranges[:, ~valid].any()
        # fractions of the pot against the normalised opposing range: the river subgame is zero-sum
        assert abs(float((ranges[0] * vals[0]).sum() + (ranges[1] * vals[1]).sum())) < 1e-4
    # the best-reached subgame is close to the same subgame solved alone with its ranges
    i = int(np.argmax(rows["reach"].min(axis=1)))
    alone = solve_situation(
        space, 3, Situation(tuple(int(c) for c in rows["boards"][i]), int(rows["pots"][i]), rows["ranges"][i]), config
    )
    r = rows["ranges"][i]
    error = (np.abs(rows["values"][i] - alone) * r).sum(axis=1)
    assert error.max() < 0.02, error
    # a sample: at most K, and all of them from the rows above
    few = harvest.harvest_river(sol, 3, np.random.default_rng(1), min_reach=1e-3)
    assert len(few["pots"]) == 3
    assert all(any(np.array_equal(b, c) for c in rows["boards"]) for b in few["boards"])


def test_generate_turn_harvest_writes_a_river_folder_that_pools(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    turn, river = tmp_path / "turn", tmp_path / "river"
    argv = ["generate", "--game", "hunl", "--street", "turn", "--situations", "2", "--shard-size", "1"]
    assert main(argv + ["--iterations", "20", "--harvest-river", "5", "--out", str(turn)]) == 0
    argv = ["generate", "--game", "hunl", "--street", "river", "--situations", "2", "--shard-size", "2"]
    assert main(argv + ["--iterations", "20", "--out", str(river)]) == 0
    capsys.readouterr()
    turn_shards = list(load_shards(turn))
    assert len(turn_shards) == 2 and all(set(s) == {"boards", "pots", "ranges", "values"} for s in turn_shards)
    harvested = list(load_shards(turn / harvest.FOLDER))
    assert len(harvested) == 2
    assert sum(len(shard["pots"]) for shard in harvested) > 0  # a both-all-in draw has no river subgame
    for shard, own in zip(harvested, turn_shards):
        assert len(shard["pots"]) <= 5 and (shard["boards"] >= 0).all()
        assert (shard["boards"][:, :4] == own["boards"][0, :4]).all()
        assert (shard["source"] == 0).all()
    record = json.loads((turn / harvest.FOLDER / "generate.json").read_text())
    assert record["spec"]["round"] == 3 and "seed" not in record["spec"]
    assert record["spec"]["harvested_from"]["harvest_river"] == 5 and record["spec"]["min_reach"] == harvest.MIN_REACH
    check_poolable([river, turn / harvest.FOLDER])  # exact and harvested river data train one network
    # each turn solve's river rows are one group: the validation split keeps them on one side
    table, _, _ = street_abstraction("river", 1000, None)
    rows = load_datasets([turn / harvest.FOLDER], SituationEncoder(table, 40000.0))
    shard_of = np.repeat(np.arange(2), [len(shard["pots"]) for shard in harvested])
    assert all(len(set(rows.groups[shard_of == i])) <= 1 for i in range(2))  # every row of one turn solve
    assert len(set(rows.groups)) == len(set(shard_of))  # and the two solves apart


def test_harvest_needs_turn_solved_to_the_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["generate", "--game", "hunl", "--street", "river", "--situations", "2", "--harvest-river", "4"]
    assert main(argv + ["--out", str(tmp_path / "x")]) == 2
    assert "--harvest-river" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_a_harvest_kept_at_another_threshold_is_not_resumed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "turn"
    argv = ["generate", "--game", "hunl", "--street", "turn", "--shard-size", "1", "--iterations", "10"]
    argv += ["--harvest-river", "2", "--out", str(out)]
    assert main([*argv, "--situations", "1"]) == 0
    record = out / harvest.FOLDER / "generate.json"
    meta = json.loads(record.read_text())
    meta["spec"]["min_reach"] = 0.001  # as the first version kept them
    record.write_text(json.dumps(meta))
    capsys.readouterr()
    assert main([*argv, "--situations", "2"]) == 2
    assert "0.001" in capsys.readouterr().err
    assert len(list(out.glob("shard-*.npz"))) == 1  # nothing added


@pytest.mark.parametrize("damage", ["delete", "truncate"])
def test_a_lost_harvest_shard_is_redone_by_the_same_command(tmp_path: Path, damage: str) -> None:
    """train's advice for an unreadable shard is to delete it and generate again; for a harvested river
    shard that did nothing (its turn shard existed), so the river data stayed one shard short."""
    out = tmp_path / "turn"
    argv = ["generate", "--game", "hunl", "--street", "turn", "--situations", "2", "--shard-size", "1", "--iterations", "5"]
    argv += ["--harvest-river", "2", "--out", str(out)]
    assert main(argv) == 0
    lost = shard_path(out / harvest.FOLDER, 1)
    before = dict(np.load(lost))
    if damage == "delete":
        lost.unlink()
    else:
        lost.write_bytes(lost.read_bytes()[:300])
    turn_before = dict(np.load(shard_path(out, 1)))
    assert main(argv) == 0
    for path, was in ((lost, before), (shard_path(out, 1), turn_before)):  # both rewritten, the same rows
        now = dict(np.load(path))
        assert sorted(now) == sorted(was) and all(np.array_equal(now[k], was[k]) for k in was if k != "meta")
