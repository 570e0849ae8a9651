"""The re-solver against known values, exact best responses and the re-solving guarantee."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
import torch

from agent.solver.cfr import Solver, exploitability
from agent.solver.gadget import Gadget
from agent.solver.handspace import HandSpace
from agent.solver.lookahead import compile_lookahead
from agent.solver.resolve import SolverConfig, resolve, solve_ranges
from agent.solver.tree import FCPA, BetSizing, NodeKind, build_tree
from agent.solver.variant import Variant
from native.cards import cards_from_str
from native.evaluator import evaluate_one
from protocol.gamedef import Game
from protocol.state import HandState

CPU64 = SolverConfig(device="cpu", dtype="float64")


def uniform(space: HandSpace) -> np.ndarray:
    return np.full(space.size, 1.0 / space.size)


def test_limit_leduc_value_and_exploitability(leduc_limit: Game) -> None:
    space = HandSpace(leduc_limit)
    sol = solve_ranges(
        HandState.initial(leduc_limit), [uniform(space)] * 2, FCPA, SolverConfig(iterations=1000, device="cpu", dtype="float64")
    )
    e = sol.exploitability()
    assert e["exploitability"] < 0.001
    assert e["value0"] == pytest.approx(-0.0856, abs=0.001)
    assert e["value0"] + e["value1"] == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("algorithm", ["cfr+", "dcfr", "dcfr+", "hybrid"])
def test_every_variant_converges_on_nolimit_leduc(algorithm: str, leduc: Game) -> None:
    space = HandSpace(leduc)
    alternating = algorithm != "hybrid"
    skip = 100 if algorithm == "hybrid" else 0
    cfg = SolverConfig(algorithm=algorithm, alternating=alternating, iterations=50, skip=0, device="cpu", dtype="float64")
    sol = solve_ranges(HandState.initial(leduc), [uniform(space)] * 2, FCPA, cfg)
    early = sol.exploitability()["exploitability"]
    sol.solver.variant = Variant(algorithm, skip=skip, alternating=alternating)
    sol.solver.solve(sol.result.root_reach, 600)
    late = exploitability(sol.solver, sol.result.root_reach)["exploitability"]
    assert late < early / 3
    if alternating:
        assert late < 0.2  # chips per game (antes of 100)


def test_dcfr_parameters_reach_the_variant() -> None:
    """alpha / beta / gamma of a solver config are the variant's; beta = -inf resets negative
    regrets (multiplier 0), as regret-matching+ does; nonsense is refused."""
    import math

    v = SolverConfig(algorithm="dcfr", alpha=2.0, beta=-math.inf, gamma=4.0).variant()
    assert (v.alpha, v.beta, v.gamma) == (2.0, -math.inf, 4.0)
    assert v.discount(1) == (0.5, 0.0) and v.discount(3) == pytest.approx((9 / 10, 0.0))
    assert v.average_weight(3) == 81.0
    assert Variant("dcfr").discount(1) == (0.5, 0.5)
    bad_values = [{"alpha": math.nan}, {"gamma": -1.0}, {"beta": math.inf}, {"beta": math.nan}, {"gamma": math.nan}]
    # ceilings: t ** alpha overflowed Python floats at 400; a gamma of 12 made 3000 iterations NaN
    bad_values += [{"alpha": 400.0}, {"beta": 400.0}, {"gamma": 12.0}, {"alpha": -1.0}]
    assert Variant("dcfr", alpha=50.0, beta=-1000.0, gamma=5.0).discount(10**6)[1] == 0.0
    for bad in bad_values:
        with pytest.raises(ValueError):
            Variant("dcfr", **bad)


def test_hybrid_floors_its_regrets_as_cfr_plus_does() -> None:
    """``hybrid`` is a regret-matching+ variant: its regrets are floored at 0, as ``cfr+``'s are."""
    assert Variant("hybrid").floors_regrets is True
    assert Variant("cfr+").floors_regrets is True
    assert Variant("dcfr").floors_regrets is False and Variant("dcfr+").floors_regrets is False


