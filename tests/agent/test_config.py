"""``config.yaml``: the loader checks every key and names the file, the line and the key of what is
wrong; paths in a file resolve against the file's folder."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agent.bots.config import Config, ConfigError, config_from_dict, default_config, load_config
from agent.nets.manifest import ModelError, checked_file
from models import MODELS_DIR
from protocol.gamedef import Game

ROOT = Path(__file__).resolve().parents[2]


def test_shipped_config_loads_and_matches_defaults() -> None:
    config = load_config()
    assert isinstance(config, Config)
    assert config.device in ("auto", "cpu", "cuda")
    # a non-editable install without the file falls back to the built-in defaults: they must agree
    assert config == default_config()
    # its relative paths are the repository's (where config.yaml lives), wherever the command runs
    assert config.bot.leduc.value_net == str(ROOT / "models" / "leduc" / "leduc-ens.pt")
    assert config.bot.hunl.models.preflop_checkdown == str(ROOT / "models" / "holdem" / "preflop-checkdown.npz")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"devic": "cpu"}, "top level: unknown key(s) 'devic'"),
        ({"device": "tpu"}, "device: 'tpu' is not one of 'auto' | 'cpu' | 'cuda'"),
        ({"seed": "1"}, "seed: expected an integer"),
        ({"seed": True}, "seed: expected an integer"),
        ({"logging": {"level": "loud"}}, "logging.level: 'loud' is not one of"),
        ({"logging": {"colour": True}}, "logging: unknown key(s) 'colour'"),
        ({"logging": 3}, "logging: expected a mapping"),
        ({"client": {"connect_timeout_s": "soon"}}, "client.connect_timeout_s: expected a number"),
        ({"client": {"connect_timeout_s": float("inf")}}, "client.connect_timeout_s: inf is not a finite positive number"),
        ({"client": {"connect_timeout_s": float("nan")}}, "client.connect_timeout_s: nan is not a finite positive number"),
        ({"client": {"connect_timeout_s": 0}}, "client.connect_timeout_s: 0.0 is not a finite positive number"),
        ({"client": {"read_timeout_s": float("inf")}}, "client.read_timeout_s: inf is not a finite positive number"),
        ({"client": {"read_timeout_s": float("nan")}}, "client.read_timeout_s: nan is not a finite positive number"),
        ({"client": {"read_timeout_s": -1}}, "client.read_timeout_s: -1.0 is not a finite positive number"),
        ({"seed": -1}, "seed: -1 is outside 0..4294967295"),
        ({"threads": -1}, "threads: -1 is negative (0: one per core)"),
        ({"threads": 100000}, "threads: 100000 is more than 1024 (0: one per core)"),
        # tracebacks or a bot that never took its seat, before these had ceilings
        ({"client": {"connect_timeout_s": 1e10}}, "client.connect_timeout_s: 10000000000.0 is not a finite positive number"),
        ({"client": {"read_timeout_s": 1e300}}, "client.read_timeout_s: 1e+300 is not a finite positive number"),
        ({"bot": {"time": {"t_per_hand_ms": 10**400}}}, "bot.time.t_per_hand_ms: 1000000000"),
        ({"bot": {"leduc": {"iterations": 2**63}}}, "bot.leduc.iterations: 9223372036854775808 is more than 1000000"),
        ({"bot": {"hunl": {"preflop": {"iterations": 10**30}}}}, "is more than 1000000"),
        ({"seed": 2**32}, "seed: 4294967296 is outside 0..4294967295"),
        ({"bot": {"hunl": {"warm_start": {"weight": 1.5}}}}, "bot.hunl.warm_start.weight: 1.5 is not in [0, 1)"),
        ({"bot": {"hunl": {"warm_start": {"mode": "bold"}}}}, "bot.hunl.warm_start.mode: 'bold' is not one of"),
        ({"bot": {"hunl": {"net_precision": "half"}}}, "bot.hunl.net_precision: 'half' is not one of"),
        ({"bot": {"hunl": {"flop": {"skip": 60}}}}, "bot.hunl.flop.skip: 60 must be >= 0 and below the iterations (60)"),
        ({"bot": {"hunl": {"river": {"skip": -1}}}}, "bot.hunl.river.skip: -1 must be >= 0"),
        ({"bot": {"hunl": {"flop": {"iterations": 0}}}}, "bot.hunl.flop.iterations: 0 must be at least 1"),
        ({"bot": {"leduc": {"iterations": 0}}}, "bot.leduc.iterations: 0 must be at least 1"),
        ({"bot": {"leduc_limit": {"iterations": -5}}}, "bot.leduc_limit.iterations: -5 must be at least 1"),
        ({"bot": {"time": {"safety": 1.5}}}, "bot.time.safety: 1.5 is not in (0, 0.9]"),
        ({"bot": {"time": {"safety": 1.0}}}, "bot.time.safety: 1.0 is not in (0, 0.9]"),
        ({"bot": {"time": {"safety": 0}}}, "bot.time.safety: 0.0 is not in (0, 0.9]"),
        ({"bot": {"time": {"latency_ms": -1}}}, "bot.time.latency_ms: -1.0 is not in [0, t_response_ms 600000)"),
        ({"bot": {"time": {"latency_ms": float("nan")}}}, "bot.time.latency_ms: nan is not in [0, t_response_ms 600000)"),
        (
            {"bot": {"time": {"latency_ms": 500, "t_response_ms": 500}}},
            "bot.time.latency_ms: 500.0 is not in [0, t_response_ms 500)",
        ),
        ({"bot": {"time": {"latency_ms": 300, "t_hand_ms": 300}}}, "bot.time.latency_ms: 300.0 is not in [0, t_hand_ms 300)"),
        ({"bot": {"time": {"t_per_hand_ms": 0}}}, "bot.time.t_per_hand_ms: 0 is not positive"),
        ({"bot": {"time": {"t_response_ms": -5}}}, "bot.time.t_response_ms: -5 is not positive"),
    ],
)
def test_bad_values_name_the_key(data: dict, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        config_from_dict(data, "my.yaml")
    assert str(info.value).startswith("my.yaml: ")
    assert message in str(info.value)


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("device: [unclosed")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    bad.write_bytes(b"seed: 1\ndevice: \xff\n")
    with pytest.raises(ConfigError) as info:
        load_config(bad)
    assert str(info.value) == f"{bad}:2: not valid YAML: not UTF-8 text (byte 16 is 0xff)"
    top = tmp_path / "top.yaml"
    top.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        load_config(top)


def test_yaml_infinities_and_number_keys_are_refused_with_their_line(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("seed: 1\nclient:\n  read_timeout_s: .inf\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert (
        str(info.value) == f"{path}:3: client.read_timeout_s: inf is not a finite positive number of seconds "
        "(at most 10000000; null waits forever)"
    )
    path.write_text("seed: 1\n1: a\nfoo: b\n")  # a plain key is its text: both named as written
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}:2: top level: unknown key(s) '1', 'foo'; known: ")


def test_valid_override(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("device: cpu\nseed: 3\nclient:\n  connect_timeout_s: 5\n")
    config = load_config(path)
    assert config.device == "cpu" and config.seed == 3 and config.client.connect_timeout_s == 5.0


@pytest.mark.parametrize(
    ("text", "where", "problem"),
    [
        (
            "device: [unclosed",
            "1:18",
            "expected ',' or ']', but got '<stream end>' (while parsing a flow sequence started at line 1, column 9)",
        ),
        (
            "seed: 1\nbot:\n  leduc:\n    iterations: 3\n   algorithm: dcfr\n",
            "5:4",
            "expected <block end>, but found '<block mapping start>' (while parsing a block mapping started at line 3, column 3)",
        ),
        (
            "seed: 1\n\tdevice: cpu\n",
            "2:1",
            "found character '\\t' that cannot start any token (while scanning for the next token)",
        ),
    ],
)
def test_yaml_syntax_errors_name_the_file_line_and_column(tmp_path: Path, text: str, where: str, problem: str) -> None:
    """Not the parser's '<unicode string>': the config file's path, then line:column (1-based)."""
    path = tmp_path / "my-config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message == f"{path}:{where}: not valid YAML: {problem}"
    assert "<unicode string>" not in message and "\n" not in message


@pytest.mark.parametrize(
    ("text", "where", "key", "first"),
    [
        ("seed: 1\ndevice: cpu\nseed: 2\n", "3:1", "seed", 1),
        ("bot:\n  leduc:\n    iterations: 3\n    algorithm: dcfr\n    iterations: 4\n", "5:5", "iterations", 3),
        ("bot:\n  hunl:\n    flop: {iterations: 3, iterations: 4}\n", "3:27", "iterations", 3),
    ],
)
def test_a_key_given_twice_is_refused_at_its_second_line(tmp_path: Path, text: str, where: str, key: str, first: int) -> None:
    """yaml.safe_load keeps the last of two equal keys: a setting added twice would be silently overridden."""
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}:{where}: not valid YAML: duplicate key {key!r} (first on line {first})"


def test_yaml_numbers_read_as_they_look() -> None:
    """PyYAML (YAML 1.1) reads ``1e3`` as a string, ``1:30`` as 90 (base 60) and ``017`` as 15: a range
    ``99:0.75`` given alone became the number 5940.75, ``iterations: 017`` ran 15, and a number setting
    given as ``1e3`` was refused as not a number (a whole-number setting still refuses the float)."""
    import yaml

    from agent.common.yaml_files import load_yaml

    text = "a: 1e3\nb: -2.5E-3\nc: 1:30\nd: 99:0.75\ne: 1_000\nf: .5\ng: -.inf\nh: 1e\ni: 0x10\nj: 1.5e3\n"
    assert yaml.safe_load(text)["d"] == 5940.75  # what the plain safe loader does
    got = load_yaml(text)
    assert got == {
        "a": 1000.0,
        "b": -0.0025,
        "c": "1:30",
        "d": "99:0.75",
        "e": 1000,
        "f": 0.5,
        "g": -math.inf,
        "h": "1e",
        "i": 16,
        "j": 1500.0,
    }
    assert math.isnan(load_yaml("x: .nan")["x"]) and load_yaml("x: 1e300")["x"] == 1e300
    # octal and binary (YAML 1.1 only) stay strings: a number's setting refuses them by name
    # what PyYAML's constructors cannot read (a float of "." once the underscores go) stays a string
    assert load_yaml("a: ._\nb: .__\nc: ._e5\nd: 0x_\ne: 1._\n") == {"a": "._", "b": ".__", "c": "._e5", "d": "0x_", "e": 1.0}
    assert load_yaml("a: 017\nb: 0b11\nc: 0o17\nd: 0_\ne: -0x10\nf: 0\n") == {
        "a": "017",
        "b": "0b11",
        "c": "0o17",
        "d": "0_",
        "e": -16,
        "f": 0,
    }


def test_yaml_plain_keys_are_their_text() -> None:
    """A spot named ``1e3`` was the float key 1000.0, which ``--spot 1e3`` never found; ``on:`` was True."""
    from agent.common.yaml_files import load_yaml

    assert load_yaml("1e3: a\non: b\n017: c\nnull: d\n'5': e\nx: {2: 3.5}\n") == {
        "1e3": "a",
        "on": "b",
        "017": "c",
        "null": "d",
        "5": "e",
        "x": {"2": 3.5},
    }
    with pytest.raises(yaml.constructor.ConstructorError, match="duplicate key '1'"):
        load_yaml("1: a\n'1': b\n")
    # an alias of an anchored key keeps its own type; merged-in keys and dates are text too
    assert load_yaml("&a 10: x\ny: *a\n") == {"10": "x", "y": 10}
    assert load_yaml("a: {<<: {1e3: x, on: 1}}\n") == {"a": {"1e3": "x", "on": 1}}
    assert load_yaml("2024-01-01: x\n") == {"2024-01-01": "x"}
    assert load_yaml("b: &m {1: a, 2: b}\nc: {<<: *m, 2: z}\n")["c"] == {"1": "a", "2": "z"}
    # a key whose writer tagged it keeps the tag, even one equal to what a plain key resolves to
    assert load_yaml("!!int 5: a\n6: b\n!!float 1e3: c\n!!str 7: d\n! 8: e\n") == {
        5: "a",
        "6": "b",
        1000.0: "c",
        "7": "d",
        "8": "e",
    }


def test_yaml_merge_keys_still_override() -> None:
    """The mapping's own keys win over merged ones, and of merged mappings the first that has a key gives it,
    whatever the key's length (PyYAML told merged keys apart by the identity of their text: ``a`` took the
    first value, ``ab`` the last, and ``!!int 5`` dropped a plain ``5``)."""
    from agent.common.yaml_files import load_yaml

    assert load_yaml("base: &b {a: 1, b: 2}\nmine: {<<: *b, a: 3}\n")["mine"] == {"a": 3, "b": 2}
    assert load_yaml("<<: [{a: 1}, {a: 2}]\n") == {"a": 1} and load_yaml("<<: [{ab: 1}, {ab: 2}]\n") == {"ab": 1}
    assert load_yaml("<<: [{!!int 5: a}, {5: b}]\n") == {5: "a", "5": "b"}
    assert load_yaml("x: &x {<<: {k: 1}, j: 2}\ny: {<<: [*x, {k: 3, m: 4}], j: 5}\n")["y"] == {"k": 1, "j": 5, "m": 4}
    with pytest.raises(yaml.constructor.ConstructorError, match="expected a mapping or list of mappings for merging"):
        load_yaml("<<: 5\n")
    with pytest.raises(yaml.constructor.ConstructorError, match="expected a mapping for merging, but found scalar"):
        load_yaml("<<: [5]\n")


def test_a_huge_value_or_key_is_not_echoed_whole(tmp_path: Path) -> None:
    """A 200,000-character setting made a 200 KB error line; what is shown of it is cut."""
    path = tmp_path / "c.yaml"
    for text, start in (
        ("device: " + "x" * 200_000 + "\n", f"{path}:1: device: 'xxxx"),
        ("seed: 1\n" + "y" * 1000 + ": 1\n", f"{path}:2: top level: unknown key(s) 'yyyy"),  # YAML keys stop at 1024
        ("seed: " + "9" * 5000 + "\n", f"{path}:1: seed:"),
    ):
        path.write_text(text)
        with pytest.raises(ConfigError) as info:
            load_config(path)
        assert str(info.value).startswith(start) and len(str(info.value)) < 500, str(info.value)[:300]


def test_a_model_path_the_file_system_refuses_is_named_by_its_key(tmp_path: Path) -> None:
    """A 5000-character model path: a bare "File name too long" OSError of 5 KB naming no setting."""
    from agent.bots.settings import check_models
    from protocol.gamedef import load_game

    path = tmp_path / "c.yaml"
    path.write_text("bot:\n  leduc:\n    value_net: " + "a" * 5000 + ".pt\n")
    with pytest.raises(ModelError) as info:
        check_models(load_game("leduc"), load_config(path))
    message = str(info.value)
    assert message.startswith(f"{path}: bot.leduc.value_net: '") and message.endswith(".pt': cannot be read: File name too long")
    assert len(message) < 400


def test_bad_values_name_the_line_of_their_key(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("seed: 1\nbot:\n  leduc:\n    iterations: 3\n  hunl:\n    warm_start: {weight: 1.5}\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}:6: bot.hunl.warm_start.weight: 1.5 is not in [0, 1)"
    path.write_text("seed: 1\nbot:\n  leduc:\n    iteraions: 3\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}:4: bot.leduc: unknown key(s) 'iteraions'")
    path.write_text("seed: 1\nbot:\n  leduc:\n    iterations: 0\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}:4: bot.leduc.iterations: 0 must be at least 1"
    path.write_text("bot:\n  hunl:\n    turn: {iterations: 3, leaves: nett}\n")
    with pytest.raises(ConfigError, match=r"c.yaml:3: bot.hunl.turn.leaves: 'nett' is not one of 'net' \| 'checkdown' \| 'end'"):
        load_config(path)
    path.write_text("bot:\n  hunl:\n    turn: {iterations: 3, leaves: checkdown, checkdown_spr: 1}\n")
    with pytest.raises(ConfigError, match=r"c.yaml:3: bot.hunl.turn.checkdown_spr: 1.0 is for leaves 'net', not 'checkdown'"):
        load_config(path)
    path.write_text("bot:\n  hunl:\n    river: {leaves: net}\n")  # accepted, and only switched the river's updates
    with pytest.raises(ConfigError, match=r"c.yaml:3: bot.hunl.river.leaves: 'net'; the river is always solved to the end"):
        load_config(path)


def test_relative_paths_resolve_against_the_config_files_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Wherever the command runs: a path the file gives is taken from the file's folder; a shipped
    model's path that is not there is the package's; a key left out is the built-in default."""
    folder = tmp_path / "experiment"
    folder.mkdir()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    path = folder / "my.yaml"
    path.write_text(
        "logging: {json_path: logs/bot.jsonl}\n"
        "bot:\n"
        "  leduc: {value_net: nets/leduc.pt}\n"
        "  leduc_limit: {value_net: models/leduc/leduc-limit.pt}\n"
        "  hunl:\n"
        "    start_cache: cache/preflop.pkl\n"
        f"    models: {{turn_net: {tmp_path / 'abs' / 'turn.pt'}, flop_net: ../common/flop.pt}}\n"
    )
    config = load_config(Path("..") / "experiment" / "my.yaml")  # a relative config path, too
    assert config.bot.leduc.value_net == str(folder / "nets" / "leduc.pt")
    assert config.logging.json_path == str(folder / "logs" / "bot.jsonl")
    assert config.bot.hunl.start_cache == str(folder / "cache" / "preflop.pkl")
    assert config.bot.hunl.models.turn_net == str(tmp_path / "abs" / "turn.pt")
    assert config.bot.hunl.models.flop_net == str(folder / ".." / "common" / "flop.pt")
    # not in the config's folder, but a shipped model: the package's copy (a copied config.yaml works)
    assert config.bot.leduc_limit.value_net == str(MODELS_DIR / "leduc" / "leduc-limit.pt")
    # left out of the file: the built-in default, the package's model
    assert config.bot.hunl.models.aux_net == str(MODELS_DIR / "holdem" / "preflop-aux.pt")
    # once a file of the config's folder exists, it is the one used
    (folder / "models" / "leduc").mkdir(parents=True)
    (folder / "models" / "leduc" / "leduc-limit.pt").write_bytes(b"mine")
    assert load_config(path).bot.leduc_limit.value_net == str(folder / "models" / "leduc" / "leduc-limit.pt")


