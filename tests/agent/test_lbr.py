"""Local best response: sanity against known opponents, settings, resumable chunks."""

from __future__ import annotations

import json
import math
import os
import signal
import sys
from pathlib import Path

import numpy as np
import pytest

from agent.cli.main import main
from agent.evaluation.lbr import LBRPlayer, LBRSetting, plan_chunks, range_expected_winnings, resumed_hands, run_lbr
from agent.evaluation.policies import ProviderFactory, StrategyProvider
from agent.evaluation.stats import estimate
from agent.solver.handspace import HandSpace
from native.cards import cards_from_str as parse_cards
from protocol.gamedef import load_game
from protocol.state import CALL, FOLD, Action, ActionKind, HandState, raise_to
from tests.conftest import interrupt_when


@pytest.mark.parametrize("game_name", ["leduc-limit", "leduc"])
def test_lbr_crushes_call_and_random(game_name: str) -> None:
    """...and the range-expected winnings of the same hands agree with the realised ones in the
    mean (the difference is noise) with less variance."""
    game = load_game(game_name)
    setting = LBRSetting.parse("fcp/fcp" if game.is_nolimit else "fca/fca", 2)
    for bot in ("call", "random"):
        estimates: dict[str, list[float]] = {}
        realised = run_lbr(game, ProviderFactory(game_name, bot), setting, 1500, seed=3, estimates=estimates)
        est = estimate(realised, game.big_blind)
        assert est.mean - est.ci95 > 1000, (bot, est)  # thousands of mbb/g
        assert set(estimates) == {"range_expected", "aivat"}
        for name, values in estimates.items():
            diff = np.array(realised) - np.array(values)
            assert abs(diff.mean()) < 3 * diff.std() / np.sqrt(len(diff)), (bot, name, diff.mean())
            assert np.var(values) < 0.8 * np.var(realised), (bot, name)
        same = np.array(realised) == np.array(estimates["range_expected"])
        assert same.any() and not same.all()  # hands ended by a fold are the same


def _showdown(game_name: str, holes: list[tuple[int, ...]], board: tuple[int, ...]) -> HandState:
    """Both players check or call to the showdown."""
    game = load_game(game_name)
    state = HandState.initial(game, 0, hole_cards=holes)
    while not state.finished:
        state = state.apply(CALL)
        if state.board_cards_needed:
            state = state.with_board(board[: game.board_cards_through(state.round)])
    return state


def test_luck_corrections_have_mean_zero_for_every_bot_hand() -> None:
    """With both hands fixed, the check-down value before a deal is the mean of the values
    after it (so a board deal's correction has mean zero), for every hand the bot may hold;
    the pre-flop, with too many completions, is left alone."""
    from agent.evaluation.lbr import LuckCorrections

    game = load_game("hunl")
    space = HandSpace(game)
    c = parse_cards
    lbr_cards, turn = c("AsKd"), c("Ks7h2c9d")
    luck = LuckCorrections(space, lbr_cards, 0)
    before = luck.outcome(turn)
    assert before is not None and luck.outcome(()) is None
    for bot_hand in (c("QhJh"), c("7c7d"), c("Ac2d")):
        h = space.index(bot_hand)
        rivers = [r for r in space.deck if r not in set(lbr_cards) | set(bot_hand) | set(turn)]
        after = [luck.outcome(turn + (r,))[h] for r in rivers]
        assert len(rivers) == 44 and before[h] == pytest.approx(np.mean(after), abs=1e-9)
    assert luck.outcome(turn)[space.index(c("Ks8s"))] == 0.0  # blocked by the board: no value


