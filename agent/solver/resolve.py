"""Solving a public state: from both ranges (a spot), or from our range and the opponent's
counterfactual values through the CFR-D gadget (DeepStack's re-solving).

This module turns hand-space vectors (1326 hold'em hands, 6 Leduc cards) into the
solver's hand list and back, builds the tree and the lookahead, runs CFR and exposes
what the callers need: the root strategy, counterfactual values anywhere in the first
round (root children and chance outcomes), exploitability.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import torch

from agent.solver.cfr import LeafValueFn, Solver, SolveResult, exploitability
from agent.solver.gadget import Gadget
from agent.solver.handspace import HandSpace
from agent.solver.lookahead import Lookahead, chance_outcome, compile_lookahead
from agent.solver.tree import BetSizing, Node, NodeKind, build_tree
from agent.solver.variant import Algorithm, Variant
from native.torch_showdown import canonical_device
from protocol.state import Action, HandState


class SpotError(ValueError):
    """A spot that cannot be solved (colliding cards, empty range, impossible pot...)."""


def pick_device(name: str | torch.device = "auto") -> torch.device:
    """``auto``: CUDA when present, else the CPU. ``cuda:N`` (what ``str()`` of a tensor's device
    gives) names one GPU; the result always carries its index."""
    name = str(name)
    kind, _, index = name.partition(":")
    if name == "auto":
        return canonical_device("cuda" if torch.cuda.is_available() else "cpu")
    if kind not in ("cpu", "cuda") or (":" in name and (kind == "cpu" or not index.isdigit())):
        raise SpotError(f"device must be auto, cpu, cuda or cuda:N, not {name!r}")
    if kind == "cuda" and not torch.cuda.is_available():
        raise SpotError(f"device {name!r} was asked for but no CUDA device is available")
    if kind == "cuda" and index and int(index) >= torch.cuda.device_count():
        raise SpotError(f"device {name!r} was asked for but there are {torch.cuda.device_count()} CUDA devices")
    return canonical_device(name)


@dataclass(frozen=True)
class SolverConfig:
    """How CFR runs for one solve or re-solve: the algorithm and its discounts, iterations (``skip``
    left out of the averages), device and precision; the bot's settings, ``deepstack solve`` and data
    generation each build one."""

    algorithm: Algorithm = "dcfr"
    alternating: bool = True
    iterations: int = 1000
    #: iterations left out of the averages (DeepStack's hybrid used 500-980)
    skip: int = 0
    device: str = "auto"
    dtype: Literal["float32", "float64"] = "float32"
    #: DCFR's discounts of positive and negative regrets and its averaging exponent (dcfr and
    #: dcfr+; see :class:`agent.solver.variant.Variant`)
    alpha: float = 1.5
    beta: float = 0.0
    gamma: float = 2.0

    def variant(self) -> Variant:
        """The CFR rules these settings name, as :class:`Solver` takes them."""
        return Variant(
            algorithm=self.algorithm,
            skip=self.skip,
            alternating=self.alternating,
            alpha=self.alpha,
            beta=self.beta,
            gamma=self.gamma,
        )

    def torch_dtype(self) -> torch.dtype:
        """The lookahead's tensor dtype: float64 only when ``dtype`` says so, else float32."""
        return torch.float64 if self.dtype == "float64" else torch.float32


