"""``deepstack eval``: measured strength. Exact exploitability and policy export (Leduc)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from agent.bots.config import ConfigError, load_config
from agent.bots.settings import check_models, is_leduc, leduc_settings
from agent.cli.common import GAME_HELP, HelpFormatter, dumps, example, os_reason, path_arg, positive_int, positive_ms, seed
from agent.cli.eval_aivat import run_aivat_cli, run_aivat_log_cli
from agent.cli.eval_lbr import run_lbr_cli, run_lbr_paired_cli
from agent.cli.eval_plot import run_plot_cli
from agent.evaluation.clock import clock_lines, clock_report
from agent.evaluation.evaluate import PolicyError, agent_profile, export_policy, import_policy, profile_exploitability
from agent.nets.manifest import ModelError
from agent.resolving.continual import ContinualResolver
from agent.solver.handspace import HandSpace
from agent.solver.tree import FCPA
from agent.training.heldout import pot_bands, score_networks
from agent.training.promote import held_out_warnings, record_check
from protocol.dealer_log import dealer_logs, one_game
from protocol.gamedef import Game, GameDefError, load_game

#: one example per tool (each --help ends with it)
EXAMPLES = {
    "exploitability": example("deepstack eval exploitability --game leduc-limit --bot deepstack"),
    "export-policy": example("deepstack eval export-policy --game leduc --out policy.json"),
    "lbr": example("deepstack eval lbr --game leduc --bot deepstack --hands 200 --setting fcp/fcp --out runs/lbr-leduc"),
    "lbr-paired": example(
        "deepstack eval lbr-paired runs/lbr-checkdown runs/lbr-net --png runs/lbr-net/paired.png",
        "two folders of 'deepstack eval lbr --game hunl --setting c/c/fcpa/fcpa --seed 81 --out DIR', the second with "
        "'--config net.yaml'",
    ),
    "aivat": example("deepstack eval aivat --game leduc --bot deepstack --opponent random --hands 200"),
    "aivat-log": example(
        "deepstack eval aivat-log runs/leduc-vs-random",
        "a folder written by 'deepstack match leduc 300 deepstack random --duplicate --log-dir runs/leduc-vs-random'",
    ),
    "clock": example(
        "deepstack eval clock runs/match-hunl-20261126T080000Z --json",
        "a folder written by 'deepstack match' (its bots.jsonl), or a 'deepstack play --log-json' file",
    ),
    "nets": example(
        "deepstack eval nets models/holdem/turn.pt runs/turn-nets/turn.pt --data data/turn-test",
        "a folder of 'deepstack generate --game hunl --street turn --seed 9' that neither network trained on",
    ),
    "plot": example(
        "deepstack eval plot runs/leduc-vs-random --out runs/leduc-vs-random/png",
        "a folder written by 'deepstack match leduc 300 deepstack random --duplicate --log-dir runs/leduc-vs-random'",
    ),
}
CONFIG_HELP = "config file (default: $DEEPSTACK_CONFIG, else the shipped config.yaml)"
ESTIMATE_NOTE = "Win rates are printed in mbb/g as mean ± half-width of the 95% confidence interval: '+X ± Y mbb/g (95% CI)'."


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``deepstack eval`` and its tools: exact exploitability and policy export (Leduc), LBR,
    AIVAT, clock, nets, plot."""
    p = sub.add_parser(
        "eval",
        help="evaluate a bot (exploitability, policy export, LBR, AIVAT, think times, networks, plots)",
        description="Evaluation tools; 'deepstack eval TOOL --help' explains each.",
        epilog=EXAMPLES["exploitability"],
        formatter_class=HelpFormatter,
    )
    evsub = p.add_subparsers(dest="eval_command", required=True, metavar="TOOL")
    for name, helptext in (
        ("exploitability", "exact exploitability of the continual re-solving agent (Leduc)"),
        ("export-policy", "write the agent's full strategy as JSON (Leduc)"),
    ):
        q = evsub.add_parser(
            name,
            help=helptext,
            description=helptext + ": the agent is queried at every public "
            "state for all private cards, exactly as it plays through continual re-solving. In no-limit the tree "
            "(the agent's and the best response's) has fold, call, pot and all-in: a lower bound for every size.",
            epilog=EXAMPLES[name],
            formatter_class=HelpFormatter,
        )
        q.add_argument("--game", required=True, help="leduc or leduc-limit (or a Leduc-like .game file)")
        q.add_argument("--bot", default="deepstack", choices=["deepstack"], help="the agent")
        q.add_argument("--config", type=path_arg, default=None, help=CONFIG_HELP)
        q.add_argument(
            "--iterations", type=positive_int, default=None, help="CFR iterations per re-solve (default: the config's)"
        )
        q.add_argument("--exact", action="store_true", help="ignore the value network: solve round 2 exactly")
        q.add_argument("--json", action="store_true", help="print a JSON object instead of text")
        if name == "export-policy":
            q.add_argument("--out", type=path_arg, required=True, help="output JSON file")
        else:
            q.add_argument(
                "--policy",
                default=None,
                help="measure a policy file written by export-policy instead of running the agent (default: run the agent)",
            )
        q.set_defaults(func=run_eval)
    q = evsub.add_parser(
        "lbr",
        help="local best response against a bot (lower bound on its exploitability)",
        description="LBR plays against the bot through the bot's exposed strategy (its range tracked by Bayes' "
        "rule, its fold probabilities asked at hypothetical bets), with the check-down assumption. "
        "Settings per round: f c p a or 56, e.g. fc/fc/fc/fc, c/c/fcpa/fcpa, c/c/56/56, c/56/fc/fc (Leduc: fcp/fcp). "
        "Reports LBR's realised win rate and two unbiased estimates of it with less variance (showdowns averaged over "
        "LBR's range for the bot; AIVAT). Resumable (chunks in --out), parallel over processes. " + ESTIMATE_NOTE,
        epilog=EXAMPLES["lbr"],
        formatter_class=HelpFormatter,
    )
    bots = ["deepstack", "blueprint", "call", "random", "equilibrium"]
    q.add_argument("--game", required=True, help=GAME_HELP)
    q.add_argument("--bot", default="deepstack", choices=bots, help="the bot LBR plays against (equilibrium: Leduc only)")
    q.add_argument("--hands", type=int, required=True, help="hands to play (a resumed folder: the total)")
    q.add_argument("--setting", required=True, help="LBR actions per round, e.g. fc/fc/fc/fc")
    q.add_argument("--config", type=path_arg, default=None, help=CONFIG_HELP)
    q.add_argument("--iterations", type=positive_int, default=None, help="re-solve iterations of the bot (default: the config's)")
    q.add_argument("--workers", type=int, default=1, help="processes playing chunks side by side")
    q.add_argument("--seed", type=seed, default=0, help="seed of the deals (hand i's cards come from the seed and i alone)")
    q.add_argument(
        "--out", type=path_arg, default=None, help="folder for resumable chunks and the result (default: none, nothing kept)"
    )
    q.add_argument(
        "--chunk", type=int, default=50, help="hands per resumable chunk (default 50; use a few for the slow 56-size settings)"
    )
    q.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    q.set_defaults(func=run_lbr_cli)
    q = evsub.add_parser(
        "lbr-paired",
        help="two LBR runs on the same deals compared hand for hand (which bot setting LBR exploits less)",
        description="Reads two folders of 'deepstack eval lbr --out' written with one game, setting and seed (so hand i "
        "was dealt the same cards in both), against two bots or two --config files, and prints each run's estimates "
        "and their difference hand for hand over the hands both hold, with its 95% interval (much narrower than either "
        "run's), and the bot's fold rates side by side. Plays nothing. " + ESTIMATE_NOTE,
        epilog=EXAMPLES["lbr-paired"],
        formatter_class=HelpFormatter,
    )
    q.add_argument("a", help="the first LBR folder (A; e.g. the shipped settings)")
    q.add_argument("b", help="the second LBR folder (B); differences are B - A")
    q.add_argument(
        "--png", default=None, help="also draw both runs' win rates and their difference hand for hand here (default: none)"
    )
    q.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    q.set_defaults(func=run_lbr_paired_cli)
    q = evsub.add_parser(
        "aivat",
        help="a bot's winnings against an opponent: raw, duplicate and AIVAT estimates (Leduc)",
        description="Plays HANDS hands between two bots whose strategies are known (pairs of hands with the same "
        "cards and seats swapped) and reports raw, duplicate and AIVAT estimates with 95% intervals. AIVAT's "
        "control variates are the values of an equilibrium of the full game (exact, Leduc games). " + ESTIMATE_NOTE,
        epilog=EXAMPLES["aivat"],
        formatter_class=HelpFormatter,
    )
    q.add_argument("--game", required=True, help="leduc or leduc-limit (or a Leduc-like .game file)")
    q.add_argument("--bot", default="deepstack", choices=bots, help="whose winnings")
    q.add_argument("--opponent", default="random", choices=bots, help="the bot it plays against")
    q.add_argument(
        "--hands", type=int, required=True, help="hands to play: an even number, at least 2 (pairs with the seats swapped)"
    )
    q.add_argument("--config", type=path_arg, default=None, help=CONFIG_HELP)
    q.add_argument(
        "--iterations", type=positive_int, default=None, help="re-solve iterations of a deepstack bot (default: the config's)"
    )
    q.add_argument("--seed", type=seed, default=0, help="seed of the deals and the bots' sampling")
    q.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    q.set_defaults(func=run_aivat_cli)
    q = evsub.add_parser(
        "aivat-log",
        help="raw, duplicate and AIVAT estimates from a recorded match (any game, any opponent)",
        description="Reads a folder written by deepstack match --log-dir (dealer logs and the bot's decisions in "
        "bots.jsonl) and reports the player's raw, duplicate and AIVAT win rates with 95% intervals. AIVAT corrects "
        "the board cards and the player's own decisions (its logged action probabilities), never the opponent's: "
        "unbiased against any opponent. Value functions: check-down values with both hands known; at the player's "
        "decisions, optionally its own re-solve's values of each action, as logged in bots.jsonl (--action-values bot). "
        "A folder whose dealer logs are of several games is refused. " + ESTIMATE_NOTE,
        epilog=EXAMPLES["aivat-log"],
        formatter_class=HelpFormatter,
    )
    q.add_argument("source", help="a match --log-dir folder (its dealer logs pooled: one game)")
    q.add_argument("--player", default="deepstack", help="whose winnings (a player name of the dealer logs)")
    q.add_argument("--decisions", default=None, help="the player's decision log (default: SOURCE/bots.jsonl)")
    q.add_argument(
        "--action-values",
        default="checkdown",
        choices=["checkdown", "bot"],
        help="control variates at the player's decisions: check-down values with both hands known (default: "
        "the lower variance, measured) or the bot's logged re-solve values (check-down where a decision has none)",
    )
    q.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    q.set_defaults(func=run_aivat_log_cli)
    q = evsub.add_parser(
        "clock",
        help="how the bot's decisions met the clock, per street (cached, ended by iterations or by time, out of time)",
        description="Reads the DeepStack bot's decision log (a match folder's bots.jsonl, or the --log-json file of "
        "'deepstack play') and counts per street: cached answers, re-solves that ran their iteration count, "
        "re-solves ended by their time budget (the anytime solver's average strategy so far), answers given "
        "without a re-solve because the time bank could not pay for one (out of time), failed decisions; and "
        "think time (median, 95th percentile, max).",
        epilog=EXAMPLES["clock"],
        formatter_class=HelpFormatter,
    )
    q.add_argument("source", nargs="+", help="decision log files (JSON lines) or match folders (their bots.jsonl)")
    q.add_argument(
        "--game",
        default=None,
        help="names the streets; refused for a log of another game (default: the game a match folder's dealer logs "
        "name, else guessed from the decisions' cards and streets)",
    )
    q.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    q.set_defaults(func=run_clock_cli)
    q = evsub.add_parser(
        "nets",
        help="hold'em value networks scored on the same held-out situations (Huber loss, paired differences)",
        description="Scores each network on every situation of the --data folders (generated with a seed none of the "
        "networks trained on), in the network's own buckets (from its manifest entry): the pooled Huber loss as "
        "'deepstack train' reports it, the median per situation, and for each network after the first the mean "
        "per-situation difference from the first with its 95% interval (negative: better than the first). A "
        "network's own validation loss also chose its best epoch and is measured on other situations than "
        "another's; this is the comparison to promote a network by. A folder some network trained on (or drew "
        "with one of its seeds) is refused with --record and warned about without it; folders of another game than "
        "--game, or of another street than a network's, are refused.",
        epilog=EXAMPLES["nets"],
        formatter_class=HelpFormatter,
    )
    q.add_argument("nets", nargs="+", help="TorchScript value networks (each beside its manifest), the first the reference")
    q.add_argument("--data", nargs="+", required=True, help="folders of 'deepstack generate' shards (the test situations)")
    q.add_argument("--game", default="hunl", help="the game of the data (default hunl)")
    q.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    q.add_argument(
        "--record",
        action="store_true",
        help="also add the first network's score (and the others' differences from it) to its manifest entry under "
        "'checks', with the test folders' commands and the network that made their targets: how a kept network shows "
        "it fits a regenerated street below it (default: print only)",
    )
    q.add_argument(
        "--pot-bands",
        type=int,
        default=0,
        metavar="N",
        help="also each network's loss in up to N pot bands holding about as many situations each (equal pots are "
        "never split; a network's loss is "
        "mostly a few small pots': where did a candidate gain?) (default 0: none)",
    )
    q.set_defaults(func=run_nets_cli)
    q = evsub.add_parser(
        "plot",
        help="PNG pictures of a match or LBR run: winnings with 95%% bands, think time per street",
        description="Reads a folder written by deepstack match --log-dir (dealer logs, bots.jsonl) or deepstack eval lbr "
        "--out and writes OUT/winnings.png (cumulative winnings and running win rate with 95% bands; the duplicate "
        "estimate when both seatings are there) and OUT/think.png (think time per decision by street). A match's "
        "series are named by seat as 'deepstack match' names them: seat 1 and seat 2 are the dealer's seats (the "
        "order of the names in a log's first hand); a duplicate match's second log is 'seat 2, swapped' for the "
        "first bot. A folder whose dealer logs are of several games is refused.",
        epilog=EXAMPLES["plot"],
        formatter_class=HelpFormatter,
    )
    q.add_argument("source", help="match log folder or LBR output folder")
    q.add_argument("--out", type=path_arg, required=True, help="folder for the PNG files")
    q.add_argument("--player", default=None, help="whose winnings (default: the first player of the first log)")
    q.add_argument("--game", default=None, help="game (default: from the dealer log header or the LBR run.json)")
    q.add_argument(
        "--limit-ms",
        type=positive_ms,
        default=None,
        help="dealer's per-hand average to draw (default: the dealer log's --t_per_hand, else 7000)",
    )
    q.add_argument(
        "--grid",
        action="append",
        default=None,
        metavar="LINE",
        help="hold'em: also draw the bot's 13x13 strategy grids after this pre-flop betting line ('' = first decision); "
        "repeatable (default: none)",
    )
    q.add_argument(
        "--config",
        type=path_arg,
        default=None,
        help="config for --grid (default: $DEEPSTACK_CONFIG, else the shipped config.yaml)",
    )
    q.add_argument(
        "--grid-bot",
        choices=("deepstack", "blueprint"),
        default="deepstack",
        help="whose strategy --grid draws: the DeepStack bot's re-solves or the blueprint's table (default: deepstack)",
    )
    q.set_defaults(func=run_plot_cli)


