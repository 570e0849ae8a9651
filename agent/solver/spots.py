"""Postflop spots: a board, a pot, an effective stack, two ranges and a bet-size tree.

A spot is played in a hold'em game whose stacks are ``pot / 2 + effective stack`` and
whose blinds are 1 chip, so the only limit on bet sizes is chip granularity (a real
HUNL game would forbid bets below its 100-chip big blind). Position 0 is out of position
(acts first after the flop), position 1 in position.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from agent.common.yaml_files import load_yaml, shown
from agent.solver.ranges import RangeError, parse_range
from agent.solver.resolve import SpotError
from agent.solver.tree import BetSizing
from native.cards import CardError, cards_from_str, cards_to_str
from protocol.gamedef import Game, parse_game
from protocol.state import CALL, HandState, RulesError, raise_to

ROUND_OF_BOARD = {3: 1, 4: 2, 5: 3}


def spot_game(stack: int) -> Game:
    """The 4-round no-limit hold'em game a spot is played in: ``stack`` chips each, blinds of one chip."""
    return parse_game(
        "GAMEDEF\nnolimit\nnumPlayers = 2\nnumRounds = 4\n"
        f"stack = {stack} {stack}\nblind = 1 1\nfirstPlayer = 2 1 1 1\n"
        "numSuits = 4\nnumRanks = 13\nnumHoleCards = 2\nnumBoardCards = 0 3 1 1\nEND GAMEDEF\n",
        source="<spot>",
        name="spot",
    )


