"""The start cache: shipped for the default settings, current with the code, never trusted blindly."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from agent.bots import start_cache
from agent.bots.config import load_config
from agent.bots.deepstack import DeepStackBot
from agent.bots.start_cache import load_start_cache, save_start_cache, saved_key, start_key
from agent.nets.manifest import checked_file, register_model
from protocol.gamedef import load_game

SECTIONS = {"hunl": "hunl", "leduc": "leduc", "leduc-limit": "leduc_limit"}


@pytest.mark.parametrize("game_name", sorted(SECTIONS))
def test_shipped_start_cache_matches_the_default_settings_and_code(game_name: str) -> None:
    """Fails when the solver's code, the shipped models or the default settings change: the
    shipped cache would then be ignored and every start would solve again."""
    game = load_game(game_name)
    section = getattr(load_config().bot, SECTIONS[game_name])
    path, _ = checked_file(section.start_cache)  # listed in the manifest, sha256 intact
    assert saved_key(path) == start_key(game, section), (
        f"{path} is stale: remake it with `deepstack prepare {game_name} --out models/start/{path.name} --solve`"
    )


def test_default_bot_starts_from_the_shipped_cache() -> None:
    game = load_game("leduc")
    section = load_config().bot.leduc
    saved = load_start_cache(Path(section.start_cache), start_key(game, section))
    assert saved is not None
    bot = DeepStackBot(game, load_config())
    for convention, data in saved.items():  # the saved re-solves, not new ones (each has its own timing)
        resolver = bot._seats[convention].resolver
        assert {p: d.seconds for p, d in resolver._root.items()} == {p: d.seconds for p, d in data["root"].items()}


def test_key_follows_settings_and_model_contents_not_paths(tmp_path: Path) -> None:
    game = load_game("leduc")
    section = load_config().bot.leduc
    key = start_key(game, section)
    copy = tmp_path / "net.pt"
    copy.write_bytes(Path(section.value_net).read_bytes())
    assert start_key(game, replace(section, value_net=str(copy), start_cache="elsewhere.pkl")) == key
    assert start_key(game, replace(section, iterations=section.iterations + 1)) != key
    copy.write_bytes(copy.read_bytes() + b"\0")
    assert start_key(game, replace(section, value_net=str(copy))) != key


class _Marker:
    """Unpickling this creates a file: proof that a file was unpickled."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (self.path,))


