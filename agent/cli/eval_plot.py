"""``deepstack eval plot``: winnings with confidence bands, think time per street and strategy grids, from match
logs or an LBR folder."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from agent.bots.config import ConfigError, load_config
from agent.bots.settings import check_models
from agent.cli.common import os_reason
from agent.cli.solve import action_name
from agent.evaluation.lbr import chunk_values
from agent.evaluation.match import decision_think_times
from agent.evaluation.plots import strategy_grids_png, think_times_png, winnings_png
from agent.evaluation.policies import ProviderFactory
from agent.nets.manifest import ModelError
from agent.solver.ranges import grid
from protocol.dealer_log import dealer_limit_ms, dealer_logs, one_game, read_dealer_log
from protocol.gamedef import GameDefError, load_game
from protocol.matchstate import MatchStateError, parse_matchstate
from protocol.state import HandState

#: one example per tool (each --help ends with it)


def match_series(logs: list[Path], player: str | None = None) -> tuple[str, dict[str, np.ndarray], int]:
    """``(game, series, matches)``: one player's winnings per hand (chips) from dealer logs of one
    match or several pooled in one folder: each seating's hands one after another, and the
    duplicate values (the mean of a deal in both seatings) of every log and its ``.swapped`` twin.
    ``player`` defaults to the first player of the first log. A seating is named by the player's
    seat as ``deepstack match`` names it: the dealer's seat (its place among the names of the log's
    first hand), ``seat 2, swapped`` for the first bot in a duplicate match's second log."""
    game_name = ""
    by_seating: dict[str, list[float]] = {}
    per_match: dict[str, list[dict[int, float]]] = {}
    for path in logs:
        game_name, names, hands, values = read_dealer_log(path)
        if not hands:  # aborted before its first hand (a duplicate's second half, say): nothing to draw
            print(f"deepstack eval plot: {path}: no hands played, left out", file=sys.stderr)
            continue
        player = player or names[0]
        if player not in names:
            raise ValueError(f"{path}: no player named {player!r} (players: {', '.join(names)})")
        col = values[:, names.index(player)]
        swapped = path.stem.endswith(".swapped")
        seating = f"seat {names.index(player) + 1}" + (", swapped" if swapped else "")  # its seat in the first hand
        by_seating.setdefault(seating, []).extend(col)
        per_match.setdefault(path.stem.removesuffix(".swapped"), []).append(dict(zip(hands, col)))
    series = {f"{player} ({label})": np.array(v) for label, v in by_seating.items()}
    duplicate = []
    for pair in per_match.values():
        if len(pair) == 2:
            duplicate += [(pair[0][h] + pair[1][h]) / 2 for h in sorted(set(pair[0]) & set(pair[1]))]
    if duplicate:
        series[f"{player} duplicate"] = np.array(duplicate)
    if not series:
        raise ValueError(f"{', '.join(str(p) for p in logs)}: no hands played")
    return game_name, series, len(per_match)


