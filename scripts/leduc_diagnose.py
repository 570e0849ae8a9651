"""Where the Leduc network agent's exploitability comes from (issue 31 diagnosis).

Variants of the agent, each measured exactly (continual re-solving at every public state, exact
best response): round 2 solved exactly; a perfect network (oracle: round 2 solved exactly at each
CFR iteration's leaf ranges, the floor any network reaches); the network agent as shipped (round 2 starts from the
network's per-board values averaged over the re-solve's iterations); the earlier hand-over (the
network asked again at the leaf's average ranges); that hand-over with round 2 solved exactly at
those ranges instead of the network. Also the network's error on the (leaf, board) states the
agent reaches, against round 2 solved exactly there (models/README.md has the numbers).

    python scripts/leduc_diagnose.py --game leduc-limit [--net PATH] [--iterations 300] [--variants ...]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

import numpy as np
import torch

from agent.bots.config import load_config
from agent.bots.settings import leduc_settings
from agent.evaluation.evaluate import agent_profile, profile_exploitability
from agent.leaves.handnet import HandNetLeafValues
from agent.nets.encoding import pot_scale
from agent.resolving.chance_solve import SolvedChanceValues
from agent.resolving.continual import ContinualResolver
from agent.resolving.settings import ResolveSettings, StreetSettings
from agent.solver.handspace import HandSpace
from agent.solver.resolve import SolverConfig
from agent.solver.tree import FCPA
from agent.training.datagen import encode, solve_last_round_batch
from agent.training.datasets import canonical_rows
from agent.training.situations import Situation
from protocol.gamedef import load_game


def measure(space, settings) -> tuple[float, float]:
    t = time.perf_counter()
    prof = agent_profile(space, (FCPA, FCPA), lambda: ContinualResolver(space, settings))
    e = profile_exploitability(prof)
    return 1000 * e["exploitability"] / space.game.big_blind, time.perf_counter() - t


class _SnapshotOnly(HandNetLeafValues):
    """The network leaves without their averaged per-board values: continual re-solving then
    falls back to asking the network again at the leaf's average ranges (the hand-over before)."""

    average_board_values = None  # type: ignore[assignment]


class _OracleLeaf(HandNetLeafValues):
    """A perfect network: round 2 solved exactly (batched CFR) at each iteration's leaf ranges, in
    place of the network's answer. The agent with it is the floor any network can reach in this
    pipeline (what remains above the exact agent is the depth-limited procedure's own)."""

    def __init__(self, space: HandSpace, config: SolverConfig) -> None:
        super().__init__(torch.jit.script(torch.nn.Linear(1, 1)), space)  # never asked: board_values below
        self.config = config
        self.calls = 0

    def board_values(self, reach: torch.Tensor, batch) -> torch.Tensor:
        norm, mass = self.board_ranges(reach, batch)
        h = self.space.size
        hands = batch.hands.cpu().numpy()
        sits = []
        for r, board in enumerate(batch.boards):
            ranges = np.zeros((2, h))
            ranges[:, hands] = norm[:, r].cpu().numpy()
            sits.append(Situation(tuple(board), int(round(batch.pots[r, 0].item())), ranges))
        solved = solve_last_round_batch(self.space, 1, sits, self.config)
        self.calls += 1
        values = torch.as_tensor(np.stack(solved), dtype=reach.dtype)[:, :, hands].transpose(0, 1)  # [2, R, H]
        return values * batch.pots.unsqueeze(0) * mass.flip(0) * batch.valid