def test_a_shipped_cache_is_checked_by_sha256_before_it_is_unpickled(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(start_cache, "MODELS_DIR", tmp_path)  # files here count as shipped
    path = tmp_path / "start.pkl"
    save_start_cache(path, "k", {"high": {}}, allow_shipped=True)
    register_model(path, "start-test", kind="start_cache")  # tmp_path/manifest.json
    assert load_start_cache(path, "k") == {"high": {}}
    assert load_start_cache(path, "other") is None  # stale: ignored
    marker = tmp_path / "unpickled"
    path.write_bytes(pickle.dumps({"key": "k", "seats": _Marker(marker)}))  # replaced: sha256 no longer matches
    assert load_start_cache(path, "k") is None
    assert not marker.exists()
    with pytest.raises(ValueError, match="deepstack prepare"):
        save_start_cache(path, "k", {})  # the bot never writes a shipped cache


def test_play_connects_before_it_builds_the_bot(tmp_path: Path) -> None:
    """`deepstack play` takes its seat first and logs each start-up phase with the time since
    the process started: connected, bot ready, first action."""
    exe = [sys.executable, "-m", "agent.cli"]
    dealer = subprocess.Popen(
        exe + ["dealer", "m", "leduc", "3", "5", "A", "B", "-q", "--log-dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert dealer.stdout is not None
    ports = dealer.stdout.readline().split()
    log = tmp_path / "bot.jsonl"
    players = [
        subprocess.Popen(
            exe + ["play", "--game", "leduc", "--bot", bot, "--port", port] + (["--log-json", str(log)] if i == 0 else []),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, (bot, port) in enumerate(zip(["deepstack", "call"], ports))
    ]
    outs = [p.communicate(timeout=300) for p in players]
    dealer.communicate(timeout=60)
    assert [p.returncode for p in players] == [0, 0], outs
    events = [json.loads(line) for line in log.read_text().splitlines()]
    phases = [e["phase"] for e in events if e.get("event") == "startup"]
    assert phases.index("connected") < phases.index("start_cache_loaded") < phases.index("bot_ready")
    assert phases.index("bot_ready") < phases.index("first_action")
    first = next(e for e in events if e.get("phase") == "first_action")
    assert first["since_process_start_s"] > 0


@pytest.mark.parametrize("game_name", ["leduc", "leduc-limit"])
def test_shipped_leduc_caches_hold_every_first_round_decision_on_the_tree(game_name: str) -> None:
    bot = DeepStackBot(load_game(game_name), load_config())
    assert bot.prepare_first_round(256) == 0  # nothing left to solve: all of them came from the file


def test_a_folder_as_the_cache_path_is_refused_and_no_temporary_file_is_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`prepare --out DIR` failed after the solve with 'Is a directory' (exit 1), leaving DIR.tmp."""
    from agent.bots.start_cache import StartCacheError, save_start_cache
    from agent.cli.main import main

    folder = tmp_path / "caches"
    folder.mkdir()
    assert main(["prepare", "leduc", "--out", str(folder)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"deepstack prepare: error: --out {folder}: is a folder; give the start cache's file name"
    ]
    with pytest.raises(StartCacheError, match="is a folder"):
        save_start_cache(folder, "key", {})
    with pytest.raises((pickle.PicklingError, AttributeError)):  # a lambda cannot be pickled: fails half-way
        save_start_cache(tmp_path / "c.pkl", "key", {"seat": lambda: None})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["caches"]


def _with_payload(path: Path, key: str, payload: bytes, digest: str | None = None) -> None:
    """A cache file of the current layout with any payload (and any sha256 claimed for it)."""
    import hashlib

    digest = hashlib.sha256(payload).hexdigest() if digest is None else digest
    path.write_bytes(start_cache._MAGIC + key.encode() + b"\n" + digest.encode() + b"\n" + payload)


def test_a_stale_or_damaged_user_cache_is_never_unpickled(tmp_path: Path) -> None:
    """Only shipped caches have a manifest: a user's cache is checked by its key and its own
    sha256 before anything is unpickled (a flipped byte once loaded silently or raised TypeError)."""
    marker = tmp_path / "unpickled"
    path = tmp_path / "c.pkl"
    _with_payload(path, "other", pickle.dumps(_Marker(marker)))
    assert load_start_cache(path, "k") is None and not marker.exists()  # stale: the key is read first
    _with_payload(path, "k", pickle.dumps(_Marker(marker)), digest="0" * 64)
    assert load_start_cache(path, "k") is None and not marker.exists()  # damaged
    save_start_cache(path, "k", {"high": {"root": {}}})
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF
    path.write_bytes(bytes(data))
    assert load_start_cache(path, "k") is None
    _with_payload(path, "k", b"\x80\x05garbage")  # right key and sha256, not a pickle: a warning, no traceback
    assert load_start_cache(path, "k") is None


def test_a_cache_of_the_right_key_but_the_wrong_shape_makes_the_bot_solve(tmp_path: Path) -> None:
    """The bot's import of a cache that unpickles but is not one (a format change the digest
    missed) is a warning and a fresh solve, not a traceback at start-up."""
    from agent.bots.config import Config

    game = load_game("leduc")
    config = load_config()
    path = tmp_path / "odd.pkl"
    section = replace(config.bot.leduc, start_cache=str(path))
    config = replace(config, bot=replace(config.bot, leduc=section))
    assert isinstance(config, Config)
    save_start_cache(path, start_key(game, section), {"high": {"root": 5}})
    bot = DeepStackBot(game, config)
    assert set(bot._seats["high"].resolver._root_values) == {0, 1}  # solved afresh
    rewritten = load_start_cache(path, start_key(game, section))  # and saved whole over it
    assert rewritten is not None and {"root", "root_values"} <= set(rewritten["high"])


def test_the_temporary_file_is_not_a_name_another_process_can_plant(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("kept")
    (tmp_path / "c.pkl.tmp").symlink_to(victim)  # the old fixed temporary name
    save_start_cache(tmp_path / "c.pkl", "k", {"high": {}})
    assert victim.read_text() == "kept" and not (tmp_path / "c.pkl").is_symlink()
    assert load_start_cache(tmp_path / "c.pkl", "k") == {"high": {}}


def test_a_folder_as_the_configured_cache_is_refused_before_the_bot_is_built(tmp_path: Path) -> None:
    from agent.bots.start_cache import StartCacheError

    config = load_config()
    config = replace(config, bot=replace(config.bot, leduc=replace(config.bot.leduc, start_cache=str(tmp_path))))
    with pytest.raises(StartCacheError, match="is a folder"):
        DeepStackBot.check(load_game("leduc"), config)


def test_prepare_refuses_an_out_whose_folder_cannot_be_made_before_it_solves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It reported the OSError only after the whole solve."""
    from agent.cli.main import main

    (tmp_path / "a-file").write_text("kept")
    out = tmp_path / "a-file" / "c.pkl"
    assert main(["prepare", "leduc", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    blocker = tmp_path / "a-file"
    assert err[-1] == f"deepstack prepare: error: --out {out}: its folder cannot be made ({blocker} is a file, not a folder)"


def test_a_file_that_is_not_a_start_cache_is_never_overwritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A config's ``start_cache`` (or ``prepare --out``) naming someone's file: the bot warned that
    it was unreadable, then replaced it with a pickle at the end of the match."""
    from agent.bots.start_cache import StartCacheError
    from agent.cli.main import main

    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    config = load_config()
    config = replace(config, bot=replace(config.bot, leduc=replace(config.bot.leduc, start_cache=str(notes))))
    with pytest.raises(StartCacheError, match="is not a start cache; it is not overwritten"):
        DeepStackBot.check(load_game("leduc"), config)
    with pytest.raises(StartCacheError, match="is not a start cache"):
        save_start_cache(notes, "k", {"high": {}})
    assert main(["prepare", "leduc", "--out", str(notes)]) == 2
    assert "is not a start cache" in capsys.readouterr().err
    assert notes.read_text() == "my notes"
    save_start_cache(tmp_path / "c.pkl", "k", {"high": {}})
    save_start_cache(tmp_path / "c.pkl", "k2", {"high": {}})  # a start cache is replaced as before
    assert load_start_cache(tmp_path / "c.pkl", "k2") == {"high": {}}


def test_a_device_asked_for_by_name_but_not_used_is_said() -> None:
    """Leduc's re-solves always run on the CPU: ``--device cuda`` (on a machine with or without
    CUDA) played on the CPU without a word; the bot now says so at start."""
    import structlog

    with structlog.testing.capture_logs() as logs:
        bot = DeepStackBot(load_game("leduc"), replace(load_config(), device="cuda"))
    assert bot.device == "cpu"
    (said,) = [entry for entry in logs if entry["event"] == "device_not_used"]
    assert said["device"] == "cuda" and "CPU" in said["reason"]
    with structlog.testing.capture_logs() as logs:
        DeepStackBot(load_game("leduc"), load_config())  # auto: nothing to say
    assert not [entry for entry in logs if entry["event"] == "device_not_used"]