@pytest.mark.parametrize("algorithm", ["cfr+", "dcfr+"])
def test_linear_averaging_counts_iterations_from_the_skip(algorithm: str) -> None:
    """``cfr+`` and ``dcfr+`` weigh iteration t by max(0, t - skip): nothing before the skip, then 1, 2, ..."""
    v = Variant(algorithm, skip=10)
    assert [v.average_weight(t) for t in (5, 10, 11, 15)] == [0.0, 0.0, 1.0, 5.0]


def test_gadget_without_regrets_follows_half_the_time() -> None:
    """Before either of its regrets is positive the gadget splits every hand evenly: follow with 0.5."""
    g = Gadget(0, cfvs=torch.zeros(3), prior=torch.ones(3) / 3)
    assert torch.equal(g.follow_probability(), torch.full((3,), 0.5))


def test_aggressive_gadget_mixes_the_estimate_into_the_reach() -> None:
    """With ``aggressive`` = a the root reach is (1 - a) * prior * p_follow + a * estimate."""
    g = Gadget(0, torch.zeros(2), prior=torch.tensor([1.0, 0.0]), estimate=torch.tensor([0.0, 1.0]), aggressive=0.25)
    assert torch.allclose(g.reach(torch.ones(2)), torch.tensor([0.75, 0.25]))
    assert torch.equal(Gadget(0, torch.zeros(2), prior=torch.tensor([1.0, 0.0])).reach(torch.ones(2)), torch.tensor([1.0, 0.0]))


def test_gadget_regrets_are_floored_after_every_update() -> None:
    """Regret matching+: a negative follow regret is reset to 0, so one later gain of 1 against a
    terminate regret of 0.5 gives follow 2/3 (unfloored regrets would give 1/2)."""
    g = Gadget(0, cfvs=torch.tensor([1.0]), prior=torch.tensor([1.0]))
    g.update(torch.tensor([0.0]), torch.tensor([0.5]))  # v = 0.5: follow regret -0.5 -> 0, terminate 0.5
    assert g.regret_follow.item() == 0.0 and g.regret_terminate.item() == 0.5
    assert g.follow_probability().item() == 0.0
    g.update(torch.tensor([2.0]), g.follow_probability())  # v = 1: follow 0 + 1, terminate 0.5 + 0
    assert g.follow_probability().item() == pytest.approx(2 / 3)


def _brute_force_best_response(sol, player: int) -> float:
    """Best response by enumerating every deal of Leduc (independent of the tensor code)."""
    la = sol.lookahead
    space = sol.space
    strat = sol.result.average_strategy.numpy()
    dec = {int(r): m for m, r in enumerate(la.dec_rows)}
    kids = {r: la.children_of(r) for r in range(la.num_rows)}
    deck = list(space.deck)

    def value(row: int, own: int, opp: dict[int, float]) -> float:
        node = la.nodes[row]
        board = la.boards[la.row_board[row]]
        if node.kind is NodeKind.FOLD:
            return node.state.payoffs()[player] * sum(opp.values())
        if node.kind is NodeKind.SHOWDOWN:
            mine = evaluate_one([own, *board])
            return sum(w * min(node.spent) * np.sign(mine - evaluate_one([c, *board])) for c, w in opp.items())
        if node.kind is NodeKind.CHANCE:
            total = 0.0
            for child in kids[row]:
                card = la.boards[la.row_board[child]][-1]
                if card != own:
                    total += value(child, own, {c: w / 4 for c, w in opp.items() if c != card})
            return total
        if node.player == player:
            return max(value(child, own, opp) for child in kids[row])
        m = dec[row]
        return sum(
            value(child, own, {c: w * strat[m, a, space.index([c])] for c, w in opp.items()}) for a, child in enumerate(kids[row])
        )

    return sum(value(0, own, {c: 1 / 30 for c in deck if c != own}) for own in deck)


def test_vectorized_best_response_matches_enumeration(leduc_limit: Game) -> None:
    space = HandSpace(leduc_limit)
    sol = solve_ranges(
        HandState.initial(leduc_limit), [uniform(space)] * 2, FCPA, SolverConfig(iterations=40, device="cpu", dtype="float64")
    )
    e = sol.exploitability()
    br0, br1 = _brute_force_best_response(sol, 0), _brute_force_best_response(sol, 1)
    assert e["br0"] == pytest.approx(br0, abs=1e-9)
    assert e["br1"] == pytest.approx(br1, abs=1e-9)
    # zero-sum from the root: the two values cancel, and exploitability is the mean best-response gain
    assert e["value0"] + e["value1"] == pytest.approx(0, abs=1e-12)
    assert e["exploitability"] == pytest.approx((br0 + br1) / 2, abs=1e-9)


