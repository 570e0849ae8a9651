"""Harvested river rows against the same river subgames solved alone (docs/training.md, "River data
harvested from turn solves"):

    python scripts/harvest_check.py TURN_DIR/river --rows 2000 --out ALONE_DIR

A sample of the harvested rows (board, pot, both ranges) is solved again as river situations on their
own, as `deepstack generate --street river` solves them (the iterations given), and the two sets of
targets are compared: the Huber loss between them in the river network's buckets (the measure the
networks are scored by) and the range-weighted mean absolute difference per hand, overall and by how
much of their range the less-reaching player brings into the subgame. The shipped river network's loss
on each set is printed beside them as the scale. ``--out`` keeps the solved-alone rows as a river
data folder.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from agent.nets.encoding import SituationEncoder
from agent.nets.manifest import load_value_net
from agent.nets.valuenet import masked_huber
from agent.solver.handspace import HandSpace
from agent.training.data_folder import load_shards, write_atomic
from agent.training.datagen import solve_situations
from agent.training.generate_spec import GenerateSpec
from agent.training.situations import Situation
from agent.training.streets import street_abstraction
from protocol.gamedef import load_game


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("harvest", help="a harvested river folder (TURN_DIR/river)")
    p.add_argument("--rows", type=int, default=2000, help="rows sampled (default 2000)")
    p.add_argument("--iterations", type=int, default=200, help="iterations of the solves alone (default 200)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    p.add_argument("--net", default="models/holdem/river-small.pt", help="the river network printed as the scale")
    p.add_argument("--out", default=None, help="keep the solved-alone rows here as a river data folder")
    args = p.parse_args()
    torch.set_num_threads(1)
    game = load_game("hunl")
    space = HandSpace(game)
    parts = list(load_shards(Path(args.harvest)))
    rows = {k: np.concatenate([part[k] for part in parts]) for k in ("boards", "pots", "ranges", "values", "reach")}
    n = len(rows["pots"])
    pick = np.sort(np.random.default_rng(args.seed).choice(n, min(args.rows, n), replace=False))
    sample = {k: v[pick] for k, v in rows.items()}
    sits = [
        Situation(tuple(int(c) for c in b), int(pot), r.astype(np.float64))
        for b, pot, r in zip(sample["boards"], sample["pots"], sample["ranges"])
    ]
    config = GenerateSpec(game="hunl", round=3, situations=1, iterations=args.iterations).solver_config("float32")
    start = time.time()
    alone = np.stack(solve_situations(space, 3, sits, config, batch=8)).astype(np.float32)
    print(f"{len(sits)} of {n} harvested rows solved alone in {time.time() - start:.0f} s ({args.iterations} iterations)")
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        arrays = {"boards": sample["boards"], "pots": sample["pots"], "ranges": sample["ranges"], "values": alone}
        meta = {"spec": {"game": "hunl", "round": 3, "solved_alone_from": str(args.harvest), "iterations": args.iterations}}
        write_atomic(out / "shard-00000.npz", arrays, meta)
        (out / "generate.json").write_text(json.dumps(meta, indent=1))

    net, entry = load_value_net(args.net)
    table, _, _ = street_abstraction("river", int(entry["river_buckets"]))
    encoder = SituationEncoder(table, float(sum(game.stack)))
    x, y_h, m = (torch.as_tensor(a) for a in encoder({**sample}))
    _, y_a, _ = (torch.as_tensor(a) for a in encoder({**sample, "values": alone}))
    with torch.no_grad():
        pred = net(x)

    def per_row(a: torch.Tensor, b: torch.Tensor) -> np.ndarray:
        loss = torch.nn.functional.huber_loss(a * m, b * m, reduction="none", delta=1.0).sum(dim=1)
        return (loss / m.sum(dim=1).clamp(min=1.0)).numpy()

    weighted = (np.abs(sample["values"] - alone) * sample["ranges"]).sum(axis=2).max(axis=1)
    low = sample["reach"].min(axis=1)
    bins = [("all", np.ones(len(low), bool))]
    edges = [1e-3, 1e-2, 1e-1, 1.01]
    bins += [(f"less-reaching player's mass {a:g}-{b:g}", (low >= a) & (low < b)) for a, b in zip(edges, edges[1:])]
    print(f"Huber in {table.num_buckets} river buckets (fraction of the pot); weighted: range-weighted mean |diff|")
    print("| rows | n | harvested vs alone | weighted, mean (median) | network vs alone | network vs harvested |")
    print("|---|---|---|---|---|---|")
    for name, sel in bins:
        if not sel.any():
            continue
        s = torch.as_tensor(sel)
        print(
            f"| {name} | {int(sel.sum())} | {float(masked_huber(y_h[s], y_a[s], m[s])):.4f} "
            f"| {weighted[sel].mean():.4f} ({np.median(weighted[sel]):.4f}) "
            f"| {float(masked_huber(pred[s], y_a[s], m[s])):.4f} | {float(masked_huber(pred[s], y_h[s], m[s])):.4f} |"
        )
    loss = per_row(y_h, y_a)
    worst = [
        (round(float(loss[i]), 4), sample["reach"][i].round(3).tolist(), int(sample["pots"][i])) for i in np.argsort(loss)[-3:]
    ]
    print("worst rows (harvested vs alone Huber, reach, pot):", worst)


if __name__ == "__main__":
    main()
