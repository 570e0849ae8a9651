"""``deepstack solve`` and ``deepstack bench solver`` on the standard spots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.cli.main import main
from agent.solver.resolve import SolverConfig, SpotError, pick_device, solve_ranges
from agent.solver.spots import load_spots, make_spot
from tests.conftest import SPOTS


def test_river_spot_reaches_target(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    png = tmp_path / "grid.png"
    assert main(["solve", "--spots", str(SPOTS), "--spot", "river", "--json", "--plot", str(png)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["exploitability_pct_pot"] <= 0.3
    assert out["player"] == "oop" and "check" in out["actions"] and out["board"] == "QsJh2h8d3c"  # the spot's own
    assert abs(sum(out["frequencies"].values()) - 1) < 1e-6
    assert png.stat().st_size > 10_000


@pytest.mark.slow
def test_turn_spot_reaches_target() -> None:
    spots, meta = load_spots(SPOTS)
    spot = spots["turn"]
    sol = solve_ranges(
        spot.state(),
        list(spot.ranges),
        spot.sizing,
        SolverConfig(iterations=400, device="cpu"),
        target_exploitability=0.003 * spot.pot,
        check_every=10,
    )
    assert sol.history[-1]["exploitability"] <= 0.003 * spot.pot


def test_a_spots_file_with_a_key_given_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "spots.yaml"
    path.write_text(SPOTS.read_text() + "pot: 4\n")  # the shipped file sets the pot already
    with pytest.raises(SpotError, match=r"duplicate key 'pot' \(first on line \d+\)"):
        load_spots(path)


def test_text_output_and_command_line_spot(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "solve",
            "--board",
            "AhKd7c2s9h",
            "--pot",
            "20",
            "--stack",
            "80",
            "--oop",
            "AA,KK,72o",
            "--ip",
            "QQ+,AK",
            "--iterations",
            "60",
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "exploitability" in text and "% of the pot" in text and "check" in text


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--board", "AhAhKd"], "same card twice"),
        (["--board", "AhKd"], "has 2 cards"),
        (["--board", "AhKdZz"], "not a rank"),
        (["--board", "AhKd7c", "--pot", "7"], "even number"),
        (["--board", "AhKd7c", "--stack", "0"], "effective stack"),
        (["--board", "AhKd7c", "--bets", "big"], "unknown bet size"),
        (["--board", "AhKd7c", "--oop", "AX"], "out-of-position range"),
        (["--board", "AhKd7c", "--oop", "AhKh", "--ip", "random"], "empty once the board"),
        (["--spots", str(SPOTS), "--spot", "preflop"], "no spot 'preflop'"),
        # the file's spot would be solved and the JSON would have named this board
        (["--spot", "river", "--board", "AsKsQs", "--pot", "40"], "--board, --pot: options of a spot given on the command"),
        (["--board", "AhKd7c", "--plot", "grid.xyz"], "--plot 'grid.xyz': give a .png file"),
        (["--board", "AhKd7c", "--plot", ""], "--plot '': give a .png file"),  # was no plot, without a word
        # was found after the whole solve
        (["--board", "AhKd7c", "--plot", "/no/such/folder/g.png"], "its folder /no/such/folder does not exist"),
    ],
)
def test_bad_spots_give_clear_errors(argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "--iterations", "5"] + argv) == 2
    err = capsys.readouterr().err
    assert "deepstack solve: error:" in err and fragment in err


def test_make_spot_validation_directly() -> None:
    with pytest.raises(SpotError, match="raise size"):
        make_spot("AhKd7c", 10, 90, "AA", "KK", raises=[-1])


def test_bench_solver_quick_prints_json_lines(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "solver", "--quick", "--spots", str(SPOTS)]) == 0
    rows = [json.loads(l) for l in capsys.readouterr().out.splitlines()]
    assert {r["impl"] for r in rows} >= {"ours", "postflop-solver (Rust, DCFR)"}
    for r in rows:
        assert {"bench", "value", "unit", "impl", "device", "threads"} <= set(r), r  # the recorded peers too
    ours = [r for r in rows if r["impl"] == "ours" and r["bench"] == "solver.spot"][0]
    assert ours["spot"] == "river" and ours["reached_target"]
    assert ours["exploitability_pct"] <= 0.3 and ours["device"] == pick_device("auto").type  # CUDA where present
    assert ours["iterations"] > 0 and ours["peak_mb"] > 0
    ref = [r for r in rows if r["impl"] != "ours" and r["bench"] == "solver.spot"][0]
    assert ref["spot"] == "river" and ref["recorded"] is True and "ratio" not in ref
    assert {r["bench"] for r in rows} >= {"solver.spot", "solver.deepstack_river"}


def test_a_spot_named_like_a_number_is_found_by_that_name(tmp_path: Path) -> None:
    """``1e3:`` was read as the float key 1000.0, so ``--spot 1e3`` said the file had no such spot."""
    path = tmp_path / "spots.yaml"
    path.write_text(SPOTS.read_text().replace("\n  river:", "\n  1e3:", 1))
    spots, _ = load_spots(path)
    assert "1e3" in spots and "river" not in spots


def test_bench_solver_quick_keeps_explicit_iteration_flags(capsys: pytest.CaptureFixture[str]) -> None:
    """--quick picks short re-solves only where no iteration flag was given (it used to override them)."""
    assert main(["bench", "solver", "--quick", "--spots", str(SPOTS), "--deepstack-river-iterations", "7"]) == 0
    rows = [json.loads(l) for l in capsys.readouterr().out.splitlines()]
    assert [r["iterations"] for r in rows if r["bench"] == "solver.deepstack_river"] == [7]
    assert not [r for r in rows if r["bench"] == "solver.deepstack_turn"]  # --quick's default for the turn: skip


def test_spot_facing_a_bet_and_iterations_only(capsys: pytest.CaptureFixture[str]) -> None:
    """--line replays this round's actions (OOP bets the pot: raise to 15 from 5 each), so the
    in-position player is to act facing the bet; --target 0 runs exactly --iterations."""
    args = [
        "solve",
        "--board",
        "QsJh2h8d3c",
        "--pot",
        "10",
        "--stack",
        "95",
        "--oop",
        "AA,KK,QQ,AK,JTs",
        "--ip",
        "QQ,JJ,TT,AQ,KQ",
        "--line",
        "r15",
        "--target",
        "0",
        "--iterations",
        "120",
        "--json",
    ]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["player"] == "ip" and out["iterations"] == 120
    assert out["actions"][:2] == ["fold", "call"] and out["actions"][-1] == "all-in 100"
    assert abs(sum(out["frequencies"].values()) - 1) < 1e-6


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("r3", "not legal here"),
        ("cc", "ends the round"),
        ("x", "is not c or r"),
        ("r500", "not legal here"),
        ("r1e3", "'r1e3' is not c or r"),  # was "r1 is not legal here"
        ("r\u0663\u0660", "is not c or r"),  # Arabic-Indic digits were read as r30
        ("r" + "1" * 5000, r"'r1111.*\.\.\..*' is not c or r"),  # int() refuses past 4300 digits, with its own text
    ],
)
def test_bad_lines_are_refused(line: str, message: str) -> None:
    with pytest.raises(SpotError, match=message):
        make_spot("QsJh2h8d3c", 10, 95, "AA", "KK", line=line)


_BASE = "pot: 10\neffective_stack: 95\noop_range: random\nip_range: random\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_BASE + "spots:\n  river: QsJh2h8d3c\n", "spot 'river': expected a mapping with a board"),
        (_BASE + "bet_pct: 100\nspots:\n  river: {board: QsJh2h8d3c}\n", "bet_pct: expected a list"),
        (_BASE + "raise_pct: [.inf]\nspots:\n  river: {board: QsJh2h8d3c}\n", "raise_pct: expected a list"),
        (_BASE.replace("10", "abc") + "spots:\n  river: {board: QsJh2h8d3c}\n", "pot: expected a whole number"),
        (_BASE + "spots:\n  river: {board: QsJh2hZz}\n", "board 'QsJh2hZz'"),
        (_BASE + 'allin: "no"\nspots:\n  river: {board: QsJh2h8d3c}\n', "allin: 'no' is not true or false"),
    ],
)
@pytest.mark.parametrize("command", [["solve"], ["bench", "solver", "--spot", "river"]])
def test_a_malformed_spots_file_is_one_line_naming_the_file(
    text: str, message: str, command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was a TypeError or a bare ValueError traceback; solve and bench solver now refuse alike."""
    path = tmp_path / "spots.yaml"
    path.write_text(text)
    assert main([*command, "--spots", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        f"deepstack {' '.join(command[:2]) if command[0] == 'bench' else 'solve'}: error: {path}: "
    )
    assert message in err[0]


def test_bench_solver_refuses_an_unknown_spot_name_before_solving(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "solver", "--spot", "river", "--spot", "nosuch"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing solved: the river was not timed first
    assert captured.err.strip().splitlines() == [
        f"deepstack bench solver: error: no spot 'nosuch' in {SPOTS}; it has river, turn, flop"
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--stack", "1000000000000"],
            "--stack 1000000000000: the effective stack must be from 1 to 2147483642 chips with --pot 10 (a player's half "
            "of the pot plus the stack must fit the ACPC dealer's 32-bit integers)",
        ),
        (["--stack", "2147483643"], "--stack 2147483643: the effective stack must be from 1 to 2147483642 chips with --pot 10"),
        (["--pot", "1000000000000"], "--pot 1000000000000: at most 4294967292 chips (half of it must fit"),
        (
            ["--pot", "4294967292", "--stack", "2"],
            "--stack 2: the effective stack must be from 1 to 1 chips with --pot 4294967292",
        ),
    ],
)
def test_a_pot_or_stack_past_32_bits_is_named_with_its_range(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--stack 1000000000000`` said "<spot>:5: stack value '1000000000005' does not fit the 32-bit integers the
    ACPC dealer reads": a line of a game definition made inside, and a number nobody typed."""
    assert main(["solve", "--board", "QsJh2h8d3c", "--iterations", "1", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"deepstack solve: error: {message}") and "<spot>" not in err[0]


def test_the_largest_stack_that_fits_is_solved(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "--board", "QsJh2h8d3c", "--iterations", "1", "--stack", "2147483642", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["iterations"] == 1


@pytest.mark.parametrize("command", [["solve"], ["bench", "solver", "--spot", "river"]])
def test_a_spots_file_stack_past_32_bits_is_named_with_its_key(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "spots.yaml"
    path.write_text(_BASE.replace("95", "3000000000") + "spots:\n  river: {board: QsJh2h8d3c}\n")
    assert main([*command, "--spots", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"error: {path}: effective_stack 3000000000: the effective stack must be from 1 to" in err[0]