@dataclass
class Solution:
    """A solved lookahead, with the hand-space <-> hand-list mapping."""

    space: HandSpace
    root: Node
    lookahead: Lookahead
    solver: Solver
    result: SolveResult
    hands: np.ndarray
    history: list[dict[str, float]] = field(default_factory=list)
    #: the row of the decision the re-solve was made for: the root, or the child of the
    #: opponent's action when the re-solve starts before it
    decision_row: int = 0

    @property
    def device(self) -> torch.device:
        """The device the lookahead's tensors (and the solve) are on."""
        return self.lookahead.device

    def to_space(self, vec: torch.Tensor) -> np.ndarray:
        """A vector (or stack of vectors) over the hand list, scattered into the hand space."""
        v = vec.detach().to("cpu", torch.float64).numpy()
        out = np.zeros(v.shape[:-1] + (self.space.size,))
        out[..., self.hands] = v
        return out

    @property
    def root_actions(self) -> list[Action]:
        """The root decision's actions, in the order of the strategy's rows."""
        return list(self.root.actions)

    @property
    def root_player(self) -> int:
        """The position to act at the root (the root is always a decision)."""
        player = self.root.player
        assert player is not None
        return player

    def root_strategy(self) -> np.ndarray:
        """``[actions, hands of the space]`` average strategy of the player to act at the root."""
        return self.strategy_at(0)

    def strategy_at(self, row: int) -> np.ndarray:
        """``[actions, hands of the space]`` average strategy of the player to act at decision ``row``."""
        m = self.lookahead.decision_index(row)
        n = len(self.lookahead.nodes[row].actions)
        return self.to_space(self.result.average_strategy[m, :n])

    def values_at(self, row: int) -> np.ndarray:
        """``[2, hands]`` average counterfactual values at a tracked ``row``."""
        tracked = self.solver.track_rows
        hit = (tracked == row).nonzero()
        if len(hit) == 0:
            raise KeyError(f"row {row} is not tracked")
        i = int(hit[0, 0])
        return self.to_space(self.result.average_values[:, i])

    def child_row(self, row: int, action: Action) -> int:
        """The row that ``action`` leads to from decision ``row``; KeyError when ``row`` is not a decision,
        ValueError when ``action`` is not one of its actions."""
        node = self.lookahead.nodes[row]
        if node.kind is not NodeKind.DECISION:
            raise KeyError(f"row {row} is not a decision")
        index = node.actions.index(action)
        return self.lookahead.children_of(row)[index]

    def chance_child_row(self, row: int, board: Sequence[int]) -> int:
        """The row below chance ``row`` where the board is ``board`` (its new cards in any order)."""
        la = self.lookahead
        wanted = chance_outcome(la.boards[la.row_board[row]], board, self.space.deck)
        for child in self.lookahead.children_of(row):
            if self.lookahead.boards[self.lookahead.row_board[child]] == wanted:
                return child
        raise KeyError(f"no chance outcome {wanted} below row {row}")

    def exploitability(self, root_reach: torch.Tensor | None = None) -> dict[str, float]:
        """Best-response values against the average strategy from ``root_reach`` (default: the solve's final
        root reach), in chips per deal (:func:`agent.solver.cfr.exploitability`)."""
        reach = self.result.root_reach if root_reach is None else root_reach
        return exploitability(self.solver, reach)


def first_round_rows(la: Lookahead, depth: int = 2) -> torch.Tensor:
    """Rows whose average values continual re-solving may need: the root, decisions up to
    ``depth`` actions below it, and the chance outcomes directly below those."""
    keep: list[int] = []
    frontier = [0]
    for _ in range(depth + 1):
        nxt = []
        for row in frontier:
            keep.append(row)
            node = la.nodes[row]
            if node.kind is NodeKind.DECISION:
                nxt.extend(la.children_of(row))
            elif node.kind is NodeKind.CHANCE:
                keep.extend(la.children_of(row))
        frontier = nxt
    return torch.as_tensor(sorted(set(keep)), device=la.device)


def _hand_list(space: HandSpace, board: Sequence[int], ranges: Sequence[np.ndarray], all_valid: bool) -> np.ndarray:
    valid = space.valid(board)
    if all_valid:
        return np.nonzero(valid)[0]
    used = np.zeros(space.size, dtype=bool)
    for r in ranges:
        used |= np.asarray(r) > 0
    return np.nonzero(valid & used)[0]


