"""The HUNL DeepStack bot against real dealer traffic: every line of the captured ACPC
dealer session where it is to act gets a legal action, with the real re-solver, the
shipped check-down data and few iterations (speed is measured by benchmarks, not here)."""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import structlog

from agent.bots.config import StreetConfig, WarmStartConfig, load_config
from agent.bots.deepstack import DeepStackBot
from agent.bots.settings import hunl_settings
from agent.resolving.continual import ContinualResolver
from agent.solver.handspace import HandSpace
from native.cards import cards_from_str
from protocol.client import ClientSummary, _handle_line
from protocol.gamedef import Game
from protocol.matchstate import parse_matchstate
from protocol.state import CALL, HandState, raise_to
from tests.conftest import SAMPLE_MATCHSTATES

FAST = """
bot:
  hunl:
    preflop: {iterations: 3, leaves: checkdown}
    flop: {iterations: 3, leaves: checkdown}
    turn: {iterations: 3, leaves: checkdown}
    river: {iterations: 3, leaves: end}
"""


@pytest.fixture(scope="module")
def fast_bot(hunl: Game, tmp_path_factory: pytest.TempPathFactory) -> DeepStackBot:
    path = tmp_path_factory.mktemp("cfg") / "fast.yaml"
    path.write_text(FAST)
    return DeepStackBot(hunl, load_config(path), seed=1)


def dealer_lines() -> list[str]:
    """The captured dealer-to-client lines, then the file's plain list of chosen lines."""
    lines = []
    for raw in SAMPLE_MATCHSTATES.read_text().splitlines():
        if raw.startswith("MATCHSTATE:"):
            lines.append(raw.strip())
        elif raw.startswith("S->C "):
            text = raw[5:]
            line = ast.literal_eval(text).decode("ascii").rstrip("\r\n")
            if line.startswith("MATCHSTATE:"):  # other entries note events, e.g. b'<EOF>'
                lines.append(line)
    return lines


