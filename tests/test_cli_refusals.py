"""Bad counts, sizes and seeds given on the command line: one line naming the option, exit 2,
before anything slow runs (no traceback, no endless loop, no file written)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from agent.cli.main import main


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The last stderr line of a command that must exit 2 (argparse exits, ours return)."""
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    assert code == 2, argv
    err = capsys.readouterr().err.strip().splitlines()
    assert err and "Traceback" not in "\n".join(err)
    return err[-1]


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "resolve", "--seed", "-1"],
        ["bench", "resolve", "--seed", "4294967296"],
        ["eval", "aivat", "--game", "leduc", "--hands", "2", "--seed", "-1"],
        ["eval", "lbr", "--game", "leduc", "--hands", "2", "--seed", "-1"],
        ["generate", "--game", "leduc", "--situations", "2", "--seed", "-1", "--out", "{tmp}/gen"],
        ["generate", "--game", "leduc", "--situations", "2", "--seed", "4294967296", "--out", "{tmp}/gen"],
        ["train", "--game", "leduc", "--data", "{tmp}/none", "--out", "{tmp}/net", "--seed", "-1"],
        ["campaign", "--budget", "5s", "--out", "{tmp}/camp", "--seed", "-1"],
        ["campaign", "--budget", "5s", "--out", "{tmp}/camp", "--seed", "4294967"],  # worker seeds past 32 bits
        ["match", "leduc", "2", "call", "call", "--seed", "-1"],
        ["play", "--game", "leduc", "--port", "1", "--seed", "-1"],
        ["blueprint", "train", "leduc", "10", "--out", "{tmp}/bp.npz", "--seed", "-1"],
    ],
)
def test_a_seed_outside_0_to_max_seed_is_refused(argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """numpy would wrap a seed of 2**32 onto another's stream, and the held-out checks compare seeds."""
    argv = [arg.replace("{tmp}", str(tmp_path)) for arg in argv]
    assert "argument --seed:" in _refused(argv, capsys)
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize(
    ("given", "named"),
    [
        (["--preflop-boards", "0"], "argument --preflop-boards:"),
        (["--preflop-boards", "-3"], "argument --preflop-boards:"),
        (["--iterations", "0"], "argument --iterations:"),
        (["--buckets", "0"], "argument --buckets:"),
        (["--boards", "0"], "argument --boards:"),
        (["--bins", "0"], "argument --bins:"),
        (["--sample", "-1"], "argument --sample:"),
        (["--sample", "3", "--buckets", "5"], "--sample 3 is less than --buckets 5"),
    ],
)
def test_buckets_refuses_counts_below_1_and_writes_nothing(
    given: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An all-zero matrix or a table of infinite EMD would be registered in the manifest as a model."""
    assert named in _refused(["buckets", "--out", str(tmp_path / "out"), *given], capsys)
    assert not (tmp_path / "out").exists()


def test_buckets_preflop_shows_progress_and_writes_the_matrix_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The counterpart of the refusals: small valid counts write the matrix (and its manifest entry)
    with a progress bar and no half-written file beside it."""
    out = tmp_path / "out"
    assert main(["buckets", "--street", "preflop", "--preflop-boards", "3", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "pre-flop matrix" in captured.err and "3/3" in captured.err
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "preflop-checkdown.npz"]


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "blueprint", "--batch", "0"],
        ["bench", "blueprint", "--batch", "-1"],
        ["bench", "blueprint", "--clusters", "0"],
        ["bench", "solver", "--repeat", "0"],
        ["bench", "solver", "--beside-busy", "-1"],
    ],
)
def test_bench_counts_that_would_hang_or_do_nothing_are_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert f"argument {argv[2]}:" in _refused(argv, capsys)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["bench", "generate", "--street", "turn", "--river-net", "models/holdem/river.pt", "--batch", "2"],
            "--river-net is for the turn row, one situation at a time (--batch 1)",
        ),
        (["bench", "generate", "--street", "preflop-aux", "--aux-flops", "30000"], "--aux-flops 30000: there are 22100 flops"),
        (["bench", "generate", "--street", "turn", "--turn-iterations", "-5"], "counts and --iterations must be positive"),
        (["bench", "blueprint", "--game", "leduc", "--clusters", "50", "--workers", ""], "--clusters 50: 50 public clusters"),
        (["eval", "exploitability", "--game", "leduc", "--iterations", "0"], "argument --iterations: '0' must be at least 1"),
        (["eval", "aivat", "--game", "leduc", "--hands", "2", "--iterations", "0"], "argument --iterations"),
        (["eval", "aivat", "--game", "leduc", "--hands", "99999999999"], "--hands must be from 2 to 100000000, not 99999999999"),
        # gigabytes of planned chunks before the first hand; a process per worker, chunks or not
        (["eval", "lbr", "--game", "leduc", "--bot", "random", "--setting", "fc/fc", "--hands", str(10**20)], "--hands must be"),
        (["eval", "lbr", "--game", "leduc", "--bot", "random", "--setting", "fc/fc", "--hands", "0"], "--hands must be from 1"),
        (
            ["eval", "lbr", "--game", "leduc", "--bot", "random", "--setting", "fc/fc", "--hands", "2", "--workers", "0"],
            "--workers",
        ),
        # OverflowError tracebacks from the sockets' timeouts
        (["match", "leduc", "2", "random", "random", "--start-timeout", "1e300"], "--start-timeout 1e+300 is not a positive"),
        (["match", "leduc", "2", "random", "random", "--t_hand", str(10**13)], "--t_hand 10000000000000 is not a positive"),
        # allocation tracebacks or memory growing without end
        (
            ["train", "--game", "leduc", "--data", "d", "--out", "o", "--name", "n", "--hidden", "1000000"],
            "--hidden must be from 1 to 16384",
        ),
        (
            ["train", "--game", "leduc", "--data", "d", "--out", "o", "--name", "n", "--layers", "100000000"],
            "--layers from 1 to 100",
        ),
        (["campaign", "--budget", "30s", "--out", "o", "--workers", "1000000000"], "--workers 1000000000 is not from 1 to 1024"),
        (["buckets", "--street", "flop", "--bins", "1000000000"], "'1000000000' is more than 1000 bins"),
        # ran until killed
        (["bench", "solver", "--quick", "--repeat", "99999999999999999999"], "'99999999999999999999' is more than 10000 repeats"),
        (["eval", "plot", "x", "--limit-ms", "nan"], "'nan' is not a finite number"),
        (["eval", "plot", "x", "--limit-ms", "-5"], "'-5' is not a positive number of ms"),
    ],
)
def test_bench_and_eval_values_that_crashed_are_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each was a traceback after the arguments were read (or a run with a silent fallback)."""
    err = _refused(argv, capsys)
    assert message in err and "Traceback" not in err


def test_distributed_training_refuses_an_empty_batch() -> None:
    """The loop over batches never advances with batch 0: refused, whoever calls it."""
    from agent.blueprint.distributed import train_distributed
    from agent.blueprint.mccfr import Blueprint
    from agent.solver.tree import FCPA
    from protocol.gamedef import load_game

    with pytest.raises(ValueError, match="batch 0"):
        train_distributed(Blueprint.create(load_game("leduc-limit"), FCPA), 10, 3, 1, batch=0)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["solve", "--board", "QsJh2h8d3c", "--bets", "inf"], "argument --bets: 'inf' is not a finite pot fraction"),
        (["solve", "--board", "QsJh2h8d3c", "--raises", "0.5,inf"], "argument --raises: '0.5,inf': 'inf' is not"),
        (["solve", "--board", "QsJh2h8d3c", "--bets", "nan"], "argument --bets: 'nan' is not a finite pot fraction"),
        (["blueprint", "train", "leduc-limit", "10", "--out", "{tmp}/bp.npz", "--sizing", "inf"], "argument --sizing: 'inf'"),
        (
            ["blueprint", "train", "leduc-limit", "10", "--out", "{tmp}/bp.npz", "--sizing", "1;nan/1"],
            "argument --sizing: '1;nan/1'",
        ),
    ],
)
def test_bet_sizes_must_be_finite(argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """inf overflowed into a traceback and nan passed the positivity check unnamed."""
    assert message in _refused([a.replace("{tmp}", str(tmp_path)) for a in argv], capsys)
    assert not (tmp_path / "bp.npz").exists()


@pytest.mark.parametrize("value", ["nan", "-1", "5"])
def test_blueprint_eval_threshold_must_be_in_0_to_1(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert "argument --threshold:" in _refused(["blueprint", "eval", "x.npz", "--threshold", value], capsys)


def test_aivat_json_of_two_hands_is_valid_json(capsys: pytest.CaptureFixture[str]) -> None:
    """One duplicate pair has an infinite 95% interval: null, not the invalid ``Infinity``."""
    import json

    assert main(["eval", "aivat", "--game", "leduc", "--hands", "2", "--bot", "random", "--opponent", "call", "--json"]) == 0
    out = json.loads(capsys.readouterr().out, parse_constant=lambda name: pytest.fail(f"{name} in the JSON output"))
    assert out["duplicate"]["ci95"] is None and out["duplicate"]["n"] == 1
    assert main(["eval", "aivat", "--game", "leduc", "--hands", "4", "--bot", "random", "--opponent", "call"]) == 0
    text = capsys.readouterr().out
    assert "duplicate:" in text and "the duplicate rows, one sample per pair, are the ones that account for it" in text


def test_dumps_writes_null_for_non_finite_numbers() -> None:
    from agent.cli.common import dumps

    assert dumps({"a": float("inf"), "b": [float("nan"), 1.5], "c": (2, -float("inf"))}) == (
        '{"a": null, "b": [null, 1.5], "c": [2, null]}'
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "--board", "QsJh2h8d3c", "--iterations", "-3"],
        ["solve", "--board", "QsJh2h8d3c", "--iterations", "0"],
        ["solve", "--board", "QsJh2h8d3c", "--target", "-1"],
        ["solve", "--board", "QsJh2h8d3c", "--target", "nan"],
        ["prepare", "leduc", "--first-round", "-1"],
    ],
)
def test_solve_and_prepare_refuse_negative_counts_and_targets(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """``solve --iterations -3`` ran and printed 'after -3 iterations'; a negative target was taken."""
    assert f"argument {argv[-2]}:" in _refused(argv, capsys)


def test_arg_types_take_what_is_valid() -> None:
    from agent.cli.common import finite_float, positive_int, pot_fractions, seed

    assert seed("0") == 0 and seed(str(2**32 - 1)) == 2**32 - 1
    assert positive_int("1") == 1
    assert finite_float("2.5") == 2.5
    assert pot_fractions("0.5,1;1/1") == "0.5,1;1/1" and pot_fractions("") == ""


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "aivat", "--game", "leduc", "--bot", "equilibrium", "--opponent", "random", "--hands", "40"],
        ["eval", "lbr", "--game", "leduc", "--bot", "equilibrium", "--setting", "56/56", "--hands", "4"],
    ],
)
def test_the_equilibrium_bot_facing_a_size_off_its_tree_is_named_not_a_traceback(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """The exact Leduc equilibrium knows fold, call, pot and all-in only; a random opponent's or
    an LBR setting's other sizes end the run with one line saying so (it was a KeyError)."""
    assert "is outside it" in _refused(argv, capsys)


