"""Bots that expose their whole strategy: for any state they may face, the probability of
each action for every hand they might hold. Local best response (LBR) and AIVAT need this;
the DeepStack bot computes it anyway (a re-solve gives the strategy of every hand).

A provider is driven through one hand: ``start_hand``, then ``strategy`` (ask, without
committing) and ``commit`` (the action actually taken) on its turns, ``observe`` on the
other events.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import replace

import numpy as np

from agent.blueprint.mccfr import Blueprint
from agent.blueprint.policy import BlueprintPolicy, HandPath
from agent.bots.baselines import random_actions
from agent.bots.blueprint import BlueprintBot, blueprint_file
from agent.bots.config import load_config
from agent.bots.settings import check_models, hunl_settings, is_hunl, leduc_settings
from agent.resolving.continual import ContinualResolver
from agent.solver.handspace import HandSpace
from agent.solver.resolve import Solution, SolverConfig, solve_ranges
from agent.solver.tree import FCPA
from protocol.gamedef import load_game
from protocol.state import CALL, Action, HandState


def _where(state: HandState) -> tuple[str, tuple[int, ...]]:
    """What names a decision within a hand: the betting so far and the board."""
    return state.betting_string(), tuple(state.board)


class StrategyProvider(ABC):
    """A bot whose whole strategy at a decision can be asked for (every hand's probabilities, not
    one sampled action): what exact evaluation, LBR and AIVAT need of the bot they measure."""

    space: HandSpace

    def start_hand(self, position: int) -> None:
        """A new hand, this provider in ``position``."""
        self.position = position

    @abstractmethod
    def strategy(self, state: HandState) -> tuple[list[Action], np.ndarray]:
        """Actions and ``[actions, hands]`` probabilities at ``state`` (this provider to act)."""

    def commit(self, state: HandState, action: Action) -> None:
        """The provider took ``action`` at ``state``."""

    def observe(self, state: HandState) -> None:
        """Any other state of the hand (opponent actions, new cards)."""


class CallProvider(StrategyProvider):
    """The ``call`` baseline: checks or calls with every hand."""

    def __init__(self, space: HandSpace) -> None:
        self.space = space

    def strategy(self, state: HandState) -> tuple[list[Action], np.ndarray]:
        return [CALL], np.ones((1, self.space.size))


class RandomProvider(StrategyProvider):
    """The ``random`` baseline's exact distribution: uniform over :func:`random_actions`."""

    def __init__(self, space: HandSpace) -> None:
        self.space = space

    def strategy(self, state: HandState) -> tuple[list[Action], np.ndarray]:
        actions = random_actions(state)
        return actions, np.full((len(actions), self.space.size), 1.0 / len(actions))


class OutsideSolvedTree(ValueError):
    """A state a full-game solve has no strategy for: a bet size off the tree it was solved on
    (fold, call, pot, all-in), made by an opponent or an LBR setting with other sizes."""


class SolutionProvider(StrategyProvider):
    """A fixed strategy from a full-game solve (e.g. an equilibrium of Leduc)."""

    def __init__(self, solution: Solution) -> None:
        self.solution = solution
        self.space = solution.space
        la = solution.lookahead
        self._rows = {la.row_key(int(r)): m for m, r in enumerate(la.dec_rows)}
        self._strategy = solution.result.average_strategy

    def strategy(self, state: HandState) -> tuple[list[Action], np.ndarray]:
        la = self.solution.lookahead
        key = _where(state)
        if key not in self._rows:
            raise OutsideSolvedTree(
                f"the equilibrium was solved on the fold/call/pot/all-in tree; the state {key[0]!r} (betting) "
                "is outside it: play it against opponents and LBR settings that bet only those sizes"
            )
        m = self._rows[key]
        node = la.nodes[int(la.dec_rows[m])]
        return list(node.actions), self.solution.to_space(self._strategy[m, : len(node.actions)])


class ResolverProvider(StrategyProvider):
    """The DeepStack agent: a re-solve at every decision (peeks never change its memory)."""

    def __init__(self, resolver: ContinualResolver) -> None:
        self.resolver = resolver
        self.space = resolver.space
        self._pending = None

    def start_hand(self, position: int) -> None:
        super().start_hand(position)
        self.resolver.start_hand(position)
        self._pending = None

    def strategy(self, state: HandState) -> tuple[list[Action], np.ndarray]:
        assert self.resolver.memory is not None
        if self._pending is not None and self._pending[:2] == _where(state):
            # the state of the last peek, asked again (LBR made the bet it asked about): a re-solve
            # is a function of the memory and the state, and neither has changed since
            return self._pending[2].actions, self._pending[2].strategy
        # new cards are real events: catch up before peeking; the opponent actions in ``state``
        # may be hypothetical (an LBR bet it is only asking about), so they reach the copy only
        self.resolver.observe_cards(state)
        saved = self.resolver.memory.copy()
        decision = self.resolver.decide(state)
        self.resolver.memory = saved
        self._pending = (*_where(state), decision)
        return decision.actions, decision.strategy

    def commit(self, state: HandState, action: Action) -> None:
        if self._pending is None or self._pending[:2] != _where(state):
            self.strategy(state)
        assert self._pending is not None
        self.resolver.observe(state)  # the opponent's actions in ``state`` are real now
        self.resolver.act(self._pending[2], action)
        self._pending = None

    def observe(self, state: HandState) -> None:
        self._pending = None
        self.resolver.observe(state)


