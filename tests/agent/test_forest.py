"""Forests: many situations in one lookahead and one CFR call (batched data generation)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from agent.cli.main import main
from agent.solver.cfr import Solver, exploitability
from agent.solver.forest import LEAF_ROWS_PER_BOARD, forest_cost_rows, lookahead_rows, memory_budget_rows, pack, solve_forest
from agent.solver.gadget import Gadget
from agent.solver.handspace import HandSpace
from agent.solver.lookahead import compile_lookahead
from agent.solver.resolve import SolverConfig, SpotError
from agent.solver.tree import FCPA, build_tree
from agent.training.data_folder import shard_path
from agent.training.datagen import generate, generate_shard, solve_situation, solve_situations
from agent.training.generate_spec import GenerateSpec, parse_batch
from agent.training.situations import Situation, both_all_in, draw_situation
from protocol.gamedef import Game
from protocol.state import HandState


def _start(game: Game, round_: int, sit: Situation) -> HandState:
    return HandState.at_round_start(game, round_, (sit.pot // 2, sit.pot // 2), sit.board)


def _normalised(space: HandSpace, sit: Situation) -> np.ndarray:
    r = sit.ranges * space.valid(sit.board)
    return r / r.sum(axis=1, keepdims=True)


def _turn_draws(space: HandSpace, count: int, seed: int, max_rows: int | None = None) -> list[Situation]:
    """Turn situations with something to decide (and, with ``max_rows``, small trees: big pots)."""
    rng = np.random.default_rng(seed)
    out: list[Situation] = []
    while len(out) < count:
        sit = draw_situation(space, 2, rng)
        if both_all_in(space.game, sit):
            continue
        if max_rows is None or lookahead_rows(build_tree(_start(space.game, 2, sit), FCPA), space) <= max_rows:
            out.append(sit)
    return out


@pytest.fixture(scope="module")
def holdem_space(hunl: Game) -> HandSpace:
    return HandSpace(hunl)


def test_lookahead_rows_counts_what_the_lookahead_lays_out(holdem_space: HandSpace, leduc: Game) -> None:
    for space, round_ in ((holdem_space, 2), (holdem_space, 1), (HandSpace(leduc), 1)):
        rng = np.random.default_rng(4)
        for _ in range(4):
            sit = draw_situation(space, round_, rng)
            if both_all_in(space.game, sit):
                continue
            root = build_tree(
                _start(space.game, round_, sit), FCPA, last_round=1 if space is holdem_space and round_ == 1 else None
            )
            la = compile_lookahead(root, space, np.arange(space.size), torch.device("cpu"))
            assert lookahead_rows(root, space) == la.num_rows
            # a forest budgets each depth-limit leaf's network queries too: one per next card
            next_cards = 49 if len(la.leaves.rows) else 0
            assert forest_cost_rows(root, space) == la.num_rows + len(la.leaves.rows) * next_cards * LEAF_ROWS_PER_BOARD


@pytest.mark.parametrize("dtype", ["float32", "float64"])  # the C kernels; the tensor path a GPU runs
def test_each_tree_of_a_forest_is_solved_as_if_alone(holdem_space: HandSpace, dtype: str) -> None:
    """Trees of different shapes (pots) and boards share depths, decisions and the multiplier
    table; none may leak into another: each situation's values are bit for bit those of a
    forest of its own."""
    space = holdem_space
    sits = _turn_draws(space, 3, seed=11, max_rows=600 if dtype == "float64" else None)
    shapes = {lookahead_rows(build_tree(_start(space.game, 2, s), FCPA), space) for s in sits}
    assert len(shapes) > 1 or dtype == "float64"
    config = SolverConfig(algorithm="dcfr", iterations=6, device="cpu", dtype=dtype)  # type: ignore[arg-type]
    states = [_start(space.game, 2, s) for s in sits]
    ranges = [_normalised(space, s) for s in sits]
    together = solve_forest(space, states, ranges, FCPA, config)
    for i, (state, r) in enumerate(zip(states, ranges)):
        alone = solve_forest(space, [state], [r], FCPA, config)[0]
        np.testing.assert_array_equal(together[i], alone)
        assert np.all(together[i][:, ~space.valid(sits[i].board)] == 0)


def test_a_forest_agrees_with_one_solve_per_situation_after_enough_iterations(holdem_space: HandSpace) -> None:
    """Against the one-at-a-time path (each situation's own hand list) the values differ by rounding
    and what it does to later iterations: after a full solve, by a small fraction of the pot."""
    space = holdem_space
    sits = _turn_draws(space, 2, seed=8, max_rows=600)
    config = SolverConfig(algorithm="dcfr", iterations=300, device="cpu", beta=float("-inf"), gamma=4.0)
    together = solve_forest(space, [_start(space.game, 2, s) for s in sits], [_normalised(space, s) for s in sits], FCPA, config)
    for sit, values in zip(sits, together):
        alone = solve_situation(space, 2, sit, config)
        assert np.abs(values / sit.pot - alone).max() < 0.01


def test_forest_input_errors(holdem_space: HandSpace) -> None:
    space = holdem_space
    sit = _turn_draws(space, 1, seed=3, max_rows=600)[0]
    config = SolverConfig(iterations=1, device="cpu")
    state, r = _start(space.game, 2, sit), _normalised(space, sit)
    with pytest.raises(SpotError, match="one pair per state"):
        solve_forest(space, [state, state], [r], FCPA, config)
    with pytest.raises(SpotError, match="expected"):
        solve_forest(space, [state], [r[:, :10]], FCPA, config)
    blocked = r.copy()
    blocked[0, np.flatnonzero(~space.valid(sit.board))[0]] = 0.5
    with pytest.raises(SpotError, match="blocks"):
        solve_forest(space, [state], [blocked], FCPA, config)
    # a forest has no single root: no gadget, no exploitability
    la = compile_lookahead([build_tree(state, FCPA)] * 2, space, np.arange(space.size), torch.device("cpu"))
    solver = Solver(la)
    reach = torch.as_tensor(np.stack([r, r], axis=1), dtype=torch.float32)
    with pytest.raises(ValueError, match="one root"):
        solver.solve(reach, 1, gadget=Gadget(player=1, cfvs=torch.zeros(space.size), prior=torch.ones(space.size)))
    with pytest.raises(ValueError, match="forest"):
        exploitability(solver, reach)


def test_memory_budget_and_packing() -> None:
    assert memory_budget_rows(1326, torch.device("cpu")) is None  # one at a time on the CPU
    rows = memory_budget_rows(1326, torch.device("cuda"), free_bytes=80 << 30)
    assert rows is not None and 500_000 < rows < 1_000_000  # ~40 GB of 10 float32 buffers of 1326 hands
    assert pack([5, 5, 5, 12, 1, 1], 10) == [[0, 1], [2], [3], [4, 5]]
    assert pack([], 10) == []


def test_generation_in_forests(tmp_path: Path, holdem_space: HandSpace) -> None:
    """A shard solved in forests of 2 equals the same shard in forests of 3 (no situation depends on
    its forest-mates); both-all-in draws keep their showdown values; a folder resumes with another
    batch (it changes values by rounding only)."""
    base = dict(game="hunl", round=2, situations=5, shard_size=5, seed=6, iterations=3)
    by2 = generate_shard(GenerateSpec(**base, batch=2), 0, 5)  # type: ignore[arg-type]
    by3 = generate_shard(GenerateSpec(**base, batch=3), 0, 5)  # type: ignore[arg-type]
    for key in by2:
        np.testing.assert_array_equal(by2[key], by3[key])
    one = generate_shard(GenerateSpec(**base, batch=1), 0, 5)  # type: ignore[arg-type]
    np.testing.assert_array_equal(one["pots"], by2["pots"])
    out = tmp_path / "data"
    generate(GenerateSpec(**{**base, "situations": 2, "shard_size": 1}, batch=2), out, progress=False)  # type: ignore[arg-type]
    generate(GenerateSpec(**{**base, "situations": 3, "shard_size": 1}, batch=1), out, progress=False)  # type: ignore[arg-type]
    assert shard_path(out, 2).exists()
    assert json.loads((out / "generate.json").read_text())["spec"]["batch"] == 1


def test_solve_situations_keeps_the_one_at_a_time_path_on_the_cpu(holdem_space: HandSpace) -> None:
    """``batch`` None (auto) on the CPU is the old path: each situation's own hand list, so data made
    before forests existed is reproduced bit for bit."""
    space = holdem_space
    sits = _turn_draws(space, 2, seed=2, max_rows=600)
    config = SolverConfig(algorithm="dcfr", iterations=4, device="cpu")
    auto = solve_situations(space, 2, sits, config, None)
    for sit, values in zip(sits, auto):
        np.testing.assert_array_equal(values, solve_situation(space, 2, sit, config))


def test_batch_and_device_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def run_cli(argv: list[str]) -> tuple[int, str, str]:
        code = main(argv)
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    assert parse_batch("auto") is None and parse_batch("8") == 8
    for bad in ("0", "-2", "x"):
        with pytest.raises(ValueError):
            parse_batch(bad)
    code, _, err = run_cli(
        ["generate", "--game", "hunl", "--street", "turn", "--situations", "1", "--batch", "0", "--out", str(tmp_path / "a")]
    )
    assert code == 2 and "--batch" in err
    if not torch.cuda.is_available():
        code, _, err = run_cli(
            [
                "generate",
                "--game",
                "hunl",
                "--street",
                "turn",
                "--situations",
                "1",
                "--device",
                "cuda",
                "--out",
                str(tmp_path / "b"),
            ]
        )
        assert code == 2 and "--device" in err and "CUDA" in err
    code, out, _ = run_cli(
        [
            "bench",
            "generate",
            "--street",
            "turn",
            "--turn-situations",
            "3",
            "--turn-iterations",
            "2",
            "--batch",
            "2",
            "--device",
            "cpu",
        ]
    )
    row = json.loads(out.strip().splitlines()[-1])
    assert code == 0 and row["bench"] == "generate.turn" and row["batch"] == 2
    assert sum(row["forest_sizes"]) == row["situations"] and max(row["forest_sizes"]) <= 2
    code, _, err = run_cli(["bench", "generate", "--street", "turn", "--batch", "2", "--check"])
    assert code == 2 and "--batch 1" in err
    code, _, err = run_cli(["bench", "generate", "--street", "turn", "--batch", "many"])
    assert code == 2 and "--batch" in err and "'many'" in err


def test_flop_forests_share_the_turn_network_leaves(holdem_space: HandSpace) -> None:
    """Flop situations (depth-limited: the shipped turn network at every leaf, for each turn
    card) solved in one forest: each tree as alone, so the network's leaf batches keep each
    leaf's own board and pot."""
    from agent.training.datagen import _next_street_leaf

    space = holdem_space
    rng = np.random.default_rng(5)
    sits = [s for s in (draw_situation(space, 1, rng) for _ in range(4)) if not both_all_in(space.game, s)][:2]
    assert sits[0].pot != sits[1].pot
    leaf = _next_street_leaf("hunl", "models/holdem/turn.pt", 1)
    config = SolverConfig(algorithm="dcfr", iterations=2, device="cpu")
    states = [_start(space.game, 1, s) for s in sits]
    ranges = [_normalised(space, s) for s in sits]
    together = solve_forest(space, states, ranges, FCPA, config, last_round=1, leaf_values=leaf)
    for i in range(2):
        alone = solve_forest(space, [states[i]], [ranges[i]], FCPA, config, last_round=1, leaf_values=leaf)[0]
        np.testing.assert_array_equal(together[i], alone)
