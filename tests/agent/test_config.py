from __future__ import annotations

from pathlib import Path

import pytest

from agent.bots.config import Config, ConfigError, config_from_dict, load_config


def test_shipped_config_loads_and_matches_defaults() -> None:
    config = load_config()
    assert isinstance(config, Config)
    assert config.device in ("auto", "cpu", "cuda")
    # a non-editable install without the file falls back to the built-in defaults: they must agree
    assert config == Config()


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
        ({"bot": {"hunl": {"warm_start": {"weight": 1.5}}}}, "bot.hunl.warm_start.weight: 1.5 is not in [0, 1)"),
        ({"bot": {"hunl": {"warm_start": {"mode": "bold"}}}}, "bot.hunl.warm_start.mode: 'bold' is not one of"),
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
    top = tmp_path / "top.yaml"
    top.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        load_config(top)


def test_valid_override(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("device: cpu\nseed: 3\nclient:\n  connect_timeout_s: 5\n")
    config = load_config(path)
    assert config.device == "cpu" and config.seed == 3 and config.client.connect_timeout_s == 5.0