def run_clock_cli(args: argparse.Namespace) -> int:
    """Run ``deepstack eval clock``: per street, how the bot's logged decisions met their time budget."""
    paths = []
    for source in map(Path, args.source):
        path = source / "bots.jsonl" if source.is_dir() else source
        if not path.is_file():
            print(f"deepstack eval clock: error: {path}: no such decision log", file=sys.stderr)
            return 2
        paths.append(path)
    try:
        named = _clock_game(args.game, args.source)  # a match folder's dealer logs name its game
    except (GameDefError, ValueError) as exc:
        print(f"deepstack eval clock: error: {exc}", file=sys.stderr)
        return 2
    try:  # a decision log alone does not name its game: its decisions' hole cards tell another game's apart
        report = clock_report(paths, *((named[1].num_rounds, named[1].num_hole_cards, named[0]) if named else ()))
    except ValueError as exc:
        hint = "; give the log's game as --game, or leave it out" if args.game else ""
        print(f"deepstack eval clock: error: {exc}{hint}", file=sys.stderr)
        return 2
    if not report:
        print(f"deepstack eval clock: error: no decisions in {', '.join(map(str, paths))}", file=sys.stderr)
        return 2
    print(dumps(report) if args.json else "\n".join(clock_lines(report)))
    return 0