def test_bot_answers_every_sample_matchstate_legally(hunl: Game, fast_bot: DeepStackBot, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = ClientSummary()
    answered = 0
    trims: list[int] = []  # freed heap memory goes back to the system once per finished hand
    monkeypatch.setattr("agent.bots.deepstack.release_free_memory", lambda: trims.append(1) or True)
    for line in dealer_lines():
        reply = _handle_line(line, hunl, fast_bot, summary)
        view = parse_matchstate(line, hunl)
        if reply is None:
            assert not view.is_our_turn or view.state.finished
            continue
        answered += 1
        assert view.is_our_turn and reply.startswith(line + ":")
        assert summary.fallback_actions == 0, (line, reply)  # legal as sent: nothing replaced
    assert answered >= 90  # 96 lines of the file put the bot to act
    assert summary.bad_lines == 0
    assert len(trims) == summary.hands > 0


def test_the_memory_trim_after_a_hand_is_paid_by_the_next(
    hunl: Game, fast_bot: DeepStackBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trim at a hand's end may run while the dealer's clock does (the next hand's first
    line may be ours): its seconds are charged to the next hand, as start-up is to the first."""
    import time

    monkeypatch.setattr("agent.bots.deepstack.release_free_memory", lambda: time.sleep(0.05) or True)
    summary = ClientSummary()
    lines = iter(dealer_lines())
    for line in lines:
        _handle_line(line, hunl, fast_bot, summary)
        if parse_matchstate(line, hunl).state.finished:
            break
    before = fast_bot.timing.used_s
    _handle_line(next(lines), hunl, fast_bot, summary)  # the next hand's first line
    assert fast_bot.timing.used_s - before >= 0.05


def test_a_hand_starved_of_time_is_checked_or_folded_without_observing_it(
    hunl: Game, fast_bot: DeepStackBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Out of time at the flop with nothing re-solved there, the next street's chance catch-up
    read the pre-flop's flop leaves for a 4-card board: an observe_failed traceback every hand
    (a live match against call: 21 of 24 hands). A starved hand is not observed any more."""
    monkeypatch.setattr(fast_bot.timing, "affordable", lambda round_, floor=1: round_ == 0)
    summary = ClientSummary()
    with structlog.testing.capture_logs() as logs:
        for line in dealer_lines():
            _handle_line(line, hunl, fast_bot, summary)
    events = [e["event"] for e in logs]
    reasons = {e.get("reason") for e in logs if e["event"] == "out_of_time"}
    assert "observe_failed" not in events and "decision_failed" not in events
    assert {"bank", "earlier_in_hand"} <= reasons and summary.fallback_actions == 0


def test_the_played_floor_is_past_the_skipped_iterations(
    hunl: Game, fast_bot: DeepStackBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A re-solve the clock stops inside ``skip`` has averaged nothing: it is not played, whatever
    ``min_iterations`` says (the floor is at least skip + 1, at most the iterations asked)."""
    from agent.solver.resolve import SolverConfig

    summary = ClientSummary()
    _handle_line(next(iter(dealer_lines())), hunl, fast_bot, summary)  # a hand set up
    seat = fast_bot._seat
    assert seat is not None
    settings = seat.resolver.settings
    for skip, iterations, floor in ((0, 50, 20), (30, 50, 31), (2, 3, 3)):
        config = SolverConfig(iterations=iterations, skip=skip, device="cpu")
        street = replace(settings.street(1), config=config)
        monkeypatch.setattr(seat.resolver, "settings", replace(settings, streets=(settings.street(0), street, street, street)))
        assert fast_bot._iterations_floor(1) == floor


def test_a_bot_reused_for_a_new_match_does_not_take_its_hand_0_for_the_last_ones(hunl: Game, fast_bot: DeepStackBot) -> None:
    """A new match numbers its hands from 0 again: the same bot object played the new hand 0 on
    the old hand's memory (decision_failed, and QQ folded in the small blind)."""
    summary = ClientSummary()
    with structlog.testing.capture_logs() as logs:
        fast_bot.start_match(hunl)
        for line in ("MATCHSTATE:0:0::AsKd|", "MATCHSTATE:0:0:f:AsKd|"):  # the opponent folds at once
            _handle_line(line, hunl, fast_bot, summary)
        fast_bot.start_match(hunl)
        reply = _handle_line("MATCHSTATE:1:0::|QhQs", hunl, fast_bot, summary)
    assert reply is not None and not reply.endswith(":f")
    assert not [e for e in logs if e["event"] in ("decision_failed", "observe_failed")]


def test_a_failed_decision_checks_or_folds(hunl: Game, fast_bot: DeepStackBot, monkeypatch: pytest.MonkeyPatch) -> None:
    """A decision that raises (out of memory, a bug) is answered as one out of time: check, or
    fold to a bet (a broken hand costs at most what is in the pot), and the match goes on."""

    def broken(self: ContinualResolver, state: HandState, deadline: float | None = None) -> None:
        raise MemoryError("injected")

    for step in ("precomputed", "re_solve"):  # what a decision of the bot calls
        monkeypatch.setattr(ContinualResolver, step, broken)
    summary = ClientSummary()
    sent = {"c": 0, "f": 0}
    for line in dealer_lines():
        view = parse_matchstate(line, hunl)
        reply = _handle_line(line, hunl, fast_bot, summary)
        if reply is None:
            continue
        action = reply[len(line) + 1 :]
        assert action == ("f" if view.state.amount_to_call() > 0 else "c"), line
        sent[action] += 1
    assert sent["c"] > 0 and sent["f"] > 0 and summary.fallback_actions == 0


def test_a_hand_that_cannot_be_set_up_is_not_played_on_the_last_hands_memory(
    hunl: Game, fast_bot: DeepStackBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the new hand's set-up fails (out of memory), that hand is checked or folded, not
    re-solved from the previous hand's range and values (in the same position nothing else
    would stop it); the next hand is played again."""
    summary = ClientSummary()
    hands: dict[int, list[str]] = {}
    for line in dealer_lines():
        hands.setdefault(parse_matchstate(line, hunl).hand_id, []).append(line)
    ids = list(hands)
    position = {h: parse_matchstate(hands[h][0], hunl).position for h in ids}
    k = next(k for k in range(1, len(ids) - 1) if position[ids[k]] == position[ids[k - 1]])
    broken_hand, next_hand = ids[k], ids[k + 1]
    for h in ids[:k]:
        for line in hands[h]:
            _handle_line(line, hunl, fast_bot, summary)
    start_hand = ContinualResolver.start_hand
    failures = iter([MemoryError("injected")])

    def failing_once(self: ContinualResolver, position: int) -> None:
        error = next(failures, None)
        if error is not None:
            raise error
        start_hand(self, position)

    monkeypatch.setattr(ContinualResolver, "start_hand", failing_once)
    with structlog.testing.capture_logs() as events:
        for line in hands[broken_hand] + hands[next_hand]:
            _handle_line(line, hunl, fast_bot, summary)
    broken = [e for e in events if e.get("hand") == broken_hand and e["event"] in ("decision", "decision_failed")]
    assert broken and all(e["event"] == "decision_failed" for e in broken)  # never a re-solve on stale memory
    assert [e for e in events if e.get("hand") == next_hand and e["event"] == "decision"]  # the next hand plays


def test_bench_resolve_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from agent.cli.main import main

    cfg = tmp_path / "fast.yaml"
    cfg.write_text(FAST)
    assert main(["bench", "resolve", "--hands", "3", "--config", str(cfg), "--log-dir", str(tmp_path / "logs")]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert rows and rows[0]["bench"] == "resolve.preflop"
    for row in rows:
        assert row["unit"] == "s" and row["impl"] == "ours" and row["value"] >= 0 and row["p95_s"] >= 0
        assert row["decisions"] > 0 and "deepstack_gtx1080_s" in row and "device" in row and "threads" in row
        assert 0 <= row["out_of_time"] <= row["decisions"] and 0 <= row["ended_by_clock"] <= row["decisions"]
    # the counts are the clock report's for the same decisions (`deepstack eval clock` on the log)
    from agent.evaluation.clock import clock_report

    clock = clock_report([tmp_path / "logs" / "bots.jsonl"], rounds=4)
    assert [(r["out_of_time"], r["decisions"]) for r in rows] == [
        (clock[r["bench"].split(".")[1]]["out_of_time"], clock[r["bench"].split(".")[1]]["decisions"]) for r in rows
    ]
    assert main(["bench", "resolve", "--hands", "0"]) == 2


def test_start_cache_on_disk(hunl: Game, tmp_path: Path) -> None:
    cache = tmp_path / "preflop.pkl"
    cfg = tmp_path / "fast.yaml"
    cfg.write_text(FAST + f"    start_cache: {cache}\n")
    first = DeepStackBot(hunl, load_config(cfg))
    assert cache.exists()
    second = DeepStackBot(hunl, load_config(cfg))  # loaded, not solved again: the same objects' timings
    a, b = first._seat_for("high").resolver, second._seat_for("high").resolver
    assert set(b._root) == set(a._root) and all(b._root[p].seconds == a._root[p].seconds for p in a._root)
    assert all((b._root_values[p] == a._root_values[p]).all() for p in a._root_values)
    before = cache.read_bytes()
    cfg.write_text(FAST.replace("iterations: 3", "iterations: 2") + f"    start_cache: {cache}\n")
    third = DeepStackBot(hunl, load_config(cfg))  # other settings: solved again, file rewritten
    assert cache.read_bytes() != before
    assert all(third._seat_for("high").resolver._root[p].seconds != a._root[p].seconds for p in a._root)
    saved = cache.read_bytes()
    damaged = saved[:-100] + bytes(b ^ 0xFF for b in saved[-100:])  # our header, a payload that does not match
    cache.write_bytes(damaged)
    DeepStackBot(hunl, load_config(cfg))  # a damaged cache is ignored, and replaced
    assert cache.read_bytes() not in (damaged, b"") and cache.read_bytes()[:21] == b"deepstack-start-cache"
    cache.write_bytes(b"someone's notes")  # not a start cache at all: never overwritten (the config's slip)
    DeepStackBot(hunl, load_config(cfg))
    assert cache.read_bytes() == b"someone's notes"


def _replay(resolver: ContinualResolver, hunl: Game, position: int, betting: str, board: str) -> HandState:
    """Play a recorded betting line through ``resolver`` (re-solving and taking the recorded
    action at each of our decisions) and return the state it ends in."""
    cards = cards_from_str(board.replace("/", ""))
    state = HandState.initial(hunl)
    resolver.start_hand(position)
    for r, street in enumerate(betting.split("/")):
        if r:
            state = state.with_board(cards[: 2 + r])
            resolver.observe(state)
        for token in re.findall(r"r\d+|c|f", street):
            action = CALL if token == "c" else raise_to(int(token[1:]))
            if state.current_player == position:
                decision = resolver.decide(state)
                resolver.act(decision, next(a for a in decision.actions if str(a) == token))
            state = state.apply(action)
            resolver.observe(state)
    return state


@pytest.mark.parametrize("weight, start_values", [(0.0, "leaf"), (0.5, "leaf"), (0.9, "leaf"), (0.0, "net")])
def test_warm_start_makes_the_bot_bet_its_full_house(hunl: Game, weight: float, start_values: str) -> None:
    """A hand of a real match against a calling station: 55 on 3s5s3h/Ah/Tc, checked to us on
    the river. With check-down values bounding the opponent at each street's start and without
    the opponent-range warm start, the gadget's opponent declines the subgame with almost every
    hand (the check-down values promised it more) and the bot checks the full house behind; with
    the warm start, or with the next street's network bounding it (the shipped
    ``street_start_values: net``), the bot bets."""
    cfg = replace(
        load_config().bot.hunl,
        preflop=StreetConfig(40, "checkdown"),
        flop=StreetConfig(40, "checkdown"),
        turn=StreetConfig(40, "checkdown"),
        river=StreetConfig(150, "end"),
        warm_start=WarmStartConfig(weight=weight),
        street_start_values=start_values,
    )
    space = HandSpace(hunl)
    resolver = ContinualResolver(space, hunl_settings(hunl, cfg, "cpu"))
    state = _replay(resolver, hunl, 1, "r300c/cr600c/cc/c", "3s5s3h/Ah/Tc")
    decision = resolver.decide(state)
    check = decision.strategy[decision.actions.index(CALL), space.index(cards_from_str("5c5h"))]
    estimate = resolver.memory.opp_range
    assert estimate.sum() == pytest.approx(1.0) and (estimate[space.blocked(state.board)] == 0).all()
    if weight or start_values == "net":
        assert check < 0.2
    else:
        assert check > 0.9


def test_off_tree_raises_with_lookaheads_at_one_address(hunl: Game, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33 on hold'em: the same line with every lookahead at one ``id()`` (CPython reuses a
    freed one's address) gives the same decisions: a pre-flop raise off the bot's tree, then a
    flop bet off it that the re-solve from the flop's start puts in its tree; the check-down
    leaves prepare each lookahead once and must never take another's."""
    from agent.solver.lookahead import Lookahead
    from agent.solver.tree import DEEPSTACK_SIZING, bet_actions

    path = tmp_path / "fast.yaml"
    path.write_text(FAST)
    cfg = load_config(path).bot.hunl
    space = HandSpace(hunl)

    def play() -> list:
        resolver = ContinualResolver(space, hunl_settings(hunl, cfg, "cpu"), cache=False)
        state = HandState.initial(hunl)
        me = state.current_player
        assert me is not None
        resolver.start_hand(me)
        decisions = [resolver.decide(state)]
        resolver.act(decisions[-1], CALL)
        state = state.apply(CALL)
        odd = raise_to(state.raise_bounds()[0] + 37)
        assert odd not in bet_actions(state, DEEPSTACK_SIZING["preflop"], 0)
        state = state.apply(odd)
        resolver.observe(state)
        decisions.append(resolver.decide(state))
        resolver.act(decisions[-1], CALL)
        state = state.apply(CALL).with_board(cards_from_str("2c7dKh"))
        resolver.observe(state)
        odd = raise_to(state.raise_bounds()[0] + 37)
        assert odd not in bet_actions(state, DEEPSTACK_SIZING["flop"], 0)
        state = state.apply(odd)
        resolver.observe(state)
        assert resolver._round_start(state) is not None
        decisions.append(resolver.decide(state))
        return decisions

    expected = play()
    real_id = id
    monkeypatch.setattr("builtins.id", lambda obj: 0 if isinstance(obj, Lookahead) else real_id(obj))
    got = play()
    assert [d.state.betting_string() for d in got] == ["", "cr237", "cr237c/r374"]
    for g, e in zip(got, expected):
        assert g.actions == e.actions
        np.testing.assert_array_equal(g.strategy, e.strategy)
        np.testing.assert_array_equal(g.child_values, e.child_values)


@pytest.mark.parametrize("spr", [0.0, 1.0])
def test_turn_resolves_end_at_the_river_network(hunl: Game, spr: float) -> None:
    """``turn: {leaves: net}``: the turn re-solve ends at the river with the shipped river
    network (TorchScript, its river abstraction from the manifest) over every river card,
    updating both players at once (one network call per iteration); the river that follows is
    re-solved from the values the turn re-solve averaged there."""
    from agent.leaves.by_stack import LeavesByStack
    from agent.leaves.holdem import BucketNetLeafValues
    from agent.nets.buckets import RiverStrength

    cfg = replace(
        load_config().bot.hunl,
        preflop=StreetConfig(3, "checkdown"),
        flop=StreetConfig(3, "checkdown"),
        turn=StreetConfig(4, "net", checkdown_spr=spr),
        river=StreetConfig(4, "end"),
    )
    settings = hunl_settings(hunl, cfg, "cpu")
    turn = settings.street(2)
    assert turn.last_round == 2 and not turn.config.alternating and settings.street(1).config.alternating
    net = turn.leaf_values if not spr else turn.leaf_values.net  # checkdown_spr: check-down where little is behind
    assert isinstance(turn.leaf_values, LeavesByStack) == bool(spr)
    assert isinstance(net, BucketNetLeafValues) and isinstance(net.buckets, RiverStrength)
    space = HandSpace(hunl)
    resolver = ContinualResolver(space, settings, cache=False)
    state = _replay(resolver, hunl, 0, "r300c/cc/", "3s5s3h/Ah")  # we act first after the flop
    decision = resolver.decide(state)
    assert decision.iterations == 4 and np.allclose(decision.strategy.sum(axis=0)[space.valid(state.board)], 1.0)
    resolver.act(decision, CALL)  # we check, the opponent checks behind
    state = state.apply(CALL)
    resolver.observe(state)
    state = state.apply(CALL)
    resolver.observe(state)
    state = state.with_board(cards_from_str("3s5s3hAhTc"))
    resolver.observe(state)
    river = resolver.decide(state)
    assert river.iterations == 4 and np.isfinite(river.strategy).all()