def _check_ranges(space: HandSpace, board: Sequence[int], ranges: Sequence[np.ndarray]) -> list[np.ndarray]:
    valid = space.valid(board)
    out = []
    for p, r in enumerate(ranges):
        r = np.asarray(r, dtype=np.float64)
        if r.shape != (space.size,):
            raise SpotError(f"range of player {p} has shape {r.shape}, expected ({space.size},)")
        if not np.isfinite(r).all() or (r < 0).any():
            raise SpotError(f"range of player {p} has negative or non-finite weights")
        r = r * valid
        if r.sum() <= 0:
            raise SpotError(f"range of player {p} is empty once the board's cards are removed")
        out.append(r / r.sum())
    return out


def prepare(
    state: HandState,
    space: HandSpace,
    hands: np.ndarray,
    sizing: BetSizing | Sequence[BetSizing],
    config: SolverConfig,
    last_round: int | None = None,
    root_action: Action | None = None,
) -> tuple[Node, Lookahead]:
    """Build the public tree at ``state`` and its lookahead over ``hands`` on the config's device and
    precision; a board with a repeated or foreign card is a SpotError."""
    if len(set(state.board)) != len(state.board):
        raise SpotError("the board has the same card twice")
    if not space.game.conventions_containing(state.board):
        raise SpotError("the board has cards outside this game's deck")
    root = build_tree(state, sizing, last_round=last_round, root_action=root_action)
    la = compile_lookahead(root, space, hands, pick_device(config.device), config.torch_dtype())
    return root, la


def solve_ranges(
    state: HandState,
    ranges: Sequence[np.ndarray],
    sizing: BetSizing | Sequence[BetSizing],
    config: SolverConfig = SolverConfig(),
    space: HandSpace | None = None,
    last_round: int | None = None,
    leaf_values: LeafValueFn | None = None,
    target_exploitability: float | None = None,
    check_every: int = 25,
    average_strategy: bool = True,
    all_hands: bool = False,
) -> Solution:
    """Solve the subgame at ``state`` where both ranges are known (a spot).

    Only the hands in a range are solved unless ``all_hands`` (training data: a hand outside both
    ranges then gets the value of playing it well, as a forest gives it, not 0).

    ``average_strategy=False`` keeps only the average values (training data): no strategy is
    returned and no exploitability target can be checked.

    With ``target_exploitability`` (chips), stop as soon as the average strategy is at
    most that exploitable (checked every ``check_every`` iterations), or at
    ``config.iterations``.
    """
    space = space or HandSpace(state.game)
    board = state.board
    checked = _check_ranges(space, board, ranges)
    hands = _hand_list(space, board, checked, all_valid=all_hands)
    if target_exploitability is not None and not average_strategy:
        raise ValueError("an exploitability target needs the average strategy")
    root, la = prepare(state, space, hands, sizing, config, last_round)
    solver = Solver(
        la, config.variant(), leaf_values=leaf_values, track_rows=first_round_rows(la), average_strategy=average_strategy
    )
    reach = torch.as_tensor(np.stack([r[hands] for r in checked]), dtype=la.dtype, device=la.device)
    if float((reach[0] * la.terminal.fold_mass(reach[1:2], torch.zeros(1, dtype=torch.long, device=la.device))[0]).sum()) <= 0:
        raise SpotError("the two ranges have no pair of hands that can be dealt together")
    history: list[dict[str, float]] = []
    if target_exploitability is None:
        result = solver.solve(reach, config.iterations)
    else:
        start = time.perf_counter()
        done = 0
        while True:
            step = min(check_every, config.iterations - done)
            result = solver.solve(reach, step)
            done += step
            expl = exploitability(solver, reach, result.average_strategy)  # the solve just computed it
            expl["iterations"] = done
            expl["seconds"] = time.perf_counter() - start
            history.append(expl)
            if expl["exploitability"] <= target_exploitability or done >= config.iterations:
                break
        result.seconds = time.perf_counter() - start
    return Solution(space, root, la, solver, result, hands, history)