def _logged_games(sources: list[str]) -> dict[Path, str]:
    """The game each match folder among ``sources`` is of, as its dealer logs' headers name it (folders without
    dealer logs, or whose logs name none, are left out); ValueError for a folder of several games."""
    games = {}
    for source in map(Path, sources):
        named = [(path, header) for path, header in (dealer_logs(source) if source.is_dir() else []) if header.game]
        if named:
            games[source] = one_game(source, named)
    return games


def _rules(name: str) -> Game | None:
    """The game ``name`` without its name (two names of one game compare equal); None when it cannot be read (a
    log's game file moved since)."""
    try:
        return replace(load_game(name), name="")
    except GameDefError:
        return None


def _clock_game(given: str | None, sources: list[str]) -> tuple[str, Game] | None:
    """The game whose streets ``eval clock`` names: ``--game``, refused when a match folder's dealer logs name
    another; else the game the match folders' dealer logs name (refused when they name several); else None (the
    streets are guessed from the log)."""
    logged = _logged_games(sources)
    if given:
        game = load_game(given)
        for folder, name in logged.items():
            rules = _rules(name)
            if (rules != replace(game, name="")) if rules is not None else name != given:
                raise ValueError(
                    f"--game {given}: {folder} is a match of {name} (its dealer logs); give --game {name}, or leave it out"
                )
        return given, game
    known = {folder: name for folder, name in logged.items() if _rules(name) is not None}
    if len({_rules(name) for name in known.values()}) > 1:
        raise ValueError(
            f"the match folders are of several games ({'; '.join(f'{folder}: {name}' for folder, name in known.items())}); "
            "give one game's folders"
        )
    name = next(iter(known.values()), None)
    return (name, load_game(name)) if name else None