def test_range_expected_winnings_average_the_showdown_over_the_bots_range() -> None:
    game = load_game("hunl")
    space = HandSpace(game)
    c = parse_cards
    aces, kings, queens = c("AsAh"), c("KsKh"), c("QsQh")
    board = c("2c7d9hTsJd")
    state = _showdown("hunl", [aces, kings], board)
    stake = float(min(state.spent))
    lbr_won = state.payoffs()[0]
    assert lbr_won == stake > 0
    one = np.zeros(space.size)
    one[space.index(kings)] = 1.0
    assert range_expected_winnings(space, state, 0, aces, one) == lbr_won  # a range of one hand: the payoff
    both = one.copy()
    both[space.index(c("AdAc"))] = 1.0  # a tie and a win for LBR
    assert range_expected_winnings(space, state, 0, aces, both) == pytest.approx(stake / 2)
    mixed = np.zeros(space.size)
    mixed[space.index(c("7c7s"))] = 1.0  # a set: beats LBR's kings
    mixed[space.index(c("QdQc"))] = 3.0  # loses to them
    assert range_expected_winnings(space, state, 1, kings, mixed) == pytest.approx(stake * (3 - 1) / 4)
    blocked = one.copy()
    blocked[space.index(c("AsKd"))] = 5.0  # shares LBR's ace: impossible, ignored
    assert range_expected_winnings(space, state, 0, aces, blocked) == lbr_won
    folded = HandState.initial(game, 0, hole_cards=[aces, queens]).apply(FOLD)
    assert range_expected_winnings(space, folded, 1, queens, one) == folded.payoffs()[1]


def test_lbr_does_not_beat_an_equilibrium() -> None:
    game = load_game("leduc")
    setting = LBRSetting.parse("fcp/fcp", 2)
    est = estimate(
        run_lbr(game, ProviderFactory("leduc", "equilibrium", iterations=1500), setting, 3000, seed=4, chunk=3000), game.big_blind
    )
    assert est.mean - est.ci95 < 0, est  # no significant win


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


def test_a_folder_resumes_with_another_chunk_size() -> None:
    stored = {0: [1.0] * 40, 80: [2.0] * 40}
    assert plan_chunks(130, 15, stored) == [(0, 40), (40, 15), (55, 15), (70, 10), (80, 40), (120, 10)]
    assert plan_chunks(50, 15, stored) == [(0, 40), (40, 10)]
    assert plan_chunks(30, 15, stored) == [(0, 30)]  # fewer hands than stored: the first 30 are used
    with pytest.raises(ValueError, match="at least 1"):
        plan_chunks(10, 0, {})


def test_chunks_of_another_size_are_reused_and_overlaps_refused(tmp_path: Path) -> None:
    game = load_game("leduc-limit")
    setting = LBRSetting.parse("fca/fca", 2)
    factory = ProviderFactory("leduc-limit", "random")
    first = run_lbr(game, factory, setting, 40, seed=9, out_dir=tmp_path, chunk=40)
    assert resumed_hands(tmp_path, 70, 10) == 40
    seen: list[int] = []  # a progress bar started at the resumed hands hears of the new ones only
    longer = run_lbr(game, factory, setting, 70, seed=9, out_dir=tmp_path, chunk=10, progress=seen.append, progress_resumed=False)
    assert longer[:40] == first and sum(seen) == 30
    assert resumed_hands(tmp_path, 100, 10) == 70 and resumed_hands(tmp_path, 20, 10) == 20
    assert sorted(p.name for p in tmp_path.glob("lbr-*.json")) == [
        "lbr-0000000.json",
        "lbr-0000040.json",
        "lbr-0000050.json",
        "lbr-0000060.json",
    ]
    (tmp_path / "lbr-0000030.json").write_text("[1.0, 2.0]")
    with pytest.raises(ValueError, match="overlap at hand 30"):
        run_lbr(game, factory, setting, 70, seed=9, out_dir=tmp_path)
    (tmp_path / "lbr-0000030.json").write_text("not json")
    with pytest.raises(ValueError, match="not an LBR chunk"):
        run_lbr(game, factory, setting, 70, seed=9, out_dir=tmp_path)
    for damaged in ("[NaN, 1]", "[1, Infinity]", "[1e999]"):  # Python reads them: the run's result became NaN
        (tmp_path / "lbr-0000030.json").write_text(damaged)
        with pytest.raises(ValueError, match=r"lbr-0000030.json: not an LBR chunk \(a value is (nan|inf)\)"):
            run_lbr(game, factory, setting, 70, seed=9, out_dir=tmp_path)


