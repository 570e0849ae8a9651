"""What the project exposes to other machines, programs and files: our dealer listens on loopback
unless told otherwise, a ``cmd:`` seat of ``deepstack match`` runs without a shell, and a model file
is checked against its manifest's sha256 before torch reads it."""

from __future__ import annotations

import io
import ipaddress
import json
import os
import shlex
import socket
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

from agent.cli.main import main
from agent.evaluation.match import parse_seat
from agent.nets.manifest import ModelError, checked_file, load_value_net, register_model
from protocol.dealer import Dealer, DealerConfig
from protocol.gamedef import load_game

ROOT = Path(__file__).resolve().parent.parent
PROC_TCP = Path("/proc/net/tcp")
needs_proc = pytest.mark.skipif(not PROC_TCP.exists(), reason="reads the kernel's socket table (/proc/net/tcp, Linux)")


def listening_addresses(table: str, port: int) -> list[str]:
    """The addresses that IPv4 sockets in the LISTEN state bind ``port`` to, from the text of
    ``/proc/net/tcp`` (``local_address`` is the address in little-endian hex, a colon, the port)."""
    found = []
    for row in table.splitlines()[1:]:
        fields = row.split()
        address, hex_port = fields[1].split(":")
        if fields[3] == "0A" and int(hex_port, 16) == port:
            found.append(str(ipaddress.IPv4Address(bytes.fromhex(address)[::-1])))
    return found


# ---------------------------------------------------------------------- (1) the dealer binds loopback
@needs_proc
def test_the_dealer_listens_on_loopback_unless_told_otherwise() -> None:
    leduc = load_game("leduc")
    dealer = Dealer(DealerConfig("m", leduc, "leduc", 1, 0, ("A", "B"), log_dir=None), out=io.StringIO(), err=io.StringIO())
    ports = dealer.open()
    try:
        table = PROC_TCP.read_text()
        assert [sock.getsockname()[0] for sock in dealer.listeners] == ["127.0.0.1", "127.0.0.1"]
        assert [listening_addresses(table, port) for port in ports] == [["127.0.0.1"], ["127.0.0.1"]]
    finally:
        dealer.close()
    told = Dealer(DealerConfig("m", leduc, "leduc", 1, 0, ("A", "B"), host="0.0.0.0", log_dir=None))
    ports = told.open()
    try:
        assert [listening_addresses(PROC_TCP.read_text(), port) for port in ports] == [["0.0.0.0"], ["0.0.0.0"]]
    finally:
        told.close()


