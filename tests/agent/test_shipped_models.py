"""The files shipped in ``models/``: each one listed, intact, and usable the way the bot uses it."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from agent.bots.config import HoldemBotConfig, StreetConfig
from agent.bots.settings import hunl_settings
from agent.nets.manifest import MODELS_DIR, checked_file, load_value_net
from agent.solver.handspace import HandSpace
from agent.solver.resolve import SolverConfig, solve_ranges
from agent.solver.tree import DEEPSTACK_SIZING
from protocol.gamedef import Game
from protocol.state import HandState

MANIFEST = json.loads((MODELS_DIR / "manifest.json").read_text())["models"]
#: manifest name -> street of each hold'em network
HOLDEM_NETS = {
    "river": "river",
    "river-small": "river",
    "turn": "turn",
    "turn-small": "turn",
    "flop": "flop",
    "preflop-aux": "preflop-aux",
}


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_every_listed_file_is_there_with_its_sha256(name: str) -> None:
    path, entry = checked_file(MODELS_DIR / MANIFEST[name]["path"])
    assert path.stat().st_size == entry["bytes"]


@pytest.mark.parametrize("name", sorted(HOLDEM_NETS))
def test_holdem_networks_are_shipped_with_their_provenance(name: str) -> None:
    entry = MANIFEST[name]
    assert entry["street"] == HOLDEM_NETS[name] and entry["command"]
    # an averaged network (``deepstack ensemble``) carries each member's training record, and the
    # held-out test that promoted it, instead of one of its own
    trained = entry.get("members", [entry])
    if "members" in entry:
        assert len(trained) >= 2 and entry["test"]["difference_per_situation"][0] < 0
    for record in trained:
        assert record["training_situations"] > 0 and 0 < record["validation_loss"] < 1 and record["command"]
        # the generating command of each data folder (one, or several pooled)
        assert all(src.get("command") for src in record["data"].get("folders", [record["data"]]))
    assert entry["training_situations"] > 0
    net, _ = load_value_net(MODELS_DIR / entry["path"])
    k = entry["net"]["buckets"]
    x = torch.rand(4, 1 + 2 * k)
    x[:, 1 : 1 + k] /= x[:, 1 : 1 + k].sum(dim=1, keepdim=True)
    x[:, 1 + k :] /= x[:, 1 + k :].sum(dim=1, keepdim=True)
    with torch.no_grad():
        y = net(x)
    assert y.shape == (4, 2 * k) and torch.isfinite(y).all()
    # the outer layer makes the range-weighted values of both players sum to zero
    total = (x[:, 1 : 1 + k] * y[:, :k]).sum(dim=1) + (x[:, 1 + k :] * y[:, k:]).sum(dim=1)
    assert torch.allclose(total, torch.zeros(4), atol=1e-4)


def test_flop_and_aux_networks_record_the_network_that_made_their_targets() -> None:
    """The chain is consistent: each network's data (every pooled folder) was made with the shipped
    network of the street after it, or the network was scored on held-out targets made with it
    (``deepstack eval nets --record``, when a network retrained on them did not beat it), so
    retraining one means regenerating or re-checking the ones above it."""
    for name, below in (("flop", "turn"), ("preflop-aux", "flop")):
        entry, made_by = MANIFEST[name], MANIFEST[below]["sha256"]
        if any(check["next_net_sha256"] == [made_by] for check in entry.get("checks", [])):
            continue
        data = entry["data"]
        for src in data.get("folders", [data]):
            assert src["spec"]["next_net"].endswith(f"{below}.pt"), (name, src["folder"] if "folder" in src else src)
            assert src["next_net_sha256"] == made_by, name


def test_a_distilled_network_learned_from_the_shipped_network_of_its_street() -> None:
    """A network distilled from labels (``deepstack generate --teacher``) stands in for its teacher
    only while the teacher is the one shipped: replacing ``turn.pt`` means distilling again."""
    distilled = 0
    for name, entry in MANIFEST.items():
        teachers = {src.get("teacher_sha256") for src in entry.get("data", {}).get("folders", [])} - {None}
        if teachers:
            assert teachers == {MANIFEST[entry["street"]]["sha256"]}, name
            # and it was scored against its teacher on situations solved, not labelled
            assert any(check["against"][0]["sha256"] in teachers for check in entry["checks"]), name
            distilled += 1
    assert distilled >= 1


def test_the_bot_resolves_with_the_shipped_networks_at_its_depth_limits(hunl: Game) -> None:
    """``leaves: net`` on the pre-flop (auxiliary network) and the flop (turn network): the
    settings build from the shipped files and a re-solve gives a strategy."""
    cfg = replace(HoldemBotConfig(), preflop=StreetConfig(2, "net"), flop=StreetConfig(2, "net"))
    settings = hunl_settings(hunl, cfg, "cpu")
    space = HandSpace(hunl)
    uniform = np.full(space.size, 1.0 / space.size)
    pre = settings.street(0)
    sol = solve_ranges(
        HandState.initial(hunl),
        [uniform, uniform],
        DEEPSTACK_SIZING["preflop"],
        SolverConfig(iterations=2, device="cpu"),
        space=space,
        last_round=pre.last_round,
        leaf_values=pre.leaf_values,
    )
    strategy = sol.root_strategy()
    assert np.all(np.isfinite(strategy))
    np.testing.assert_allclose(strategy.sum(axis=0), 1.0, atol=1e-5)
    flop = settings.street(1)
    board = (0, 13, 26)
    ranges = [uniform * space.valid(board) for _ in range(2)]
    ranges = [r / r.sum() for r in ranges]
    sol = solve_ranges(
        HandState.at_round_start(hunl, 1, (300, 300), board),
        ranges,
        DEEPSTACK_SIZING["flop"],
        SolverConfig(iterations=2, device="cpu"),
        space=space,
        last_round=flop.last_round,
        leaf_values=flop.leaf_values,
    )
    assert np.all(np.isfinite(sol.root_strategy()))
    # the turn network's values per turn card, averaged over the iterations, for the hand-over
    # to the turn (as the Leduc network leaves do: models/README.md)
    la = sol.solver.la
    averaged = flop.leaf_values.average_board_values(la, 0)
    assert averaged is not None and len(averaged) == 49
    for turn_board, values in averaged.items():
        assert turn_board[:3] == board and values.shape == (2, len(la.hands)) and torch.isfinite(values).all()