def test_a_shorter_resumed_run_keeps_estimates_of_its_own_length(tmp_path: Path) -> None:
    """A folder of 40 hands read back for a 30-hand run gives 30 hands of winnings and of each estimate."""
    game = load_game("leduc-limit")
    setting = LBRSetting.parse("fca/fca", 2)
    factory = ProviderFactory("leduc-limit", "random")
    full: dict[str, list[float]] = {}
    first = run_lbr(game, factory, setting, 40, seed=9, out_dir=tmp_path, chunk=40, estimates=full)
    estimates: dict[str, list[float]] = {}
    assert run_lbr(game, factory, setting, 30, seed=9, out_dir=tmp_path, chunk=40, estimates=estimates) == first[:30]
    assert set(estimates) == {"range_expected", "aivat"}
    for name, values in estimates.items():
        assert len(values) == 30 and values == full[name][:30]


def test_stored_queries_come_from_the_chunks_wholly_within_the_hands() -> None:
    """``queries(n)`` holds the fold queries of the chunks ending at or before hand n, skipping chunks without any."""
    from agent.evaluation.lbr import StoredHands

    a, b, c = (0, 1.0, False, 0.1, False), (1, 1.0, False, 0.2, True), (0, 0.5, True, 0.3, None)
    stored = StoredHands({"realised": [0.0] * 30}, [(0, 10, [a]), (10, 5, [b]), (15, 10, [c]), (25, 5, None)])
    assert stored.queries(15) == [a, b]
    assert stored.queries(14) == [a]
    assert stored.queries(30) == [a, b, c]
    assert stored.hands == 30


def test_a_bet_of_three_quarters_of_the_pot_is_summed_under_other() -> None:
    """A 0.75-pot, not all-in bet of the first of 4 rounds is counted as preflop "other" (not "pot")."""
    from agent.evaluation.lbr import fold_summary

    summary = fold_summary([(0, 0.75, False, 0.2, False)], 4)
    assert summary == {
        "preflop": {
            "other": {
                "queries": 1,
                "mean_fold": 0.2,
                "bluff_breakeven": round(0.75 / 1.75, 4),
                "lbr_led_queries": 1,
                "lbr_led_mean_fold": 0.2,
                "lbr_led_bluff_breakeven": round(0.75 / 1.75, 4),
            }
        }
    }


def test_cli_refuses_to_resume_another_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def lbr(setting: str = "fca/fca", hands: int = 20, chunk: int = 10, out: Path = tmp_path) -> int:
        return main(
            [
                "eval",
                "lbr",
                "--game",
                "leduc-limit",
                "--bot",
                "random",
                "--setting",
                setting,
                "--hands",
                str(hands),
                "--seed",
                "2",
                "--chunk",
                str(chunk),
                "--out",
                str(out),
                "--json",
            ]
        )

    assert lbr() == 0
    assert len(list(tmp_path.glob("lbr-*.json"))) == 2
    assert lbr(hands=30) == 0  # the same run, longer: resumed
    assert len(list(tmp_path.glob("lbr-*.json"))) == 3
    capsys.readouterr()
    assert lbr(setting="fc/fc") == 2
    err = capsys.readouterr().err
    assert "holds another LBR run" in err and "setting 'fca/fca' there, 'fc/fc' now" in err
    assert lbr(chunk=0, out=tmp_path / "other") == 2
    assert "--chunk must be at least 1" in capsys.readouterr().err
    (tmp_path / "a-file").write_text("kept")
    assert lbr(out=tmp_path / "a-file") == 1  # was "[Errno 17] File exists", naming no option
    assert f"--out {tmp_path / 'a-file'}: is a file; give a folder" in capsys.readouterr().err
    assert (tmp_path / "a-file").read_text() == "kept"
    # a folder whose run never wrote a chunk takes the next run's settings
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "run.json").write_text('{"setting": "fc/fc"}')
    assert lbr(hands=5, out=tmp_path / "empty") == 0
    assert '"fca/fca"' in (tmp_path / "empty" / "run.json").read_text()
    assert json.loads((tmp_path / "run.json").read_text())["deals"] == "per-hand"
    # a folder from before hands were dealt one stream each (its run.json records no way of dealing)
    # is not resumed: its old chunks and new ones would not be paired deals of one scheme
    old = json.loads((tmp_path / "run.json").read_text())
    del old["deals"]
    (tmp_path / "run.json").write_text(json.dumps(old))
    capsys.readouterr()
    assert lbr(hands=40) == 2
    assert "records no 'deals'" in capsys.readouterr().err
    assert len(list(tmp_path.glob("lbr-*.json"))) == 3
    # chunks without any run.json: unknown run, not resumed
    (tmp_path / "run.json").unlink()
    assert lbr(hands=40) == 2
    assert "holds LBR chunks but no run.json" in capsys.readouterr().err
    assert len(list(tmp_path.glob("lbr-*.json"))) == 3 and not (tmp_path / "run.json").exists()