def test_an_installed_package_finds_its_shipped_models(tmp_path: Path) -> None:
    """The package's layout after ``pip install .`` (no config.yaml beside it): the built-in
    defaults and a copy of the shipped config.yaml in another folder both name its models."""
    site = tmp_path / "site-packages"
    for rel in (
        "agent/__init__.py",
        "agent/bots/__init__.py",
        "agent/bots/config.py",
        "agent/solver/__init__.py",
        "agent/common/__init__.py",
        "agent/common/yaml_files.py",
    ):
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, site / rel)
    shutil.copytree(ROOT / "models", site / "models", ignore=shutil.ignore_patterns("*.png", "__pycache__"))
    (tmp_path / "home").mkdir()
    shutil.copy(ROOT / "config.yaml", tmp_path / "home" / "my.yaml")
    script = (
        "import agent.bots.config as c, json; "
        "print(json.dumps([c.__file__, c.load_config().bot.hunl.models.turn_net, "
        "c.load_config('my.yaml').bot.leduc.value_net, c.load_config('my.yaml').bot.hunl.models.flop_buckets]))"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("DEEPSTACK_CONFIG", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path / "home", env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    where, turn, leduc, buckets = json.loads(out.stdout)
    assert where == str(site / "agent" / "bots" / "config.py")
    assert turn == str(site / "models" / "holdem" / "turn-small.pt")
    assert leduc == str(site / "models" / "leduc" / "leduc-ens.pt")
    assert buckets == str(site / "models" / "holdem" / "buckets-flop.npz")
    assert all(Path(p).is_file() for p in (turn, leduc, buckets))


def test_a_partial_mapping_keeps_the_parts_defaults() -> None:
    """`bot: {leduc: {iterations: 100}}` changes the iterations only: the Leduc bot keeps its shipped
    network (it used to lose it silently and solve round 2 exactly), as the docs promise."""
    from agent.bots.config import config_from_dict

    config = config_from_dict({"bot": {"leduc": {"iterations": 100}}})
    assert config.bot.leduc.iterations == 100
    assert config.bot.leduc.value_net is not None and config.bot.leduc.value_net.endswith("models/leduc/leduc-ens.pt")
    assert config.bot.leduc_limit.value_net.endswith("models/leduc/leduc-limit-ens.pt")
    assert config_from_dict({"bot": {"leduc": {"value_net": None}}}).bot.leduc.value_net is None
    flop = config_from_dict({"bot": {"hunl": {"flop": {"iterations": 3}}}}).bot.hunl.flop
    assert (flop.iterations, flop.leaves, flop.checkdown_spr) == (3, "net", 1.0)
    flop = config_from_dict({"bot": {"hunl": {"flop": {"leaves": "checkdown"}}}}).bot.hunl.flop
    assert (flop.iterations, flop.leaves, flop.checkdown_spr) == (60, "checkdown", 0.0)
    # the shipped turn ends at the river network, checked down where little is behind; a file that
    # names other leaves without checkdown_spr gets them without it, one that keeps net keeps it
    turn = config_from_dict({}).bot.hunl.turn
    assert (turn.leaves, turn.checkdown_spr) == ("net", 1.0)
    turn = config_from_dict({"bot": {"hunl": {"turn": {"iterations": 3, "leaves": "checkdown"}}}}).bot.hunl.turn
    assert (turn.iterations, turn.leaves, turn.checkdown_spr) == (3, "checkdown", 0.0)
    turn = config_from_dict({"bot": {"hunl": {"turn": {"iterations": 3}}}}).bot.hunl.turn
    assert (turn.leaves, turn.checkdown_spr) == ("net", 1.0)
    turn = config_from_dict({"bot": {"hunl": {"turn": {"leaves": "net", "checkdown_spr": 0}}}}).bot.hunl.turn
    assert (turn.leaves, turn.checkdown_spr) == ("net", 0.0)


def test_skipped_iterations_reach_the_solver(hunl: Game) -> None:
    """DeepStack's hybrid CFR leaves its first iterations out of the averages: a street's skip is the
    re-solve's (and 0, every iteration counted, by default)."""
    from agent.bots.config import config_from_dict
    from agent.bots.settings import hunl_settings

    data = {"bot": {"hunl": {"algorithm": "hybrid", "preflop": {"iterations": 1000, "skip": 980, "leaves": "checkdown"}}}}
    settings = hunl_settings(hunl, config_from_dict(data).bot.hunl, "cpu")
    variant = settings.street(0).config.variant()
    assert (variant.algorithm, variant.skip) == ("hybrid", 980)
    assert variant.average_weight(980) == 0.0 and variant.average_weight(981) == 1.0
    assert settings.street(1).config.skip == 0


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            {"models": {"turn_net": "models/holdem/flop.pt"}},
            "bot.hunl.models.turn_net): this needs the turn network; this one is for 'flop'",
        ),
        ({"models": {"flop_net": "models/holdem/turn.pt"}}, "bot.hunl.models.flop_net): this needs the flop network"),
        (
            {"models": {"aux_net": "models/holdem/flop.pt"}, "preflop": {"leaves": "net"}},
            "bot.hunl.models.aux_net): this needs the preflop-aux network",
        ),
        (
            {"models": {"turn_buckets": "models/holdem/buckets-flop.npz"}},
            "was trained on the bucket table models/holdem/buckets-turn.npz",
        ),
    ],
)
def test_a_network_of_another_street_or_bucket_table_is_refused(hunl: Game, given: dict, message: str) -> None:
    """Data generation refused these already; the bot loaded them and ran on the wrong card
    abstraction without a word (a flop network at the flop's turn leaves)."""
    from agent.bots.config import config_from_dict
    from agent.bots.settings import hunl_settings
    from agent.nets.manifest import ModelError

    with pytest.raises(ModelError, match=re.escape(message)):
        hunl_settings(hunl, config_from_dict({"bot": {"hunl": given}}).bot.hunl, "cpu")