class BlueprintProvider(StrategyProvider):
    """The blueprint bot: its post-processed table strategy for every hand; the hand's way through the
    tree (translated opponent bets) changes only on real actions, never on LBR's hypothetical ones."""

    def __init__(self, policy: BlueprintPolicy, space: HandSpace, seed: int = 0) -> None:
        self.policy = policy
        self.space = space
        self.rng = np.random.default_rng(seed)
        self.path = HandPath()
        #: the last peek: its state, the path it translated onto, the actions and the child each plays
        self._pending: tuple[tuple[str, tuple[int, ...]], HandPath, list[Action], list[int]] | None = None

    def start_hand(self, position: int) -> None:
        super().start_hand(position)
        self.path = HandPath()
        self._pending = None

    def strategy(self, state: HandState) -> tuple[list[Action], np.ndarray]:
        path = HandPath(list(self.path.children))
        buckets = self.policy.blueprint.abstraction.buckets_all(state.round, tuple(state.board))
        found = self.policy.strategy_all(state, buckets, path, self.rng)
        if found is None:  # off the tree: the bot checks or calls
            actions, children, probs = [CALL], [-1], np.where(buckets >= 0, 1.0, 0.0)[None, :]
        else:
            actions, children, probs = found
        self._pending = (_where(state), path, actions, children)
        return actions, probs

    def commit(self, state: HandState, action: Action) -> None:
        """The action played at the state last peeked: its path (the same translations) becomes the hand's."""
        if self._pending is None or self._pending[0] != _where(state):
            self.strategy(state)
        assert self._pending is not None
        _, path, actions, children = self._pending
        self.path = path
        if action in actions and children[actions.index(action)] >= 0:
            self.path.children.append(children[actions.index(action)])
        self._pending = None


class ProviderFactory:
    """A picklable recipe for a strategy provider (LBR runs it in worker processes)."""

    def __init__(self, game_name: str, bot: str, config_path: str | None = None, iterations: int | None = None) -> None:
        self.game_name = game_name
        self.bot = bot
        self.config_path = config_path
        self.iterations = iterations

    def __call__(self) -> StrategyProvider:
        """Build the provider (loading the game, config, blueprint or models here: LBR calls it once in
        each worker process); a ValueError names a bot it cannot build."""
        game = load_game(self.game_name)
        space = HandSpace(game)
        if self.bot == "call":
            return CallProvider(space)
        if self.bot == "random":
            return RandomProvider(space)
        if self.bot == "equilibrium":
            if game.deck_size > 6:
                raise ValueError("an exact equilibrium is only available for Leduc games")
            sol = solve_ranges(
                HandState.initial(game),
                [space.uniform(), space.uniform()],
                FCPA,
                SolverConfig(iterations=self.iterations or 2000, device="cpu", dtype="float64"),
            )
            return SolutionProvider(sol)
        if self.bot == "blueprint":
            config = load_config(self.config_path)
            BlueprintBot.check(game, config)
            section = config.bot.blueprint
            blueprint = Blueprint.open(blueprint_file(game, config), game)
            return BlueprintProvider(BlueprintPolicy(blueprint, section.postprocess, section.threshold), space, config.seed)
        if self.bot == "deepstack":
            config = load_config(self.config_path)
            check_models(game, config)  # a wrong model path is named by its config key, before any solve
            if game.deck_size == 6:
                cfg = config.bot.leduc_limit if game.is_limit else config.bot.leduc
                if self.iterations:
                    cfg = replace(cfg, iterations=self.iterations)
                return ResolverProvider(ContinualResolver(space, leduc_settings(game, space, cfg, "cpu")))

            if is_hunl(game):
                hc = config.bot.hunl
                if self.iterations:
                    hc = replace(
                        hc,
                        **{s: replace(getattr(hc, s), iterations=self.iterations) for s in ("preflop", "flop", "turn", "river")},
                    )
                return ResolverProvider(ContinualResolver(space, hunl_settings(game, hc, "cpu")))
            raise ValueError(f"no DeepStack settings for {self.game_name}")
        raise ValueError(f"unknown bot {self.bot!r} for LBR: call, random, equilibrium (Leduc) or deepstack")