def test_a_changed_deepstack_bot_does_not_resume_its_old_chunks(tmp_path: Path) -> None:
    """run.json records the bot's key (settings, model files, solving code): chunks of the bot
    before a change are not mixed with chunks of the bot after it."""
    from agent.cli.eval_lbr import bot_key, check_lbr_run

    game = load_game("leduc")
    key = bot_key(game, None)
    changed = tmp_path / "changed.yaml"
    changed.write_text("bot:\n  leduc:\n    iterations: 77\n")
    assert bot_key(game, str(changed)) != key
    run = {"game": "leduc", "bot": "deepstack", "setting": "fcp/fcp", "bot_key": key}
    check_lbr_run(tmp_path, run)
    (tmp_path / "lbr-0000000.json").write_text("[]")
    check_lbr_run(tmp_path, run)  # the same bot resumes
    with pytest.raises(ValueError, match="played by another bot"):
        check_lbr_run(tmp_path, {**run, "bot_key": bot_key(game, str(changed))})
    (tmp_path / "run.json").write_text(json.dumps({k: v for k, v in run.items() if k != "bot_key"}))
    check_lbr_run(tmp_path, run)  # a folder from before the key was recorded resumes on the rest


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_stops_the_workers_and_keeps_the_finished_chunks(tmp_path: Path, sig: int) -> None:
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) stops a run with workers
    at once: one line, status 130, no traceback, no worker left, every chunk on disk whole. SIGTERM
    to the group (``docker stop``, a batch system) the same, with status 143: the forked workers
    die of it as usual, without the parent's handler."""
    out = tmp_path / "run"
    command = [sys.executable, "-m", "agent.cli.main", "eval", "lbr", "--game", "leduc", "--bot", "random"]
    command += ["--setting", "fcpa/fcpa", "--hands", "1000000", "--chunk", "500", "--workers", "2", "--out", str(out)]
    returncode, err, left = interrupt_when(command, lambda: len(list(out.glob("lbr-*.json"))) >= 2, sig=sig)
    assert returncode == (130 if sig == signal.SIGINT else 143)
    assert "Traceback" not in err and "deepstack eval lbr: interrupted" in err and "the same command resumes" in err
    assert not left  # the workers are gone with the parent
    chunks = sorted(out.glob("lbr-*.json"))
    assert len(chunks) >= 2 and all(len(json.loads(c.read_text())) == 500 for c in chunks)
    assert not list(out.glob(".*"))
    game, factory, setting = load_game("leduc"), ProviderFactory("leduc", "random"), LBRSetting.parse("fcpa/fcpa", 2)
    kept = {int(c.stem.split("-")[1]): json.loads(c.read_text()) for c in chunks}
    hands = max(kept) + 500  # the same run resumed to there: what was kept is read back as it is
    values = run_lbr(game, factory, setting, hands, out_dir=out, chunk=500)
    assert len(values) == hands and all(values[first : first + 500] == v for first, v in kept.items())