def test_a_copy_of_config_and_models_elsewhere_is_checked_against_its_own_manifest(tmp_path: Path) -> None:
    """The Docker image's layout: config.yaml beside a copy of the whole ``models/`` folder,
    outside the installed package. Its Leduc network is found in the copy's top-level manifest
    (not a ``models/leduc/manifest.json`` that was never made) and its sha256 is checked."""
    shutil.copy(ROOT / "config.yaml", tmp_path / "config.yaml")
    (tmp_path / "models" / "leduc").mkdir(parents=True)
    shutil.copy(MODELS_DIR / "manifest.json", tmp_path / "models" / "manifest.json")
    shutil.copy(MODELS_DIR / "leduc" / "leduc-ens.pt", tmp_path / "models" / "leduc" / "leduc-ens.pt")
    config = load_config(tmp_path / "config.yaml")
    assert config.bot.leduc.value_net == str(tmp_path / "models" / "leduc" / "leduc-ens.pt")  # the copy, not the package's
    path, entry = checked_file(config.bot.leduc.value_net)
    assert path == tmp_path / "models" / "leduc" / "leduc-ens.pt" and entry["path"] == "leduc/leduc-ens.pt"
    with open(path, "r+b") as f:  # and a damaged copy is still caught
        f.seek(100)
        f.write(b"\0" * 8)
    with pytest.raises(ModelError, match="does not match the manifest"):
        checked_file(config.bot.leduc.value_net)
    (tmp_path / "models" / "manifest.json").unlink()  # a copy without its manifest: said so, not another file blamed
    with pytest.raises(ModelError, match="leduc-ens.pt: no manifest.json in its folder or above it"):
        checked_file(config.bot.leduc.value_net)


@pytest.mark.parametrize(("text", "problem"), [("a: " + "[" * 5000 + "]" * 5000 + "\n", "maximum recursion depth")])
def test_numbers_and_nesting_yaml_cannot_read_are_one_line(tmp_path: Path, text: str, problem: str) -> None:
    """Lists nested 5000 deep were a traceback out of the YAML reader (a 5000-digit number too: it is now
    a string the setting refuses by name, test_a_huge_value_or_key_is_not_echoed_whole)."""
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}: not a config YAML reads: ") and problem in str(info.value)
