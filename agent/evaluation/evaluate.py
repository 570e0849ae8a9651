"""Exact evaluation of the continual re-solving agent (and of a blueprint) in small games (Leduc).

The agent is asked for its strategy at every public state where it acts, for every
private hand at once, exactly as it would compute it in a match: by continual
re-solving from the root along that public path (its range and the opponent values are
carried down the tree, copied at every branch). The resulting full strategy is then
evaluated with an exact best response on the whole game tree.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from agent.blueprint.mccfr import Blueprint
from agent.blueprint.postprocess import postprocess
from agent.common.files import write_json
from agent.resolving.continual import ContinualResolver, HandMemory
from agent.solver.cfr import Solver, exploitability
from agent.solver.handspace import HandSpace
from agent.solver.lookahead import Lookahead, compile_lookahead
from agent.solver.tree import BetSizing, NodeKind, build_tree
from agent.solver.variant import Variant
from native.cards import cards_to_str
from protocol.state import Action, ActionKind, HandState


@dataclass
class AgentProfile:
    """The agent's complete strategy (both seats) on the game tree of ``lookahead``."""

    lookahead: Lookahead
    strategy: torch.Tensor  # [M, A, H]
    resolves: int


def agent_profile(
    space: HandSpace,
    sizing: tuple[BetSizing, ...],
    make_resolver: Callable[[], ContinualResolver],
    progress: bool = False,
) -> AgentProfile:
    """The continual re-solving agent's full strategy on the game tree: at every decision of each seat it
    re-solves along the public path from the root, as in a match, for all private hands at once."""
    la, strategy = _policy_tree(space, sizing)
    dec_index = {int(r): m for m, r in enumerate(la.dec_rows)}
    children = {r: la.children_of(r) for r in range(la.num_rows)}
    resolves = 0
    bar = tqdm(total=int((la.dec_actor >= 0).sum()), desc="agent decisions", disable=not progress)

    for position in (0, 1):
        resolver = make_resolver()
        resolver.start_hand(position)
        assert resolver.memory is not None

        def visit(row: int, memory: HandMemory) -> None:
            nonlocal resolves
            node = la.nodes[row]
            board = la.boards[int(la.row_board[row])]
            state = node.state.with_board(board)
            if node.kind is NodeKind.CHANCE:
                for child in children[row]:
                    resolver.memory = memory.copy()
                    child_state = la.nodes[child].state.with_board(la.boards[int(la.row_board[child])])
                    resolver.observe(child_state)
                    visit(child, resolver.memory)
                return
            if node.kind is not NodeKind.DECISION:
                return
            if node.player != position:
                for child in children[row]:
                    visit(child, memory)
                return
            resolver.memory = memory.copy()
            decision = resolver.decide(state)
            resolves += 0 if decision.cached else 1
            bar.update(1)
            m = dec_index[row]
            after = resolver.memory.copy()
            for a, (action, child) in enumerate(zip(node.actions, children[row])):
                if action not in decision.actions:
                    raise RuntimeError(f"the agent's tree lacks action {action} at {state.betting_string()}")
                strategy[m, a] = torch.as_tensor(decision.strategy[decision.actions.index(action)])
                resolver.memory = after.copy()
                resolver.act(decision, action)
                visit(child, resolver.memory)

        visit(0, resolver.memory.copy())
    bar.close()
    valid_rows = torch.stack([torch.as_tensor(space.valid(la.boards[int(la.row_board[int(r)])])) for r in la.dec_rows])
    strategy = strategy * valid_rows.unsqueeze(1)
    return AgentProfile(la, strategy, resolves)


def blueprint_profile(blueprint: Blueprint, space: HandSpace, method: str = "none", threshold: float = 0.0) -> AgentProfile:
    """A blueprint's average strategy as a profile on its own tree (every hand of every board looked up
    in the abstraction), post-processed by ``method`` as in play (purification's ties broken by a
    fixed seed), for the exact best response of small games."""
    rng = np.random.default_rng(0)
    tree = blueprint.tree
    la = compile_lookahead(tree.root, space, np.arange(space.size), torch.device("cpu"), torch.float64)
    strategy = torch.zeros(len(la.dec_rows), la.num_actions, space.size, dtype=torch.float64)
    for m, row in enumerate(la.dec_rows.tolist()):
        node = la.nodes[row]
        n = tree.index_of(node)
        board = la.boards[int(la.row_board[row])]
        r, a = node.state.round, len(node.actions)
        kinds = [{ActionKind.FOLD: "fold", ActionKind.CALL: "call"}.get(x.kind, "bet") for x in node.actions]
        for h in np.nonzero(space.valid(board))[0]:
            probs = blueprint.average(n, blueprint.abstraction.bucket(r, int(h), board))
            strategy[m, :a, h] = torch.as_tensor(postprocess(probs, kinds, method, threshold, rng))
    return AgentProfile(la, strategy, 0)