def test_lbr_records_how_often_the_bot_folds_to_its_bets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every bet LBR weighs is a question to the bot; the answers are kept beside each chunk,
    come back on resume, and are summed up per round and size in result.json."""
    from agent.evaluation.lbr import FoldQuery, fold_summary

    game = load_game("leduc")
    setting = LBRSetting.parse("fcpa/fcpa", 2)
    asked: list[FoldQuery] = []
    run_lbr(game, ProviderFactory("leduc", "call"), setting, 30, seed=1, queries=asked)
    assert asked and all(p == 0.0 for _, _, _, p, _ in asked)  # a calling station never folds
    assert {round(f, 3) for _, f, a, _, _ in asked if not a} == {1.0}  # pot bets: 1x the pot after calling

    queries: list[FoldQuery] = []
    values = run_lbr(game, ProviderFactory("leduc", "random"), setting, 40, seed=2, out_dir=tmp_path, chunk=20, queries=queries)
    assert sorted(p.name for p in tmp_path.glob("folds-*.json")) == ["folds-0000000.json", "folds-0000020.json"]
    assert any(p > 0 for _, _, _, p, _ in queries) and all(0 <= p <= 1 for _, _, _, p, _ in queries)
    assert {acted for *_, acted in queries} == {False, True}  # LBR leads some rounds and answers the bot in others
    again: list[FoldQuery] = []
    estimates: dict[str, list[float]] = {}
    assert (
        run_lbr(
            game, ProviderFactory("leduc", "random"), setting, 40, seed=2, out_dir=tmp_path, queries=again, estimates=estimates
        )
        == values
    )
    assert again == queries  # read back from the folder
    for name, prefix in (("range_expected", "expected"), ("aivat", "aivat")):  # the estimates too
        assert len(estimates[name]) == 40 and estimates[name] != values
        assert sorted(p.name for p in tmp_path.glob(f"{prefix}-*.json")) == [f"{prefix}-0000000.json", f"{prefix}-0000020.json"]
    summary = fold_summary(queries, game.num_rounds)
    assert set(summary) <= {"round 1", "round 2"}
    pot = summary["round 1"]["pot"]
    assert pot["bluff_breakeven"] == 0.5 and pot["queries"] == sum(
        1 for r, f, a, _, _ in queries if r == 0 and not a and f == 1.0
    )
    assert pot["lbr_led_queries"] + pot["after_bot_queries"] == pot["queries"]
    led = [p for r, f, a, p, acted in queries if r == 0 and not a and f == 1.0 and not acted]
    assert pot["lbr_led_mean_fold"] == round(float(np.mean(led)), 4)

    # a chunk written before the queries said who had acted: read back without it, left out of the split
    old = tmp_path / "folds-0000000.json"
    old.write_text(json.dumps([row[:4] for row in json.loads(old.read_text())]))
    legacy: list[FoldQuery] = []
    run_lbr(game, ProviderFactory("leduc", "random"), setting, 40, seed=2, out_dir=tmp_path, queries=legacy)
    assert legacy[:3] == [(*q[:4], None) for q in queries[:3]] and legacy[-1] == queries[-1]
    split = fold_summary(legacy, game.num_rounds)["round 1"]["pot"]
    assert split["queries"] == pot["queries"] and split["lbr_led_queries"] < pot["lbr_led_queries"]

    (tmp_path / "folds-0000020.json").unlink()  # a chunk written before the queries were kept
    partial: list[FoldQuery] = []
    run_lbr(game, ProviderFactory("leduc", "random"), setting, 40, seed=2, out_dir=tmp_path, queries=partial)
    assert 0 < len(partial) < len(queries)
    (tmp_path / "aivat-0000000.json").write_text("[1.0, 2.0]")  # shorter than its chunk
    with pytest.raises(ValueError, match=r"aivat-0000000.json: 2 hands, its chunk \(lbr-0000000.json\) has 20"):
        run_lbr(game, ProviderFactory("leduc", "random"), setting, 40, seed=2, out_dir=tmp_path)
    (tmp_path / "aivat-0000000.json").write_text("not json")
    with pytest.raises(ValueError, match="aivat-0000000.json: not a file of LBR winnings"):
        run_lbr(game, ProviderFactory("leduc", "random"), setting, 40, seed=2, out_dir=tmp_path)
    (tmp_path / "folds-0000000.json").write_text("[[1, 2]]")
    with pytest.raises(ValueError, match="folds-0000000.json: not a file of LBR fold queries"):
        run_lbr(game, ProviderFactory("leduc", "random"), setting, 40, seed=2, out_dir=tmp_path)

    assert (
        main(
            [
                "eval",
                "lbr",
                "--game",
                "leduc",
                "--bot",
                "random",
                "--setting",
                "fcpa/fcpa",
                "--hands",
                "20",
                "--seed",
                "3",
                "--out",
                str(tmp_path / "cli"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "round 1 pot bets: the bot folds" in out and "a bluff gains above 50.0%" in out
    assert "LBR leading the round:" in out and "after the bot's check or bet:" in out
    assert "showdowns averaged over the bot's range" in out
    result = json.loads((tmp_path / "cli" / "result.json").read_text())
    assert result["hands"] == 20
    for name in ("range_expected", "aivat"):
        assert math.isfinite(result[f"{name}_mbb_g"]) and result[f"{name}_ci95_mbb_g"] > 0
    assert result["bot_fold"]["round 1"]["pot"]["queries"] > 0


@pytest.mark.parametrize(("game_name", "board_len"), [("hunl", 3), ("hunl", 4), ("hunl", 5), ("leduc", 0), ("leduc", 1)])
def test_checkdown_outcome_matches_a_direct_enumeration(game_name: str, board_len: int) -> None:
    """The C equity kernel's check-down value equals P(win) − P(lose) counted runout by runout."""
    from itertools import combinations

    import numpy as np

    from agent.evaluation.lbr import checkdown_outcome
    from agent.solver.handspace import HandSpace
    from native.evaluator import evaluate

    game = load_game(game_name)
    space = HandSpace(game)
    rng = np.random.default_rng(board_len)
    deal = [int(c) for c in rng.permutation(np.array(space.deck))]
    k = game.num_hole_cards
    ours, board = tuple(sorted(deal[:k])), tuple(deal[k : k + board_len])
    opp = rng.random(space.size) * (rng.random(space.size) < 0.6)
    win = lose = mass = 0.0
    remaining = [c for c in space.deck if c not in ours + board]
    for runout in combinations(remaining, game.total_board_cards - board_len):
        full = board + runout
        mine = int(evaluate(np.array(ours + full, dtype=np.uint8)))
        for h in np.nonzero(opp)[0]:
            theirs = tuple(int(c) for c in space.cards[h])
            if set(theirs) & set(ours + full):
                continue
            t = int(evaluate(np.array(theirs + full, dtype=np.uint8)))
            win += opp[h] * (t < mine)
            lose += opp[h] * (t > mine)
            mass += opp[h]
    got = checkdown_outcome(space, ours, board, opp, rng)
    assert got == pytest.approx((win - lose) / mass, abs=1e-5)


