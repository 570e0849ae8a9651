"""AIVAT is unbiased and lowers variance: checked exactly by enumerating every way a Leduc
hand can go (deals, cards, sampled actions) with its probability, and by simulation."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from agent.evaluation.aivat import ActionEvent, HandTrace, ProfileValue, aivat_value, board_completions, private_deals, run_aivat
from agent.evaluation.policies import CallProvider, ProviderFactory, RandomProvider, StrategyProvider
from agent.solver.handspace import HandSpace
from native.cards import cards_from_str
from protocol.gamedef import Game
from protocol.state import HandState, raise_to


@pytest.fixture(scope="module")
def equilibrium() -> StrategyProvider:
    return ProviderFactory("leduc-limit", "equilibrium", iterations=200)()


def all_hands(space: HandSpace, seats: list[StrategyProvider]) -> Iterator[tuple[float, HandTrace]]:
    """Every complete hand with its probability (deals uniform, actions from the seats' strategies)."""
    deals = private_deals(space.game, space.deck, 0)

    def walk(state: HandState, events: list, prob: float, start: HandState) -> Iterator[tuple[float, HandTrace]]:
        if state.board_cards_needed:
            nexts = board_completions(state, space.deck)
            for nxt in nexts:
                yield from walk(nxt, events + [("board", state)], prob / len(nexts), start)
            return
        if state.finished:
            trace = HandTrace(state.hole_cards, start, tuple(space.deck), list(events), state)
            yield prob, trace
            return
        actor = state.current_player
        actions, probs = seats[actor].strategy(state)
        p = probs[:, space.index(state.hole_cards[actor])]
        p = p / p.sum()
        for i, a in enumerate(actions):
            if p[i] > 0:
                yield from walk(
                    state.apply(a), events + [("action", ActionEvent(state, list(actions), p, i))], prob * p[i], start
                )

    for deal in deals:
        yield from walk(deal, [], 1.0 / len(deals), deal)


@pytest.mark.parametrize("opponent", ["random", "call"])
def test_aivat_is_exactly_unbiased_and_lowers_variance(leduc_limit: Game, equilibrium: StrategyProvider, opponent: str) -> None:
    space = equilibrium.space
    opp = RandomProvider(space) if opponent == "random" else CallProvider(space)
    seats = [equilibrium, opp]  # we are position 0
    good = ProfileValue(space, [equilibrium, equilibrium])
    poor = ProfileValue(space, [CallProvider(space), CallProvider(space)])
    true = float(np.mean([ProfileValue(space, seats)(d, 0) for d in private_deals(leduc_limit, space.deck, 0)]))
    moments = {"raw": [0.0, 0.0], "good": [0.0, 0.0], "poor": [0.0, 0.0]}
    total = 0.0
    for prob, trace in all_hands(space, seats):
        total += prob
        raw, a_good = aivat_value(trace, 0, good)
        _, a_poor = aivat_value(trace, 0, poor)
        for name, v in (("raw", raw), ("good", a_good), ("poor", a_poor)):
            moments[name][0] += prob * v
            moments[name][1] += prob * v * v
    assert total == pytest.approx(1.0)
    for name in moments:
        assert moments[name][0] == pytest.approx(true, abs=1e-9), name  # unbiased, whatever the value function
    var = {k: m[1] - m[0] ** 2 for k, m in moments.items()}
    assert var["good"] < 0.6 * var["raw"]


def test_simulated_match_estimates(equilibrium: StrategyProvider) -> None:
    space = equilibrium.space
    opp = RandomProvider(space)
    result = run_aivat(space.game, equilibrium, opp, ProfileValue(space, [equilibrium, equilibrium]), 600, seed=4)
    assert set(result) == {"raw", "aivat", "duplicate", "aivat duplicate"}
    assert result["aivat"].std < result["raw"].std
    assert result["duplicate"].n == 300 and result["aivat duplicate"].n == 300
    assert result["aivat duplicate"].mean == pytest.approx(result["aivat"].mean)
    assert result["raw"].mean == pytest.approx(result["duplicate"].mean)
    assert abs(result["aivat"].mean - result["raw"].mean) < result["raw"].ci95


def test_off_tree_bets_are_valued_by_check_down(leduc: Game) -> None:
    """No-limit Leduc: the random opponent bets sizes the reference equilibrium never makes."""
    eq = ProviderFactory("leduc", "equilibrium", iterations=60)()
    space = eq.space
    ours, opp = RandomProvider(space), RandomProvider(space)  # both make bets off the equilibrium's tree
    result = run_aivat(leduc, ours, opp, ProfileValue(space, [eq, eq]), 300, seed=2)
    assert np.isfinite(result["aivat"].mean)
    assert abs(result["aivat"].mean - result["raw"].mean) < result["raw"].ci95 + result["aivat"].ci95


def test_with_the_played_profiles_exact_value_every_hand_scores_the_same(equilibrium: StrategyProvider) -> None:
    """Against a deterministic opponent all the luck is chance (the deal, the board) and our own
    actions, and AIVAT corrects exactly those: with the exact value of the profile being played as
    its value function, every hand's estimate is that value. Correcting the opponent's actions
    instead of ours, or skipping the deal's correction, leaves variance (still unbiased, so the
    unbiasedness test cannot tell)."""
    space = equilibrium.space
    seats = [equilibrium, CallProvider(space)]
    exact = ProfileValue(space, seats)
    mean = square = 0.0
    for prob, trace in all_hands(space, seats):
        _, corrected = aivat_value(trace, 0, exact)
        mean += prob * corrected
        square += prob * corrected * corrected
    assert square - mean**2 == pytest.approx(0.0, abs=1e-9)


def test_a_hand_checked_down_shares_only_the_matched_chips(leduc: Game) -> None:
    """Off the reference's tree a state is valued as checked down: the chips both put in go to the
    better hand; the raiser's unmatched chips go back to it. Ks against Qs after r500 (500 against
    100 in): the board Qh loses, Kh, Ah, As win, so +100 x (3 - 1) / 4 for the Ks."""
    state = HandState.initial(leduc).apply(raise_to(500))
    state = state.with_hole_cards(0, cards_from_str("Ks")).with_hole_cards(1, cards_from_str("Qs"))
    assert state.spent == (500, 100)
    np.testing.assert_allclose(ProfileValue(HandSpace(leduc), [])._checkdown(state), [50.0, -50.0])


def test_eval_aivat_refuses_an_odd_number_of_hands(capsys: pytest.CaptureFixture[str]) -> None:
    """--hands 5 put 5 hands in the raw and AIVAT rows and 2 pairs in the duplicate rows: the hand left over had no
    twin (and played one seat once more). An odd count is refused, saying why."""
    import json

    from agent.cli.main import main

    argv = ["eval", "aivat", "--game", "leduc", "--bot", "call", "--opponent", "random", "--json", "--hands"]
    assert main([*argv, "5"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "deepstack eval aivat: error: --hands must be even (pairs of hands with the same cards and the seats swapped), not 5"
    ]
    assert main([*argv, "4"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["raw"]["n"] == out["aivat"]["n"] == 4 and out["duplicate"]["n"] == out["aivat_duplicate"]["n"] == 2
