"""Public betting trees (no cards) built from a real state of the rules engine.

A tree starts at any public state (real pot, real bets, real board) and follows an
action abstraction: fold, call, bets as fractions of the pot (converted to legal
raise-to amounts: clamped to the legal range, de-duplicated, all-in added) given per
depth as in DeepStack's lookahead table. Rounds end in CHANCE nodes (the next cards;
the subtree below is the same for every card, so it is stored once and replicated per
card by the lookahead), or in LEAF nodes where the tree is cut at the depth limit and a
value function takes over. Limit games use their single raise size.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum

from protocol.state import CALL, FOLD, LIMIT_RAISE, Action, HandState, raise_to

#: the most nodes a tree may have: about 1 GB of Python objects (a hold'em tree from the first
#: action with two bet sizes and four raises a round has 282k); a lookahead of it would not fit
#: anyway, and a bet abstraction past it (many sizes, many raises) failed only when memory ran out
MAX_TREE_NODES = 1_000_000


class TreeTooLarge(ValueError):
    """The bet abstraction makes a tree of more than its allowed nodes."""


class NodeKind(Enum):
    """What a public tree node is: a player's decision, a fold or a showdown (terminal), a chance node
    (the next round's cards), or a depth-limit leaf valued by a leaf value function."""

    DECISION = "decision"
    FOLD = "fold"
    SHOWDOWN = "showdown"
    CHANCE = "chance"
    LEAF = "leaf"


@dataclass(frozen=True)
class BetSizing:
    """Which bets the lookahead considers, as pot fractions.

    ``bets[d]`` applies to a decision ``d`` actions below the root (the last entry repeats
    deeper); ``raises[d]`` likewise when facing a bet (None: same as ``bets``). A bet of
    fraction f raises to ``current bet + f * (pot after calling)``.
    """

    bets: tuple[tuple[float, ...], ...]
    raises: tuple[tuple[float, ...], ...] | None = None
    all_in: bool = True
    #: at most this many bets/raises per round inside the lookahead (None: the game's rules)
    max_raises: int | None = None
    #: past ``max_raises``, all-in stays (a blueprint's tree: an opponent's further raise then has a
    #: place to go); off, no raise at all (the re-solves' lookaheads)
    all_in_past_cap: bool = False

    def fractions(self, depth: int, facing_bet: bool) -> tuple[float, ...]:
        """The pot fractions at a decision ``depth`` actions below the root (``raises`` when facing a bet, if
        given); the last entry serves every deeper decision."""
        table = self.raises if (facing_bet and self.raises is not None) else self.bets
        return table[min(depth, len(table) - 1)]

    @classmethod
    def parse(cls, spec: str, all_in: bool = True, max_raises: int | None = None, all_in_past_cap: bool = False) -> BetSizing:
        """``"0.5,1;1"`` -> first action 0.5P and P, later actions P (``;`` separates depths)."""
        try:
            bets = tuple(tuple(float(x) for x in part.split(",") if x.strip()) for part in spec.split(";"))
        except ValueError:
            raise ValueError(f"bet sizes {spec!r}: expected pot fractions like '0.5,1;1'") from None
        if not bets or any(f <= 0 for part in bets for f in part):
            raise ValueError(f"bet sizes {spec!r}: fractions must be positive")
        return cls(bets=bets, all_in=all_in, max_raises=max_raises, all_in_past_cap=all_in_past_cap)


#: DeepStack's sparse lookahead (supplement, Table 4), per round.
DEEPSTACK_SIZING: dict[str, BetSizing] = {
    "preflop": BetSizing(bets=((0.5, 1.0), (0.5, 1.0, 2.0), (1.0,))),
    "flop": BetSizing(bets=((0.5, 1.0), (1.0,))),
    "turn": BetSizing(bets=((0.5, 1.0), (1.0,))),
    "river": BetSizing(bets=((0.5, 1.0, 2.0), (0.5, 1.0, 2.0), (1.0,))),
}
#: fold, call, pot, all-in everywhere (the data-generation and Leduc trees)
FCPA = BetSizing(bets=((1.0,),))


@dataclass(eq=False)
class Node:
    """One public node. ``spent`` is per position; ``player`` acts at DECISION nodes."""

    kind: NodeKind
    state: HandState
    depth: int
    actions: list[Action] = field(default_factory=list)
    children: list[Node] = field(default_factory=list)
    #: for CHANCE/LEAF: the round whose cards come next
    next_round: int | None = None

    @property
    def player(self) -> int | None:
        """The position to act at a DECISION node; None at any other kind."""
        return self.state.current_player if self.kind is NodeKind.DECISION else None

    @property
    def spent(self) -> tuple[int, ...]:
        """Chips each position has put in so far (``state.spent``)."""
        return self.state.spent

    @property
    def pot(self) -> int:
        """Chips in the pot (``state.pot``)."""
        return self.state.pot

    def walk(self) -> Iterator[Node]:
        """This node and every node below it, depth first (parents before their children)."""
        yield self
        for child in self.children:
            yield from child.walk()


def bet_actions(state: HandState, sizing: BetSizing, depth: int) -> list[Action]:
    """Legal raise actions of the abstraction at ``state`` (sorted, de-duplicated, all-in added)."""
    bounds = state.raise_bounds()
    if bounds is None:
        return []
    low, high = bounds
    if sizing.max_raises is not None and state.num_raises() >= sizing.max_raises:
        capped_all_in = sizing.all_in and sizing.all_in_past_cap and not state.game.is_limit
        return [raise_to(high)] if capped_all_in else []
    if state.game.is_limit:
        return [LIMIT_RAISE]
    p = state.current_player
    assert p is not None
    to_call = min(state.max_spent, state.game.stack[p]) - state.spent[p]
    facing = to_call > 0
    amounts = set()
    for f in sizing.fractions(depth, facing):
        target = state.max_spent + int(round(f * (state.pot + to_call)))
        amounts.add(min(max(target, low), high))
    if sizing.all_in:
        amounts.add(high)
    return [raise_to(a) for a in sorted(amounts)]


def build_tree(
    root: HandState,
    sizing: BetSizing | Sequence[BetSizing],
    last_round: int | None = None,
    root_action: Action | None = None,
    max_nodes: int = MAX_TREE_NODES,
) -> Node:
    """The public tree below ``root``.

    ``sizing`` is one BetSizing for every round, or one per round of the game.
    ``last_round`` is the depth limit: the tree stops at the end of that round
    (LEAF nodes); None solves to the end of the game. ``root_action`` is a legal action
    the root offers besides the abstraction's (an opponent's real bet, when a re-solve
    starts before it); the decision below it gets the bet sizes of a root. More than
    ``max_nodes`` nodes: :class:`TreeTooLarge`, found while building (not when memory runs out).
    """
    if root.finished:
        raise ValueError("the root state is terminal: there is nothing to solve")
    if root.board_cards_needed:
        raise ValueError(f"the root state misses {root.board_cards_needed} board cards")
    game = root.game
    per_round = list(sizing) if isinstance(sizing, (list, tuple)) else [sizing] * game.num_rounds
    if len(per_round) != game.num_rounds:
        raise ValueError(f"{len(per_round)} bet sizings given for {game.num_rounds} rounds")
    limit = game.num_rounds - 1 if last_round is None else last_round
    if not root.round <= limit < game.num_rounds:
        raise ValueError(f"depth limit round {limit} is outside {root.round}..{game.num_rounds - 1}")
    if root_action is not None and not root.is_legal(root_action):
        raise ValueError(f"root action {root_action} is not legal at the root")
    budget = _Budget(max_nodes)
    return _build(root, per_round, limit, budget, depth=0, decisions=0, extra=root_action)


class _Budget:
    """The nodes a tree being built may still have."""

    def __init__(self, nodes: int) -> None:
        self.limit = self.left = nodes

    def take(self) -> None:
        if self.left <= 0:
            raise TreeTooLarge(
                f"the bet abstraction makes a tree of more than {self.limit:,} nodes: "
                "use fewer bet sizes or fewer bets and raises per round"
            )
        self.left -= 1


def _build(
    state: HandState,
    sizing: list[BetSizing],
    limit: int,
    budget: _Budget,
    depth: int,
    decisions: int,
    extra: Action | None = None,
) -> Node:
    budget.take()
    if state.finished and not state.is_showdown:
        return Node(NodeKind.FOLD, state, depth)
    if state.board_cards_needed:
        # A round closed (or everybody is all-in): cards come next.
        next_round = _next_dealt_round(state)
        if next_round > limit:
            return Node(NodeKind.LEAF, state, depth, next_round=next_round)
        below = _dealt(state, next_round)
        child = _build(below, sizing, limit, budget, depth + 1, decisions)
        return Node(NodeKind.CHANCE, state, depth, children=[child], next_round=next_round)
    if state.finished:
        return Node(NodeKind.SHOWDOWN, state, depth)
    node = Node(NodeKind.DECISION, state, depth)
    actions: list[Action] = []
    if state.can_fold():
        actions.append(FOLD)
    actions.append(CALL)
    bets = bet_actions(state, sizing[state.round], decisions)
    if extra is not None and extra not in actions and extra not in bets:
        bets = sorted([*bets, extra], key=lambda a: a.size)
    actions.extend(bets)
    for action in actions:
        node.actions.append(action)
        # below the root action the decision re-solved for keeps a root's bet sizes
        below = decisions if (extra is not None and action == extra) else decisions + 1
        node.children.append(_build(state.apply(action), sizing, limit, budget, depth + 1, below))
    return node


def _next_dealt_round(state: HandState) -> int:
    """The first round whose board cards the state does not hold yet."""
    have = len(state.board)
    for r in range(state.game.num_rounds):
        if state.game.board_cards_through(r) > have:
            return r
    raise AssertionError("no board cards missing")


def _dealt(state: HandState, round_: int) -> HandState:
    """``state`` with placeholder cards for ``round_`` (the tree is card-free below the root)."""
    missing = state.game.board_cards_through(round_) - len(state.board)
    return state.with_board(state.board + (-1,) * missing)


def count_nodes(root: Node) -> dict[NodeKind, int]:
    """How many nodes of each kind the tree below ``root`` (itself included) has."""
    counts = {k: 0 for k in NodeKind}
    for node in root.walk():
        counts[node.kind] += 1
    return counts