def test_two_bots_with_one_seed_play_the_same_deals_hand_for_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    """Paired comparisons: hand i's cards depend on the seed and i only, not on the bot (whose
    sampled actions use the chunk's other random stream) nor on where the chunks start."""
    import agent.evaluation.lbr as lbr

    game = load_game("leduc")
    setting = LBRSetting.parse("fcpa/fcpa", 2)
    dealt: list[tuple[str, int, tuple[int, ...]]] = []
    real = lbr.play_lbr_hand

    def spy(game, space, bot, setting, hand_id, rng, queries=None, deal=None):  # type: ignore[no-untyped-def]
        peek = np.random.Generator(type(deal.bit_generator)())
        peek.bit_generator.state = deal.bit_generator.state
        dealt.append((type(bot).__name__ + str(id(bot)), hand_id, tuple(peek.permutation(np.array(space.deck)))))
        return real(game, space, bot, setting, hand_id, rng, queries, deal)

    monkeypatch.setattr(lbr, "play_lbr_hand", spy)
    runs = {}
    for name, chunk in (("call", 6), ("random", 6), ("random", 4)):
        dealt.clear()
        run_lbr(game, ProviderFactory("leduc", name), setting, 12, seed=5, chunk=chunk)
        runs[(name, chunk)] = [cards for _, _, cards in sorted(dealt, key=lambda d: d[1])]
    assert runs[("call", 6)] == runs[("random", 6)] == runs[("random", 4)]
    assert len(set(runs[("call", 6)])) == 12  # and the hands differ from each other


def _threads_in_worker() -> int:
    import torch

    return torch.get_num_threads()