@dataclass(frozen=True)
class Spot:
    """One postflop spot to solve: the board, the pot and effective stack in chips, both ranges (out of
    position, in position), the bet sizes, and the actions already taken in this round."""

    name: str
    board: tuple[int, ...]
    pot: int
    effective_stack: int
    ranges: tuple[np.ndarray, np.ndarray]  # out of position, in position
    range_text: tuple[str, str]
    sizing: BetSizing
    #: actions already taken in this round, ACPC letters with raise-to amounts (e.g. "r15" or "cr20")
    line: str = ""

    @property
    def game(self) -> Game:
        """The no-limit game the spot is played in: each stack is half the pot plus the effective stack."""
        return spot_game(self.pot // 2 + self.effective_stack)

    def state(self) -> HandState:
        """The state to solve: the board's round started with half the pot from each player, then ``line``;
        a SpotError when the line is illegal or ends the round."""
        half = self.pot // 2
        try:
            state = HandState.at_round_start(self.game, ROUND_OF_BOARD[len(self.board)], (half, half), self.board)
        except RulesError as exc:
            raise SpotError(str(exc)) from None
        tokens = re.findall(r"c|r[0-9]+(?![0-9a-z])|.[^cr]*", self.line)  # a bad token runs to the next c or r
        for token in tokens:
            if token == "c":
                action = CALL
            elif re.fullmatch(r"r[0-9]{1,10}", token):
                action = raise_to(int(token[1:]))
            else:
                raise SpotError(f"line {shown(self.line)}: {shown(token)} is not c or r<raise-to amount> (fold ends the spot)")
            if not state.is_legal(action):
                raise SpotError(
                    f"line {shown(self.line)}: {action} is not legal here ({state.betting_string()!r}, "
                    f"raise-to bounds {state.raise_bounds()})"
                )
            state = state.apply(action)
        if state.current_player is None or state.round != ROUND_OF_BOARD[len(self.board)]:
            raise SpotError(f"line {shown(self.line)} ends the round: nobody is left to act on this board")
        return state

    def describe(self) -> str:
        """One line naming the spot with its board, pot and effective stack (chips), for ``deepstack solve``."""
        return f"{self.name}: board {cards_to_str(self.board)}, pot {self.pot}, effective stack {self.effective_stack}"


def _fractions(values: Sequence[Any], what: str) -> tuple[float, ...]:
    out = []
    for v in values:
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise SpotError(f"unknown {what} size {shown(v)}: give pot percentages or fractions as numbers") from None
        if not f > 0:
            raise SpotError(f"{what} size {shown(v)} must be positive")
        out.append(f)
    return tuple(out)


def make_spot(
    board: str,
    pot: int,
    effective_stack: int,
    oop_range: str,
    ip_range: str,
    bets: Sequence[Any] = (1.0,),
    raises: Sequence[Any] | None = None,
    all_in: bool = True,
    max_bets: int | None = None,
    name: str = "spot",
    line: str = "",
) -> Spot:
    """A validated spot (bet and raise sizes as pot fractions)."""
    try:
        cards = cards_from_str(board)
    except CardError as exc:
        raise SpotError(f"board {shown(board)}: {exc}") from None
    if len(cards) not in ROUND_OF_BOARD:
        raise SpotError(f"board {shown(board)} has {len(cards)} cards; a flop, turn or river board has 3, 4 or 5")
    if len(set(cards)) != len(cards):
        raise SpotError(f"board {shown(board)} has the same card twice")
    if not isinstance(pot, int) or pot <= 0 or pot % 2:
        raise SpotError(f"pot {pot!r} must be a positive even number of chips (each player put in half)")
    if not isinstance(effective_stack, int) or effective_stack <= 0:
        raise SpotError(f"effective stack {effective_stack!r} must be a positive number of chips")
    if max_bets is not None and max_bets < 0:
        raise SpotError("max bets per round must be >= 0")
    ranges = []
    for who, text in (("out-of-position", oop_range), ("in-position", ip_range)):
        try:
            ranges.append(parse_range(text))
        except RangeError as exc:
            raise SpotError(f"{who} range: {exc}") from None
    sizing = BetSizing(
        bets=(_fractions(bets, "bet"),),
        raises=(_fractions(raises, "raise"),) if raises is not None else None,
        all_in=all_in,
        max_raises=max_bets,
    )
    spot = Spot(name, cards, pot, effective_stack, (ranges[0], ranges[1]), (oop_range, ip_range), sizing, line)
    spot.state()  # a bad line is refused here, with the spot
    return spot


_REF_RE = re.compile(r"^#\s+(\S.*?)\s{2,}(\d[\d.]*) s\s+(\d[\d.]*)%\s+(\d[\d.]*) s\s+(\d[\d.]*)%\s+(\d[\d.]*) s\s+(\d[\d.]*)%")


def load_spots(path: str | Path) -> tuple[dict[str, Spot], dict[str, Any]]:
    """Spots of a ``spots.yaml`` file, and its settings (target, recorded reference timings)."""
    path = Path(path)
    try:
        text = path.read_text()
        data = load_yaml(text)
    except (OSError, yaml.YAMLError) as exc:
        raise SpotError(f"{path}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("spots"), dict):
        raise SpotError(f"{path}: expected a mapping with a 'spots' section")
    if not isinstance(data.get("allin", True), bool):  # bool("no") is True: say so instead
        raise SpotError(f"{path}: allin: {shown(data['allin'])} is not true or false")
    try:
        spots = {
            name: make_spot(
                board=str(spec["board"]),
                pot=int(data["pot"]),
                effective_stack=int(data["effective_stack"]),
                oop_range=str(data["oop_range"]),
                ip_range=str(data["ip_range"]),
                bets=[float(x) / 100 for x in data.get("bet_pct", [100])],
                raises=[float(x) / 100 for x in data.get("raise_pct", [50])],
                all_in=data.get("allin", True),
                max_bets=data.get("max_bets_per_street"),
                name=name,
            )
            for name, spec in data["spots"].items()
        }
    except KeyError as exc:
        raise SpotError(f"{path}: missing key {exc}") from None
    references = []
    for line in text.splitlines():
        m = _REF_RE.match(line)
        if m:
            tool = m.group(1).strip()
            for street, (secs, pct) in zip(("river", "turn", "flop"), ((2, 3), (4, 5), (6, 7))):
                references.append(
                    {"tool": tool, "spot": street, "seconds": float(m.group(secs)), "exploitability_pct": float(m.group(pct))}
                )
    meta = {
        "target_pct": float(data.get("target_exploitability_pct_of_pot", 0.3)),
        "references": references,
    }
    return spots, meta