def run_plot_cli(args: argparse.Namespace) -> int:
    """Run ``deepstack eval plot``: PNG pictures (winnings with 95% bands, think time, strategy grids) of a match
    folder or an LBR ``--out`` folder."""
    source, out = Path(args.source), Path(args.out)
    try:
        if not source.is_dir():
            raise ValueError(f"{source}: not a folder (give a match --log-dir or an LBR --out folder)")
        if out.exists() and not out.is_dir():
            raise ValueError(f"--out {out}: is a file; give a folder for the PNG files")
        series: dict[str, np.ndarray] = {}
        game_name, pooled = "", ""
        lbr = sorted(source.glob("lbr-[0-9]*.json"))
        found = dealer_logs(source)
        one_game(source, found)  # a folder mixing games is refused, naming them
        logs = [path for path, _ in found]
        result = _lbr_run(source) if lbr else {}
        if args.grid:  # before any picture: a line that cannot be drawn, a wrong config or model path is named at once
            grid_game = load_game(args.game or (result.get("game") if lbr else one_game(source, found)) or "hunl")
            for line in args.grid:
                try:
                    grid_line_state(grid_game, line)
                except ValueError as exc:
                    raise ValueError(f"grid for {line!r}: {exc}") from None
            check_models(grid_game, load_config(args.config))
        if lbr:
            values = [v for p in lbr for v in chunk_values(p)]  # NaN and infinity refused, naming the file
            game_name = result.get("game", args.game or "")
            if not (args.game or game_name):
                raise ValueError(f"{source}: neither result.json nor run.json names the game: give --game")
            series[f"LBR vs {result.get('bot', 'bot')}"] = np.array(values)
            for prefix, label in (("expected", "showdowns over the bot's range"), ("aivat", "AIVAT")):
                kept = [p.with_name(f"{prefix}-" + p.name.split("-", 1)[1]) for p in lbr]
                if all(p.exists() for p in kept):  # folders written before they were kept have none
                    series[label] = np.array([v for p in kept for v in chunk_values(p)])
        elif logs:
            game_name, series, matches = match_series(logs, args.player)
            pooled = f", {matches} matches" if matches > 1 else ""
        else:
            raise ValueError(f"{source}: no dealer logs (*.log) or LBR chunks (lbr-*.json) in it")
        game = load_game(args.game or game_name)
        unit = float(game.big_blind)
        short = [name for name, v in series.items() if len(v) < 2]
        series = {name: v for name, v in series.items() if len(v) >= 2}  # one hand has no interval
        if not series:
            raise ValueError(f"{source}: fewer than 2 hands to draw ({', '.join(short)})")
    except (OSError, GameDefError, ValueError, json.JSONDecodeError, ModelError) as exc:
        print(f"deepstack eval plot: error: {exc}", file=sys.stderr)
        return 2
    try:  # once the sources are read (a refused source writes nothing): was a bare OSError naming no option
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"deepstack eval plot: error: --out {out}: cannot make the folder ({os_reason(exc)})", file=sys.stderr)
        return 2
    for name in short:
        print(f"deepstack eval plot: {name}: fewer than 2 hands, left out", file=sys.stderr)
    written = []
    path = out / "winnings.png"
    winnings_png(path, series, unit, title=f"{source.name} ({game.name}{pooled})")
    written.append(path)
    decisions = source / "bots.jsonl"
    if decisions.exists():
        streets = (
            ["pre-flop", "flop", "turn", "river"] if game.num_rounds == 4 else [f"round {r + 1}" for r in range(game.num_rounds)]
        )

        by_street = {k: [1000.0 * t for t in v] for k, v in decision_think_times(decisions, streets).items()}
        by_street = {k: v for k, v in by_street.items() if v}
        if by_street:
            path = out / "think.png"
            think_times_png(
                path,
                {k: np.array(v) for k, v in by_street.items()},
                limit_ms=args.limit_ms if args.limit_ms is not None else dealer_limit_ms(logs),
                title="think time per decision",
            )
            written.append(path)
    for line in args.grid or []:
        try:
            path = out / f"grid-{line or 'first'}.png"
            strategy_grid_for_line(game, args.game or game_name, line, args.config, path, bot=args.grid_bot)
        except (ValueError, ModelError, ConfigError) as exc:
            print(f"deepstack eval plot: error: grid for {line!r}: {exc}", file=sys.stderr)
            return 2
        written.append(path)
    for p in written:
        print(p)
    return 0


def _lbr_run(source: Path) -> dict:
    """What an LBR folder's result.json (written when a run ends) or else its run.json (written when it starts: a
    stopped run has only that) says of the run: its game, its bot; ``{}`` when neither is there."""
    described = [source / name for name in ("result.json", "run.json") if (source / name).exists()]
    return json.loads(described[0].read_text()) if described else {}


def grid_line_state(game, line: str) -> HandState:
    """The state at the end of the pre-flop betting ``line`` that ``--grid`` draws the bot's strategy at; ValueError
    when it cannot be drawn (not hold'em, not a pre-flop line, a bad line, no decision at its end), before any
    picture."""
    if game.deck_size != 52:
        raise ValueError("13x13 grids are for hold'em")
    if "/" in line:
        raise ValueError("grids are drawn for pre-flop lines only (no '/')")
    try:
        final = parse_matchstate(f"MATCHSTATE:0:0:{line}:AsKs|", game).state
    except MatchStateError as exc:
        raise ValueError(f"bad betting line: {exc.reason}") from None
    if final.finished or final.round != 0 or final.current_player is None:
        raise ValueError("the line must end at a pre-flop decision")
    return final


def strategy_grid_for_line(game, game_name: str, line: str, config_path: str | None, path: Path, bot: str = "deepstack") -> None:
    """13x13 grids of a bot's strategy (``deepstack``: its continual re-solving from the start of the hand;
    ``blueprint``: its table) at the end of a pre-flop betting line (e.g. ``""`` for the first decision,
    ``"r300"`` facing a raise), for every hand it may hold there (weights: its range, by Bayes' rule over its
    own actions on the line)."""

    final = grid_line_state(game, line)
    me = final.current_player
    assert me is not None
    provider = ProviderFactory(game_name, bot, config_path)()
    provider.start_hand(me)
    weights = np.ones(provider.space.size)
    state = parse_matchstate("MATCHSTATE:0:0::AsKs|", game).state
    for action in final.round_actions:
        if state.current_player == me:
            actions, probs = provider.strategy(state)
            if action not in actions:
                raise ValueError(f"the {bot} bot never plays {action} after {state.betting_string()!r}")
            weights = weights * probs[actions.index(action)]
            provider.commit(state, action)
        state = state.apply(action)
        provider.observe(state)
    actions, probs = provider.strategy(state)
    grids = {action_name(state, a): grid(probs[i], weights) for i, a in enumerate(actions)}
    who = "small blind" if me == 1 else "big blind"
    name = "DeepStack bot" if bot == "deepstack" else "blueprint"
    strategy_grids_png(path, grids, title=f"{name}, {who} to act after '{line or '(first decision)'}'")
