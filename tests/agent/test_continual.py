"""Continual re-solving: the range and value updates, the bot, the evaluation tools."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agent.config import BotConfig, Config, LeducBotConfig
from agent.continual import ContinualResolver, ResolveSettings, sample_action
from agent.evaluate import agent_profile, export_policy, profile_exploitability
from agent.handspace import HandSpace
from agent.models import ModelError, load_value_net
from agent.resolve import SolverConfig
from agent.tree import FCPA
from native.cards import cards_from_str
from protocol.gamedef import Game
from protocol.state import CALL, LIMIT_RAISE, HandState

FAST = SolverConfig(iterations=60, device="cpu", dtype="float64")


def make(game: Game, iterations: int = 60) -> tuple[HandSpace, ContinualResolver]:
    space = HandSpace(game)
    settings = ResolveSettings.uniform(FCPA, SolverConfig(iterations=iterations, device="cpu", dtype="float64"))
    return space, ContinualResolver(space, settings)


def test_our_action_updates_range_by_bayes_and_takes_child_values(leduc_limit: Game) -> None:
    space, resolver = make(leduc_limit)
    resolver.start_hand(0)
    state = HandState.initial(leduc_limit)
    prior = resolver.memory.our_range.copy()
    decision = resolver.decide(state)
    assert np.allclose(decision.strategy.sum(axis=0), 1.0)
    resolver.act(decision, LIMIT_RAISE)
    i = decision.actions.index(LIMIT_RAISE)
    expected = prior * decision.strategy[i]
    z = expected.sum()
    assert np.allclose(resolver.memory.our_range, expected / z)
    assert np.allclose(resolver.memory.opp_values, decision.child_values[i][1] / z)
    assert np.allclose(decision.our_range, prior)


def test_chance_masks_blocked_hands_and_takes_outcome_values(leduc_limit: Game) -> None:
    space, resolver = make(leduc_limit)
    resolver.start_hand(1)
    state = HandState.initial(leduc_limit).apply(LIMIT_RAISE)  # position 0 raises, we (1) act
    decision = resolver.decide(state)
    resolver.act(decision, CALL)
    range_after_call = resolver.memory.our_range.copy()
    board = cards_from_str("Ks")
    after = state.apply(CALL).with_board(board)
    resolver.observe(after)
    mem = resolver.memory
    blocked = space.blocked(board)
    assert (mem.our_range[blocked] == 0).all() and mem.our_range.sum() == pytest.approx(1.0)
    z_c = (range_after_call * ~blocked).sum()
    assert np.allclose(mem.our_range, range_after_call * ~blocked / z_c)
    i = decision.actions.index(CALL)
    z = (decision.our_range * decision.strategy[i]).sum()
    outcome = decision.chance[(i, False)][board]  # the call closed the round: chance right below
    assert np.allclose(mem.opp_values, outcome[0] * ~blocked / z / z_c)
    assert (mem.opp_values[blocked] == 0).all()


def test_bayes_update_never_nan_or_negative(leduc: Game) -> None:
    space, resolver = make(leduc, iterations=30)
    rng = np.random.default_rng(0)
    for hand in range(6):
        resolver.start_hand(hand % 2)
        state = HandState.initial(leduc)
        while not state.finished:
            if state.board_cards_needed:
                card = next(c for c in space.deck if c not in state.board)
                state = state.with_board(state.board + (card,))
                resolver.observe(state)
                continue
            if state.current_player == resolver.memory.position:
                decision = resolver.decide(state)
                action = sample_action(decision, int(rng.integers(space.size)), rng)
                resolver.act(decision, action)
            else:
                action = CALL
            state = state.apply(action)
            mem = resolver.memory
            assert np.isfinite(mem.our_range).all() and (mem.our_range >= 0).all()
            assert np.isfinite(mem.opp_values).all()
            assert mem.our_range.sum() == pytest.approx(1.0)


def test_exported_policy_covers_every_infoset(leduc_limit: Game, tmp_path: Path) -> None:
    space, _ = make(leduc_limit, iterations=20)
    settings = ResolveSettings.uniform(FCPA, SolverConfig(iterations=20, device="cpu", dtype="float64"))
    profile = agent_profile(space, (FCPA, FCPA), lambda: ContinualResolver(space, settings))
    path = tmp_path / "policy.json"
    n = export_policy(profile, path)
    policy = json.loads(path.read_text())
    assert n == len(policy)
    # every decision of the full tree, for every private card that the board allows
    la = profile.lookahead
    expected = sum(int(space.valid(la.boards[int(la.row_board[int(r)])]).sum()) for r in la.dec_rows)
    assert len(policy) == expected
    for key, probs in policy.items():
        private, board, betting = key.split("|")
        assert len(private) == 2 and (board == "-" or len(board) == 2)
        assert set(probs) <= {"f", "c", "r"}
        assert sum(probs.values()) == pytest.approx(1.0)
    assert "Ks|-|" in policy and "Qh|Kh|rc/" in policy
    e = profile_exploitability(profile)
    assert e["exploitability"] >= 0


def test_missing_and_corrupt_models_fail_at_start(leduc: Game, tmp_path: Path) -> None:
    from agent.bot import DeepStackBot

    missing = Config(bot=BotConfig(leduc=LeducBotConfig(value_net=str(tmp_path / "nope.pt"))))
    with pytest.raises(ModelError, match="model file is missing"):
        DeepStackBot(leduc, missing)
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a torchscript archive")
    with pytest.raises(ModelError, match="not listed"):
        load_value_net(bad)
    (tmp_path / "manifest.json").write_text(json.dumps({"models": {"bad": {"path": "bad.pt", "sha256": "0" * 64}}}))
    with pytest.raises(ModelError, match="does not match the manifest"):
        load_value_net(bad)
    from agent.models import register_model

    register_model(bad, name="bad", net={"buckets": 6, "extra": 6})
    with pytest.raises(ModelError, match="cannot be loaded as TorchScript"):
        load_value_net(bad)