def run_nets_cli(args: argparse.Namespace) -> int:
    """Run ``deepstack eval nets``: each network's Huber loss on the same situations, and its paired difference from
    the first network's; a score on a network's own training data is printed with a warning."""
    if not 0 <= args.pot_bands <= 100:
        print(f"deepstack eval nets: error: --pot-bands {args.pot_bands}: from 0 (none) to 100", file=sys.stderr)
        return 2
    try:
        game = load_game(args.game)
        scores = score_networks(args.nets, [Path(d) for d in args.data], float(sum(game.stack)), args.game)
        if args.record:
            record_check(scores, [Path(d) for d in args.data])
        else:  # scoring a network on its training data is allowed, but said: it is not a held-out score
            for line in held_out_warnings(args.nets, [Path(d) for d in args.data]):
                print(f"deepstack eval nets: warning: {line}", file=sys.stderr)
        edges = pot_bands(scores[0].pots, args.pot_bands) if args.pot_bands else None
    except (GameDefError, ModelError, ValueError, FileNotFoundError) as exc:
        print(f"deepstack eval nets: error: {exc}", file=sys.stderr)
        return 2
    reference = scores[0]
    rows = []
    for score in scores:
        row = {
            "net": score.path,
            "situations": len(score.per_situation),
            "loss": score.loss,
            "median": score.median,
            "abstraction": list(score.abstraction),
        }
        if edges is not None:
            row["by_pot"] = [
                {"pots": [lo, hi], "situations": count, "loss": loss}
                for lo, hi, (count, loss) in zip(edges[:-1], edges[1:], score.by_pot(edges))
            ]
            if score is not reference and np.array_equal(score.pots, reference.pots):  # the same situations: paired
                for band, inside in zip(row["by_pot"], score.band_masks(edges)):
                    if band["situations"]:  # one situation: its difference, with no interval (± inf)
                        band["difference"], band["difference_ci95"] = score.paired_difference(reference, inside)
        if score is not reference:
            if score.abstraction != reference.abstraction:
                row["note"] = "other buckets than the first network: a loss of other targets"
            if len(score.per_situation) == len(reference.per_situation):
                row["difference"], row["difference_ci95"] = score.paired_difference(reference)
        rows.append(row)
    if args.json:
        print(dumps({"data": args.data, "networks": rows}))
        return 0
    for row in rows:
        line = (
            f"{row['net']}: Huber {row['loss']:.5f} (median per situation {row['median']:.5f}) on {row['situations']} situations"
        )
        if "difference" in row:
            line += f"; minus the first, per situation: {row['difference']:+.5f} ± {row['difference_ci95']:.5f} (95%)"
        if "note" in row:
            line += f" [{row['note']}]"
        print(line)
        if "by_pot" in row:
            bands = (
                f"{band['pots'][0]:.0f}-{band['pots'][1]:.0f}: "
                + ("-" if band["loss"] is None else f"{band['loss']:.5f}")
                + (f" ({band['difference']:+.5f} ± {band['difference_ci95']:.5f})" if "difference" in band else "")
                for band in row["by_pot"]
            )
            print(f"  by pot (chips): {', '.join(bands)}")
    return 0