def profile_exploitability(profile: AgentProfile) -> dict[str, float]:
    """Exact best-response values against the agent's full strategy (chips per game)."""
    la = profile.lookahead
    solver = Solver(la, Variant())
    size = la.num_hands
    reach = torch.full((2, size), 1.0 / size, dtype=torch.float64)
    strategy = profile.strategy.clone()
    totals = strategy.sum(dim=1, keepdim=True)
    uniform = la.dec_valid.unsqueeze(2).to(strategy.dtype) / la.dec_valid.sum(dim=1).view(-1, 1, 1)
    strategy = torch.where(totals > 0, strategy / totals.clamp(min=1e-30), uniform)
    return exploitability(solver, reach, strategy)


def _policy_tree(space: HandSpace, sizing: tuple[BetSizing, ...]) -> tuple[Lookahead, torch.Tensor]:
    root = build_tree(HandState.initial(space.game), list(sizing))
    la = compile_lookahead(root, space, np.arange(space.size), torch.device("cpu"), torch.float64)
    return la, torch.zeros(len(la.dec_rows), la.num_actions, space.size, dtype=torch.float64)


def _action_name(space: HandSpace, action: Action) -> str:
    return "r" if action.kind is ActionKind.RAISE and space.game.is_limit else str(action)


class PolicyError(ValueError):
    """An exported policy file that does not fit the game's tree (names the file and the entry)."""


def import_policy(space: HandSpace, sizing: tuple[BetSizing, ...], path: str | Path) -> AgentProfile:
    """A profile from :func:`export_policy`'s JSON: the same figure from the file as from the agent,
    so that an exported policy can be checked by anyone (and by this project's own best response)."""
    path = Path(path)
    try:
        table = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PolicyError(f"{path}: not a readable policy JSON file ({exc})") from exc
    if not isinstance(table, dict):
        raise PolicyError(f"{path}: a policy is a JSON object of information sets")
    game_text = table.pop(GAME_KEY, None)  # files written before it was recorded have none
    if game_text is not None and game_text != space.game.to_text():
        raise PolicyError(f"{path}: exported for another game than {space.game.name} (its {GAME_KEY!r} entry)")
    if table and not any("|" in key for key in table):  # another command's JSON (an LBR run.json, say)
        raise PolicyError(
            f"{path}: not a policy file (its keys are not information sets like 'Ks|-|' but {', '.join(list(table)[:3])})"
        )
    la, strategy = _policy_tree(space, sizing)
    expected: set[str] = set()
    for m, row in enumerate(la.dec_rows.tolist()):
        node = la.nodes[row]
        board = la.boards[int(la.row_board[row])]
        valid = space.valid(board)
        betting = node.state.betting_string()
        for h in range(space.size):
            if not valid[h]:
                continue
            key = f"{space.label(h)}|{cards_to_str(board) if board else '-'}|{betting}"
            expected.add(key)
            entry = table.get(key)
            if not isinstance(entry, dict):
                raise PolicyError(f"{path}: information set {key!r} is missing")
            names = [_action_name(space, action) for action in node.actions]
            unknown = sorted(set(entry) - set(names))
            if unknown:
                raise PolicyError(
                    f"{path}: {key!r}: action(s) {', '.join(unknown)} not in the game's tree here ({', '.join(names)})"
                )
            for a, name in enumerate(names):
                p = entry.get(name)
                if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
                    raise PolicyError(f"{path}: {key!r}: no probability in [0, 1] for action {name!r}")
                strategy[m, a, h] = float(p)
            total = float(strategy[m, : len(names), h].sum())
            if abs(total - 1.0) > 1e-6:
                raise PolicyError(f"{path}: {key!r}: the probabilities sum to {total:.9g}, not 1")
    extra = sorted(set(table) - expected)
    if extra:  # another game's information sets (other sizes, cards) that happen to include ours
        raise PolicyError(f"{path}: {len(extra)} information set(s) not in {space.game.name}'s tree, e.g. {extra[0]!r}")
    return AgentProfile(la, strategy, 0)


#: the policy file's entry holding the game definition it was exported for (not an information set)
GAME_KEY = "_game"


def export_policy(profile: AgentProfile, path: str | Path) -> int:
    """Write ``"<private>|<board or ->|<betting>" -> {action: probability}`` JSON, with the game's
    definition under ``"_game"``; returns #infosets."""
    la = profile.lookahead
    space = la.space
    out: dict[str, dict[str, float]] = {}
    for m, row in enumerate(la.dec_rows.tolist()):
        node = la.nodes[row]
        board = la.boards[int(la.row_board[row])]
        valid = space.valid(board)
        betting = node.state.betting_string()
        for h in range(space.size):
            if not valid[h]:
                continue
            probs = profile.strategy[m, : len(node.actions), h].numpy()
            total = probs.sum()
            probs = probs / total if total > 0 else np.full(len(probs), 1 / len(probs))
            key = f"{space.label(h)}|{cards_to_str(board) if board else '-'}|{betting}"
            entry: dict[str, float] = {}
            for action, p in zip(node.actions, probs):
                entry[_action_name(space, action)] = float(p)
            out[key] = entry
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_json(path, {GAME_KEY: space.game.to_text(), **out}, sort_keys=True)
    return len(out)
