"""Rules engine: the ACPC numbers, the caps, side pots, and properties over random hands."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from native.cards import cards_from_str
from protocol.gamedef import Game, load_game, parse_game
from protocol.matchstate import format_matchstate, parse_matchstate
from protocol.state import (
    CALL,
    FOLD,
    LIMIT_RAISE,
    ActionKind,
    HandState,
    IllegalActionError,
    RulesError,
    raise_to,
)


def play(game: Game, betting: str) -> HandState:
    """Apply an ACPC betting string (rounds separated by '/') from the start of a hand."""
    state = HandState.initial(game)
    i = 0
    text = betting.replace("/", "")
    while i < len(text):
        ch = text[i]
        i += 1
        if ch == "f":
            state = state.apply(FOLD)
        elif ch == "c":
            state = state.apply(CALL)
        else:
            j = i
            while j < len(text) and text[j].isdigit():
                j += 1
            state = state.apply(raise_to(int(text[i:j])) if j > i else LIMIT_RAISE)
            i = j
    assert state.betting_string() == betting, (state.betting_string(), betting)
    return state


def test_min_raise_numbers_from_acpc_doc(hunl: Game) -> None:
    s = HandState.initial(hunl)
    assert s.current_player == 1  # the button (small blind) acts first pre-flop
    assert s.raise_bounds() == (200, 20000)
    # after a raise to X over M the minimum is X + (X - M)
    assert play(hunl, "r8970").raise_bounds() == (17840, 20000)
    # at the start of a later round: current bet + big blind
    flop = play(hunl, "cr10966c/")
    assert flop.round == 1 and flop.current_player == 0
    assert flop.raise_bounds() == (11066, 20000)
    # above the stack only all-in is left, and nothing once the bet is the stack
    assert play(hunl, "r15000").raise_bounds() == (20000, 20000)
    assert play(hunl, "r20000").raise_bounds() is None


def test_limp_does_not_close_preflop(hunl: Game) -> None:
    s = play(hunl, "c")
    assert s.round == 0 and s.current_player == 0
    assert not s.can_fold()
    s = s.apply(CALL)
    assert s.round == 1 and s.betting_string() == "cc/"
    assert s.board_cards_needed == 3


def test_fold_only_when_facing_a_bet(hunl: Game) -> None:
    s = play(hunl, "cc/")
    assert ActionKind.FOLD not in s.legal_kinds()
    with pytest.raises(IllegalActionError, match="fold is not allowed"):
        s.apply(FOLD)
    assert ActionKind.FOLD in play(hunl, "cc/r300").legal_kinds()


def test_all_in_call_jumps_to_last_round(hunl: Game) -> None:
    s = play(hunl, "cr12925r20000c///")
    assert s.finished and s.round == 3 and s.is_showdown
    assert s.board_cards_needed == 5
    s = play(hunl, "r9105c/r12907r16714r20000c//")
    assert s.finished and s.with_board(cards_from_str("QdQh5c")).board_cards_needed == 2


def test_raise_impossible_when_opponent_all_in(hunl: Game) -> None:
    s = play(hunl, "r20000")
    assert s.raise_bounds() is None
    assert s.legal_kinds() == (ActionKind.FOLD, ActionKind.CALL)


def test_64_action_round_cap(hunl: Game) -> None:
    s = HandState.initial(hunl)
    to = 200
    while len(s.round_actions) < 63:
        low, _ = s.raise_bounds()
        assert low == to
        s = s.apply(raise_to(low))
        to += 100
    assert len(s.round_actions) == 63
    assert s.raise_bounds() is None
    assert ActionKind.RAISE not in s.legal_kinds()
    s = s.apply(CALL)
    assert s.round == 1 and len(s.actions[0]) == 64


def test_limit_raise_cap_and_sizes(hul: Game, leduc_limit: Game) -> None:
    s = play(hul, "rrr")
    assert s.raise_bounds() is None  # maxRaises 3 pre-flop
    assert s.spent == (30, 40)  # big blind 10 (position 0), small blind 5 raises to 20, 30, 40
    s = play(leduc_limit, "rr")
    assert s.raise_bounds() is None and s.spent == (3, 5)
    assert play(leduc_limit, "rrc/").spent == (5, 5)
    assert play(leduc_limit, "rrc/r").raise_bounds() == (13, 13)


def test_payoffs_fold_and_showdown(hunl: Game, leduc_limit: Game) -> None:
    s = play(hunl, "f")
    assert s.payoffs() == (50.0, -50.0)
    s = play(hunl, "cr7802c/cr9943c/cr13579c/cc")
    s = s.with_board(cards_from_str("TsQh8cAh4d"))
    s = s.with_hole_cards(0, cards_from_str("8d9h")).with_hole_cards(1, cards_from_str("9s6d"))
    assert s.payoffs() == (13579.0, -13579.0)  # pair of eights beats nine high
    # Leduc: pair beats high card; equal ranks split
    s = play(leduc_limit, "rc/rc").with_board(cards_from_str("Kh"))
    s = s.with_hole_cards(0, cards_from_str("Ks")).with_hole_cards(1, cards_from_str("As"))
    assert s.payoffs() == (7.0, -7.0)
    s = s.with_hole_cards(0, cards_from_str("Qs")).with_hole_cards(1, cards_from_str("Qh"))
    assert s.payoffs() == (0.0, 0.0)


def test_payoffs_need_finished_hand_and_cards(hunl: Game) -> None:
    with pytest.raises(RulesError, match="not finished"):
        play(hunl, "c").payoffs()
    s = play(hunl, "r20000c///")
    with pytest.raises(RulesError, match="full board"):
        s.payoffs()


THREE_PLAYER = """GAMEDEF
nolimit
numPlayers = 3
numRounds = 1
stack = 1000 1000 300
blind = 10 5 0
firstPlayer = 3
numSuits = 4
numRanks = 13
numHoleCards = 2
numBoardCards = 5
END GAMEDEF
"""


def test_side_pots_and_short_all_in() -> None:
    game = parse_game(THREE_PLAYER, source="3p")
    s = HandState.initial(game)
    assert s.current_player == 2
    s = s.apply(raise_to(200))  # min raise-to after this: 200 + 190 = 390
    assert s.min_raise_to == 390
    s = s.apply(raise_to(1000))  # player 0 (big blind) moves all-in
    assert s.current_player == 1
    s = s.apply(CALL)
    assert s.current_player == 2
    # player 2 (stack 300) can only call all-in now
    assert s.raise_bounds() is None
    s = s.apply(CALL)
    assert s.finished and s.spent == (1000, 1000, 300)
    board = cards_from_str("2c7d9hJsQc")
    s = s.with_board(board)
    s = s.with_hole_cards(0, cards_from_str("AhAd"))  # middle
    s = s.with_hole_cards(1, cards_from_str("3c4d"))  # worst
    s = s.with_hole_cards(2, cards_from_str("QhQd"))  # best: wins the main pot only
    v = s.payoffs()
    assert v[2] == 600.0  # main pot 900, own 300 in
    assert v[1] == -1000.0
    assert v[0] == 400.0  # side pot 1400 (700 each from players 0 and 1), minus 300 lost in the main pot
    assert sum(v) == 0


@pytest.mark.parametrize("blinds", ["10 5 0", "5 10 0"])
def test_a_player_who_folds_with_nothing_in_loses_nothing_at_a_showdown(blinds: str) -> None:
    """The 0-blind seat of the ACPC 3-player games folds, the others check it down: it loses 0 and
    the two in the pot settle between them (it was given another player's value, or an index error
    ended the match); a folded player who had chips in loses them to the winner."""
    game = parse_game(THREE_PLAYER.replace("blind = 10 5 0", f"blind = {blinds}"), source="3p")
    s = HandState.initial(game).apply(FOLD)  # player 2, blind 0
    while not s.finished:
        s = s.apply(CALL)
    s = s.with_board(cards_from_str("2c7d9hJsQc"))
    s = s.with_hole_cards(0, cards_from_str("AhAd")).with_hole_cards(1, cards_from_str("3c4d"))
    assert s.spent == (10, 10, 0) and s.payoffs() == (10.0, -10.0, 0.0)
    s = HandState.initial(game).apply(CALL)  # player 2 calls 10; then the small blind folds
    s = s.apply(FOLD) if s.current_player == (1 if blinds == "10 5 0" else 0) else s.apply(CALL).apply(FOLD)
    while not s.finished:
        s = s.apply(CALL)
    s = s.with_board(cards_from_str("2c7d9hJsQc"))
    live = [p for p in range(3) if not s.folded[p]]
    for p, cards in zip(live, ("AhAd", "3c4d")):
        s = s.with_hole_cards(p, cards_from_str(cards))
    folded = next(p for p in range(3) if s.folded[p])
    v = s.payoffs()
    assert v[folded] == -5.0 and v[live[0]] == 15.0 and v[live[1]] == -10.0 and sum(v) == 0


def test_a_pot_two_of_three_players_tie_for_is_split_between_them() -> None:
    game = parse_game(THREE_PLAYER, source="3p")
    s = HandState.initial(game)
    while not s.finished:
        s = s.apply(CALL)
    s = s.with_board(cards_from_str("2c7d9hJsQc"))
    for p, cards in enumerate(("AhAd", "AsAc", "3c4d")):
        s = s.with_hole_cards(p, cards_from_str(cards))
    assert s.spent == (10, 10, 10) and s.payoffs() == (5.0, 5.0, -10.0)


def test_short_all_in_does_not_lower_min_raise() -> None:
    game = parse_game(THREE_PLAYER.replace("stack = 1000 1000 300", "stack = 1000 1000 250"), source="3p")
    s = HandState.initial(game).apply(raise_to(200))  # player 2
    assert s.min_raise_to == 390
    s = s.apply(CALL).apply(CALL)  # players 0 and 1 call, round over -> game over (1 round)
    assert s.finished
    s = HandState.initial(game).apply(CALL).apply(raise_to(200))  # 2 calls 10, 0 raises to 200
    s = s.apply(CALL)  # player 1 calls
    assert s.current_player == 2
    assert s.raise_bounds() == (250, 250)  # only all-in remains, a short raise
    s = s.apply(raise_to(250))
    assert s.min_raise_to == 390  # 2*250-200 = 300 would be lower: the minimum stays


def test_tie_splits_pot(hunl: Game) -> None:
    s = play(hunl, "cc/cc/cc/cc").with_board(cards_from_str("AsKsQsJsTs"))
    s = s.with_hole_cards(0, cards_from_str("2c3d")).with_hole_cards(1, cards_from_str("4c5d"))
    assert s.payoffs() == (0.0, 0.0)


# ---------------------------------------------------------------------- properties
GAMES = ["hunl", "hul", "leduc", "leduc-limit"]


@st.composite
def random_hands(draw: st.DrawFn) -> tuple[HandState, list[HandState]]:
    game = load_game(draw(st.sampled_from(GAMES)))
    deck = list(game.deck(draw(st.sampled_from(["high", "low"]))))
    order = draw(st.permutations(deck))
    k = game.num_hole_cards
    holes = [tuple(order[p * k : (p + 1) * k]) for p in range(2)]
    board_all = tuple(order[2 * k : 2 * k + game.total_board_cards])
    state = HandState.initial(game, hole_cards=holes)
    states = [state]
    while not state.finished:
        kinds = state.legal_kinds()
        kind = draw(st.sampled_from(kinds))
        if kind is ActionKind.RAISE:
            low, high = state.raise_bounds()
            size = draw(st.one_of(st.just(low), st.just(high), st.integers(low, high)))
            action = raise_to(size) if game.is_nolimit else LIMIT_RAISE
        else:
            action = FOLD if kind is ActionKind.FOLD else CALL
        state = state.apply(action)
        if state.board_cards_needed:
            state = state.with_board(board_all[: game.board_cards_through(state.round)])
        states.append(state)
    return state, states


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_hands())
def test_random_hands_conserve_chips_and_round_trip(hand: tuple[HandState, list[HandState]]) -> None:
    final, states = hand
    game = final.game
    for before, after in zip(states, states[1:]):
        assert all(b <= a for b, a in zip(before.spent, after.spent))  # chips only go in
        assert after.pot >= before.pot
    for s in states:
        assert all(0 < x <= stack for x, stack in zip(s.spent, game.stack))
        assert max(s.spent) == s.max_spent or s.finished
        assert all(len(r) <= 64 for r in s.actions)
        for viewer in range(2):
            line = format_matchstate(s, viewer)
            back = parse_matchstate(line, game)
            assert back.to_line() == line
            assert back.state.betting_string() == s.betting_string()
    payoffs = final.payoffs()
    assert abs(sum(payoffs)) < 1e-9  # zero-sum
    for p, v in enumerate(payoffs):
        assert -final.spent[p] <= v <= final.pot - final.spent[p]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_hands())
def test_random_hands_follow_the_acpc_min_raise_rule(hand: tuple[HandState, list[HandState]]) -> None:
    """Replays each hand with ACPC.md's betting rules, written out independently of the engine:
    min raise-to starts at 2 x the big blind, becomes max(previous, X + (X - M)) after a raise
    to X over M, resets to bet + big blind each round; max raise-to is the stack; above the
    stack only all-in; nothing once the bet is the stack or the 64-action round cap is near."""
    final, states = hand
    game = final.game
    big = max(game.blind)
    minimum = 2 * big
    round_ = 0
    for before, after in zip(states, states[1:]):
        if game.is_nolimit and before.current_player is not None:
            bounds = before.raise_bounds()
            stack = game.stack[before.current_player]
            cap_near = len(before.round_actions) + 2 > 64
            if before.max_spent >= stack or cap_near:
                assert bounds is None
            else:
                assert bounds == (min(minimum, stack), stack)
        if after.round != round_:  # a new round: current bet + big blind
            round_ = after.round
            minimum = after.max_spent + max(big, 1)
        elif after.max_spent > before.max_spent:  # a raise to X over M
            x, m = after.max_spent, before.max_spent
            minimum = max(minimum, x + (x - m))