@dataclass
class LaterState:
    """A limit-Leduc game solved from the root, seen at the public state rc/Ks: the players,
    our reach, the opponent's reach (a range estimate) and best-response CFVs there."""

    full: object
    sigma: torch.Tensor
    reach: torch.Tensor
    row: int
    me: int
    opp: int
    our: np.ndarray
    estimate: np.ndarray
    opp_cfv: np.ndarray
    state: HandState


def later_state(game: Game, iterations: int) -> LaterState:
    space = HandSpace(game)
    full = solve_ranges(
        HandState.initial(game), [uniform(space)] * 2, FCPA, SolverConfig(iterations=iterations, device="cpu", dtype="float64")
    )
    la, solver = full.lookahead, full.solver
    sigma, reach = full.result.average_strategy, full.result.root_reach
    board = cards_from_str("Ks")
    row = next(r for r in range(la.num_rows) if la.row_key(r) == ("rc/", board))
    me = la.nodes[row].player
    opp = 1 - me
    solver.evaluate(reach, sigma)
    our = full.to_space(solver.reach[me, row])
    estimate = full.to_space(solver.reach[opp, row])
    opp_cfv = full.to_space(solver.best_response_values(reach, sigma, opp)[row])
    return LaterState(full, sigma, reach, row, me, opp, our, estimate, opp_cfv, la.nodes[row].state.with_board(board))


def test_resolving_with_the_gadget_is_sound(leduc_limit: Game) -> None:
    """Re-solve a later public state from (our range, opponent CFVs): the opponent gains
    nothing over the given values, and the combined strategy is no more exploitable."""
    ls = later_state(leduc_limit, 1500)
    full, sigma, reach, me, opp, our, opp_cfv, state = ls.full, ls.sigma, ls.reach, ls.me, ls.opp, ls.our, ls.opp_cfv, ls.state
    la, solver = full.lookahead, full.solver
    base = exploitability(solver, reach, sigma)["exploitability"]
    sub = resolve(state, our, opp_cfv, FCPA, SolverConfig(iterations=2000, device="cpu", dtype="float64"))
    sub_reach = torch.zeros(2, len(sub.hands), dtype=torch.float64)
    sub_reach[me] = torch.as_tensor(our[sub.hands])
    sub_reach[opp] = 1.0
    gained = sub.to_space(sub.solver.best_response_values(sub_reach, sub.result.average_strategy, opp)[0]) - opp_cfv
    assert gained[sub.hands].max() < 1e-3
    # graft the re-solved strategy into the full strategy and measure the whole game again
    combined = sigma.clone()
    sub_la = sub.lookahead
    full_rows = {la.row_key(int(r)): m for m, r in enumerate(la.dec_rows)}
    for m_sub, r_sub in enumerate(sub_la.dec_rows):
        m_full = full_rows[sub_la.row_key(int(r_sub))]
        combined[m_full][:, torch.as_tensor(sub.hands)] = sub.result.average_strategy[m_sub]
    after = exploitability(solver, reach, combined)["exploitability"]
    assert after <= base + 2e-3


def test_leaf_values_from_a_callable_match_the_full_tree(leduc_limit: Game) -> None:
    """A depth-limited tree whose leaves return check-down values equals a full tree in
    which the second round has no bets."""
    space = HandSpace(leduc_limit)
    hands = np.arange(space.size)
    no_bets = BetSizing(bets=((1.0,),), max_raises=0)
    full = compile_lookahead(
        build_tree(HandState.initial(leduc_limit), [FCPA, no_bets]), space, hands, torch.device("cpu"), torch.float64
    )
    assert all(n.state.round == 0 or n.kind is not NodeKind.DECISION or len(n.actions) == 1 for n in full.nodes)
    cut = compile_lookahead(
        build_tree(HandState.initial(leduc_limit), FCPA, last_round=0), space, hands, torch.device("cpu"), torch.float64
    )
    assert len(cut.leaves.rows) > 0
    from agent.leaves.checkdown import checkdown_leaf_values

    reach = torch.full((2, 6), 1 / 6, dtype=torch.float64)
    a = Solver(full, Variant("dcfr", alternating=True))
    b = Solver(cut, Variant("dcfr", alternating=True), leaf_values=checkdown_leaf_values)
    ea = exploitability(a, reach, a.solve(reach, 300).average_strategy)
    eb = exploitability(b, reach, b.solve(reach, 300).average_strategy)
    assert ea["value0"] == pytest.approx(eb["value0"], abs=1e-6)
    assert ea["exploitability"] == pytest.approx(eb["exploitability"], abs=1e-6)