@needs_proc
def test_deepstack_dealer_listens_on_loopback(tmp_path: Path) -> None:
    """The command itself, as a process: its ports, read from the kernel while it waits for seats."""
    dealer = subprocess.Popen(
        [sys.executable, "-m", "agent.cli", "dealer", "m", "leduc", "1", "1", "A", "B", "-q", "--start_timeout", "2000"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert dealer.stdout is not None
        ports = [int(p) for p in dealer.stdout.readline().split()]
        table = PROC_TCP.read_text()
    finally:
        _, err = dealer.communicate(timeout=60)  # no seat comes: it gives up after the start timeout
    assert len(ports) == 2, err
    assert [listening_addresses(table, port) for port in ports] == [["127.0.0.1"], ["127.0.0.1"]]
    assert "ERROR: seat 1 did not connect within the start timeout" in err


#: a ``cmd:`` seat that writes its arguments and the kernel's socket table to a file, then exits
#: without connecting (the match then ends at its start timeout)
RECORDER = "import json, sys; json.dump([sys.argv[2:], open('/proc/net/tcp').read()], open(sys.argv[1], 'w'))"


@needs_proc
def test_deepstack_match_binds_its_dealer_to_loopback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = tmp_path / "seat.json"
    seat = f"cmd:{sys.executable} -c {shlex.quote(RECORDER)} {record} {{host}} {{port}}"
    main(["match", "leduc", "1", "call", seat, "--start-timeout", "2", "--log-dir", str(tmp_path / "logs")])
    assert "ABORTED: the program of seat 2 exited with code 0 before the match started" in capsys.readouterr().out
    (host, port), table = json.loads(record.read_text())
    assert host == "127.0.0.1"
    assert listening_addresses(table, int(port)) == ["127.0.0.1"]


# ---------------------------------------------------------------------- (2) cmd: seats run without a shell
def test_cmd_seat_words_are_arguments_not_shell_syntax() -> None:
    spec = parse_seat("cmd:bot --x 'a b' ; rm -rf ~ && echo $(id) `id` | tee >out {port}")
    assert spec.command == (
        "bot",
        "--x",
        "a b",
        ";",
        "rm",
        "-rf",
        "~",
        "&&",
        "echo",
        "$(id)",
        "`id`",
        "|",
        "tee",
        ">out",
        "{port}",
    )


@pytest.mark.skipif(not PROC_TCP.exists(), reason="the recording seat reads /proc/net/tcp")
def test_cmd_seat_shell_metacharacters_run_no_second_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Were the seat run by a shell, each of these would create its file; without one, they are
    the words the seat's program receives."""
    record, pwned = tmp_path / "seat.json", tmp_path / "pwned"
    tricks = [
        f"; touch {pwned}1",
        f"&& touch {pwned}2",
        f"| touch {pwned}3",
        f"$(touch {pwned}4)",
        f"`touch {pwned}5`",
        f"> {pwned}6",
        "$HOME ~ *.json",
    ]
    seat = f"cmd:{sys.executable} -c {shlex.quote(RECORDER)} {record} {{port}} " + " ".join(tricks)
    main(["match", "leduc", "1", "call", seat, "--start-timeout", "2", "--log-dir", str(tmp_path / "logs")])
    capsys.readouterr()
    words, _ = json.loads(record.read_text())
    assert words[1:] == shlex.split(" ".join(tricks))
    assert "$HOME" in words and "*.json" in words and "~" in words  # no expansion either
    assert not list(tmp_path.glob("pwned*"))


# ---------------------------------------------------------------------- (3) model files against the manifest
K = 3  # buckets of the little value network made here: 1 + 2K inputs, 2K outputs


def little_net(path: Path, seed: int) -> None:
    """A TorchScript network of the shape a value network with K buckets has."""
    torch.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # TorchScript is the deployment format (agent/nets/manifest.py)
        torch.jit.script(torch.nn.Linear(1 + 2 * K, 2 * K)).save(str(path))


def test_a_changed_model_file_is_refused_by_name_before_torch_loads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "net.pt"
    little_net(path, seed=0)
    register_model(path, name="net", net={"buckets": K, "extra": 0})
    load_value_net(path)  # as recorded: loads
    loads: list[str] = []
    real_load = torch.jit.load
    monkeypatch.setattr(torch.jit, "load", lambda f, *a, **kw: loads.append(str(f)) or real_load(f, *a, **kw))
    little_net(path, seed=1)  # replaced by another network of the same shape, which torch would load as well
    replaced = path.read_bytes()
    flipped = bytearray(replaced)
    flipped[len(flipped) // 2] ^= 0x01
    for content in (replaced, bytes(flipped), replaced + b"\0"):
        path.write_bytes(content)
        with pytest.raises(ModelError) as info:
            load_value_net(path)
        message = str(info.value)
        assert message.startswith(f"{path}: sha256 ") and "does not match the manifest" in message
        assert "corrupt or was replaced" in message
    assert loads == []  # refused before torch read the file
    data = tmp_path / "table.npz"  # data files (bucket tables, check-down matrices) pass the same check
    data.write_bytes(b"as recorded")
    register_model(data, name="table")
    assert checked_file(data)[0] == data
    data.write_bytes(b"changed")
    with pytest.raises(ModelError, match=f"^{data}: sha256 .* does not match the manifest"):
        checked_file(data)


def test_deepstack_play_refuses_a_changed_model_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The bot as ``deepstack play`` builds it stops at start-up, before it connects, naming the file."""
    path = tmp_path / "leduc.pt"
    little_net(path, seed=0)
    register_model(path, name="leduc", net={"buckets": K, "extra": 0})
    little_net(path, seed=1)
    config = tmp_path / "config.yaml"
    config.write_text(f"client: {{connect_timeout_s: 1}}\nbot: {{leduc: {{value_net: {path}}}}}\n")
    with socket.socket() as free:  # a port nobody listens on: connecting would be exit 1, not 2
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    code = main(["play", "--game", "leduc", "--bot", "deepstack", "--port", str(port), "--config", str(config)])
    err = capsys.readouterr().err
    assert code == 2
    # the message names the config key and the file (agent/bots/deepstack.py's check_models)
    assert err.startswith(f"deepstack play: error: {config}: bot.leduc.value_net: {path}: sha256 ")
    assert "does not match the manifest" in err