def baseline_values(space: HandSpace, settings: ResolveSettings) -> dict[str, float]:
    """The agent's exact expected win (mbb/g, both seats averaged) against the call, raise and random
    baselines of limit Leduc, whose actions are exactly the tree's (what `deepstack match` estimates)."""
    from agent.solver.cfr import Solver, exploitability
    from agent.solver.variant import Variant
    from protocol.state import ActionKind

    prof = agent_profile(space, (FCPA, FCPA), lambda: ContinualResolver(space, settings))
    la = prof.lookahead
    ours = prof.strategy / prof.strategy.sum(dim=1, keepdim=True).clamp(min=1e-30)
    reach = torch.full((2, space.size), 1.0 / space.size, dtype=torch.float64)
    solver = Solver(la, Variant())
    out = {}
    for name in ("call", "raise", "random"):
        total = 0.0
        for seat in (0, 1):  # the baseline's seat
            mixed = ours.clone()
            for m, row in enumerate(la.dec_rows.tolist()):
                node = la.nodes[row]
                if node.player != seat:
                    continue
                kinds = [a.kind for a in node.actions]
                probs = torch.zeros(len(kinds), dtype=torch.float64)
                if name == "call":
                    probs[kinds.index(ActionKind.CALL)] = 1.0
                elif name == "raise":
                    probs[kinds.index(ActionKind.RAISE) if ActionKind.RAISE in kinds else kinds.index(ActionKind.CALL)] = 1.0
                else:
                    probs[:] = 1.0 / len(kinds)
                mixed[m, : len(kinds)] = probs.unsqueeze(1)
            e = exploitability(solver, reach, mixed)
            total += e["value1"] if seat == 0 else e["value0"]
        out[name] = 1000 * total / 2 / space.game.big_blind
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--game", default="leduc-limit")
    ap.add_argument("--net", default=None, help="a network listed in models/manifest.json (default: the shipped one)")
    ap.add_argument("--raw-net", default=None, help="an unlisted TorchScript network file (experiments; canonical suits)")
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--algorithm", default=None, help="the re-solves' CFR variant (default: the bot's, config.yaml)")
    ap.add_argument("--exact-iterations", type=int, default=2000)
    ap.add_argument("--oracle-iterations", type=int, default=300, help="DCFR iterations of each oracle leaf solve")
    ap.add_argument(
        "--variants",
        default="net,net-snapshot,net+exact-chance,errors",
        help="exact (round 2 solved exactly), oracle (a perfect network: round 2 solved exactly at each iteration's "
        "leaf ranges), net (as shipped), net-snapshot (round 2 from the network asked again at "
        "the leaf's average ranges), net+exact-chance (from round 2 solved exactly at those ranges), errors (the "
        "network against round 2 solved exactly on the states net-snapshot reaches), baselines (limit: the agent's "
        "exact expected win against call, raise and random)",
    )
    ap.add_argument("--dump", default=None, help="write the reached states, solved exactly, as network rows (npz)")
    args = ap.parse_args()
    game = load_game(args.game)
    cfg = load_config(None)
    bot = cfg.bot.leduc_limit if game.is_limit else cfg.bot.leduc
    bot = replace(bot, iterations=args.iterations, algorithm=args.algorithm or bot.algorithm)
    if args.net:
        bot = replace(bot, value_net=args.net)
    space = HandSpace(game)
    out: dict[str, object] = {"game": args.game, "net": bot.value_net}
    variants = args.variants.split(",")
    if "exact" in variants:
        out["exact"] = measure(space, leduc_settings(game, space, replace(bot, value_net=None), "cpu"))[0]
    net = leduc_settings(game, space, bot, "cpu")
    if args.raw_net:
        leaf = HandNetLeafValues(torch.jit.load(args.raw_net), space, canonical=True)
        r1 = replace(net.streets[0], leaf_values=leaf, chance_values=leaf.chance_values)
        net = ResolveSettings(streets=(r1, net.streets[1]))
        out["net"] = args.raw_net
    r1, r2 = net.streets
    if "baselines" in variants:  # exact expected results of the matches against the baselines (limit)
        out["against_baselines_mbb_g"] = baseline_values(space, net)
    if "oracle" in variants:  # a perfect network: round 2 solved exactly at each iteration's leaf ranges
        oracle = _OracleLeaf(
            space, SolverConfig(algorithm="dcfr", iterations=args.oracle_iterations, dtype="float64", device="cpu")
        )
        o1 = replace(r1, leaf_values=oracle, chance_values=oracle.chance_values)
        out["oracle"], out["oracle_seconds"] = measure(space, ResolveSettings(streets=(o1, r2)))
        out["oracle_leaf_calls"] = oracle.calls
    if "net" in variants:  # the agent as shipped: round 2 starts from the averaged leaf values
        out["exploitability"], out["seconds"] = measure(space, net)
    # the earlier hand-over: the network asked again at the leaf's average ranges (LeafSnapshot)
    snap_leaf = _SnapshotOnly(r1.leaf_values.net, space, canonical=r1.leaf_values.canonical)
    records: list[tuple[object, tuple[int, ...], np.ndarray]] = []

    def recording(leaf, board):
        v = snap_leaf.chance_values(leaf, board)
        records.append((leaf, board, v))
        return v

    snap = replace(r1, leaf_values=snap_leaf, chance_values=recording)
    if {"net-snapshot", "net+exact-chance", "errors"} & set(variants):
        out["net-snapshot"] = measure(space, ResolveSettings(streets=(snap, r2)))[0]
    exact_r2 = StreetSettings(
        sizing=(FCPA,),
        config=SolverConfig(algorithm="dcfr", iterations=args.exact_iterations, dtype="float64", device="cpu"),
    )
    if not {"net+exact-chance", "errors"} & set(variants):
        print(json.dumps(out, indent=1))
        return
    solved = SolvedChanceValues(space, exact_r2, (FCPA, FCPA), snap_leaf.chance_values)
    if "net+exact-chance" in variants:
        out["net+exact-chance"] = measure(space, ResolveSettings(streets=(replace(snap, chance_values=solved), r2)))[0]
    # the network's error on the reached (leaf, board) states, per hand, as a fraction of the pot:
    # the states solved exactly (batched, --exact-iterations) from the leaf's average ranges
    keep = [(leaf, board) for leaf, board, _ in records if (leaf.reach * space.valid(board)).sum(axis=1).min() > 0]
    sits = [Situation(board, int(sum(leaf.spent)), leaf.reach * space.valid(board)) for leaf, board in keep]
    config = SolverConfig(algorithm="dcfr", iterations=args.exact_iterations, dtype="float64", device="cpu")
    exact = solve_last_round_batch(space, 1, sits, config)
    rows = [encode(space, sit, values) for sit, values in zip(sits, exact)]
    x, y, m = canonical_rows(*(np.stack([r[i] for r in rows]) for i in range(3)), space)
    leaf_fn = snap_leaf
    with torch.no_grad():
        pred = leaf_fn.net(torch.as_tensor(x)).numpy()
    h = space.size
    own = np.concatenate([x[:, 1 : 1 + h], x[:, 1 + h : 1 + 2 * h]], axis=1)
    err = np.abs(pred - y)[m > 0]
    pots = np.repeat(x[:, :1] * pot_scale(game), 2 * h, axis=1)[m > 0]
    out["reached_states"] = len(sits)
    out["abs_err_mean"] = float(err.mean())
    out["abs_err_range_weighted"] = float((err * own[m > 0]).sum() / own[m > 0].sum())
    out["abs_err_max"] = float(err.max())
    out["by_pot"] = {f"{p:g}": float(err[np.isclose(pots, p)].mean()) for p in sorted(set(np.round(pots, 6).tolist()))}
    if args.dump:
        np.savez_compressed(args.dump, inputs=x, targets=y, masks=m)
        out["dumped"] = args.dump
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