def test_terminal_kernels_and_dense_agree(hunl: Game) -> None:
    from agent.solver.terminal import TerminalEquity, _DenseShowdown, _KernelShowdown

    space = HandSpace(hunl)
    rng = np.random.default_rng(5)
    for trial in range(6):
        board = tuple(int(c) for c in rng.choice(52, 5, replace=False))
        hands = np.sort(rng.choice(1326, 300 if trial % 2 else 1326, replace=False))
        te = TerminalEquity(space, hands, [board], torch.device("cpu"), torch.float64)
        reach = torch.as_tensor(rng.random((7, len(hands))) * (rng.random((7, len(hands))) > 0.3))
        ids = np.zeros(7, dtype=np.int64)
        dense = _DenseShowdown(te, ids)(reach)
        fast = _KernelShowdown(te, ids)(reach)
        assert torch.allclose(dense, fast, atol=1e-9)
        from agent.solver.terminal import compatible_matrix

        comp = torch.as_tensor(compatible_matrix(space, hands, board), dtype=torch.float64)
        fold = te.fold_mass(reach, torch.zeros(7, dtype=torch.long))
        assert torch.allclose(fold, reach @ comp.T, atol=1e-9)
        assert torch.allclose(te.fold_group(torch.zeros(7, dtype=torch.long))(reach), reach @ comp.T, atol=1e-9)


def test_hybrid_leaves_the_first_iterations_out_of_the_averages(leduc: Game) -> None:
    space = HandSpace(leduc)
    cfg = SolverConfig(algorithm="hybrid", alternating=False, iterations=30, skip=12, device="cpu", dtype="float64")
    sol = solve_ranges(HandState.initial(leduc), [uniform(space)] * 2, FCPA, cfg)
    assert sol.solver.weight_sum == 30 - 12  # uniform weights, iterations 13..30 only
    # all iterations skipped: nothing averaged, the current strategy is returned
    cfg_all = SolverConfig(algorithm="hybrid", alternating=False, iterations=10, skip=10, device="cpu", dtype="float64")
    none = solve_ranges(HandState.initial(leduc), [uniform(space)] * 2, FCPA, cfg_all)
    assert none.solver.weight_sum == 0
    assert torch.equal(none.result.average_strategy, none.solver.strategy)
    # the averages differ from averaging everything
    cfg0 = SolverConfig(algorithm="hybrid", alternating=False, iterations=30, skip=0, device="cpu", dtype="float64")
    every = solve_ranges(HandState.initial(leduc), [uniform(space)] * 2, FCPA, cfg0)
    assert every.solver.weight_sum == 30
    assert not torch.allclose(every.result.average_strategy, sol.result.average_strategy)


