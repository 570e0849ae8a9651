"""Continual re-solving: the range and value updates, the bot, the evaluation tools."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from agent.bots.config import BotConfig, Config, LeducBotConfig
from agent.evaluation.evaluate import PolicyError, agent_profile, export_policy, import_policy, profile_exploitability
from agent.nets.manifest import ModelError, load_value_net
from agent.resolving.continual import ContinualResolver, nearest_action
from agent.resolving.decision import Decision, sample_action
from agent.resolving.settings import ResolveSettings
from agent.solver.handspace import HandSpace
from agent.solver.resolve import SolverConfig
from agent.solver.tree import FCPA, bet_actions
from native.cards import cards_from_str
from protocol.gamedef import Game
from protocol.state import CALL, FOLD, LIMIT_RAISE, HandState, raise_to

FAST = SolverConfig(iterations=60, device="cpu", dtype="float64")


def make(game: Game, iterations: int = 60) -> tuple[HandSpace, ContinualResolver]:
    space = HandSpace(game)
    settings = ResolveSettings.uniform(FCPA, SolverConfig(iterations=iterations, device="cpu", dtype="float64"))
    return space, ContinualResolver(space, settings)


def test_sampled_actions_follow_the_strategy_of_the_hand_held(leduc_limit: Game) -> None:
    """An action of frequency 0.3 for the hand we hold is drawn 0.3 +- 0.03 of 4000 seeded times (not another hand's)."""
    strategy = np.array([[0.9, 0.3], [0.1, 0.7]])  # [actions, hands]: hand 1 folds with 0.3
    decision = Decision(HandState.initial(leduc_limit), [FOLD, CALL], strategy, np.full(2, 0.5), np.zeros((2, 2, 2)))
    rng = np.random.default_rng(0)
    folds = sum(sample_action(decision, 1, rng) == FOLD for _ in range(4000))
    assert folds / 4000 == pytest.approx(0.3, abs=0.03)


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


def test_opponent_range_estimate_follows_bayes_with_our_model_of_its_play(leduc_limit: Game) -> None:
    space, resolver = make(leduc_limit)
    # we are position 1: the opponent acts first, with its strategy from the first-state solve
    resolver.start_hand(1)
    mem = resolver.memory
    assert np.allclose(mem.opp_range, space.uniform(()))
    actions, strategy = mem.opp_strategies[""]
    state = HandState.initial(leduc_limit).apply(LIMIT_RAISE)
    resolver.observe(state)
    expected = space.uniform(()) * strategy[actions.index(LIMIT_RAISE)]
    assert np.allclose(mem.opp_range, expected / expected.sum())
    # our call, then the board: blocked hands leave the estimate, which stays normalised
    decision = resolver.decide(state)
    resolver.act(decision, CALL)
    board = cards_from_str("Ks")
    resolver.observe(state.apply(CALL).with_board(board))
    masked = expected * ~space.blocked(board)
    assert np.allclose(mem.opp_range, masked / masked.sum())
    # an opponent action at a node of our last lookahead: its strategy there from that re-solve
    round2 = state.apply(CALL).with_board(board)
    resolver.observe(round2)
    before = mem.opp_range.copy()
    after_bet = round2.apply(LIMIT_RAISE)
    resolver.observe(after_bet)
    assert round2.betting_string() not in decision.opp_strategies  # the next round is not tracked
    assert np.allclose(mem.opp_range, before)
    # we are position 0 and raise: the opponent's re-raise is a node of our re-solve's lookahead
    resolver.start_hand(0)
    mem = resolver.memory
    state = HandState.initial(leduc_limit)
    decision = resolver.decide(state)
    resolver.act(decision, LIMIT_RAISE)
    actions, strategy = decision.opp_strategies[state.apply(LIMIT_RAISE).betting_string()]
    resolver.observe(state.apply(LIMIT_RAISE).apply(LIMIT_RAISE))
    expected = space.uniform(()) * strategy[actions.index(LIMIT_RAISE)]
    assert np.allclose(mem.opp_range, expected / expected.sum())


def test_a_first_round_decision_cut_short_by_the_clock_is_not_cached(leduc_limit: Game) -> None:
    import time

    space, resolver = make(leduc_limit)
    resolver.start_hand(0)
    state = HandState.initial(leduc_limit).apply(CALL).apply(LIMIT_RAISE)
    resolver.observe(state)
    cut = resolver.decide(state, deadline=time.monotonic() - 1.0)
    assert 0 < cut.iterations < 60 and not cut.cached
    assert not resolver.decide(state).cached  # solved again, in full this time
    full = resolver.decide(state)
    assert full.cached and full.iterations == 60


def test_the_clock_stops_a_re_solve_inside_its_skipped_iterations_too(leduc_limit: Game) -> None:
    """With ``skip`` the solver used to ignore the deadline until it had averaged once: 200 more
    iterations past a spent clock (the bot then answers out of time: fewer than skip + 1)."""
    import time

    space = HandSpace(leduc_limit)
    settings = ResolveSettings.uniform(FCPA, SolverConfig(iterations=400, skip=200, device="cpu", dtype="float64"))
    resolver = ContinualResolver(space, settings)
    resolver.start_hand(0)
    state = HandState.initial(leduc_limit).apply(CALL).apply(LIMIT_RAISE)
    resolver.observe(state)
    cut = resolver.decide(state, deadline=time.monotonic() - 1.0)
    assert cut.iterations == 1 and not cut.cached
    assert np.allclose(cut.strategy.sum(axis=0), 1.0)  # the current strategy: a distribution still


def test_a_cached_first_round_decision_is_played_only_from_the_range_it_was_solved_for(leduc_limit: Game) -> None:
    space, resolver = make(leduc_limit)
    state = HandState.initial(leduc_limit)
    line = state.apply(LIMIT_RAISE).apply(LIMIT_RAISE)

    def reach_second_decision(tilt: bool) -> Decision:
        resolver.start_hand(0)
        resolver.act(resolver.decide(state), LIMIT_RAISE)
        mem = resolver.memory
        assert mem is not None
        if tilt:  # as if the first decision had been solved again (evicted, or cut by the clock) differently
            mem.our_range = mem.our_range * np.linspace(0.5, 1.5, mem.our_range.size)
            mem.our_range /= mem.our_range.sum()
        resolver.observe(line)
        return resolver.decide(line)

    first = reach_second_decision(tilt=False)
    assert not first.cached
    assert reach_second_decision(tilt=False).cached
    tilted = reach_second_decision(tilt=True)
    assert not tilted.cached  # solved again from the range we hold
    assert np.allclose(tilted.our_range, resolver.memory.our_range, atol=1e-6)  # type: ignore[union-attr]
    assert reach_second_decision(tilt=True).cached  # the new one replaced it
    assert not reach_second_decision(tilt=False).cached


def test_lbr_peeks_at_hypothetical_bets_leave_the_estimate_alone(leduc_limit: Game) -> None:
    from agent.evaluation.policies import ResolverProvider

    space, resolver = make(leduc_limit)
    provider = ResolverProvider(resolver)
    provider.start_hand(0)
    state = HandState.initial(leduc_limit)
    provider.strategy(state)
    provider.commit(state, CALL)
    decision = resolver.memory.last
    bet = state.apply(CALL).apply(LIMIT_RAISE)
    before = resolver.memory.opp_range.copy()
    provider.strategy(bet)  # a peek: what would the bot do if the opponent bet here?
    assert np.allclose(resolver.memory.opp_range, before)
    provider.commit(bet, CALL)  # the bet was real after all
    actions, strategy = decision.opp_strategies[state.apply(CALL).betting_string()]
    expected = before * strategy[actions.index(LIMIT_RAISE)]
    assert np.allclose(resolver.memory.opp_range, expected / expected.sum())


def test_a_peek_asked_again_is_answered_without_a_second_resolve(leduc_limit: Game, monkeypatch: pytest.MonkeyPatch) -> None:
    """LBR peeks at a bet, then makes it: the bot's answer to the real bet is the peek's (a re-solve
    depends on the memory and the state alone), not solved twice; a new card or hand re-solves."""
    from agent.evaluation.policies import ResolverProvider

    space, resolver = make(leduc_limit)
    provider = ResolverProvider(resolver)
    solved: list[str] = []
    decide = resolver.decide
    monkeypatch.setattr(resolver, "decide", lambda state: solved.append(state.betting_string()) or decide(state))
    provider.start_hand(0)
    state = HandState.initial(leduc_limit)
    provider.strategy(state)
    provider.commit(state, CALL)
    bet = state.apply(CALL).apply(LIMIT_RAISE)
    actions, peeked = provider.strategy(bet)
    again = provider.strategy(bet)
    assert len(solved) == 2 and again[0] == actions and np.array_equal(again[1], peeked)
    _, fresh = make(leduc_limit)  # the same memory re-solved from scratch: the same answer
    fresh.start_hand(0)
    fresh.act(fresh.decide(state), CALL)
    assert np.allclose(fresh.decide(bet).strategy, peeked)
    provider.commit(bet, CALL)
    flop = bet.apply(CALL).with_board(tuple(cards_from_str("Ks")))
    provider.observe(flop)
    provider.strategy(flop)
    for _ in range(2):  # a new hand with the same betting so far
        provider.start_hand(0)
        provider.strategy(state)
    assert len(solved) == 5


def test_nearest_action_maps_off_tree_bets_to_the_closest_size() -> None:
    actions = [FOLD, CALL, raise_to(300), raise_to(600), raise_to(20000)]
    assert nearest_action(actions, CALL) == 1
    assert nearest_action(actions, raise_to(400)) == 2
    assert nearest_action(actions, raise_to(500)) == 3
    assert nearest_action(actions, raise_to(15000)) == 4
    assert nearest_action([CALL], raise_to(500)) is None


def test_warm_start_only_at_our_first_action_of_a_round(leduc_limit: Game) -> None:
    space = HandSpace(leduc_limit)
    settings = ResolveSettings.uniform(FCPA, FAST, warm_start_weight=0.9)
    resolver = ContinualResolver(space, settings)
    resolver.start_hand(0)
    state = HandState.initial(leduc_limit)
    warm = resolver._warm_start(state)
    assert warm is not None and warm.mode == "aggressive" and warm.weight == 0.9
    decision = resolver.decide(state)
    resolver.act(decision, CALL)
    faced = state.apply(CALL).apply(LIMIT_RAISE)  # our second action of the round: none
    resolver.observe(faced)
    assert resolver._warm_start(faced) is None
    resolver.start_hand(1)
    faced = HandState.initial(leduc_limit).apply(LIMIT_RAISE)  # first action, facing a bet
    resolver.observe(faced)
    warm = resolver._warm_start(faced)
    assert warm is not None and warm.mode == "conservative"
    off = ContinualResolver(space, ResolveSettings.uniform(FCPA, FAST))
    off.start_hand(0)
    assert off._warm_start(HandState.initial(leduc_limit)) is None


@pytest.mark.parametrize("dtype", ["float64", "float32"])  # float32 on the CPU: the fused C kernels
def test_action_values_are_what_each_action_wins_against_the_opponent_range(leduc_limit: Game, dtype: str) -> None:
    """Folding is worth minus what we put in, for every hand: the division by the opponent's
    average compatible mass gets the scale right."""
    space = HandSpace(leduc_limit)
    resolver = ContinualResolver(space, ResolveSettings.uniform(FCPA, SolverConfig(iterations=60, device="cpu", dtype=dtype)))
    resolver.start_hand(1)
    state = HandState.initial(leduc_limit).apply(CALL)
    decision = resolver.decide(state)
    resolver.act(decision, CALL)
    state = state.apply(CALL).with_board(cards_from_str("Ks"))
    resolver.observe(state)
    state = state.apply(LIMIT_RAISE)  # the opponent bets the second round; we face it
    resolver.observe(state)
    decision = resolver.decide(state)
    fold = decision.actions.index(FOLD)
    me = state.current_player
    held = [h for h in range(space.size) if decision.our_range[h] > 0]
    assert held
    for h in held:
        values = decision.action_values(h)
        assert values is not None and values.shape == (len(decision.actions),)
        assert values[fold] == pytest.approx(-state.spent[me], rel=1e-4 if dtype == "float64" else 1e-3)
        assert abs(values).max() <= 13 + 1e-6  # leduc-limit: ante 1, two raises of 2, two of 4


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_opponent_first_in_a_round_is_resolved_from_the_round_start(leduc_limit: Game, dtype: str) -> None:
    """The opponent bets first in the second round: the re-solve starts at the round's start
    (where the opponent values we keep were computed) with its bet in the tree, and the
    decision is the one below that bet: the actions legal there, a strategy, values on the
    right scale (folding loses what we put in) and the usual updates when we act."""
    space = HandSpace(leduc_limit)
    config = SolverConfig(iterations=60, device="cpu", dtype=dtype)
    settings = ResolveSettings.uniform(FCPA, config, warm_start_weight=0.9, from_round_start=True)
    resolver = ContinualResolver(space, settings)
    resolver.start_hand(1)
    state = HandState.initial(leduc_limit).apply(CALL)
    assert resolver._round_start(state) is None  # the first round keeps the state faced
    resolver.act(resolver.decide(state), CALL)
    start = state.apply(CALL).with_board(cards_from_str("Ks"))
    resolver.observe(start)
    state = start.apply(LIMIT_RAISE)
    resolver.observe(state)
    origin = resolver._round_start(state)
    assert origin is not None and origin[0] == start and origin[1] == LIMIT_RAISE
    decision = resolver.decide(state)
    assert decision.state == state and decision.actions == [FOLD, CALL, LIMIT_RAISE]
    held = decision.our_range > 0
    assert np.allclose(decision.strategy.sum(axis=0)[held], 1.0, atol=1e-5)
    me = state.current_player
    fold = decision.actions.index(FOLD)
    for h in np.nonzero(held)[0]:
        values = decision.action_values(int(h))
        assert values is not None
        assert values[fold] == pytest.approx(-state.spent[me], rel=1e-4 if dtype == "float64" else 1e-3)
    prior = resolver.memory.our_range.copy()
    assert np.allclose(decision.our_range, prior / prior.sum())
    # the opponent's bet is below no earlier re-solve of ours: the estimate waits for this one's
    estimate = resolver.memory.opp_range.copy()
    assert decision.opp_first is not None
    actions, strategy, taken = decision.opp_first
    assert taken == LIMIT_RAISE and actions[0] == CALL and LIMIT_RAISE in actions
    resolver.act(decision, CALL)
    i = decision.actions.index(CALL)
    z = (prior * decision.strategy[i]).sum()
    assert np.allclose(resolver.memory.opp_values, decision.child_values[i][1 - me] / z)
    expected = estimate * strategy[actions.index(LIMIT_RAISE)]
    assert np.allclose(resolver.memory.opp_range, expected / expected.sum(), atol=1e-6)
    assert not np.allclose(resolver.memory.opp_range, estimate, atol=1e-3)
    # after our own action of the round, or without the setting: the state faced
    resolver.start_hand(0)
    first = HandState.initial(leduc_limit)
    resolver.act(resolver.decide(first), CALL)
    state = first.apply(CALL).apply(CALL).with_board(cards_from_str("Qh")).apply(CALL).apply(LIMIT_RAISE)
    resolver.observe(state)
    assert resolver._round_start(state) is None  # we acted first in this round
    plain = ContinualResolver(space, ResolveSettings.uniform(FCPA, config, warm_start_weight=0.9))
    plain.start_hand(1)
    assert plain._round_start(start.apply(LIMIT_RAISE)) is None


def test_the_opponents_first_action_of_a_round_updates_the_estimate_once_through_lbr_peeks(leduc_limit: Game) -> None:
    """LBR peeks at the decision on a copy of the memory, then commits: the estimate takes the
    opponent's first action of the round once, as when the bot plays."""
    from agent.evaluation.policies import ResolverProvider

    space = HandSpace(leduc_limit)
    settings = ResolveSettings.uniform(FCPA, FAST, warm_start_weight=0.9, from_round_start=True)
    played, peeked = ContinualResolver(space, settings), ContinualResolver(space, settings)
    provider = ResolverProvider(peeked)
    played.start_hand(1)
    provider.start_hand(1)
    state = HandState.initial(leduc_limit).apply(CALL)
    played.act(played.decide(state), CALL)
    provider.commit(state, CALL)
    state = state.apply(CALL).with_board(cards_from_str("Ks")).apply(LIMIT_RAISE)
    played.observe(state)
    decision = played.decide(state)
    played.act(decision, CALL)
    provider.observe(state)
    provider.strategy(state)
    provider.strategy(state)  # asked again: no second update
    provider.commit(state, CALL)
    assert np.allclose(peeked.memory.opp_range, played.memory.opp_range, atol=1e-6)
    assert np.allclose(peeked.memory.opp_values, played.memory.opp_values)


@pytest.mark.parametrize("opponent_first", [False, True])
def test_leaf_ranges_are_the_averages_not_the_last_iterate(leduc_limit: Game, opponent_first: bool) -> None:
    """The next round's values are computed from the ranges at the re-solve's leaves: the average
    strategy played from the gadget's average root reach, so that at our decision the opponent's
    reach is the one averaged over the iterations (the last iterate's is not)."""
    from agent.resolving.decision import average_root_reach
    from agent.solver.resolve import resolve

    space = HandSpace(leduc_limit)
    if opponent_first:
        state = HandState.initial(leduc_limit).apply(CALL).apply(CALL).with_board(cards_from_str("Ks"))
        action = LIMIT_RAISE
    else:
        state = HandState.initial(leduc_limit).apply(LIMIT_RAISE)
        action = None
    valid = space.valid(state.board)
    our = valid / valid.sum()
    cfvs = np.where(valid, np.linspace(-3.0, 3.0, space.size), 0.0)
    sol = resolve(state, our, cfvs, FCPA, FAST, space=space, opponent_action=action)
    res = sol.result
    me = sol.lookahead.nodes[sol.decision_row].player
    root = average_root_reach(sol)
    assert torch.equal(root[me], res.root_reach[me])
    sol.solver.evaluate(root, res.average_strategy)
    at_decision = sol.solver.reach[1 - me, sol.decision_row]
    assert torch.allclose(at_decision, res.average_reach[1 - me], atol=1e-9)
    sol.solver.evaluate(res.root_reach, res.average_strategy)
    assert not torch.allclose(sol.solver.reach[1 - me, sol.decision_row], res.average_reach[1 - me], atol=1e-6)


def test_an_off_tree_first_bet_is_put_in_the_tree(leduc: Game) -> None:
    """No-limit: the opponent's first bet of a round is a size our abstraction lacks; the
    re-solve from the round's start offers it, so our decision is at the real state."""
    space = HandSpace(leduc)
    settings = ResolveSettings.uniform(FCPA, FAST, warm_start_weight=0.9, from_round_start=True)
    resolver = ContinualResolver(space, settings)
    resolver.start_hand(1)
    state = HandState.initial(leduc).apply(CALL)
    resolver.act(resolver.decide(state), CALL)
    start = state.apply(CALL).with_board(cards_from_str("Ks"))
    resolver.observe(start)
    low, _ = start.raise_bounds()
    odd = next(raise_to(x) for x in range(low + 1, low + 20) if raise_to(x) not in bet_actions(start, FCPA, 0))
    state = start.apply(odd)
    resolver.observe(state)
    decision = resolver.decide(state)
    assert decision.state == state and all(state.is_legal(a) for a in decision.actions)
    assert decision.actions[:2] == [FOLD, CALL]
    assert np.allclose(decision.strategy.sum(axis=0)[decision.our_range > 0], 1.0)


def test_an_illegal_opponent_action_is_refused_by_name(leduc: Game) -> None:
    """A re-solve asked to start before an opponent action the state does not allow says so."""
    from agent.solver.resolve import SpotError, resolve

    space = HandSpace(leduc)
    state = HandState.initial(leduc)
    uniform = space.uniform(())
    with pytest.raises(SpotError, match="the opponent's action r1 is not legal"):
        resolve(state, uniform, np.zeros(space.size), FCPA, FAST, space=space, opponent_action=raise_to(1))


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
            assert np.isfinite(mem.opp_range).all() and mem.opp_range.sum() == pytest.approx(1.0)


def test_exported_policy_covers_every_infoset(leduc_limit: Game, tmp_path: Path) -> None:
    space, _ = make(leduc_limit, iterations=20)
    settings = ResolveSettings.uniform(FCPA, SolverConfig(iterations=20, device="cpu", dtype="float64"))
    profile = agent_profile(space, (FCPA, FCPA), lambda: ContinualResolver(space, settings))
    path = tmp_path / "policy.json"
    n = export_policy(profile, path)
    policy = json.loads(path.read_text())
    assert policy.pop("_game") == leduc_limit.to_text()  # the game it was exported for
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
    # the file measures what the agent measured: the same exact best response on the policy read back
    again = profile_exploitability(import_policy(space, (FCPA, FCPA), path))
    assert again["exploitability"] == pytest.approx(e["exploitability"], abs=1e-9)
    assert again["value0"] == pytest.approx(e["value0"], abs=1e-9)
    # the command measures the file alone: no model is loaded or checked (this config's is missing)
    from agent.cli.main import main

    config = tmp_path / "c.yaml"
    config.write_text("bot:\n  leduc_limit: {value_net: missing.pt}\n")
    args = ["eval", "exploitability", "--game", "leduc-limit", "--policy", str(path), "--config", str(config), "--json"]
    assert main(args) == 0
    assert main([*args, "--exact"]) == 2
    policy["Qh|Kh|rc/"] = {name: 0.9 for name in policy["Qh|Kh|rc/"]}  # not a distribution
    path.write_text(json.dumps(policy))
    with pytest.raises(PolicyError, match="sum to"):
        import_policy(space, (FCPA, FCPA), path)
    policy["Qh|Kh|rc/"] = {"c": 1.0, "f": 0.0, "x": 0.0}  # an action the tree has not here
    path.write_text(json.dumps(policy))
    with pytest.raises(PolicyError, match="not in the game's tree"):
        import_policy(space, (FCPA, FCPA), path)
    policy["Qh|Kh|rc/"] = {"c": True, "r": False}  # JSON booleans are not probabilities
    path.write_text(json.dumps(policy))
    with pytest.raises(PolicyError, match="no probability in"):
        import_policy(space, (FCPA, FCPA), path)
    policy["Qh|Kh|rc/"] = {"c": 1.0, "r": 0.0}
    path.write_text(json.dumps({**policy, "Ks|-|rrrrc/": {"c": 1.0}}))  # another game's line: more raises
    with pytest.raises(PolicyError, match="1 information set"):
        import_policy(space, (FCPA, FCPA), path)
    other = leduc_limit.to_text().replace("raiseSize = 2 4", "raiseSize = 4 8")
    path.write_text(json.dumps({"_game": other, **policy}))  # the same keys, another game's sizes
    with pytest.raises(PolicyError, match="exported for another game"):
        import_policy(space, (FCPA, FCPA), path)
    del policy["Qh|Kh|rc/"]
    path.write_text(json.dumps(policy))
    with pytest.raises(PolicyError, match="'Qh|Kh|rc/' is missing"):
        import_policy(space, (FCPA, FCPA), path)


def test_missing_and_corrupt_models_fail_at_start(leduc: Game, tmp_path: Path) -> None:
    from agent.bots.deepstack import DeepStackBot

    missing = Config(bot=BotConfig(leduc=LeducBotConfig(value_net=str(tmp_path / "nope.pt"))))
    with pytest.raises(ModelError, match="model file is missing"):
        DeepStackBot(leduc, missing)
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a torchscript archive")
    with pytest.raises(ModelError, match="no manifest.json in its folder or above it"):
        load_value_net(bad)
    (tmp_path / "manifest.json").write_text(json.dumps({"models": {}}))
    with pytest.raises(ModelError, match="not listed"):
        load_value_net(bad)
    (tmp_path / "manifest.json").write_text(json.dumps({"models": {"bad": {"path": "bad.pt", "sha256": "0" * 64}}}))
    with pytest.raises(ModelError, match="does not match the manifest"):
        load_value_net(bad)
    from agent.nets.manifest import register_model

    register_model(bad, name="bad", net={"buckets": 6, "extra": 6})
    with pytest.raises(ModelError, match="cannot be loaded as TorchScript"):
        load_value_net(bad)


@pytest.mark.parametrize(
    ("position", "betting"),
    [
        (0, [raise_to(300), raise_to(600)]),  # r300r600: a raise off our tree (its pot raise is to 900)
        (1, [CALL, raise_to(300), raise_to(500)]),  # cr300r500: the min-raise, off our tree too
        (0, [raise_to(300), raise_to(900)]),  # r300r900: on the tree
    ],
)
def test_leaf_values_are_never_those_of_a_freed_lookahead_at_the_same_address(
    leduc: Game, monkeypatch: pytest.MonkeyPatch, position: int, betting: list
) -> None:
    """Issue 33: the Leduc bot's network leaves prepared each lookahead's leaf rows once, keyed
    by ``id()`` alone; CPython gives a new lookahead the address of a freed one, which then got
    the old tree's rows: ``IndexError('index 2 is out of bounds for dimension 0 with size 2')``
    at r300r600, ``INDICES element is out of DATA bounds, id=3 axis_dim=2`` at cr300r500 (the
    first-state solve has more leaves than these spots), or wrong values where the counts
    matched. Here every lookahead has the same ``id()``: the bot's decisions must be those of
    a run where no lookahead is mistaken for another."""
    from agent.bots.settings import leduc_settings
    from agent.solver.lookahead import Lookahead

    space = HandSpace(leduc)
    cfg = LeducBotConfig(iterations=20, value_net="models/leduc/leduc.pt")

    def play() -> list:
        """Our decisions along ``betting`` (we take our actions in it, whatever the strategy)."""
        resolver = ContinualResolver(space, leduc_settings(leduc, space, cfg, "cpu"), cache=False)
        resolver.start_hand(position)  # solves the first state: a tree with many leaves
        state, decisions = HandState.initial(leduc), []
        for action in [*betting, None]:
            resolver.observe(state)
            if state.current_player == position:
                decisions.append(resolver.decide(state))
                if action is not None:
                    resolver.act(decisions[-1], action)
            if action is not None:
                state = state.apply(action)
        return decisions

    expected = play()
    real_id = id
    monkeypatch.setattr("builtins.id", lambda obj: 0 if isinstance(obj, Lookahead) else real_id(obj))
    got = play()
    assert [d.state.betting_string() for d in got] == [d.state.betting_string() for d in expected]
    assert got[-1].state.betting_string() == "".join(str(a) for a in betting)
    for g, e in zip(got, expected):
        assert g.actions == e.actions
        np.testing.assert_array_equal(g.strategy, e.strategy)
        np.testing.assert_array_equal(g.child_values, e.child_values)
