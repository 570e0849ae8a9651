"""The rules engine: one hand of an ACPC game as an immutable :class:`HandState`.

Every rule follows the ACPC dealer (``game.c``) exactly, because the dealer is the judge
of legality in a match: who acts next, the minimum no-limit raise-to (``2 x big blind``
at the start, ``X + (X - M)`` after a raise to X over M, ``bet + big blind`` at the start
of later rounds, never lowered by a short all-in), the 64-action round cap, raises that
are impossible when the opponent is all-in, the jump to the last round when nobody can
act any more, and side pots at showdown.

Board cards are not part of the betting: when a round closes, the state reports how
many board cards are missing (:attr:`HandState.board_cards_needed`) and whoever owns
the deal (the dealer, a chance node of the solver, a ``MATCHSTATE`` line) adds them
with :meth:`HandState.with_board`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from enum import IntEnum

from native.evaluator import evaluate_one
from protocol.gamedef import Game

#: ACPC ``MAX_NUM_ACTIONS``: no round holds more actions than this.
MAX_ACTIONS_PER_ROUND = 64


class ActionKind(IntEnum):
    """The three kinds of action of the ACPC protocol (``f``, ``c``: check or call, ``r``)."""

    FOLD = 0
    CALL = 1
    RAISE = 2


_LETTERS = {ActionKind.FOLD: "f", ActionKind.CALL: "c", ActionKind.RAISE: "r"}


@dataclass(frozen=True, slots=True)
class Action:
    """A betting action. ``size`` is the raise-to amount of a no-limit raise, else 0.

    Raise-to is the total this player has put in the hand after the raise (blinds and
    earlier rounds included), exactly the number written after ``r`` on the wire.
    """

    kind: ActionKind
    size: int = 0

    def __str__(self) -> str:
        if self.kind is ActionKind.RAISE and self.size:
            return f"r{self.size}"
        return _LETTERS[self.kind]


FOLD = Action(ActionKind.FOLD)
CALL = Action(ActionKind.CALL)


def raise_to(amount: int) -> Action:
    """A no-limit raise to ``amount`` chips in total (use ``Action(RAISE)`` in limit games)."""
    return Action(ActionKind.RAISE, int(amount))


LIMIT_RAISE = Action(ActionKind.RAISE)


class IllegalActionError(ValueError):
    """An action that the rules do not allow in this state."""


class RulesError(ValueError):
    """A request that makes no sense for the state (e.g. payoffs of an unfinished hand)."""


RankFn = Callable[[Sequence[int]], int]


def _default_rank(cards: Sequence[int]) -> int:
    return evaluate_one(cards)


@dataclass(frozen=True, slots=True)
class HandState:
    """One hand in progress (or finished). Build the first one with :meth:`initial`.

    ``hole_cards[p]`` is ``()`` where player ``p``'s cards are unknown; ``board`` holds
    the board cards dealt so far, in dealing order.
    """

    game: Game
    hand_id: int
    round: int
    actions: tuple[tuple[Action, ...], ...]
    actors: tuple[tuple[int, ...], ...]
    spent: tuple[int, ...]
    max_spent: int
    min_raise_to: int
    folded: tuple[bool, ...]
    finished: bool
    hole_cards: tuple[tuple[int, ...], ...]
    board: tuple[int, ...]

    # ------------------------------------------------------------------ creation
    @classmethod
    def initial(
        cls,
        game: Game,
        hand_id: int = 0,
        hole_cards: Sequence[Sequence[int]] | None = None,
        board: Sequence[int] = (),
    ) -> HandState:
        """The state before the first action: blinds posted, round 0."""
        spent = tuple(game.blind)
        max_spent = max(spent)
        if game.is_nolimit:
            min_raise_to = 2 * max_spent if max_spent else 1
        else:
            min_raise_to = 0
        holes = tuple(tuple(h) for h in hole_cards) if hole_cards is not None else ((),) * game.num_players
        if len(holes) != game.num_players:
            raise RulesError(f"{len(holes)} hole-card sets given for {game.num_players} players")
        return cls(
            game=game,
            hand_id=hand_id,
            round=0,
            actions=((),),
            actors=((),),
            spent=spent,
            max_spent=max_spent,
            min_raise_to=min_raise_to,
            folded=(False,) * game.num_players,
            finished=False,
            hole_cards=holes,
            board=tuple(board),
        )

    @classmethod
    def at_round_start(
        cls,
        game: Game,
        round_: int,
        spent: Sequence[int],
        board: Sequence[int] = (),
        hand_id: int = 0,
    ) -> HandState:
        """A public state at the start of ``round_`` with ``spent`` chips in per player.

        For solver spots ("turn, pot 10, 95 behind"): the earlier betting is not recorded,
        only its result. Round 0 must start from the blinds (:meth:`initial`).
        """
        if not 0 < round_ < game.num_rounds:
            raise RulesError(f"round {round_} is not a later round of this game (1..{game.num_rounds - 1})")
        spent_t = tuple(int(s) for s in spent)
        if len(spent_t) != game.num_players:
            raise RulesError(f"{len(spent_t)} contributions given for {game.num_players} players")
        for p, (s, stack) in enumerate(zip(spent_t, game.stack)):
            if not 0 < s <= stack:
                raise RulesError(f"player {p} has {s} chips in; must be 1..{stack} (its stack)")
        if len(set(spent_t)) != 1:
            raise RulesError(f"contributions {spent_t} differ: a round starts with all bets called")
        max_spent = spent_t[0]
        state = cls.initial(game, hand_id, board=board)
        state = replace(
            state,
            round=round_,
            actions=((),) * (round_ + 1),
            actors=((),) * (round_ + 1),
            spent=spent_t,
            max_spent=max_spent,
            min_raise_to=max_spent + max(1, max(game.blind)) if game.is_nolimit else 0,
        )
        if len(state.board) != game.board_cards_through(round_):
            raise RulesError(f"round {round_} needs {game.board_cards_through(round_)} board cards, got {len(state.board)}")
        if all(s >= stack for s, stack in zip(spent_t, game.stack)):
            raise RulesError("both players are all-in: there is no betting left to solve")
        return state

    # ------------------------------------------------------------------ queries
    @property
    def pot(self) -> int:
        """Chips everyone has put in so far."""
        return sum(self.spent)

    @property
    def round_actions(self) -> tuple[Action, ...]:
        """The actions of the current round so far."""
        return self.actions[self.round]

    @property
    def num_actions(self) -> int:
        """Number of actions taken in the whole hand."""
        return sum(len(r) for r in self.actions)

    def _is_acting(self, p: int) -> bool:
        return not self.folded[p] and self.spent[p] < self.game.stack[p]

    def _next_player(self, after: int) -> int:
        n = self.game.num_players
        p = after
        for _ in range(n):
            p = (p + 1) % n
            if self._is_acting(p):
                return p
        raise RulesError("no player can act in an unfinished state")  # unreachable for valid states

    @property
    def current_player(self) -> int | None:
        """Position to act, or None when the hand is over."""
        if self.finished:
            return None
        if self.actors[self.round]:
            return self._next_player(self.actors[self.round][-1])
        return self._next_player(self.game.first_player[self.round] + self.game.num_players - 1)

    def num_raises(self) -> int:
        """Raises so far in the current round (the opening bet counts)."""
        return sum(1 for a in self.actions[self.round] if a.kind is ActionKind.RAISE)

    def num_acting_players(self) -> int:
        """Players still able to act: not folded, not all-in."""
        return sum(1 for p in range(self.game.num_players) if self._is_acting(p))

    def _num_called(self) -> int:
        count = 0
        for action, p in zip(reversed(self.actions[self.round]), reversed(self.actors[self.round])):
            if action.kind is ActionKind.RAISE:
                return count + (1 if self.spent[p] < self.game.stack[p] else 0)
            if action.kind is ActionKind.CALL and self.spent[p] < self.game.stack[p]:
                count += 1
        return count

    def amount_to_call(self) -> int:
        """Chips the player to act must add to call (capped by the stack)."""
        p = self._require_player()
        return min(self.max_spent, self.game.stack[p]) - self.spent[p]

    def _require_player(self) -> int:
        p = self.current_player
        if p is None:
            raise RulesError("the hand is over; nobody is to act")
        return p

    def raise_bounds(self) -> tuple[int, int] | None:
        """``(min, max)`` legal raise-to for the player to act, or None if raising is not allowed.

        In limit games both bounds are the single raise-to amount of a raise.
        """
        p = self._require_player()
        game = self.game
        if self.num_raises() >= game.max_raises[self.round]:
            return None
        if len(self.actions[self.round]) + game.num_players > MAX_ACTIONS_PER_ROUND:
            return None
        if self.num_acting_players() <= 1:
            return None
        stack = game.stack[p]
        if game.is_limit:
            to = min(self.max_spent + game.raise_size[self.round], stack)
            return (to, to)
        low = self.min_raise_to
        if low > stack:
            if self.max_spent >= stack:
                return None
            low = stack
        return (low, stack)

    def can_fold(self) -> bool:
        """Whether folding is legal: the player to act faces a bet (as in the ACPC dealer)."""
        p = self._require_player()
        return self.spent[p] != self.max_spent and self.spent[p] != self.game.stack[p]

    def legal_kinds(self) -> tuple[ActionKind, ...]:
        """The kinds of action legal for the player to act (a call is always legal)."""
        kinds = []
        if self.can_fold():
            kinds.append(ActionKind.FOLD)
        kinds.append(ActionKind.CALL)
        if self.raise_bounds() is not None:
            kinds.append(ActionKind.RAISE)
        return tuple(kinds)

    def is_legal(self, action: Action) -> bool:
        """Whether the dealer would accept ``action`` unchanged."""
        if self.finished:
            return False
        if action.kind is ActionKind.FOLD:
            return action.size == 0 and self.can_fold()
        if action.kind is ActionKind.CALL:
            return action.size == 0
        bounds = self.raise_bounds()
        if bounds is None:
            return False
        if self.game.is_limit:
            return action.size in (0, bounds[0])
        return bounds[0] <= action.size <= bounds[1]

    # ------------------------------------------------------------------ transitions
    def apply(self, action: Action) -> HandState:
        """The state after ``action`` by the player to act; IllegalActionError if not allowed."""
        if self.finished:
            raise IllegalActionError(f"hand {self.hand_id} is over; no action can be taken")
        if not self.is_legal(action):
            raise IllegalActionError(self._illegal_reason(action))
        game = self.game
        p = self.current_player
        assert p is not None
        spent = list(self.spent)
        folded = list(self.folded)
        max_spent = self.max_spent
        min_raise_to = self.min_raise_to
        if action.kind is ActionKind.FOLD:
            folded[p] = True
        elif action.kind is ActionKind.CALL:
            spent[p] = min(max_spent, game.stack[p])
        else:
            if game.is_nolimit:
                min_raise_to = max(min_raise_to, 2 * action.size - max_spent)
                max_spent = action.size
            else:
                max_spent = min(max_spent + game.raise_size[self.round], game.stack[p])
                action = LIMIT_RAISE
            spent[p] = max_spent
        r = self.round
        actions = self.actions[:r] + (self.actions[r] + (action,),)
        actors = self.actors[:r] + (self.actors[r] + (p,),)
        nxt = replace(
            self,
            actions=actions,
            actors=actors,
            spent=tuple(spent),
            max_spent=max_spent,
            min_raise_to=min_raise_to,
            folded=tuple(folded),
        )
        return nxt._close_round_if_done()

    def _close_round_if_done(self) -> HandState:
        game = self.game
        if sum(self.folded) + 1 >= game.num_players:
            return replace(self, finished=True)
        acting = self.num_acting_players()
        if self._num_called() < acting:
            return self
        if acting > 1:
            if self.round + 1 < game.num_rounds:
                new_round = self.round + 1
                return replace(
                    self,
                    round=new_round,
                    actions=self.actions + ((),),
                    actors=self.actors + ((),),
                    min_raise_to=self.max_spent + max(1, max(game.blind)),
                )
            return replace(self, finished=True)
        # Nobody (or only one player) can act any more: straight to the showdown.
        last = game.num_rounds - 1
        extra = last - self.round
        return replace(
            self,
            finished=True,
            round=last,
            actions=self.actions + ((),) * extra,
            actors=self.actors + ((),) * extra,
        )

    def _illegal_reason(self, action: Action) -> str:
        p = self.current_player
        where = f"hand {self.hand_id}, betting '{self.betting_string()}', player {p}"
        if action.kind is ActionKind.FOLD:
            return f"{where}: fold is not allowed with nothing to call"
        if action.kind is ActionKind.RAISE:
            bounds = self.raise_bounds()
            if bounds is None:
                return f"{where}: no raise is allowed here"
            return f"{where}: raise to {action.size} is outside the legal range {bounds[0]}..{bounds[1]}"
        return f"{where}: malformed action {action!r}"

    @property
    def board_cards_needed(self) -> int:
        """Board cards that the current round shows but this state does not hold yet."""
        return self.game.board_cards_through(self.round) - len(self.board)

    def with_board(self, board: Iterable[int]) -> HandState:
        """The same state with ``board`` as the board cards (all rounds so far, in order)."""
        cards = tuple(board)
        if len(cards) > self.game.board_cards_through(self.round):
            raise RulesError(
                f"{len(cards)} board cards given, round {self.round} shows only {self.game.board_cards_through(self.round)}"
            )
        return replace(self, board=cards)

    def with_hole_cards(self, player: int, cards: Iterable[int]) -> HandState:
        """This state with ``player``'s hole cards set (from a dealer's state, or for a showdown)."""
        holes = list(self.hole_cards)
        holes[player] = tuple(cards)
        return replace(self, hole_cards=tuple(holes))

    # ------------------------------------------------------------------ outcome
    @property
    def is_showdown(self) -> bool:
        """A finished hand that more than one player saw to the end."""
        return self.finished and sum(self.folded) + 1 < self.game.num_players

    def payoffs(self, rank: RankFn | None = None) -> tuple[float, ...]:
        """Chips won (+) or lost (-) by each position in a finished hand (ACPC ``valueOfState``).

        Showdowns need the hole cards of every player still in and the full board;
        ``rank`` maps a player's cards (hole + board) to a comparable hand value.
        """
        if not self.finished:
            raise RulesError(f"hand {self.hand_id} is not finished")
        n = self.game.num_players
        if not self.is_showdown:
            total = self.pot
            return tuple(float(total - self.spent[p]) if not self.folded[p] else float(-self.spent[p]) for p in range(n))
        rank = rank or _default_rank
        if len(self.board) != self.game.board_cards_through(self.round):
            raise RulesError(f"showdown of hand {self.hand_id} needs the full board")
        ranks = []
        for p in range(n):
            if self.folded[p]:
                ranks.append(-1)
                continue
            if len(self.hole_cards[p]) != self.game.num_hole_cards:
                raise RulesError(f"showdown of hand {self.hand_id} needs the hole cards of position {p}")
            ranks.append(int(rank(self.hole_cards[p] + self.board)))
        # a folded player loses what it put in (it may have put in nothing: a 0 blind); the side pots
        # settle the others, the folded players' chips included (as ACPC's valueOfState)
        return tuple(
            float(-self.spent[p]) if self.folded[p] or self.spent[p] == 0 else _showdown_value(self.spent, ranks, p)
            for p in range(n)
        )

    # ------------------------------------------------------------------ formatting
    def betting_string(self) -> str:
        """ACPC betting string: actions per round separated by ``/`` up to the current round."""
        return "/".join("".join(str(a) for a in round_actions) for round_actions in self.actions)


def _showdown_value(spent_all: Sequence[int], rank_all: Sequence[int], player: int) -> float:
    """Side-pot settlement of ACPC's ``valueOfState`` for one player still in the hand."""
    spent = [s for s in spent_all if s > 0]
    ranks = [r for s, r in zip(spent_all, rank_all) if s > 0]
    idx = sum(1 for s in spent_all[:player] if s > 0)
    value = 0.0
    while True:
        size = min(spent)
        win_rank = max(ranks)
        winners = sum(1 for r in ranks if r == win_rank)
        if ranks[idx] == win_rank:
            value += size * (len(spent) - winners) / winners
        else:
            value -= size
        keep = [i for i, s in enumerate(spent) if s - size > 0]
        if idx not in keep:
            return value
        idx = keep.index(idx)
        spent = [spent[i] - size for i in keep]
        ranks = [ranks[i] for i in keep]