@pytest.mark.parametrize("mode", ["conservative", "aggressive"])
def test_opponent_range_warm_starts(leduc_limit: Game, mode: str) -> None:
    """Both warm starts of section 3 at a later public state of a solved game. Conservative:
    the gadget deals the opponent (1-w) uniform + w estimate and the re-solve stays sound.
    Aggressive: with probability w the opponent must follow holding a hand from the estimate."""
    from agent.solver.resolve import WarmStart

    ls = later_state(leduc_limit, 800)
    me, opp, our, estimate, opp_cfv, state = ls.me, ls.opp, ls.our, ls.estimate, ls.opp_cfv, ls.state
    cfg = SolverConfig(iterations=1500, device="cpu", dtype="float64")
    warm = WarmStart(estimate=estimate, weight=0.9, mode=mode)
    sub = resolve(state, our, opp_cfv, FCPA, cfg, warm_start=warm)
    plain = resolve(state, our, opp_cfv, FCPA, cfg)
    est = torch.as_tensor(estimate[sub.hands] / estimate[sub.hands].sum())
    opp_root = sub.result.root_reach[opp]
    if mode == "aggressive":
        assert torch.all(opp_root >= 0.9 * est - 1e-12)  # the forced-follow share
        assert not torch.allclose(opp_root, plain.result.root_reach[opp])
    else:
        sub_reach = torch.zeros(2, len(sub.hands), dtype=torch.float64)
        sub_reach[me] = torch.as_tensor(our[sub.hands])
        sub_reach[opp] = 1.0
        gained = sub.to_space(sub.solver.best_response_values(sub_reach, sub.result.average_strategy, opp)[0]) - opp_cfv
        assert gained[sub.hands].max() < 1e-3  # the guarantee is kept
        valid = torch.as_tensor(HandSpace(leduc_limit).valid(state.board)[sub.hands], dtype=torch.float64)
        prior = 0.1 * valid / valid.sum() + 0.9 * est
        assert torch.all(opp_root <= prior + 1e-12)  # the gadget deals the opponent from the mixed prior
        assert not torch.allclose(opp_root, plain.result.root_reach[opp])
    for s in (sub, plain):
        strat = s.result.average_strategy
        assert torch.isfinite(strat).all()


@pytest.mark.parametrize("dtype", ["float64", "float32"])  # torch phases / fused C kernels
def test_values_only_solver_gives_the_same_values(leduc: Game, dtype: str) -> None:
    """Training data keeps only the average values: skipping the strategy sums must not change them."""
    space = HandSpace(leduc)
    state = HandState.at_round_start(leduc, 1, (300, 300), (cards_from_str("Kh")[0],))
    rng = np.random.default_rng(3)
    ranges = [rng.random(space.size) * space.valid(state.board) for _ in range(2)]
    cfg = SolverConfig(algorithm="dcfr", iterations=40, device="cpu", dtype=dtype)
    full = solve_ranges(state, ranges, FCPA, cfg, space=space)
    lean = solve_ranges(state, ranges, FCPA, cfg, space=space, average_strategy=False)
    assert lean.result.average_strategy is None and lean.solver.strategy_sum.numel() == 0
    np.testing.assert_array_equal(lean.values_at(0), full.values_at(0))
    with pytest.raises(RuntimeError, match="average values only"):
        lean.solver.average_strategy()
    with pytest.raises(ValueError, match="needs the average strategy"):
        solve_ranges(state, ranges, FCPA, cfg, space=space, average_strategy=False, target_exploitability=1.0)


@pytest.mark.parametrize("dtype", ["float64", "float32"])  # torch phases / fused C kernels
@pytest.mark.parametrize("algorithm", ["cfr+", "dcfr"])
def test_exploitability_checks_do_not_change_the_solve(leduc: Game, dtype: str, algorithm: str) -> None:
    """Checking the exploitability every few iterations (``target_exploitability``) evaluates the
    average strategy with the solver's own buffers; the iterations after a check must still play
    the current (regret-matched) strategy, so the solve ends exactly as one without checks."""
    space = HandSpace(leduc)
    state = HandState.at_round_start(leduc, 1, (300, 300), (cards_from_str("Kh")[0],))
    rng = np.random.default_rng(5)
    ranges = [rng.random(space.size) * space.valid(state.board) for _ in range(2)]
    cfg = SolverConfig(algorithm=algorithm, alternating=True, iterations=30, device="cpu", dtype=dtype)
    plain = solve_ranges(state, ranges, FCPA, cfg, space=space)
    checked = solve_ranges(state, ranges, FCPA, cfg, space=space, target_exploitability=-1.0, check_every=7)
    assert [h["iterations"] for h in checked.history] == [7, 14, 21, 28, 30]
    np.testing.assert_array_equal(checked.result.average_strategy.numpy(), plain.result.average_strategy.numpy())
    np.testing.assert_array_equal(checked.values_at(0), plain.values_at(0))
    assert checked.history[-1]["exploitability"] == pytest.approx(plain.exploitability()["exploitability"], abs=1e-9)