_LEDUC_LIKE = (
    "GAMEDEF\nlimit\nnumPlayers = {players}\nnumRounds = 2\nblind = {blinds}\nraiseSize = 2 4\nfirstPlayer = 1 1\n"
    "maxRaises = 2 2\nnumSuits = 2\nnumRanks = 3\nnumHoleCards = {hole}\nnumBoardCards = {board}\nEND GAMEDEF\n"
)


@pytest.mark.parametrize(
    ("fields", "argv", "named"),
    [
        ({"players": 3, "blinds": "1 1 0", "hole": 1, "board": "0 1"}, ["random", "random"], "has 3 players; match plays two"),
        ({"players": 2, "blinds": "1 1", "hole": 2, "board": "0 0"}, ["deepstack", "random"], "DeepStack bot plays Leduc"),
        ({"players": 2, "blinds": "1 1", "hole": 1, "board": "1 1"}, ["deepstack", "random"], "DeepStack bot plays Leduc"),
    ],
    ids=["three-players", "two-hole-cards", "board-in-round-1"],
)
def test_match_refuses_games_it_cannot_play_by_name(
    fields: dict, argv: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Leduc-sized game with other cards is not Leduc to the DeepStack bot (its network and hand
    space are made for one hole card and one board card); a 3-player game is the dealer's."""
    game = tmp_path / "g.game"
    game.write_text(_LEDUC_LIKE.format(**fields))
    assert named in _refused(["match", str(game), "4", *argv, "--log-dir", str(tmp_path / "logs")], capsys)


def test_a_game_without_blinds_reports_chips_not_nan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = tmp_path / "g.game"
    game.write_text(_LEDUC_LIKE.format(players=2, blinds="0 0", hole=1, board="0 1"))
    assert main(["match", str(game), "6", "random", "call", "--log-dir", str(tmp_path / "logs")]) == 0
    out = capsys.readouterr().out
    assert "chips (95% CI) over 6 hands" in out and "nan" not in out


def _leduc_config(tmp_path: Path, game: str, net: str) -> Path:
    cfg = tmp_path / f"{game}.yaml"
    section = game.replace("-", "_")
    cfg.write_text(f"bot:\n  {section}:\n    value_net: {Path(net).resolve()}\n    start_cache: null\n")
    return cfg


@pytest.mark.parametrize(
    ("game", "net", "named"),
    [
        ("leduc", "models/leduc/leduc-limit-ens.pt", "trained for leduc-limit (limit betting); this game is nolimit"),
        ("leduc-limit", "models/leduc/leduc.pt", "trained for leduc (nolimit betting); this game is limit"),
        ("leduc", "models/holdem/river-small.pt", "not leduc's 6 hands and 6 cards"),
    ],
)
def test_a_leduc_network_of_the_other_betting_or_game_is_refused(
    game: str, net: str, named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Limit values played in no-limit Leduc ran without a word (147.5 mbb/g exploitable against 102.6)."""
    cfg = _leduc_config(tmp_path, game, net)
    line = _refused(["eval", "exploitability", "--game", game, "--iterations", "3", "--config", str(cfg)], capsys)
    assert named in line and "value_net" in line


def test_exact_evaluation_refuses_a_three_player_leduc(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = tmp_path / "l3p.game"
    text = Path("protocol/games/leduc.limit.2p.game").read_text()
    game.write_text(text.replace("numPlayers = 2", "numPlayers = 3").replace("blind = 1 1", "blind = 1 1 1"))
    line = _refused(["eval", "exploitability", "--game", str(game), "--exact"], capsys)
    assert "two-player Leduc" in line


def test_export_policy_refuses_a_folder_before_it_solves(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It failed with 'Is a directory' after minutes of re-solving."""
    line = _refused(["eval", "export-policy", "--game", "leduc-limit", "--out", str(tmp_path)], capsys)
    assert line.endswith(f"--out {tmp_path}: cannot be written (a folder)")


@pytest.mark.parametrize(
    "argv",
    [
        ["prepare", "leduc", "--out", ""],  # wrote the config's start_cache: the shipped models/start/leduc.pkl
        ["prepare", "leduc", "--config", ""],
        ["generate", "--game", "leduc", "--situations", "2", "--out", " "],
        ["match", "leduc", "2", "call", "call", "--log-dir", ""],
        ["play", "--game", "leduc", "--port", "1", "--log-json", ""],
        ["eval", "plot", "x", "--out", ""],
    ],
)
def test_an_empty_path_is_refused_not_taken_for_a_default(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert _refused(argv, capsys).endswith(": an empty path")


def test_damaged_data_files_are_named_not_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An empty or cut-short ``.npz`` (EOFError, BadZipFile) and a shard whose arrays disagree
    (IndexError deep in training) reached the user as tracebacks with status 1."""
    import numpy as np

    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    cut = tmp_path / "cut.npz"
    np.savez(cut, regrets=np.zeros(1000))
    cut.write_bytes(cut.read_bytes()[:100])
    for path in (empty, cut):
        last = _refused(["blueprint", "train", "leduc", "10", "--out", str(path)], capsys)
        assert last.startswith(f"deepstack blueprint train: error: {path}: not a blueprint file (")
    data = tmp_path / "data"
    data.mkdir()
    np.savez(data / "shard-00000.npz", inputs=np.zeros((4, 10)), targets=np.zeros((2, 6)), masks=np.zeros((4, 6)))
    argv = ["train", "--game", "leduc", "--epochs", "1", "--name", "n", "--out", str(tmp_path / "o"), "--data", str(data)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "shard-00000.npz: its arrays have different numbers of rows (inputs 4, targets 2, masks 4)" in err
    assert "Traceback" not in err


def test_export_policy_refuses_an_out_under_a_file_before_it_solves(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It passed the up-front check and failed with a bare [Errno 17] after the whole re-solve."""
    (tmp_path / "afile").write_text("kept")
    out = tmp_path / "afile" / "p.json"
    last = _refused(["eval", "export-policy", "--game", "leduc", "--out", str(out)], capsys)
    assert last.startswith(f"deepstack eval export-policy: error: --out {out}: its folder cannot be made")
    assert last.endswith(f"({tmp_path / 'afile'} is a file, not a folder)")  # was (File exists)
    assert (tmp_path / "afile").read_text() == "kept"


def test_a_game_the_blueprint_has_no_file_for_names_the_blueprint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It said the DeepStack bot did not play the game, for a seat that was the blueprint."""
    from protocol.gamedef import load_game

    source = load_game("leduc").to_text()
    assert "numRanks = 3" in source
    game = tmp_path / "leduc4.game"
    game.write_text(source.replace("numRanks = 3", "numRanks = 4"))
    last = _refused(["match", str(game), "2", "blueprint", "call"], capsys)
    assert "the blueprint bot has blueprints for Leduc and heads-up no-limit hold'em, not" in last


def test_an_output_of_the_wrong_kind_is_named_with_its_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A bare '[Errno 17] File exists' (status 1), or the name of a temporary file, reached the user."""
    afile, adir = tmp_path / "afile", tmp_path / "adir"
    afile.write_text("kept")
    adir.mkdir()
    last = _refused(["match", "leduc", "2", "call", "call", "--log-dir", str(afile)], capsys)
    assert last.endswith(
        f"{afile}: is a file, not a folder; give a new --log-dir, or leave it out for a new runs/match-GAME-TIME folder"
    )
    logs = tmp_path / "logs"
    assert main(["match", "leduc", "2", "call", "call", "--log-dir", str(logs)]) == 0
    capsys.readouterr()
    assert _refused(["eval", "plot", str(logs), "--out", str(afile)], capsys).endswith(
        f"--out {afile}: is a file; give a folder for the PNG files"
    )
    net = "models/leduc/leduc.pt"
    last = _refused(["ensemble", "--name", "x", "--out", str(adir), net, net], capsys)
    assert last == f"deepstack ensemble: error: --out {adir}: is a folder; give the ensemble's file name"
    assert afile.read_text() == "kept" and list(adir.iterdir()) == []


@pytest.mark.parametrize("name", ["../keep/notes", "", ".hidden", "a/b", "x" * 101])
def test_train_refuses_a_name_that_is_no_file_name(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--name ../keep/notes`` wrote a network over ``keep/notes.pt`` outside ``--out``; ``--name ''`` wrote ``OUT/.pt``."""
    argv = ["train", "--game", "leduc", "--data", str(tmp_path / "none"), "--out", str(tmp_path / "net"), "--name", name]
    assert "argument --name:" in _refused(argv, capsys)
    assert list(tmp_path.iterdir()) == []


def test_train_refuses_a_name_that_is_another_files_entry_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``train --out models/holdem --name buckets-flop`` replaced the flop bucket table's manifest entry with a
    network's (the bot then refused the table); now refused before any data is read, the manifest unchanged."""
    manifest = tmp_path / "models" / "manifest.json"
    (tmp_path / "models" / "holdem").mkdir(parents=True)
    (tmp_path / "models" / "holdem" / "buckets-flop.npz").write_bytes(b"table")
    text = '{"models": {"buckets-flop": {"path": "holdem/buckets-flop.npz", "sha256": "ab"}}}'
    manifest.write_text(text)
    out = tmp_path / "models" / "holdem"
    argv = ["train", "--game", "leduc", "--data", str(tmp_path / "none"), "--out", str(out), "--name", "buckets-flop"]
    assert _refused(argv, capsys).endswith(
        "the name 'buckets-flop' is the entry of holdem/buckets-flop.npz, not of buckets-flop.pt; give another name "
        "(or another output folder)"
    )
    assert manifest.read_text() == text and sorted(p.name for p in out.iterdir()) == ["buckets-flop.npz"]


def test_train_refuses_an_out_it_cannot_make_with_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As every command's refused output path (it was exit 2, after the data was read)."""
    (tmp_path / "afile").write_text("x")
    argv = ["train", "--game", "leduc", "--data", str(tmp_path / "none"), "--out", str(tmp_path / "afile" / "net"), "--name", "n"]
    assert main(argv) == 1
    assert capsys.readouterr().err.startswith(f"deepstack train: error: cannot write to {tmp_path / 'afile' / 'net'}: ")


@pytest.mark.parametrize(
    ("situations", "shard_size", "named"),
    [
        ("10000000000", "500", "--situations 10000000000: at most 1,000,000,000"),
        (
            "5000000",
            "1",
            "--situations 5000000 in shards of 1 are 5,000,000 shards: at most 4,000,000 (give a larger --shard-size)",
        ),
    ],
)
def test_generate_refuses_more_shards_than_it_can_look_up(
    situations: str, shard_size: str, named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """10^10 situations looked every shard up before solving one, for minutes, as memory grew."""
    argv = ["generate", "--game", "leduc", "--situations", situations, "--shard-size", shard_size, "--out", str(tmp_path / "g")]
    assert _refused(argv, capsys) == f"deepstack generate: error: {named}"
    assert list(tmp_path.iterdir()) == []


def test_buckets_checks_the_manifest_before_the_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A damaged manifest in --out was found only when the first table was registered, after minutes of
    clustering, and ended in a traceback; the table was left written without its entry."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").write_text("{not json")
    assert "unreadable model manifest" in _refused(
        ["buckets", "--street", "preflop", "--preflop-boards", "3", "--out", str(out)], capsys
    )
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json"]


def test_buckets_refuses_an_out_it_cannot_make_with_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It ended in a bare errno after the matrix was computed."""
    (tmp_path / "afile").write_text("x")
    out = tmp_path / "afile" / "b"
    assert main(["buckets", "--street", "preflop", "--preflop-boards", "3", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"deepstack buckets: error: cannot write to {out}: ") and "pre-flop matrix" not in err


@pytest.mark.parametrize(
    ("arrays", "named"),
    [
        ({"inputs": np.zeros((2, 10)), "targets": np.zeros((2, 6))}, "no 'masks' array"),
        (
            {"inputs": np.zeros((2, 10)).astype(str), "targets": np.zeros((2, 6)), "masks": np.ones((2, 6))},
            "its inputs are a 2-D table of <U32",
        ),
        (
            {"inputs": np.zeros((2, 10)), "targets": np.zeros((2, 6), complex), "masks": np.ones((2, 6))},
            "its targets are a 2-D table of complex128",
        ),
        ({"inputs": np.zeros((2, 10)), "targets": np.zeros((2, 6)), "masks": np.ones(2)}, "its masks are a 1-D table of float64"),
        (
            {"inputs": np.zeros((2, 10)), "targets": np.zeros((2, 6)), "masks": np.ones((2, 5))},
            "masks (2, 5) and targets (2, 6) differ",
        ),
    ],
)
def test_train_names_a_shard_whose_rows_are_not_a_network_s(
    arrays: dict, named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing array was "DIR: 'masks'", strings a TypeError traceback inside isfinite, complex numbers a
    RuntimeError traceback inside the loss, a flat mask a concatenate message naming no file."""
    data = tmp_path / "data"
    data.mkdir()
    np.savez(data / "shard-00000.npz", **arrays)
    argv = ["train", "--game", "leduc", "--epochs", "1", "--name", "n", "--out", str(tmp_path / "o"), "--data", str(data)]
    assert f"{data / 'shard-00000.npz'}: {named}" in _refused(argv, capsys)


def test_an_output_under_a_file_names_the_file_in_the_way(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Such outputs ended in "[Errno 20] Not a directory: 'afile/m'" or "[Errno 17] File exists: 'afile'"
    (the second read as if the output existed); now the file that stands where a folder is needed is named."""
    afile = tmp_path / "afile"
    afile.write_text("kept")
    cases = [
        (
            ["match", "leduc", "2", "call", "call", "--log-dir", str(afile / "m")],
            f"match: error: cannot write to {afile / 'm'}: ",
        ),
        (
            ["blueprint", "train", "leduc", "10", "--out", str(afile / "bp.npz")],
            f"blueprint train: error: cannot write to {afile / 'bp.npz'}: ",
        ),
        (
            ["generate", "--game", "leduc", "--situations", "2", "--out", str(afile / "g")],
            f"generate: error: cannot write to {afile / 'g'}: ",
        ),
    ]
    for argv, before in cases:
        assert main(argv) == 1, argv
        last = capsys.readouterr().err.strip().splitlines()[-1]
        assert last.startswith(f"deepstack {before}{afile} is a file, not a folder"), last
    assert afile.read_text() == "kept"


def test_a_failed_rename_names_the_file_asked_for_not_the_temporary_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder where the network goes: the message led with the temporary file, already deleted."""
    data, out = tmp_path / "data", tmp_path / "o"
    assert main(["generate", "--game", "leduc", "--situations", "2", "--iterations", "5", "--out", str(data)]) == 0
    (out / "x.pt").mkdir(parents=True)
    assert main(["train", "--game", "leduc", "--data", str(data), "--out", str(out), "--name", "x", "--epochs", "1"]) == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last == f"deepstack train: error: cannot write to {out}: {out / 'x.pt'}: Is a directory"


def test_a_refused_train_leaves_no_empty_out_behind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--out is made before the data is read (to refuse a path it cannot write at once); a refusal then left it empty."""
    out = tmp_path / "new" / "models"
    assert f"{tmp_path / 'none'}: no such folder" in _refused(
        ["train", "--game", "leduc", "--data", str(tmp_path / "none"), "--out", str(out), "--name", "n"], capsys
    )
    assert list(tmp_path.iterdir()) == []


def test_blueprint_train_refuses_an_out_it_cannot_write_and_endless_runs_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An --out under a file failed after the first --save-every iterations (their training lost); 10^23
    iterations ran until killed; a blueprint whose sums are strings was an isfinite traceback."""
    (tmp_path / "afile").write_text("kept")
    out = tmp_path / "afile" / "bp.npz"
    assert main(["blueprint", "train", "leduc", "10", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err == f"deepstack blueprint train: error: cannot write to {out}: {tmp_path / 'afile'} is a file, not a folder\n"
    argv = ["blueprint", "train", "leduc", "99999999999999999999999", "--out", str(tmp_path / "bp.npz")]
    assert "at most 1,000,000,000,000 in one run" in _refused(argv, capsys)
    assert _refused(["blueprint", "train", "leduc", "10", "--out", str(tmp_path)], capsys).endswith(
        "is a folder; give the blueprint's file (.npz)"
    )
    good = tmp_path / "bp.npz"
    assert main(["blueprint", "train", "leduc", "10", "--out", str(good)]) == 0
    arrays = dict(np.load(good))
    for name, damage, named in (
        ("strings", {"strategy_sum": arrays["strategy_sum"].astype(str)}, "its strategy sums are of <U"),
        ("negative", {"strategy_sum": -1 - np.abs(arrays["strategy_sum"])}, "its strategy sums hold negative numbers"),
        ("flat", {"regrets": arrays["regrets"][:-1]}, "its regrets are of shape"),
    ):
        bad = tmp_path / f"{name}.npz"
        np.savez(bad, **{**arrays, **damage})
        assert named in _refused(["blueprint", "eval", str(bad)], capsys)


def test_spots_and_paired_folders_of_the_wrong_kind_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A binary --spots was "'utf-8' codec can't decode byte ..." naming no file; a folder a raw errno; lbr-paired
    said a missing folder had no run.json, and --png FOLDER wrote FOLDER.png beside it without a word."""
    binary = tmp_path / "b.npz"
    np.savez(binary, a=np.arange(100.0))
    assert (
        _refused(["solve", "--spots", str(binary)], capsys)
        == f"deepstack solve: error: {binary}: not a text file (not UTF-8), so not a spots file"
    )
    assert _refused(["solve", "--spots", str(tmp_path)], capsys).endswith(f"{tmp_path}: is a folder; give a spots file (.yaml)")
    missing = tmp_path / "none"
    assert _refused(["eval", "lbr-paired", str(missing), str(tmp_path)], capsys).endswith(f"{missing}: no such folder")
    png = tmp_path / "pics"
    png.mkdir()
    assert _refused(["eval", "lbr-paired", str(tmp_path), str(tmp_path), "--png", str(png)], capsys).endswith(
        "is a folder; give the picture's file name"
    )
    assert not (tmp_path / "pics.png").exists()
    svg = tmp_path / "paired.svg"  # the picture is PNG data: it would be written under a name that says SVG
    assert _refused(["eval", "lbr-paired", str(tmp_path), str(tmp_path), "--png", str(svg)], capsys).endswith(
        f"--png {svg}: give a .png file"
    )


def _aivat_log_of_an_edited_first_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], match: list[str], field: int, edit: Callable[[str], str]
) -> tuple[Path, str]:
    """A match's dealer log with one field of its first STATE line edited, and the last line of the
    refusal eval aivat-log gives for it (the log's bot named by the match's second argument)."""
    logs = tmp_path / "m"
    assert main(["match", *match, "--log-dir", str(logs)]) == 0
    [log] = logs.glob("*.log")
    lines = log.read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("STATE:"))
    fields = lines[first].split(":")
    fields[field] = edit(fields[field])
    lines[first] = ":".join(fields)
    log.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    player = match[2] if match[2] != match[3] else f"{match[2]}-1"
    return log, _refused(["eval", "aivat-log", str(logs), "--player", player], capsys)


def test_aivat_log_names_the_log_and_hand_of_a_bad_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A repeated card or a bad betting string in a dealer log was named by neither file nor hand."""
    log, last = _aivat_log_of_an_edited_first_hand(tmp_path, capsys, ["leduc", "2", "call", "random"], 3, lambda _: "Qs|Qs/Qs")
    assert last.startswith(f"deepstack eval aivat-log: error: {log}: hand 0: ") and "repeated card" in last


def test_aivat_log_names_a_no_limit_raise_without_its_amount(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An 'r' with no raise-to amount in a no-limit log ended in "invalid literal for int() with base 10: ''"."""
    log, last = _aivat_log_of_an_edited_first_hand(tmp_path, capsys, ["hunl", "2", "call", "call"], 2, lambda b: "r" + b)
    assert last.startswith(f"deepstack eval aivat-log: error: {log}: hand 0: ") and "raise without its raise-to amount" in last


def test_an_lbr_config_given_is_read_whatever_the_bot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A --config that did not exist ran with --bot call (silently unused); a folder was 'no such config file'."""
    argv = ["eval", "lbr", "--game", "leduc", "--bot", "call", "--hands", "1", "--setting", "fc/fc", "--config"]
    assert _refused([*argv, str(tmp_path / "none.yaml")], capsys).endswith(f"{tmp_path / 'none.yaml'}: no such config file")
    assert _refused([*argv, str(tmp_path)], capsys).endswith(f"{tmp_path}: a folder, not a config file")


def test_exploitability_of_another_command_s_json_says_it_is_not_a_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An LBR run.json given as --policy said "information set 'Qh|-|' is missing"."""
    run = tmp_path / "run.json"
    run.write_text('{"game": "leduc", "bot": "call", "seed": 0}')
    last = _refused(["eval", "exploitability", "--game", "leduc", "--policy", str(run)], capsys)
    assert last.endswith(f"{run}: not a policy file (its keys are not information sets like 'Ks|-|' but game, bot, seed)")


def test_blueprint_abstraction_refuses_its_out_before_clustering(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder as --out started minutes of clustering before anything said so."""
    assert _refused(["blueprint", "abstraction", "--out", str(tmp_path)], capsys).endswith(
        "is a folder; give the tables' file (.npz)"
    )
    (tmp_path / "afile").write_text("kept")
    assert main(["blueprint", "abstraction", "--out", str(tmp_path / "afile" / "t.npz")]) == 1
    assert capsys.readouterr().err.endswith(f"{tmp_path / 'afile'} is a file, not a folder\n")


@pytest.mark.parametrize("under", [False, True])
def test_generate_names_an_out_it_cannot_make_without_resume_advice(
    under: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--out README.md`` said "... (shards already written are kept; the same command resumes)": nothing
    was written, and no rerun could work; now said before anything runs, as ``train`` says it."""
    afile = tmp_path / "afile"
    afile.write_text("kept")
    out = afile / "sub" if under else afile
    assert main(["generate", "--game", "leduc", "--situations", "2", "--out", str(out)]) == 1  # as train's --out
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"deepstack generate: error: cannot write to {out}: {afile} is a file, not a folder"]
    assert afile.read_text() == "kept"


def test_generate_promises_a_resume_only_where_shards_were_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails (no space left) names --out; the resume advice only when the folder holds shards."""
    import agent.cli.generate as cli_generate
    from agent.training.data_folder import shard_path

    out = tmp_path / "gen"

    def no_space(spec: object, folder: Path) -> dict[str, float]:
        raise OSError(28, "No space left on device", str(folder / "generate.json"))

    monkeypatch.setattr(cli_generate, "generate", no_space)
    argv = ["generate", "--game", "leduc", "--situations", "2", "--out", str(out)]
    assert main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"deepstack generate: error: cannot write to {out}: ") and "resumes" not in err
    assert not out.exists()  # the folder made for the run, left empty, is gone
    out.mkdir()
    shard_path(out, 0).write_bytes(b"a shard")
    assert main(argv) == 1
    assert capsys.readouterr().err.strip().endswith("(shards already written are kept; the same command resumes)")


@pytest.mark.parametrize("given", [["--street", "river"], ["--buckets", "models/holdem/buckets-turn.npz"]])
def test_train_refuses_hold_em_options_for_a_leduc_game(
    given: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``train --game leduc --street river`` trained a Leduc network, --street ignored (generate refuses it)."""
    out = tmp_path / "net"
    argv = ["train", "--game", "leduc", "--data", str(tmp_path / "none"), "--out", str(out), "--name", "n", *given]
    assert _refused(argv, capsys) == "deepstack train: error: --street and --buckets are for hold'em games, not leduc"
    assert not out.exists()


@pytest.mark.parametrize("game", [["--game", "leduc"], ["--game", "hunl", "--street", "turn"]])
def test_train_refuses_river_buckets_for_another_network(
    game: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--river-buckets (equity steps of a river network) was silently ignored for a Leduc or turn network."""
    argv = [
        "train",
        *game,
        "--data",
        str(tmp_path / "none"),
        "--out",
        str(tmp_path / "o"),
        "--name",
        "n",
        "--river-buckets",
        "50",
    ]
    assert _refused(argv, capsys) == "deepstack train: error: --river-buckets is for --street river"


def test_an_input_of_the_wrong_kind_is_not_said_to_be_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file given for a folder, or a folder for a file, was reported "no such folder" / "no such
    file" / "no shard-*.npz files (run deepstack generate first)": the path exists, it is the other kind."""
    afile = tmp_path / "notes.md"
    afile.write_text("x")
    train = ["train", "--game", "leduc", "--name", "n", "--out", str(tmp_path / "o"), "--data"]
    assert _refused(train + [str(afile)], capsys).endswith(f"{afile} is a file, not a folder")
    assert _refused(train + [str(tmp_path / "nope")], capsys).endswith(f"{tmp_path / 'nope'}: no such folder")
    assert not (tmp_path / "o").exists()
    lbr = tmp_path / "lbr"
    assert main("eval lbr --game leduc --bot random --hands 2 --chunk 2 --setting fcp/fcp --out".split() + [str(lbr)]) == 0
    capsys.readouterr()
    assert _refused(["eval", "lbr-paired", str(lbr), str(afile)], capsys).endswith(f"{afile} is a file, not a folder")
    logs = tmp_path / "m"
    assert main(["match", "leduc", "2", "random", "call", "--log-dir", str(logs)]) == 0
    capsys.readouterr()
    said = _refused(["eval", "aivat-log", str(logs), "--decisions", str(tmp_path)], capsys)
    assert said.endswith(f"--decisions {tmp_path} is a folder, not a file")