@dataclass(frozen=True)
class WarmStart:
    """An estimate of the opponent's range for the first action of a round (section 3)."""

    estimate: np.ndarray
    weight: float = 0.9
    mode: Literal["conservative", "aggressive"] = "conservative"


def resolve(
    state: HandState,
    our_range: np.ndarray,
    opp_cfvs: np.ndarray,
    sizing: BetSizing | Sequence[BetSizing],
    config: SolverConfig = SolverConfig(),
    space: HandSpace | None = None,
    last_round: int | None = None,
    leaf_values: LeafValueFn | None = None,
    warm_start: WarmStart | None = None,
    deadline: float | None = None,
    opponent_action: Action | None = None,
) -> Solution:
    """Re-solve at ``state`` for the player to act, from its range and the opponent's CFVs.

    ``opp_cfvs`` are the opponent's counterfactual values (hand space) computed against
    ``our_range`` exactly as given (not renormalised): the gadget lets the opponent take
    them ("terminate") or enter the subgame ("follow") hand by hand.

    With ``opponent_action``, the opponent is to act at ``state`` and we re-solve for the
    decision after it: the tree offers that action at the root besides the abstraction's
    (:attr:`Solution.decision_row` is the decision's row), and the opponent's whole choice there is part of
    the re-solve.
    """
    space = space or HandSpace(state.game)
    if state.current_player is None:
        raise SpotError("nobody is to act in this state")
    opp = state.current_player if opponent_action is not None else 1 - state.current_player
    me = 1 - opp
    if opponent_action is not None and not state.is_legal(opponent_action):
        raise SpotError(f"the opponent's action {opponent_action} is not legal in this state")
    board = state.board
    valid = space.valid(board)
    our = np.asarray(our_range, dtype=np.float64) * valid
    if our.sum() <= 0 or not np.isfinite(our).all() or (our < 0).any():
        raise SpotError("our range is empty (or invalid) on this board")
    cfvs = np.asarray(opp_cfvs, dtype=np.float64)
    if cfvs.shape != (space.size,) or not np.isfinite(cfvs).all():
        raise SpotError(f"opponent values must be {space.size} finite numbers")
    hands = _hand_list(space, board, [our], all_valid=True)
    root, la = prepare(state, space, hands, sizing, config, last_round, root_action=opponent_action)
    # our decision is one action deeper when the re-solve starts at the opponent's
    row = 0 if opponent_action is None else la.children_of(0)[root.actions.index(opponent_action)]
    depth = 2 if opponent_action is None else 3
    solver = Solver(la, config.variant(), leaf_values=leaf_values, track_rows=first_round_rows(la, depth), reach_row=row)
    dev, dt = la.device, la.dtype
    uniform = valid[hands].astype(np.float64)
    uniform /= uniform.sum()
    prior = uniform
    estimate_t = None
    aggressive = 0.0
    if warm_start is not None:
        est = np.asarray(warm_start.estimate, dtype=np.float64)[hands] * valid[hands]
        if est.sum() > 0:
            est /= est.sum()
            if warm_start.mode == "conservative":
                prior = (1 - warm_start.weight) * uniform + warm_start.weight * est
            else:
                estimate_t = torch.as_tensor(est, dtype=dt, device=dev)
                aggressive = warm_start.weight
    gadget = Gadget(
        player=opp,
        cfvs=torch.as_tensor(cfvs[hands], dtype=dt, device=dev),
        prior=torch.as_tensor(prior, dtype=dt, device=dev),
        estimate=estimate_t,
        aggressive=aggressive,
    )
    reach = torch.zeros(2, len(hands), dtype=dt, device=dev)
    reach[me] = torch.as_tensor(our[hands], dtype=dt, device=dev)
    result = solver.solve(reach, config.iterations, gadget=gadget, deadline=deadline)
    return Solution(space, root, la, solver, result, hands, decision_row=row)
