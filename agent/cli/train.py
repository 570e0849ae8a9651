"""``deepstack train`` and ``deepstack ensemble``: a value network trained and exported as
TorchScript with its manifest entry; several averaged into one."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agent.cli.common import (
    GAME_HELP,
    MAX_HIDDEN,
    MAX_LAYERS,
    HelpFormatter,
    cannot_write,
    example,
    load_game_or_exit,
    make_folder,
    model_name,
    path_arg,
    positive_int,
    remove_empty,
    seed,
)
from agent.nets.encoding import SituationEncoder
from agent.nets.manifest import ModelError, check_registrable
from agent.nets.valuenet import POT_FEATURES
from agent.solver.handspace import HandSpace
from agent.training.streets import RIVER_BUCKETS, STREET_ROUND, street_abstraction
from agent.training.train import TrainSpec, train
from protocol.gamedef import Game


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``deepstack train`` (a value network trained on generated shards, exported as TorchScript)."""
    p = sub.add_parser(
        "train",
        help="train a value network on generated data and export it as TorchScript",
        description="Adam with a learning-rate drop, a validation split, the best epoch kept, a loss curve PNG; "
        "exports OUT/NAME.pt (TorchScript) and records it in the model manifest. An interrupted run resumes "
        "from OUT/NAME.ckpt (kept every 10 epochs) when the same command runs again.",
        epilog=example(
            "deepstack train --game leduc --data data/leduc --out my-models --name leduc-mine --epochs 20",
            "on the data of the 'deepstack generate' example",
        ),
        formatter_class=HelpFormatter,
    )
    p.add_argument("--game", required=True, help=GAME_HELP + " (hand-level networks: leduc, leduc-limit)")
    p.add_argument(
        "--data",
        required=True,
        nargs="+",
        metavar="DIR",
        help="folder(s) of shards from deepstack generate; several folders are pooled in the order given (which "
        "fixes the validation split); they must be data of one network and hold different situations: generate "
        "more with another --seed",
    )
    p.add_argument(
        "--out",
        type=path_arg,
        required=True,
        help="output folder (models/leduc replaces a shipped network and its manifest entry)",
    )
    p.add_argument(
        "--name",
        type=model_name,
        required=True,
        help="model name in the manifest (the files are OUT/NAME.pt, .ckpt, .loss.png); a name another file's entry "
        "has in OUT's manifest is refused",
    )
    p.add_argument("--epochs", type=int, default=200, help="passes over the training data (default 200)")
    p.add_argument("--batch-size", type=int, default=1000, help="situations per Adam step")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate until --lr-drop-epoch")
    p.add_argument("--lr-late", type=float, default=1e-4, help="the learning rate from --lr-drop-epoch on")
    p.add_argument("--lr-drop-epoch", type=int, default=150, help="the epoch at which the learning rate drops to --lr-late")
    p.add_argument(
        "--schedule",
        choices=["step", "cosine"],
        default="step",
        help="learning rate: step (--lr, then --lr-late from --lr-drop-epoch) or cosine (--lr decayed to 0 over the epochs)",
    )
    p.add_argument(
        "--weight-decay",
        type=float,
        default=0.0,
        help="AdamW's decoupled weight decay (default 0: plain Adam); against over-fitting small data sets",
    )
    p.add_argument(
        "--init",
        default=None,
        help="start from this network's weights (same --hidden/--layers/buckets; e.g. models/holdem/turn.pt to fine-tune "
        "the shipped network on new data) instead of random ones (default: random)",
    )
    p.add_argument("--hidden", type=int, default=500, help="units per hidden layer")
    p.add_argument("--layers", type=int, default=7, help="hidden layers")
    p.add_argument(
        "--pot",
        choices=list(POT_FEATURES),
        default="linear",
        help="how the network sees the pot: linear (the pot input alone, as every shipped network) or log "
        "(also its logarithm: small pots, whose deep trees make most of the loss, told apart) (default linear)",
    )
    p.add_argument("--seed", type=seed, default=0, help="seed of the validation split, the initial weights and the batch order")
    p.add_argument(
        "--street",
        choices=["river", "turn", "flop", "preflop-aux"],
        default=None,
        help="hold'em: which network (its buckets map the data; preflop-aux: the 169 pre-flop classes; river: "
        "equity against a uniform hand in --river-buckets steps) (default: none, for Leduc games)",
    )
    p.add_argument("--buckets", default=None, help="hold'em: bucket table (default: the street's table in models/holdem)")
    p.add_argument(
        "--river-buckets", type=positive_int, default=None, help=f"--street river: equity steps (default {RIVER_BUCKETS})"
    )
    p.set_defaults(func=_run_train)