def _policy_exploitability(args: argparse.Namespace, game, tool: str) -> int:
    """``eval exploitability --policy P.json``: the exported policy's exact exploitability."""
    space = HandSpace(game)
    try:
        profile = import_policy(space, (FCPA, FCPA), args.policy)
    except PolicyError as exc:
        print(f"{tool}: error: {exc}", file=sys.stderr)
        return 2
    e = profile_exploitability(profile)
    mbb = 1000 * e["exploitability"] / game.big_blind
    if args.json:
        print(
            dumps(
                {
                    "game": args.game,
                    "policy": args.policy,
                    "exploitability_chips": e["exploitability"],
                    "exploitability_mbb_g": mbb,
                    "game_value_p0": e["value0"],
                }
            )
        )
    else:
        print(f"{args.game}: {args.policy}: exploitability {e['exploitability']:.5f} chips/game = {mbb:.2f} mbb/g")
    return 0


def run_eval(args: argparse.Namespace) -> int:
    """Run ``deepstack eval exploitability`` and ``eval export-policy`` (two-player Leduc only): query the
    continual re-solving agent at every public state, then report its exact exploitability (chips and
    mbb/g) or write its strategy."""
    tool = f"deepstack eval {args.eval_command}"
    try:
        game = load_game(args.game)
        config = load_config(args.config)
    except (GameDefError, ConfigError) as exc:
        print(f"{tool}: error: {exc}", file=sys.stderr)
        return 2
    if not (is_leduc(game) and game.num_players == 2):
        print(
            f"{tool}: error: exact evaluation is for two-player Leduc games (one hole card, one board card, "
            f"six cards); {args.game} is not one (hold'em: deepstack eval lbr)",
            file=sys.stderr,
        )
        return 2
    if getattr(args, "policy", None):  # a policy file needs no model and no solve
        if args.iterations is not None or args.exact:
            print(f"{tool}: error: --policy measures a policy file; --iterations and --exact apply to the agent", file=sys.stderr)
            return 2
        return _policy_exploitability(args, game, tool)
    try:
        if not args.exact:  # a wrong model path is named by its config key, before any solve
            check_models(game, config)
    except ModelError as exc:
        print(f"{tool}: error: {exc}", file=sys.stderr)
        return 2
    if args.eval_command == "export-policy":  # refused now, not after minutes of re-solving
        out = Path(args.out)
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            print(f"{tool}: error: --out {out}: its folder cannot be made ({os_reason(exc)})", file=sys.stderr)
            return 2
        if out.is_dir() or not os.access(out.parent, os.W_OK):
            print(
                f"{tool}: error: --out {out}: cannot be written ({'a folder' if out.is_dir() else 'its folder is read-only'})",
                file=sys.stderr,
            )
            return 2
    bot_cfg = config.bot.leduc_limit if game.is_limit else config.bot.leduc
    if args.iterations is not None:
        bot_cfg = replace(bot_cfg, iterations=args.iterations)
    if args.exact:
        bot_cfg = replace(bot_cfg, value_net=None)
    space = HandSpace(game)
    device = "cpu" if config.device == "auto" else config.device
    try:
        settings = leduc_settings(game, space, bot_cfg, device)
    except ModelError as exc:
        print(f"{tool}: error: {exc}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    profile = agent_profile(space, (FCPA, FCPA), lambda: ContinualResolver(space, settings), progress=not args.json)
    if args.eval_command == "export-policy":
        n = export_policy(profile, Path(args.out))
        if args.json:  # the fields of exploitability's object, the file and its information sets for the numbers
            exported = {
                "game": args.game,
                "bot": args.bot,
                "value_net": bot_cfg.value_net,
                "iterations": bot_cfg.iterations,
                "out": args.out,
                "information_sets": n,
                "resolves": profile.resolves,
                "seconds": round(time.perf_counter() - start, 1),
            }
            print(dumps(exported))
        else:
            print(f"wrote {n} information sets to {args.out}")
        return 0
    e = profile_exploitability(profile)
    unit = game.big_blind
    result = {
        "game": args.game,
        "bot": args.bot,
        "value_net": bot_cfg.value_net,
        "iterations": bot_cfg.iterations,
        "exploitability_chips": e["exploitability"],
        "exploitability_mbb_g": 1000 * e["exploitability"] / unit,
        "game_value_p0": e["value0"],
        "resolves": profile.resolves,
        "seconds": round(time.perf_counter() - start, 1),
    }
    if args.json:
        print(dumps(result))
    else:
        print(
            f"{args.game}: exploitability {e['exploitability']:.5f} chips/game = {result['exploitability_mbb_g']:.2f} mbb/g "
            f"({'exact round 2' if bot_cfg.value_net is None else bot_cfg.value_net}, "
            f"{bot_cfg.iterations} iterations per re-solve, "
            f"{profile.resolves} re-solves, {result['seconds']} s)"
        )
    return 0
