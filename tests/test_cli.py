"""The installed ``deepstack`` entry point, its subcommands' help, and the dealer as a process."""

from __future__ import annotations

import argparse
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from protocol.gamedef import Game
from tests.conftest import interrupt_when

SUBCOMMANDS = ["play", "match", "dealer"]
ROOT = Path(__file__).resolve().parent.parent


def deepstack() -> list[str]:
    exe = shutil.which("deepstack") or str(Path(sys.executable).parent / "deepstack")
    return [exe] if Path(exe).exists() else [sys.executable, "-m", "agent.cli"]


def start_dealer(*argv: str) -> tuple[subprocess.Popen[str], list[str]]:
    """``deepstack dealer ARGV`` as a process, and the ports it printed (one per seat)."""
    dealer = subprocess.Popen(deepstack() + ["dealer", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert dealer.stdout is not None
    return dealer, dealer.stdout.readline().split()


def test_top_level_help_lists_subcommands() -> None:
    out = subprocess.run(deepstack() + ["--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    for name in SUBCOMMANDS:
        assert name in out.stdout


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_each_subcommand_has_help(name: str) -> None:
    out = subprocess.run(deepstack() + [name, "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "usage:" in out.stdout


def _parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield " ".join(path), parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _parsers(child, path + (name,))


def test_every_command_and_subcommand_formats_its_help() -> None:
    """All of them, nested ones included (``eval lbr``, ``eval plot``, ...): a stray ``%`` in a
    help string makes ``--help`` crash, for the parent command too."""
    from agent.cli.main import build_parser

    names = []
    for name, parser in _parsers(build_parser()):
        assert "usage:" in parser.format_help(), name
        names.append(name)
    assert {"eval", "eval lbr", "eval plot", "generate", "train", "bench"} <= set(names)


@pytest.mark.parametrize("suite", ["solver", "native", "generate", "resolve"])
def test_each_bench_suite_has_help(suite: str, capsys: pytest.CaptureFixture[str]) -> None:
    from agent.cli.main import BENCHES, main

    assert suite in BENCHES
    with pytest.raises(SystemExit) as exit_:
        main(["bench", suite, "--help"])
    assert exit_.value.code == 0 and "usage:" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "lbr", "--game", "leduc", "--bot", "random", "--setting", "fc/fc", "--hands", "4", "--out", "{file}"],
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
            "{file}",
        ],
    ],
)
def test_an_output_path_that_is_a_file_is_one_line_and_exit_1(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent.cli.main import main

    file = tmp_path / "a-file"
    file.write_text("kept")
    assert main([a.replace("{file}", str(file)) for a in argv]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"deepstack {argv[0]}") and str(file) in err[0]
    assert file.read_text() == "kept"


@pytest.mark.parametrize("seats", [("random", "call"), ("deepstack", "random")])
def test_ctrl_c_ends_a_match_with_one_line_and_its_log_whole(tmp_path: Path, seats: tuple[str, str]) -> None:
    """Ctrl-C (SIGINT to the process group, as a terminal sends it): status 130, one line, no
    traceback, and the dealer's log holds whole hands up to where it stopped. With a built-in
    DeepStack seat the process aborted as it exited (status 134, 'terminate called without an
    active exception': its thread was still inside torch); the match is now stopped first."""
    logs = tmp_path / "logs"

    def some_hands_logged() -> bool:
        log = next(logs.glob("*.log"), None)
        return log is not None and log.stat().st_size > 2000

    argv = [*deepstack(), "match", "leduc", "1000000", *seats, "--log-dir", str(logs)]
    returncode, err, left = interrupt_when(argv, some_hands_logged)
    assert returncode == 130 and not left
    assert err.strip() == f"deepstack match: interrupted: the hands played so far are in {logs.resolve()}"
    lines = next(logs.glob("*.log")).read_text().splitlines()
    states = [line for line in lines if line.startswith("STATE:")]
    assert len(states) >= 10 and all(line.count(":") == 5 for line in states)
    assert [int(line.split(":")[1]) for line in states] == list(range(len(states)))


def test_sigterm_ends_a_match_as_ctrl_c_does_with_status_143(tmp_path: Path) -> None:
    """``docker stop`` sends SIGTERM to PID 1, which has no default action for it: the command
    must end on its own (status 143, one line, its log whole), not wait to be killed."""
    logs = tmp_path / "logs"

    def some_hands_logged() -> bool:
        log = next(logs.glob("*.log"), None)
        return log is not None and log.stat().st_size > 2000

    argv = [*deepstack(), "match", "leduc", "1000000", "random", "call", "--log-dir", str(logs)]
    returncode, err, left = interrupt_when(argv, some_hands_logged, sig=signal.SIGTERM)
    assert returncode == 143 and not left
    assert err.strip() == f"deepstack match: terminated: the hands played so far are in {logs.resolve()}"
    states = [line for line in next(logs.glob("*.log")).read_text().splitlines() if line.startswith("STATE:")]
    assert [int(line.split(":")[1]) for line in states] == list(range(len(states)))


def test_dealer_process_with_two_play_processes(tmp_path: Path) -> None:
    dealer, ports = start_dealer("m", "leduc-limit", "50", "9", "A", "B", "-q", "--log-dir", str(tmp_path))
    assert len(ports) == 2 and all(p.isdigit() for p in ports)
    players = [
        subprocess.Popen(
            deepstack() + ["play", "--game", "leduc-limit", "--bot", bot, "--port", port],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for bot, port in zip(["random", "call"], ports)
    ]
    outs = [p.communicate(timeout=60) for p in players]
    out, err = dealer.communicate(timeout=60)
    assert dealer.returncode == 0, err
    assert out.startswith("SCORE:") and out.strip().endswith(":A|B")
    for p, (o, e) in zip(players, outs):
        assert p.returncode == 0, e
        assert "hands=50" in o
    log = (tmp_path / "m.log").read_text().splitlines()
    assert len([l for l in log if l.startswith("STATE:")]) == 50


def test_dealer_refuses_bad_arguments(tmp_path: Path) -> None:
    out = subprocess.run(
        deepstack() + ["dealer", "m", "nope.game", "10", "1", "A", "B"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 1 and "ERROR: could not read game nope.game" in out.stderr
    out = subprocess.run(deepstack() + ["dealer", "m", "hunl", "10", "1", "A"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "2 player names needed" in out.stderr
    out = subprocess.run(
        deepstack() + ["dealer", "m", "hunl", "10", "1", "A", "B", "-p", "1,x"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 1 and "bad port string" in out.stderr


def test_play_reports_connection_failure() -> None:
    out = subprocess.run(
        deepstack() + ["play", "--game", "hunl", "--bot", "call", "--port", "1", "--config", "/nonexistent.yaml"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "no such config file" in out.stderr


def test_container_entrypoint_plays_hunl_with_host_and_port_only(tmp_path: Path) -> None:
    """What `docker run IMAGE --host H --port P` runs: the Dockerfile's entry point with only
    --host/--port, configured through DEEPSTACK_CONFIG as in the image (fast settings here)."""
    import json
    import os

    dockerfile = (ROOT / "Dockerfile").read_text()
    entry = next(l for l in dockerfile.splitlines() if l.startswith("ENTRYPOINT"))
    argv = json.loads(entry.split(None, 1)[1])
    assert argv == ["deepstack", "play"]
    for line in dockerfile.splitlines():  # every file the image copies exists
        if line.startswith("COPY "):
            for src in line.split()[1:-1]:
                assert (ROOT / src).exists(), src
    cfg = tmp_path / "fast.yaml"
    cfg.write_text(
        "bot:\n  hunl:\n    preflop: {iterations: 3}\n    flop: {iterations: 3}\n"
        "    turn: {iterations: 3}\n    river: {iterations: 3}\n"
    )
    dealer, ports = start_dealer("m", "hunl", "4", "3", "DS", "C", "-q", "--log-dir", str(tmp_path))
    env = {**os.environ, "DEEPSTACK_CONFIG": str(cfg)}
    bot = subprocess.Popen(
        deepstack() + ["play", "--host", "127.0.0.1", "--port", ports[0]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    caller = subprocess.Popen(
        deepstack() + ["play", "--bot", "call", "--port", ports[1]], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    out, err = bot.communicate(timeout=300)
    caller.communicate(timeout=60)
    score, _ = dealer.communicate(timeout=60)
    assert bot.returncode == 0, err
    assert "hands=4" in out and score.startswith("SCORE:")
    refused = subprocess.run(
        deepstack() + ["play", "--port", "1", "--device", "cuda"], capture_output=True, text=True, timeout=120, env=env
    )
    if not __import__("torch").cuda.is_available():
        assert refused.returncode == 2 and "no CUDA device" in refused.stderr


# ---------------------------------------------------------------------- every option's help, every command's example
#: options whose help need not name a default: flags, help itself
_FLAG_ACTIONS = (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._StoreConstAction, argparse._HelpAction)


def test_every_option_has_help_with_its_default_and_every_command_an_example() -> None:
    """Every parser a user reaches (``deepstack``, each subcommand, ``eval TOOL``, the dealer's,
    each ``bench SUITE``): every argument has help text, every option that may be left out says
    its default, and the help ends with one complete example command of that command."""
    from agent.cli.main import all_parsers

    seen, missing = [], []
    for name, parser in all_parsers():
        seen.append(name)
        formatter = parser._get_formatter()
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            label = f"deepstack {name} {'/'.join(action.option_strings) or action.dest}"
            text = formatter._expand_help(action) if action.help else ""
            if not text.strip():
                missing.append(f"{label}: no help")
            elif action.option_strings and not action.required and not isinstance(action, _FLAG_ACTIONS):
                if "default" not in text:
                    missing.append(f"{label}: no default in {text!r}")
        last = parser.format_help().rstrip("\n").splitlines()[-1]
        if not last.startswith(f"  deepstack {name}".rstrip() + " ") or "example" not in (parser.epilog or ""):
            missing.append(f"deepstack {name}: --help does not end with an example (last line {last!r})")
    assert not missing, "\n".join(missing)
    assert {"", "play", "match", "dealer", "solve", "buckets", "generate", "train", "eval lbr", "eval aivat"} <= set(seen)
    assert {"eval plot", "eval aivat-log", "bench solver", "bench native", "bench generate", "bench parity"} <= set(seen)


def test_every_example_is_a_valid_command_line() -> None:
    """Each --help's example parses as that command would parse it (a bench suite's options by the
    suite's own parser, the dealer's arguments by the dealer's)."""
    import shlex

    from agent.cli.main import all_parsers, build_parser

    for name, parser in all_parsers():
        argv = shlex.split(parser.epilog.rstrip().splitlines()[-1])[1:]
        assert argv[: len(name.split())] == name.split(), (name, argv)
        if name == "dealer":
            args = parser.parse_intermixed_args(argv[1:])
            assert args.players and args.ports
        elif name.startswith("bench ") or name == "bench":
            suite_parser = dict(all_parsers())[f"bench {argv[1]}"]
            suite_parser.parse_args(argv[2:])
        else:
            assert build_parser().parse_args(argv).func is not None, name


@pytest.mark.parametrize("value", ["99999", "65536", "0", "-1", "x", "80.5", ""])
def test_play_refuses_a_port_outside_1_to_65535(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    from agent.cli.main import main

    with pytest.raises(SystemExit) as exit_:
        main(["play", "--port", value])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"deepstack play: error: argument --port: {value!r} is not a port number (1..65535)"


@pytest.mark.parametrize("value", ["", " ", "a b"])
def test_play_refuses_an_empty_host_at_once(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    """An empty host was looked up, and retried, for the whole connect timeout (30 s) before the error."""
    from agent.cli.main import main

    with pytest.raises(SystemExit) as exit_:
        main(["play", "--port", "9", "--host", value])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"deepstack play: error: argument --host: {value!r} is not a host name or address"
    )


@pytest.mark.parametrize(
    ("argv", "config", "message"),
    [
        (["--seed", "-1"], "", "argument --seed: '-1' is not a seed (0..4294967295)"),
        (["--seed", "4294967296"], "", "argument --seed: '4294967296' is not a seed (0..4294967295)"),
        ([], "seed: -1\n", "{cfg}:2: seed: -1 is outside 0..4294967295"),
    ],
)
def test_play_refuses_a_bad_seed_before_it_takes_a_seat(
    argv: list[str], config: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dealer listens, but the seat is not taken: a bad seed is a bad argument or config (exit 2)."""
    cfg = tmp_path / "seed.yaml"
    cfg.write_text("client: {read_timeout_s: 1}\n" + config)  # a seat taken by mistake ends, not hangs
    _play_exits_2_without_taking_the_seat(cfg, argv)
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"deepstack play: error: {message.format(cfg=cfg)}"


def _play_exits_2_without_taking_the_seat(cfg: Path, argv: list[str]) -> None:
    """``deepstack play`` against a listening socket exits 2 and never connects to it."""
    import socket

    from agent.cli.main import main

    with socket.create_server(("127.0.0.1", 0)) as dealer:
        port = str(dealer.getsockname()[1])
        try:
            code = main(["play", "--bot", "call", "--port", port, "--config", str(cfg)] + argv)
        except SystemExit as exit_:  # argparse's refusals
            code = exit_.code
        assert code == 2
        dealer.setblocking(False)
        with pytest.raises(BlockingIOError):  # nobody connected
            dealer.accept()


@pytest.mark.parametrize("given", ["--log-json", "logging.json_path"])
def test_play_names_a_log_file_it_cannot_open_with_exit_2(given: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A log path under a file: a bad argument or config (exit 2, the option or key and the path),
    not exit 1 (no dealer) with the bare OSError, and the seat is not taken."""
    (tmp_path / "a-file").write_text("kept")
    log = tmp_path / "a-file" / "bot.jsonl"
    cfg = tmp_path / "log.yaml"
    cfg.write_text("client: {read_timeout_s: 1}\n" + (f"logging: {{json_path: {log}}}\n" if given != "--log-json" else ""))
    argv = ["--log-json", str(log)] if given == "--log-json" else []
    _play_exits_2_without_taking_the_seat(cfg, argv)
    err = capsys.readouterr().err.strip().splitlines()
    named = "--log-json" if given == "--log-json" else f"{cfg}: logging.json_path"
    assert len(err) == 1 and err[0].startswith(f"deepstack play: error: {named}: {log}: cannot open the log file (")
    assert err[0].endswith(f"({tmp_path / 'a-file'} is a file, not a folder)")  # was a bare [Errno 17] File exists


def test_the_port_type_takes_the_whole_range_and_nothing_else() -> None:
    from agent.cli.common import port
    from agent.cli.main import build_parser

    assert build_parser().parse_args(["play", "--port", "65535"]).port == 65535
    assert build_parser().parse_args(["play", "--port", "1"]).port == 1
    for bad in ("0", "65536", "-3", "x"):
        with pytest.raises(argparse.ArgumentTypeError, match="is not a port number"):
            port(bad)


@pytest.mark.parametrize("ports", ["1,70000", "5,-1", "1,x", "1,2,3"])
def test_dealer_refuses_ports_outside_0_to_65535(ports: str, capsys: pytest.CaptureFixture[str]) -> None:
    from protocol.dealer_cli import main as dealer_main

    assert dealer_main(["m", "leduc", "1", "1", "A", "B", "-p", ports]) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"ERROR: bad port string {ports}: give up to 2 comma-separated ports, each 1..65535 or 0 for any free port"


def test_dealer_short_port_list_start_timeout_0_and_transaction_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As the ACPC dealer: seats after a short ``-p`` list get free ports, ``--start_timeout 0``
    gives up at once when no client is waiting, ``-t`` is the default and ``-T`` writes
    NAME.tlog once the seats are in (tests/protocol/test_dealer.py resumes a match from one)."""
    from protocol.dealer_cli import main as dealer_main

    argv = ["m", "leduc", "1", "1", "A", "B", "--log-dir", str(tmp_path)]
    assert dealer_main([*argv, "-p", "0", "--start_timeout", "0", "-t"]) == 1
    out, err = capsys.readouterr()
    ports = out.splitlines()[0].split()
    assert len(ports) == 2 and all(int(p) > 0 for p in ports)
    assert "ERROR: seat 1 did not connect within the start timeout" in err
    assert not (tmp_path / "m.tlog").exists()
    assert dealer_main([*argv, "-T", "--start_timeout", "0"]) == 1
    assert not (tmp_path / "m.tlog").exists()  # opened once the seats are in: a start that fails writes nothing


# ---------------------------------------------------------------------- model paths checked at start-up
NET_LEAVES = "bot:\n  hunl:\n    flop: {iterations: 3, leaves: net}\n    models: {turn_net: nets/my-turn.pt}\n"


@pytest.mark.parametrize(
    "argv",
    [
        ["play", "--game", "hunl", "--port", "1"],
        ["match", "hunl", "2", "call", "deepstack", "--log-dir", "{tmp}/logs"],
        ["eval", "lbr", "--game", "hunl", "--hands", "2", "--setting", "fc/fc/fc/fc"],
        ["eval", "plot", "{tmp}", "--out", "{tmp}/png", "--game", "hunl", "--grid", ""],
        ["bench", "resolve", "--hands", "1", "--log-dir", "{tmp}/logs"],
    ],
)
def test_a_missing_holdem_network_is_named_by_its_config_key_at_start(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A network the hold'em bot would load (the flop's leaves use the turn network) that is not
    there stops play, a match seat and eval at once, before any solve, connection or folder:
    one line naming the config file, the key and the path (relative to the config's folder)."""
    from agent.cli.main import main

    cfg = tmp_path / "cfg" / "net.yaml"
    cfg.parent.mkdir()
    cfg.write_text(NET_LEAVES)
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv] + ["--config", str(cfg)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    command = " ".join(argv[:2]) if argv[0] in ("eval", "bench") else argv[0]
    missing = tmp_path / "cfg" / "nets" / "my-turn.pt"
    assert err == [f"deepstack {command}: error: {cfg}: bot.hunl.models.turn_net: {missing}: model file is missing"]
    assert not (tmp_path / "logs").exists() and not (tmp_path / "png").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "exploitability", "--game", "leduc"],
        ["eval", "aivat", "--game", "leduc", "--hands", "2"],
        ["match", "leduc", "2", "deepstack", "random", "--log-dir", "{tmp}/logs"],
    ],
)
def test_a_missing_leduc_network_is_named_by_its_config_key_at_start(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent.cli.main import main

    cfg = tmp_path / "leduc.yaml"
    cfg.write_text("bot:\n  leduc: {value_net: mine.pt}\n")
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv] + ["--config", str(cfg)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith(f"{cfg}: bot.leduc.value_net: {tmp_path / 'mine.pt'}: model file is missing")


def test_the_models_checked_are_those_the_bot_loads(hunl: Game, leduc_limit: Game) -> None:
    from dataclasses import replace

    from agent.bots.config import StreetConfig, load_config
    from agent.bots.settings import check_models, model_paths

    shipped = load_config()
    # the shipped flop ends at the turn network and the turn at the river network, each checked down
    # where little is behind; the flop network bounds the opponent at the flop's start
    assert [k.rsplit(".", 1)[1] for k, _ in model_paths(hunl, shipped)] == [
        "preflop_checkdown",
        "turn_net",
        "turn_buckets",
        "river_net",
        "flop_net",
        "flop_buckets",
    ]
    assert [k for k, _ in model_paths(leduc_limit, shipped)] == ["bot.leduc_limit.value_net"]
    nets = replace(
        shipped.bot.hunl,
        preflop=StreetConfig(3, "net"),
        flop=StreetConfig(3, "net"),
        turn=StreetConfig(3, "end"),
    )
    config = replace(shipped, bot=replace(shipped.bot, hunl=nets))
    assert [k.rsplit(".", 1)[1] for k, _ in model_paths(hunl, config)] == [
        "aux_net",
        "flop_net",
        "flop_buckets",
        "turn_net",
        "turn_buckets",
    ]
    check_models(hunl, config)  # the shipped files are all there, listed and unchanged


# ---------------------------------------------------------------------- the Dockerfile
def _dockerfile_runs() -> list[str]:
    """The Dockerfile's RUN commands, continuation lines joined as Docker joins them."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", "")
    return [line[4:] for line in text.splitlines() if line.startswith("RUN ")]


def test_dockerfile_has_python_headers_in_every_variant() -> None:
    """The cffi build needs Python.h: the default base (an official python image) ships it; a base
    without Python 3.11 (the CUDA image) installs python3.11-dev with it; and the build checks that
    Python.h is there before anything is compiled, with a message naming the package."""
    import shlex

    dockerfile = (ROOT / "Dockerfile").read_text()
    base = next(l for l in dockerfile.splitlines() if l.startswith("ARG BASE="))
    assert base.split("=", 1)[1].startswith("python:3.11")  # official images ship the headers
    assert "nvidia/cuda" in dockerfile  # the documented CUDA variant takes the apt branch
    runs = _dockerfile_runs()
    setup = next(r for r in runs if "apt-get install" in r and "python3.11" in r)
    # "command -v python3.11 || apt-get install ... python3.11 ...)": what a base without Python 3.11 gets
    python_install = setup.split("command -v python3.11", 1)[1].split("||", 1)[1].split(")", 1)[0]
    assert {"python3.11", "python3.11-dev", "python3.11-venv", "python3-pip"} <= set(python_install.split())
    assert {"gcc", "libc6-dev"} <= set(setup.split())
    install = next(i for i, r in enumerate(runs) if 'pip install ".' in r or "pip install '." in r)
    assert runs.index(setup) < install
    # the header check, run here as the image runs it: it passes where Python.h is, names it where not
    check = shlex.split(setup.split("&& python3.11 -c ", 1)[1].split(" && ", 1)[0])[0]
    assert "Python.h" in check and "python3.11-dev" in check
    ok = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    fake = subprocess.run(
        [sys.executable, "-c", "import sysconfig; sysconfig.get_paths = lambda: {'include': '/nonexistent'}\n" + check],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert fake.returncode == 1 and "no /nonexistent/Python.h: the cffi build needs the Python 3.11 headers" in fake.stderr


def test_sigterm_ends_play_with_its_summary_and_log(tmp_path: Path) -> None:
    """``docker stop`` on a playing seat: status 143, the summary line on stdout, the error naming
    the hand, and the decision log ending with the match's end."""
    import json
    import time

    dealer, ports = start_dealer("m", "leduc", "100000", "3", "A", "B", "-q", "--log-dir", str(tmp_path))
    log = tmp_path / "seat.jsonl"
    seat = subprocess.Popen(
        deepstack() + ["play", "--game", "leduc", "--bot", "random", "--port", ports[0], "--log-json", str(log)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    other = subprocess.Popen(deepstack() + ["play", "--game", "leduc", "--bot", "call", "--port", ports[1]])
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (log.exists() and "first_action" in log.read_text()):
            time.sleep(0.2)
        time.sleep(1.0)
        seat.send_signal(signal.SIGTERM)
        out, err = seat.communicate(timeout=60)
    finally:
        for proc in (seat, other, dealer):
            proc.kill()
            proc.wait()
    assert seat.returncode == 143, err
    assert out.startswith("hands=") and "the match did not finish (interrupted)" in err and "Traceback" not in err
    last = json.loads(log.read_text().splitlines()[-1])
    assert last["event"] == "match_not_finished" and last["ended"] == "interrupted"


def test_ctrl_c_while_the_command_loads_is_one_line_and_130() -> None:
    """A Ctrl-C in the two seconds the product takes to import was a KeyboardInterrupt traceback from
    inside torch; the console script (and ``python -m agent.cli``) now imports it under a handler.
    The interrupt is raised at the import of ``agent.cli.main``, where a Ctrl-C lands most often."""
    code = (
        "import builtins, sys\n"
        "real = builtins.__import__\n"
        "def interrupted(name, *args, **kwargs):\n"
        "    if name == 'agent.cli.main':\n"
        "        raise KeyboardInterrupt\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = interrupted\n"
        "sys.argv = ['deepstack', '--help']\n"
        "import runpy\n"
        "runpy.run_module('agent.cli', run_name='__main__')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert (done.returncode, done.stderr, done.stdout) == (130, "deepstack: interrupted\n", "")


def test_python_m_agent_cli_records_its_command_as_deepstack(monkeypatch: pytest.MonkeyPatch) -> None:
    """A manifest's command is one a user can run again: ``python -m agent.cli train ...`` was recorded
    as ``/path/agent/cli/__main__.py train ...``."""
    from agent.nets.manifest import command_line

    monkeypatch.setattr(sys, "argv", [str(ROOT / "agent" / "cli" / "__main__.py"), "train", "--epochs", "3"])
    assert command_line() == "deepstack train --epochs 3"


def test_export_policy_json_prints_one_json_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--json ('print a JSON object instead of text') printed the text line 'wrote N information sets to ...'."""
    import json

    from agent.cli.main import main

    out = tmp_path / "p.json"
    argv = ["eval", "export-policy", "--game", "leduc-limit", "--iterations", "20", "--exact", "--out", str(out), "--json"]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["out"] == str(out) and printed["game"] == "leduc-limit" and printed["iterations"] == 20
    assert printed["information_sets"] == len(json.loads(out.read_text())) - 1  # less the "_game" entry
    assert main(argv[:-1]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"wrote {printed['information_sets']} information sets to {out}"


def test_eval_clock_refuses_a_game_the_log_is_not_of(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Leduc match read with --game hunl had its rounds named pre-flop and flop without a word: a match folder's
    dealer logs name its game (used when --game is left out), and a decision log's hole cards tell another game's."""
    import json

    from agent.cli.main import main

    match = tmp_path / "match"
    match.mkdir()
    (match / "m.log").write_text("# name/game/hands/seed m leduc 1 0\nSTATE:0:cc/cc:Kh|Qh/As:0|0:a|b\n")
    decisions = [
        {"event": "decision", "street": 0, "cached": True, "stopped_by": None, "think_ms": 1.0, "cards": "Kh"},
        {"event": "decision", "street": 1, "cached": False, "stopped_by": "iterations", "think_ms": 9.0, "cards": "Kh"},
    ]
    (match / "bots.jsonl").write_text("".join(json.dumps(d) + "\n" for d in decisions))
    assert main(["eval", "clock", str(match), "--game", "hunl"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"deepstack eval clock: error: --game hunl: {match} is a match of leduc (its dealer logs); give --game leduc, "
        "or leave it out"
    ]
    log = match / "bots.jsonl"
    assert main(["eval", "clock", str(log), "--game", "hunl"]) == 2  # a decision log alone: told by its cards
    assert capsys.readouterr().err.strip().splitlines() == [
        f"deepstack eval clock: error: {log}: not a log of hunl: its decisions hold 1 hole card (as 'Kh'), hunl deals 2; "
        "give the log's game as --game, or leave it out"
    ]
    for argv in ([str(match)], [str(match), "--game", "leduc"], [str(log)]):
        assert main(["eval", "clock", *argv, "--json"]) == 0
        assert list(json.loads(capsys.readouterr().out)) == ["round 1", "round 2"]
