"""Local best response: sanity against known opponents, settings, resumable chunks."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.lbr import LBRSetting, run_lbr
from agent.match import estimate
from agent.policies import ProviderFactory
from protocol.gamedef import load_game


@pytest.mark.parametrize("game_name", ["leduc-limit", "leduc"])
def test_lbr_crushes_call_and_random(game_name: str) -> None:
    game = load_game(game_name)
    setting = LBRSetting.parse("fcp/fcp" if game.is_nolimit else "fca/fca", 2)
    for bot in ("call", "random"):
        est = estimate(run_lbr(game, ProviderFactory(game_name, bot), setting, 1500, seed=3), game.big_blind)
        assert est.mean - est.half_width > 1000, (bot, est)  # thousands of mbb/g


def test_lbr_does_not_beat_an_equilibrium() -> None:
    game = load_game("leduc")
    setting = LBRSetting.parse("fcp/fcp", 2)
    est = estimate(run_lbr(game, ProviderFactory("leduc", "equilibrium", iterations=1500), setting, 3000, seed=4), game.big_blind)
    assert est.mean - est.half_width < 0, est  # no significant win


def test_settings_parse_and_refuse() -> None:
    s = LBRSetting.parse("c/c/56/56", 4)
    assert len(s.rounds[2]) == 2 + 56 and s.rounds[0] == ("c",)
    assert LBRSetting.parse("fcpa/fc", 2).rounds[0] == ("f", "c", 1.0, "a")
    with pytest.raises(ValueError, match="has 2 rounds"):
        LBRSetting.parse("fc/fc", 4)
    with pytest.raises(ValueError, match="unknown action 'x'"):
        LBRSetting.parse("fx/fc", 2)
    with pytest.raises(ValueError, match="must allow c"):
        LBRSetting.parse("f/fc", 2)


def test_chunks_are_resumable_and_parallel_runs_agree(tmp_path: Path) -> None:
    game = load_game("leduc-limit")
    setting = LBRSetting.parse("fca/fca", 2)
    factory = ProviderFactory("leduc-limit", "random")
    serial = run_lbr(game, factory, setting, 120, seed=9, out_dir=tmp_path / "a", chunk=40)
    assert len(list((tmp_path / "a").glob("lbr-*.json"))) == 3
    (tmp_path / "a" / "lbr-0000040.json").unlink()
    resumed = run_lbr(game, factory, setting, 120, seed=9, out_dir=tmp_path / "a", chunk=40)
    parallel = run_lbr(game, factory, setting, 120, seed=9, out_dir=tmp_path / "b", chunk=40, workers=2)
    assert serial == resumed == parallel