@pytest.mark.parametrize("enabled", [True, False])
def test_solve_pauses_the_garbage_collector_and_restores_it(leduc_limit: Game, enabled: bool) -> None:
    """The iterations run with Python's cyclic collector off; afterwards it is as it was, also
    when an iteration raises."""
    import gc

    space = HandSpace(leduc_limit)
    state = HandState.initial(leduc_limit)
    ranges = [uniform(space)] * 2
    seen: list[bool] = []

    def stop(t: int) -> None:
        seen.append(gc.isenabled())
        if len(seen) == 3:
            raise RuntimeError("stop")

    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        sol = solve_ranges(state, ranges, FCPA, SolverConfig(iterations=2, device="cpu", dtype="float64"))
        assert gc.isenabled() is enabled
        with pytest.raises(RuntimeError, match="stop"):
            sol.solver.solve(sol.result.root_reach, 5, on_iteration=stop)
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()
    assert seen == [False, False, False]


@pytest.mark.parametrize("alternating", [True, False], ids=["alternating", "simultaneous"])
def test_batched_solver_follows_the_variants_updates(leduc: Game, alternating: bool) -> None:
    """The batched solver (Leduc's last-round training data) makes the same average strategy as
    the lookahead solver with the same updates: simultaneous ones too (it used to alternate
    whatever the variant said, so `generate --updates simultaneous` recorded what it did not do)."""
    from agent.solver.batched import BatchSpot, _GroupSolver, flatten

    space = HandSpace(leduc)
    board = tuple(cards_from_str("Kh"))
    state = HandState.at_round_start(leduc, 1, (300, 300), board)
    valid = space.valid(board)
    rng = np.random.default_rng(2)
    ranges = np.stack([rng.random(space.size) * valid, rng.random(space.size) * valid])
    ranges /= ranges.sum(axis=1, keepdims=True)
    variant = Variant("dcfr", alternating=alternating)
    root = build_tree(state, FCPA)
    shape, amounts = flatten(root)
    batched = _GroupSolver(space, shape, amounts[:, None, :], [BatchSpot(state, ranges)], variant)
    batched.run(30)
    hands = np.flatnonzero(valid)
    la = compile_lookahead(root, space, hands, torch.device("cpu"), torch.float64)
    result = Solver(la, variant, native=False).solve(torch.as_tensor(ranges[:, hands]), 30)
    order: list = []

    def visit(node) -> None:  # the batched solver's nodes are the tree's in pre-order
        order.append(node)
        for child in node.children:
            visit(child)

    visit(root)
    for m, row in enumerate(la.dec_rows.tolist()):
        i = next(k for k, node in enumerate(order) if node is la.nodes[row])
        total = batched.average[i].sum(axis=0, keepdims=True)
        n = len(shape[i].children)
        average = np.where(total > 0, batched.average[i] / np.where(total > 0, total, 1.0), 1.0 / n)[:, 0, hands]
        np.testing.assert_allclose(average, result.average_strategy[m, :n].numpy(), atol=1e-6)


def test_a_board_dealt_several_cards_at_once_is_found_in_any_order() -> None:
    """A chance node that deals two cards names its outcomes with the cards in deck order; the
    dealer may send them in another (a flop is three cards at once): both find the same row."""
    from protocol.gamedef import parse_game

    game = parse_game(
        "GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 2\nblind = 1 1\nraiseSize = 2 4\nfirstPlayer = 1 1\n"
        "maxRaises = 2 2\nnumSuits = 2\nnumRanks = 4\nnumHoleCards = 1\nnumBoardCards = 0 2\nEND GAMEDEF\n",
        name="two-card-board",
    )
    space = HandSpace(game)
    uniform = np.ones(space.size) / space.size
    config = SolverConfig(iterations=5, device="cpu", dtype="float64")
    solution = solve_ranges(HandState.initial(game), [uniform, uniform], FCPA, config, space=space)
    la = solution.lookahead
    chance = next(row for row, node in enumerate(la.nodes) if node.kind is NodeKind.CHANCE)
    for child in la.children_of(chance)[:5]:
        board = la.boards[la.row_board[child]]
        assert solution.chance_child_row(chance, board) == child
        assert solution.chance_child_row(chance, board[::-1]) == child