def test_lbr_workers_share_the_cores_instead_of_each_taking_them_all() -> None:
    from concurrent.futures import ProcessPoolExecutor

    from agent.evaluation.lbr import share_the_cores

    cores = os.cpu_count() or 1
    for workers in (1, 2, cores + 1):
        with ProcessPoolExecutor(max_workers=1, initializer=share_the_cores, initargs=(workers,)) as pool:
            assert pool.submit(_threads_in_worker).result() == max(1, cores // workers)


def test_two_runs_on_the_same_deals_compare_hand_for_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`eval lbr-paired` reads two folders (plays nothing), compares the hands both hold from hand 0
    on, hand for hand, and refuses folders that were not dealt the same cards."""

    def lbr(bot: str, hands: int, out: Path, seed: int = 4) -> None:
        args = ["eval", "lbr", "--game", "leduc", "--bot", bot, "--setting", "fcp/fcp", "--hands", str(hands)]
        assert main(args + ["--seed", str(seed), "--chunk", "10", "--out", str(out), "--json"]) == 0

    lbr("call", 60, tmp_path / "call")
    lbr("random", 40, tmp_path / "random")
    lbr("random", 40, tmp_path / "other-seed", seed=5)
    capsys.readouterr()
    assert main(["eval", "lbr-paired", str(tmp_path / "call"), str(tmp_path / "random"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["hands"] == 40 and result["a"]["hands_held"] == 60
    assert set(result["estimates"]) == {"realised", "range_expected", "aivat"}
    game = load_game("leduc")
    for name, prefix in (("realised", "lbr"), ("range_expected", "expected"), ("aivat", "aivat")):
        a, b = (
            np.concatenate([json.loads((tmp_path / bot / f"{prefix}-{i:07d}.json").read_text()) for i in range(0, 40, 10)])
            for bot in ("call", "random")
        )
        row = result["estimates"][name]
        assert row["a"]["mean"] == pytest.approx(1000 * a.mean() / game.big_blind)
        assert row["diff"]["mean"] == pytest.approx(row["b"]["mean"] - row["a"]["mean"])
        assert row["diff"]["ci95"] == pytest.approx(estimate(b - a, game.big_blind).ci95)
    assert result["bot_fold"]["a"] and result["bot_fold"]["b"]

    png = tmp_path / "paired.png"
    assert main(["eval", "lbr-paired", str(tmp_path / "call"), str(tmp_path / "random"), "--png", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = capsys.readouterr().out
    assert "40 hands in both" in text and "B - A, hand for hand" in text and "AIVAT" in text

    assert main(["eval", "lbr-paired", str(tmp_path / "call"), str(tmp_path / "other-seed")]) == 2
    err = capsys.readouterr().err
    assert "did not play the same deals" in err and "seed 4" in err and "5" in err
    assert main(["eval", "lbr-paired", str(tmp_path / "call"), str(tmp_path / "nothing")]) == 2
    assert "nothing: no such folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["eval", "lbr-paired", str(tmp_path / "call"), str(tmp_path / "empty")]) == 2
    assert "no run.json" in capsys.readouterr().err


class _FoldsToEveryBet(StrategyProvider):
    """A bot that folds whatever it holds whenever it can (a check otherwise)."""

    def __init__(self, space: HandSpace) -> None:
        self.space = space

    def strategy(self, state: HandState) -> tuple[list[Action], np.ndarray]:
        actions = [FOLD, CALL] if state.can_fold() else [CALL]
        probs = np.zeros((len(actions), self.space.size))
        probs[0] = 1.0
        return actions, probs


def test_a_bet_the_bot_always_folds_to_wins_what_the_bot_put_in() -> None:
    """LBR's value of a bet where the bot folds every hand is the bot's chips in the pot (not the
    whole pot: LBR's own chips were never lost), and a fold loses LBR's own."""
    game = load_game("leduc")
    space = HandSpace(game)
    lbr = LBRPlayer(space, LBRSetting.parse("fcpa/fcpa", 2), np.random.default_rng(0))
    state = HandState.initial(game)  # both have 100 in; position 0 acts first
    lbr.start_hand(0, parse_cards("Ks"))
    values = dict(lbr.action_values(state, _FoldsToEveryBet(space)))
    bets = [a for a in values if a.kind is ActionKind.RAISE]
    assert len(bets) == 2  # a pot bet and all-in
    assert all(values[a] == pytest.approx(100.0) for a in bets)
    state = state.apply(raise_to(300))  # facing a bet, LBR's fold loses its 100
    lbr.start_hand(1, parse_cards("Ks"))
    assert dict(lbr.action_values(state, _FoldsToEveryBet(space)))[FOLD] == -100.0


def test_lbr_updates_its_range_for_the_bot_by_bayes_rule() -> None:
    """After the bot acts, LBR's belief about its hand is the prior times the probability of that
    action for each hand, normalised; the board removes the hands it blocks."""
    space = HandSpace(load_game("leduc"))
    lbr = LBRPlayer(space, LBRSetting.parse("fc/fc", 2), np.random.default_rng(0))
    lbr.start_hand(0, parse_cards("Ks"))
    prior = lbr.belief.copy()
    p = np.random.default_rng(1).random(space.size)
    lbr.bot_acted(p)
    np.testing.assert_allclose(lbr.belief, prior * p / (prior * p).sum())
    before = lbr.belief.copy()
    lbr.cards_dealt(parse_cards("Qh"))
    kept = before * ~space.blocked(list(parse_cards("Qh")))
    np.testing.assert_allclose(lbr.belief, kept / kept.sum())


def test_a_chunk_cut_short_beside_whole_estimates_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A winnings chunk of 3 hands beside estimates of 10: the resume played hands 3-9 again, counting their
    estimates and fold queries twice; now the folder is refused, naming the file that disagrees."""
    argv = ["eval", "lbr", "--game", "leduc", "--bot", "call", "--hands", "10", "--setting", "fcp/fcp", "--out", str(tmp_path)]
    assert main(argv) == 0
    (tmp_path / "lbr-0000000.json").write_text("[1, 2, 3]")
    before = sorted(p.name for p in tmp_path.iterdir())
    capsys.readouterr()
    assert main([*argv[:7], "20", *argv[8:]]) == 2
    err = capsys.readouterr().err
    assert "-0000000.json: 10 hands, its chunk (lbr-0000000.json) has 3" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing played or written


def test_lbr_refuses_an_out_that_holds_another_command_s_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An --out of a match's logs took LBR's chunks among them; eval plot and aivat-log then read the mix."""
    logs = tmp_path / "m"
    assert main(["match", "leduc", "2", "call", "random", "--log-dir", str(logs)]) == 0
    before = sorted(p.name for p in logs.iterdir())
    capsys.readouterr()
    assert (
        main(["eval", "lbr", "--game", "leduc", "--bot", "call", "--hands", "4", "--setting", "fcp/fcp", "--out", str(logs)]) == 2
    )
    assert f"{logs}: holds a match's logs (bots.jsonl, leduc.call.vs.random.s0.log); use another --out" in capsys.readouterr().err
    assert sorted(p.name for p in logs.iterdir()) == before


def test_resuming_with_another_game_or_bot_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder played by the DeepStack bot (its run.json records its bot_key) resumed with another --bot or
    --game was refused as 'played by another bot (its code, settings or model files have changed since)',
    though nothing had changed: the option that differs is named, as a different --setting or --seed is."""
    from agent.cli.eval_lbr import bot_key

    def lbr(game: str, bot: str) -> int:
        argv = ["eval", "lbr", "--game", game, "--bot", bot, "--hands", "10", "--chunk", "5", "--setting", "fcp/fcp"]
        return main([*argv, "--out", str(tmp_path), "--json"])

    assert lbr("leduc", "random") == 0
    run = json.loads((tmp_path / "run.json").read_text())
    # as 'deepstack eval lbr --game leduc --bot deepstack' writes it
    (tmp_path / "run.json").write_text(json.dumps({**run, "bot": "deepstack", "bot_key": bot_key(load_game("leduc"), None)}))
    capsys.readouterr()
    assert lbr("leduc", "random") == 2
    err = capsys.readouterr().err
    assert "holds another LBR run (bot 'deepstack' there, 'random' now)" in err and "another bot" not in err
    assert lbr("leduc-limit", "deepstack") == 2
    err = capsys.readouterr().err
    assert "holds another LBR run (game 'leduc' there, 'leduc-limit' now)" in err and "another bot" not in err
    assert sorted(p.name for p in tmp_path.glob("lbr-*.json")) == ["lbr-0000000.json", "lbr-0000005.json"]
