"""The DeepStack bot: continual re-solving behind the protocol client.

It watches every state of the hand (new hands, new board cards), re-solves on its turn,
samples an action for the cards it holds from the re-solve strategy, and logs one JSON
line per decision. Everything that can fail for reasons outside a decision (a missing or
corrupt model, a bad config) fails when the bot is built, before the match starts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from agent.bots.config import Config, HoldemBotConfig, LeducBotConfig
from agent.bots.heap import release_free_memory
from agent.bots.settings import check_models, hunl_settings, is_hunl, is_leduc, leduc_settings, section_key
from agent.bots.start_cache import (
    StartCacheError,
    check_cache_path,
    is_shipped,
    load_start_cache,
    save_start_cache,
    start_key,
)
from agent.bots.timing import TimeBudget
from agent.resolving.continual import ContinualResolver
from agent.resolving.decision import Decision, sample_action
from agent.solver.handspace import HandSpace
from agent.solver.resolve import pick_device
from native.cards import cards_to_str
from protocol.bot import BaseBot
from protocol.gamedef import DeckConvention, Game
from protocol.logs import get_logger
from protocol.matchstate import MatchState
from protocol.state import CALL, FOLD, Action, ActionKind, HandState

log = get_logger("bot")


@dataclass
class _Seat:
    convention: DeckConvention
    space: HandSpace
    resolver: ContinualResolver


class DeepStackBot(BaseBot):
    """Continual re-solving: Leduc (either deck convention) and heads-up no-limit hold'em."""

    name = "deepstack"

    def __init__(self, game: Game, config: Config, seed: int | None = None) -> None:
        if game.num_players != 2:
            raise ValueError(f"the DeepStack bot plays two-player games, not {game.num_players} players")
        self.game = game
        self.config = config
        self.rng = np.random.default_rng(seed)
        self.device = (
            "cpu"
            if config.device == "auto" and not torch.cuda.is_available()
            else ("cuda" if config.device == "auto" else config.device)
        )
        self.timing = self._new_budget()
        self.bot_config: LeducBotConfig | HoldemBotConfig = getattr(config.bot, section_key(game))
        if is_leduc(game):
            self.device = "cpu"  # tiny tensors: the CPU beats a GPU here
            if config.device not in ("auto", "cpu"):  # asked for by name (--device cuda): say why it is not used
                log.warning("device_not_used", device=config.device, reason="Leduc's re-solves run on the CPU (tiny tensors)")
        if self.device == "cpu" and config.threads:
            torch.set_num_threads(config.threads)  # process-wide: the bot's re-solves are the process's work
        check_models(game, config)  # every model it will load, named by its config key
        self._seats: dict[DeckConvention, _Seat] = {}
        self._seat: _Seat | None = None
        self._hand = -1
        self._degraded = False
        self._starved = False
        self._turn_started: float | None = None
        # build (and load the models) now: a bad model must stop us before the match; the
        # first state of a hand (the same every hand) for both positions and each deck a
        # reduced-deck dealer may use comes from the start cache or is solved now, so that no
        # decision of the match pays for it
        conventions: list[DeckConvention] = ["high"] if game.deck("high") == game.deck("low") else ["high", "low"]
        started = time.monotonic()
        for convention in conventions:
            self._seat_for(convention)
        log.info("startup", phase="models_loaded", seconds=round(time.monotonic() - started, 2))
        path = self.bot_config.start_cache
        self._cache_path = Path(path) if path else None
        self._cache_key = start_key(game, self.bot_config) if path else ""
        saved = load_start_cache(self._cache_path, self._cache_key) if self._cache_path else None
        if saved is not None:
            try:
                for convention, data in saved.items():
                    if convention in self._seats:
                        self._seats[convention].resolver.import_preflop(data)
            except Exception as exc:  # noqa: BLE001 - a cache of the right key but the wrong shape: solve instead
                log.warning("start_cache_unreadable", path=str(self._cache_path), error=f"{type(exc).__name__}: {exc}")
                self._seats.clear()  # nothing half-imported is kept
                for convention in conventions:
                    self._seat_for(convention)
                saved = None
            else:
                log.info("startup", phase="start_cache_loaded", path=str(self._cache_path))
        solving = time.monotonic()
        for convention in conventions:
            self._seat_for(convention).resolver.prepare()
        if saved is None:
            log.info("startup", phase="first_states_solved", seconds=round(time.monotonic() - solving, 2))
            self._save_start_cache()  # a file of our own: the next start is instant even if this match breaks
        #: seconds the dealer's clock may already have run for us (a bot built after connecting)
        self._unpaid_s = 0.0

    @staticmethod
    def check(game: Game, config: Config) -> None:
        """What stops the bot from playing ``game`` with ``config`` (ValueError, ModelError),
        found without building it: the game, and every model file it would load."""
        if game.num_players != 2 or not (is_leduc(game) or is_hunl(game)):
            raise ValueError(f"the DeepStack bot plays Leduc and heads-up no-limit hold'em, not {game.name}")
        if is_hunl(game):  # Leduc always runs on the CPU
            pick_device(config.device)
        check_models(game, config)
        cache_path = getattr(config.bot, section_key(game)).start_cache
        if cache_path:  # before the first states are solved for a file that can never be written
            check_cache_path(Path(cache_path))

    def charge_startup(self, seconds: float) -> None:
        """The bot was built while the dealer's clock may have been running for it: its first
        hand pays for ``seconds``."""
        self._unpaid_s += seconds

    def prepare_first_round(self, limit: int) -> int:
        """Re-solve up to ``limit`` first-round decisions of the abstraction's lines per deck
        convention into the decision cache (``deepstack prepare --first-round``); returns how many."""
        return sum(seat.resolver.prepare_first_round(limit) for seat in self._seats.values())

    # ------------------------------------------------------------------ start cache on disk
    def export_start(self) -> dict:
        """The first states' re-solves (and cached first-round decisions) of every deck convention."""
        return {c: seat.resolver.export_preflop() for c, seat in self._seats.items()}

    def _save_start_cache(self) -> None:
        path = self._cache_path
        if path is None or is_shipped(path):  # the shipped cache is written by `deepstack prepare` only
            return
        try:
            save_start_cache(path, self._cache_key, self.export_start())
        except (OSError, StartCacheError) as exc:
            log.warning("start_cache_not_written", path=str(path), error=str(exc))

    def end_match(self) -> None:
        self._save_start_cache()

    def _seat_for(self, convention: DeckConvention) -> _Seat:
        if convention not in self._seats:
            space = HandSpace(self.game, convention)
            if isinstance(self.bot_config, LeducBotConfig):
                settings = leduc_settings(self.game, space, self.bot_config, self.device)
            else:
                settings = hunl_settings(self.game, self.bot_config, self.device)
            self._seats[convention] = _Seat(convention, space, ContinualResolver(space, settings))
        return self._seats[convention]

    def _new_budget(self) -> TimeBudget:
        tc = self.config.bot.time
        return TimeBudget(
            tc.t_per_hand_ms / 1000,
            tc.t_response_ms / 1000,
            tc.t_hand_ms / 1000,
            tc.safety,
            rounds=self.game.num_rounds,
            latency_s=tc.latency_ms / 1000,
        )

    def start_match(self, game: Game) -> None:
        """A new match: nothing of the last one's hands carries over (its hand numbers start again,
        and its hand 0 must not be taken for the last match's hand 0), and the dealer's
        allowance starts afresh."""
        if game != self.game:
            raise ValueError("the bot was built for another game")
        self._hand = -1
        self._seat = None
        self._degraded = self._starved = False
        self._turn_started = None
        for seat in self._seats.values():
            seat.resolver.memory = None
        self.timing = self._new_budget()

    def observe(self, view: MatchState) -> None:
        # the dealer's clock runs from the line that puts us to act, so the observation before
        # the decision (a chance update can take a second) is charged to the decision too
        self._turn_started = time.monotonic() if view.is_our_turn else None
        if view.hand_id != self._hand:
            self._hand = view.hand_id
            self._degraded = False
            self._starved = False
            self.timing.start_hand()
            if self._unpaid_s:
                self.timing.spent(self._unpaid_s)
                self._unpaid_s = 0.0
            try:
                cards = list(view.our_cards) + list(view.state.board)
                conventions = self.game.conventions_containing(cards)
                if not conventions:
                    raise ValueError(f"cards {cards} belong to no deck convention of {self.game.name}")
                self._seat = self._seat_for(conventions[0])
                self._seat.resolver.start_hand(view.position)
            except Exception:  # out of memory, say: never play this hand on the last hand's memory
                self._degraded = True
                raise  # the client logs it
        if self._seat is None:  # no hand was ever set up: act() checks or folds (degraded)
            return
        if not self._degraded and not self._starved:  # a starved hand is checked or folded to its end
            began = time.monotonic()
            try:
                self._seat.resolver.observe(view.state)
            except Exception:
                log.exception("observe_failed", hand=view.hand_id, betting=view.state.betting_string())
                self._degraded = True
            if not view.is_our_turn:  # a new street's catch-up on the opponent's line: a fast opponent's
                # answer puts us to act while it runs, on the dealer's clock (charged like a decision)
                self.timing.spent(time.monotonic() - began)
        if view.state.finished:  # keep the resident memory flat
            # the dealer may already have sent the next hand's first line, and when we act first
            # our clock runs: the next hand pays for the trim, as the first one pays for start-up
            trim = time.monotonic()
            release_free_memory()
            self._unpaid_s += time.monotonic() - trim

    def act(self, view: MatchState) -> Action:
        if self._seat is None or view.hand_id != self._hand:
            self.observe(view)
        if self._seat is None:  # the hand could not be set up (observe raised; the client logged it)
            self.timing.spent(0.0, reply=True)  # no thinking, but the round trip
            return check_or_fold(view.state)
        start = self._turn_started if self._turn_started is not None else time.monotonic()
        self._turn_started = None
        seat = self._seat
        try:
            if self._degraded:
                raise RuntimeError("the re-solving state of this hand was lost earlier")
            if self._starved:
                return self._out_of_time(view, start, reason="earlier_in_hand")
            # an answer solved earlier costs nothing: only a re-solve must fit in the bank
            decision = seat.resolver.precomputed(view.state)
            if decision is None:
                floor = self._iterations_floor(view.state.round)
                if not self.timing.affordable(view.state.round, floor):
                    return self._out_of_time(view, start, reason="bank")
                decision = seat.resolver.re_solve(view.state, self.timing.deadline(view.state.round, start))
                self.timing.solved(view.state.round, time.monotonic() - start, decision.iterations, decision.solve_seconds)
                if decision.iterations < floor:  # stopped by the clock with a strategy near uniform
                    return self._out_of_time(
                        view, start, "too_few_iterations", iterations=decision.iterations, min_iterations=floor
                    )
            hand = seat.space.index(view.our_cards)
            action = sample_action(decision, hand, self.rng)
            seat.resolver.act(decision, action)
            self._log(view, decision, hand, action, time.monotonic() - start)
        except Exception as exc:  # out of memory, a bug: the match goes on with a legal action
            # the hand's re-solving state is lost: check, or fold to a bet (as out of time), so a
            # broken hand costs at most what is in the pot already
            self._degraded = True
            action = check_or_fold(view.state)
            log.error(
                "decision_failed",
                hand=view.hand_id,
                street=view.state.round,
                betting=view.state.betting_string(),
                error=repr(exc),
                action=str(action),
                think_ms=round(1000 * (time.monotonic() - start), 2),
            )
        self.timing.spent(time.monotonic() - start, reply=True)
        return action

    def _out_of_time(self, view: MatchState, start: float, reason: str, **detail: int) -> Action:
        """No re-solve to play: the bank cannot pay for one (``bank``), the clock stopped it before
        ``bot.time.min_iterations`` (``too_few_iterations``), or one of these happened earlier in
        the hand (``earlier_in_hand``). Check, or fold to a bet; the rest of the hand is played
        the same way (its re-solving state is not kept up to date any more)."""
        self._starved = True
        action = check_or_fold(view.state)
        log.warning(
            "out_of_time",
            hand=view.hand_id,
            street=view.state.round,
            betting=view.state.betting_string(),
            action=str(action),
            reason=reason,
            # a re-solve the clock stopped too early was paid for all the same
            think_ms=round(1000 * (time.monotonic() - start), 2),
            **detail,
        )
        self.timing.spent(time.monotonic() - start, reply=True)
        return action

    def _iterations_floor(self, round_: int) -> int:
        """The fewest iterations whose answer is played: ``bot.time.min_iterations``, and at least
        one averaged past the street's ``skip`` (before it the average is empty); at most the
        iterations asked."""
        seat = self._seat
        if seat is None:
            return 1
        config = seat.resolver.settings.street(round_).config
        return min(max(self.config.bot.time.min_iterations, config.skip + 1), config.iterations)

    def _iterations_asked(self, round_: int) -> int:
        seat = self._seat
        return seat.resolver.settings.street(round_).config.iterations if seat else 1

    def _log(self, view: MatchState, decision: Decision, hand: int, action: Action, seconds: float) -> None:
        state = view.state
        names = [str(a) if a.kind is not ActionKind.RAISE or self.game.is_nolimit else "r" for a in decision.actions]
        values = decision.action_values(hand)
        asked = self._iterations_asked(state.round) if self._seat else None
        log.info(
            "decision",
            hand=view.hand_id,
            street=state.round,
            pot=state.pot,
            to_call=state.amount_to_call(),
            think_ms=round(1000 * seconds, 2),
            solve_ms=round(1000 * decision.seconds, 2),
            iterations=decision.iterations,
            cached=decision.cached,
            # what ended the re-solve: its time budget or its iteration count (None: a cached answer)
            stopped_by=None if decision.cached else ("clock" if decision.iterations < asked else "iterations"),
            iterations_asked=asked,
            strategy={n: round(float(p), 6) for n, p in zip(names, decision.strategy[:, hand])},
            # what the re-solve expects our hand to win after each action (chips): AIVAT's
            # control variates at our decisions
            values=None if values is None else {n: round(float(v), 3) for n, v in zip(names, values)},
            action=str(action),
            # with these, the dealer's log and this line identify the decision (AIVAT from logs)
            cards=cards_to_str(view.our_cards),
            betting=state.betting_string(),
        )


def check_or_fold(state: HandState) -> Action:
    """The answer that costs nothing more: check, or fold to a bet (no re-solve behind it)."""
    return CALL if state.amount_to_call() == 0 else FOLD