def _run_train(args: argparse.Namespace) -> int:
    game = load_game_or_exit(args.game, "train")
    if args.epochs < 1 or args.batch_size < 1:
        print("deepstack train: error: --epochs and --batch-size must be at least 1", file=sys.stderr)
        return 2
    if game.deck_size <= 12 and (args.street is not None or args.buckets is not None):
        # a hand-level network has no street nor buckets: the option was ignored, and a river network expected
        print(f"deepstack train: error: --street and --buckets are for hold'em games, not {args.game}", file=sys.stderr)
        return 2
    if args.river_buckets is not None and args.street != "river":  # ignored otherwise, as --street was for Leduc
        print("deepstack train: error: --river-buckets is for --street river", file=sys.stderr)
        return 2
    wrong = [
        f"--{name.replace('_', '-')} {value}"
        for name, value, ok in (
            ("hidden", args.hidden, 1 <= args.hidden <= MAX_HIDDEN),
            ("layers", args.layers, 1 <= args.layers <= MAX_LAYERS),
            ("lr", args.lr, args.lr > 0),
            ("lr_late", args.lr_late, args.lr_late >= 0),
            ("lr_drop_epoch", args.lr_drop_epoch, args.lr_drop_epoch >= 0),
            ("weight_decay", args.weight_decay, args.weight_decay >= 0),
        )
        if not ok
    ]
    if wrong:  # a network of no width, a negative decay (silently plain Adam), ...: nothing worth training
        print(
            f"deepstack train: error: {', '.join(wrong)}: --hidden must be from 1 to {MAX_HIDDEN}, --layers from 1 to "
            f"{MAX_LAYERS}, --lr positive, "
            "--lr-late, --lr-drop-epoch and --weight-decay not negative",
            file=sys.stderr,
        )
        return 2
    spec = TrainSpec(
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        lr_late=args.lr_late,
        lr_drop_epoch=args.lr_drop_epoch,
        hidden=args.hidden,
        layers=args.layers,
        seed=args.seed,
        schedule=args.schedule,
        weight_decay=args.weight_decay,
        pot=args.pot,
    )
    try:
        made = make_folder(args.out)
    except OSError as exc:  # a file, a folder we may not write in, ...: before minutes of training
        print(f"deepstack train: error: {cannot_write(args.out, exc)}", file=sys.stderr)
        return 1
    code = _train_into(args, spec, game)
    if code != 0:
        remove_empty(made)  # a refused run leaves no empty --out behind
    return code


def _train_into(args: argparse.Namespace, spec: TrainSpec, game: Game) -> int:
    """Train into the --out folder made; 0, or the exit status of the refusal printed."""
    try:
        check_registrable(Path(args.out) / f"{args.name}.pt", args.name)
        if game.deck_size <= 12:
            space = HandSpace(game)
            stats = train(
                [Path(d) for d in args.data],
                Path(args.out),
                buckets=space.size,
                extra=len(space.deck),
                spec=spec,
                model_name=args.name,
                canonical_space=space,
                init=Path(args.init) if args.init else None,
                game=args.game,
            )
        else:
            table, _, extra_manifest = street_abstraction(args.street, args.river_buckets or RIVER_BUCKETS, args.buckets)
            stats = train(
                [Path(d) for d in args.data],
                Path(args.out),
                buckets=table.num_buckets,
                extra=0,
                spec=spec,
                model_name=args.name,
                encoder=SituationEncoder(table, float(sum(game.stack))),
                extra_manifest=extra_manifest,
                init=Path(args.init) if args.init else None,
                game=args.game,
                round_=STREET_ROUND[args.street],
            )
    except (FileNotFoundError, ValueError, ModelError) as exc:
        print(f"deepstack train: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # --out not a folder, no space left, ...
        print(f"deepstack train: error: {cannot_write(args.out, exc)}", file=sys.stderr)
        return 1
    print(
        f"best validation loss {stats['validation_loss']:.6f} at epoch {stats['best_epoch']} "
        f"({int(stats['situations'])} situations)"
    )
    return 0


def add_ensemble_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``deepstack ensemble`` (trained value networks averaged into one TorchScript network)."""
    p = sub.add_parser(
        "ensemble",
        help="average trained value networks into one TorchScript network",
        description="One network whose output is the mean of its members' (each checked against its manifest; they "
        "must share inputs, outputs and shape: train them with the same --hidden and --layers, e.g. --hidden 256 "
        "--layers 5 beside the shipped Leduc networks). It is recorded in the manifest with every member's provenance, and loads "
        "wherever a value network does (e.g. bot.leduc.value_net).",
        epilog=example("deepstack ensemble --out my-ens.pt --name my-ens models/leduc/leduc-limit.pt runs/s1/leduc-limit-s1.pt"),
        formatter_class=HelpFormatter,
    )
    p.add_argument("members", nargs="+", metavar="NET", help="the networks to average (.pt files listed in a manifest)")
    p.add_argument("--out", type=path_arg, required=True, help="the ensemble's file (e.g. models/leduc/leduc-limit-ens.pt)")
    p.add_argument("--name", required=True, help="its name in the manifest")
    p.set_defaults(func=_run_ensemble)


def _run_ensemble(args: argparse.Namespace) -> int:
    from agent.training.ensemble import build_ensemble

    if Path(args.out).is_dir():
        print(f"deepstack ensemble: error: --out {args.out}: is a folder; give the ensemble's file name", file=sys.stderr)
        return 2
    try:
        path = build_ensemble(args.members, Path(args.out), args.name)
    except ModelError as exc:
        print(f"deepstack ensemble: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path} ({len(args.members)} networks averaged)")
    return 0
