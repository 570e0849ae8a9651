"""``config.yaml``: typed, frozen settings with a loader that refuses anything it does not know.

The settings are plain frozen dataclasses passed explicitly to whoever needs them (no
global settings). The loader checks every value against the dataclass field types and
rejects unknown keys, so a typo fails at start-up with the file, the line and the key path
in the message instead of being silently ignored.

Paths in a config file (the fields marked ``path`` below) are made absolute when it is
loaded: a relative path resolves against the folder of the file that names it, wherever the
command runs from. A model path that is not there but names one of the shipped models
(``models/...``) resolves to the installed package's copy, so a copy of the shipped
``config.yaml`` works from any folder. A key left out of the file takes the built-in default,
which names the shipped models of the installed package.
"""

from __future__ import annotations

import dataclasses
import os
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Union

import yaml

from agent.common.yaml_files import load_yaml, shown
from models import MODELS_DIR
from protocol.dealer import MAX_TIME_MS

DEFAULT_CONFIG_PATH = Path(__file__).resolve().parents[2] / "config.yaml"
#: where the built-in defaults' relative paths point: the folder holding the shipped ``models/``
#: (the repository in a checkout, site-packages in an installed package)
PACKAGE_ROOT = MODELS_DIR.parent

#: the largest seed of the bots' random choices (a 32-bit one, as the dealer's and `deepstack match`'s)
MAX_SEED = 2**32 - 1
#: more threads than this is a typo, not a machine: torch's OpenMP pool failed to start 16,384 threads
#: (libgomp: thread creation failed) and segfaulted at 100,000 on a 2-core machine; 4,096 still ran
MAX_THREADS = 1024
#: the longest wait the client takes (~115 days): socket timeouts overflow the platform's time_t near 9.2e9 s
MAX_TIMEOUT_S = 10**7
#: the most CFR iterations per re-solve taken (DeepStack used 1000-2000): start-up solves the first states
#: with them and no clock, so a typo here was a bot that never took its seat
MAX_ITERATIONS = 1_000_000
#: field metadata of a path read by the bot (checked at start-up; falls back to a shipped model)
MODEL_PATH = {"path": "model"}
#: field metadata of a path the program writes (a log, a cache)
OUTPUT_PATH = {"path": "output"}
#: field metadata of a field set by the loader, never read from the file
INTERNAL = {"internal": True}


class ConfigError(ValueError):
    """A configuration that cannot be used; the message names the file, the line and the key.

    ``key`` is the key path the message is about (None: the key path its message starts with)."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class LoggingConfig:
    """The ``logging:`` section: the log level and an optional JSON-lines file (``--log-json`` overrides it)."""

    level: Literal["debug", "info", "warning", "error"] = "info"
    #: JSON-lines log file for machines (None: console only)
    json_path: str | None = field(default=None, metadata=OUTPUT_PATH)


@dataclass(frozen=True)
class ClientConfig:
    """The ``client:`` section: how long ``deepstack play`` waits for the dealer, to connect and between messages."""

    #: how long ``deepstack play`` keeps retrying to reach the dealer
    connect_timeout_s: float = 30.0
    #: give up (exit 4) when the dealer sends nothing for this long; null: wait as long as it takes
    #: (the ACPC dealer may wait minutes for a slow opponent)
    read_timeout_s: float | None = None

    def __post_init__(self) -> None:
        # finite: the socket's timeout and the connect deadline take no infinity (null is "forever")
        if not 0 < self.connect_timeout_s <= MAX_TIMEOUT_S:
            raise ConfigError(
                f"client.connect_timeout_s: {self.connect_timeout_s} is not a finite positive number of seconds "
                f"(at most {MAX_TIMEOUT_S})"
            )
        if self.read_timeout_s is not None and not 0 < self.read_timeout_s <= MAX_TIMEOUT_S:
            raise ConfigError(
                f"client.read_timeout_s: {self.read_timeout_s} is not a finite positive number of seconds "
                f"(at most {MAX_TIMEOUT_S}; null waits forever)"
            )


@dataclass(frozen=True)
class LeducBotConfig:
    """Continual re-solving in Leduc (both rounds use fold, call, pot, all-in)."""

    #: CFR iterations per re-solve
    iterations: int = 300
    algorithm: Literal["dcfr", "cfr+", "dcfr+", "hybrid"] = "dcfr"
    #: TorchScript value network replacing round 2 in round-1 re-solves (null: solve round 2 exactly)
    value_net: str | None = field(default=None, metadata=MODEL_PATH)
    #: the first states' re-solves on disk (agent/bots/start_cache.py): used when made by the same
    #: settings, models and code, else solved at start-up; a file of your own is written at match end
    start_cache: str | None = field(default=None, metadata=MODEL_PATH)

    def __post_init__(self) -> None:
        if self.iterations < 1:  # no iteration leaves the uniform strategy: a bot that plays at random
            raise ConfigError(f"iterations: {self.iterations} must be at least 1")
        if self.iterations > MAX_ITERATIONS:
            raise ConfigError(f"iterations: {self.iterations} is more than {MAX_ITERATIONS}")


@dataclass(frozen=True)
class StreetConfig:
    """Re-solving on one hold'em street."""

    #: CFR iterations (the solver also stops at the decision's time budget)
    iterations: int = 200
    #: how the lookahead ends: "net" (DeepStack's value network of the next street),
    #: "checkdown" (the rest of the hand checked down; no network), "end" (solve to the end)
    leaves: Literal["net", "checkdown", "end"] = "checkdown"
    #: with leaves "net" (flop, turn): the leaves whose chips behind over the pot are at most this
    #: are checked down instead, where the network errs most and check-down is nearly exact
    #: (docs/results.md, "Leaf accuracy"); 0: the network at every leaf
    checkdown_spr: float = field(default=0.0, metadata={"only_with": ("leaves", "net")})
    #: the first iterations left out of the average strategy and values (DeepStack's hybrid
    #: CFR left out 980 of 1000 pre-flop, 500 of 1000 on the flop and turn, 1000 of 2000 on the
    #: river); the clock stops a re-solve only after an iteration that counts
    skip: int = 0

    def __post_init__(self) -> None:
        if self.iterations < 1:  # checked first: the skip's bound below is the iterations
            raise ConfigError(f"iterations: {self.iterations} must be at least 1")
        if self.iterations > MAX_ITERATIONS:
            raise ConfigError(f"iterations: {self.iterations} is more than {MAX_ITERATIONS}")
        if not 0 <= self.skip < self.iterations:
            raise ConfigError(f"skip: {self.skip} must be >= 0 and below the iterations ({self.iterations})")
        if not (self.checkdown_spr >= 0 and self.checkdown_spr < float("inf")):
            raise ConfigError(f"checkdown_spr: {self.checkdown_spr} must be a number >= 0")
        if self.checkdown_spr > 0 and self.leaves != "net":
            raise ConfigError(f"checkdown_spr: {self.checkdown_spr} is for leaves 'net', not {self.leaves!r}")


@dataclass(frozen=True)
class WarmStartConfig:
    """DeepStack's opponent-range warm start at our first action of a round (section 3)."""

    #: probability the opponent must enter the re-solve with the estimated range (0 = off)
    #: 0.5 by measured exploitability (LBR on the same deals; docs/results.md, "Warm-start weight")
    weight: float = 0.5
    #: "aggressive": forced entry when the re-solve's root faces no bet (one that starts facing a
    #: bet always uses "conservative"; a re-solve from the round's start faces none);
    #: "conservative": the gadget deals (1 - weight) uniform + weight estimate (keeps the guarantee)
    mode: Literal["conservative", "aggressive"] = "aggressive"
    #: when the opponent acted first in a round (after the pre-flop): "round_start" re-solves
    #: from the round's start with its action in the tree and the warm start there (the
    #: opponent's choice, bluffs included, is part of the re-solve); "current" re-solves at
    #: the state faced with the conservative warm start (DeepStack's)
    opponent_first: Literal["round_start", "current"] = "round_start"

    def __post_init__(self) -> None:
        if not 0.0 <= self.weight < 1.0:
            raise ConfigError(f"bot.hunl.warm_start.weight: {self.weight} is not in [0, 1)")


@dataclass(frozen=True)
class HoldemModels:
    """The model files of the hold'em bot (``bot.hunl.models``): leaf networks, bucket tables and the
    pre-flop check-down matrices, each checked against its manifest (sha256) at start-up."""

    #: the turn re-solve's leaves (turn: {leaves: net}); models/holdem/river.pt is the larger network
    river_net: str = field(default="models/holdem/river-small.pt", metadata=MODEL_PATH)
    #: the flop re-solve's leaves (flop: {leaves: net}) and the turn's start values (street_start_values:
    #: net): turn.pt distilled into one 4 x 256 network, as accurate on held-out turn situations and
    #: ~3.5x cheaper per flop iteration, so the flop gets its iterations in time (docs/benchmarks.md);
    #: models/holdem/turn.pt is its teacher, and the network flop data is generated with
    turn_net: str = field(default="models/holdem/turn-small.pt", metadata=MODEL_PATH)
    flop_net: str = field(default="models/holdem/flop.pt", metadata=MODEL_PATH)
    aux_net: str = field(default="models/holdem/preflop-aux.pt", metadata=MODEL_PATH)
    turn_buckets: str = field(default="models/holdem/buckets-turn.npz", metadata=MODEL_PATH)
    flop_buckets: str = field(default="models/holdem/buckets-flop.npz", metadata=MODEL_PATH)
    preflop_checkdown: str = field(default="models/holdem/preflop-checkdown.npz", metadata=MODEL_PATH)


@dataclass(frozen=True)
class HoldemBotConfig:
    """Continual re-solving in heads-up no-limit hold'em (DeepStack's sparse lookahead trees)."""

    algorithm: Literal["dcfr", "cfr+", "dcfr+", "hybrid"] = "dcfr"
    preflop: StreetConfig = field(default_factory=lambda: StreetConfig(300, "checkdown"))
    flop: StreetConfig = field(default_factory=lambda: StreetConfig(60, "net", checkdown_spr=1.0))
    turn: StreetConfig = field(default_factory=lambda: StreetConfig(150, "net", checkdown_spr=1.0))
    river: StreetConfig = field(default_factory=lambda: StreetConfig(400, "end"))
    warm_start: WarmStartConfig = field(default_factory=WarmStartConfig)
    #: the opponent's values at the start of a street after a depth-limited one (what the
    #: re-solving gadget holds it to): "leaf" (the depth limit's own values: check-down or a
    #: network's), "net" (the new street's network where a street ends in check-down: the flop
    #: network after the pre-flop, the turn network after the flop, the river network after the
    #: turn; check-down where the leaf's chips behind are at most the pot) or "solve" (the new
    #: street solved from its start with both ranges at the leaf: agent/resolving/chance_solve.py)
    street_start_values: Literal["leaf", "net", "solve"] = "net"
    models: HoldemModels = field(default_factory=HoldemModels)
    #: how the leaf networks multiply (streets with leaves: net): auto = bfloat16 on a CPU that has
    #: it in hardware (3-4x faster, the same held-out loss to the fifth digit), else float32
    net_precision: Literal["auto", "float32", "bfloat16"] = "auto"
    #: the first states' re-solves and the pre-flop decisions on disk (agent/bots/start_cache.py):
    #: used when made by the same settings, models and code, else solved at start-up; a file of
    #: your own (not a shipped one under models/) is rewritten at match end with the decisions met
    start_cache: str | None = field(default="models/start/hunl.pkl", metadata=MODEL_PATH)

    def __post_init__(self) -> None:
        if self.preflop.checkdown_spr > 0:
            raise ConfigError(
                "bot.hunl.preflop.checkdown_spr: the pre-flop's network leaves are the auxiliary network's, all of them"
            )
        if self.river.leaves != "end":  # it has no street below: 'net' or 'checkdown' would change nothing but the updates
            raise ConfigError(f"bot.hunl.river.leaves: {self.river.leaves!r}; the river is always solved to the end ('end')")


#: the largest share of the dealer's allowance a bot may plan to use
MAX_SAFETY = 0.9


@dataclass(frozen=True)
class TimeConfig:
    """The dealer's time rules (ACPC competition defaults) and how much of them we plan to use;
    every decision of the DeepStack bot, in any game, is budgeted from them."""

    #: average allowance per hand over the match
    t_per_hand_ms: int = 7000
    #: per reply, and per hand
    t_response_ms: int = 600_000
    t_hand_ms: int = 600_000
    #: fraction of the allowance banked (the rest covers I/O and other programs) and of each share used
    safety: float = 0.7
    #: a re-solve the clock stops before this many iterations (or its own count, if lower) is not
    #: played: its average strategy is still near uniform, all-in included; the bot checks or folds
    min_iterations: int = 20
    #: the network's round trip to the dealer, ms: the dealer's clock runs while our answer travels
    #: (and the state before it), which the bot cannot measure; charged per reply and reserved for the
    #: replies a hand is expected to need still (a remote dealer: its ping time; 0 on loopback)
    latency_ms: float = 0.0

    def __post_init__(self) -> None:
        for key in ("t_per_hand_ms", "t_response_ms", "t_hand_ms", "min_iterations"):
            if getattr(self, key) <= 0:
                raise ConfigError(f"{key}: {getattr(self, key)} is not positive")
        for key in ("t_per_hand_ms", "t_response_ms", "t_hand_ms"):
            if getattr(self, key) > MAX_TIME_MS:
                raise ConfigError(f"{key}: {getattr(self, key)} is more than {MAX_TIME_MS} ms")
        # above 1 the bot plans more time than the dealer gives; above 0.9 too little is left for what
        # the bot cannot time (reading, answering, other programs: ~26 ms a decision measured)
        if not 0.0 < self.safety <= MAX_SAFETY:
            raise ConfigError(f"safety: {self.safety} is not in (0, {MAX_SAFETY}]")
        per_reply = min(self.t_response_ms, self.t_hand_ms)  # a round trip that long leaves a reply no time
        if not 0.0 <= self.latency_ms < per_reply:  # NaN fails too
            limit = "t_response_ms" if per_reply == self.t_response_ms else "t_hand_ms"
            raise ConfigError(f"latency_ms: {self.latency_ms} is not in [0, {limit} {per_reply})")


@dataclass(frozen=True)
class BlueprintBotConfig:
    """The abstraction-based blueprint bot (``--bot blueprint``; agent/blueprint): its file per game
    and how its action probabilities are post-processed before play (seed 001, section 4)."""

    leduc: str | None = field(default="models/blueprint/leduc.npz", metadata=MODEL_PATH)
    leduc_limit: str | None = field(default="models/blueprint/leduc-limit.npz", metadata=MODEL_PATH)
    hunl: str | None = field(default="models/blueprint/hunl.npz", metadata=MODEL_PATH)
    postprocess: Literal["none", "threshold", "purify", "fold-bet"] = "none"
    #: thresholding's cut-off; for fold-bet, the fold probability above which it folds outright
    threshold: float = 0.15

    def __post_init__(self) -> None:
        if not 0.0 <= self.threshold <= 1.0:
            raise ConfigError(f"bot.blueprint.threshold: {self.threshold} is not in [0, 1]")


@dataclass(frozen=True)
class BotConfig:
    """The ``bot:`` section: the time rules, and each bot's settings per game (Leduc, limit Leduc, HUNL, blueprint)."""

    time: TimeConfig = field(default_factory=TimeConfig)
    leduc: LeducBotConfig = field(
        default_factory=lambda: LeducBotConfig(value_net="models/leduc/leduc-ens.pt", start_cache="models/start/leduc.pkl")
    )
    leduc_limit: LeducBotConfig = field(
        default_factory=lambda: LeducBotConfig(
            value_net="models/leduc/leduc-limit-ens.pt", start_cache="models/start/leduc-limit.pkl"
        )
    )
    hunl: HoldemBotConfig = field(default_factory=HoldemBotConfig)
    blueprint: BlueprintBotConfig = field(default_factory=BlueprintBotConfig)


@dataclass(frozen=True)
class Config:
    """Everything ``deepstack play`` and friends read from ``config.yaml``."""

    device: Literal["auto", "cpu", "cuda"] = "auto"
    #: CPU threads of the bot's tensor work and native kernels (0: PyTorch's default, one per
    #: core). Its re-solves take the same time on one or two (docs/benchmarks.md, "Solver
    #: threads"); one leaves the other core to the machine (the opponent, the dealer)
    threads: int = 1
    seed: int = 0
    logging: LoggingConfig = field(default_factory=LoggingConfig)
    client: ClientConfig = field(default_factory=ClientConfig)
    bot: BotConfig = field(default_factory=BotConfig)
    #: the file these settings came from (set by the loader, named in errors; None: built-in defaults)
    source: str | None = field(default=None, compare=False, metadata=INTERNAL)

    def __post_init__(self) -> None:
        if self.threads < 0:
            raise ConfigError(f"threads: {self.threads} is negative (0: one per core)")
        if self.threads > MAX_THREADS:
            raise ConfigError(f"threads: {self.threads} is more than {MAX_THREADS} (0: one per core)")
        if not 0 <= self.seed <= MAX_SEED:  # checked here, before `play` takes a seat
            raise ConfigError(f"seed: {self.seed} is outside 0..{MAX_SEED}")


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is Literal:
        return " | ".join(repr(a) for a in typing.get_args(tp))
    if origin in (Union, types.UnionType):
        return " | ".join(_type_name(a) for a in typing.get_args(tp))
    if origin in (tuple, list):
        return f"list of {_type_name(typing.get_args(tp)[0])}"
    return "null" if tp is type(None) else getattr(tp, "__name__", str(tp))


def _convert(value: Any, tp: Any, where: str) -> Any:
    """``value`` checked against (and converted to) the annotation ``tp``."""
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a mapping, got {type(value).__name__}")
        return _build(tp, value, where)
    if origin is Literal:
        if value not in typing.get_args(tp):
            raise ConfigError(f"{where}: {shown(value)} is not one of {_type_name(tp)}")
        return value
    if origin in (Union, types.UnionType):
        for option in typing.get_args(tp):
            try:
                return _convert(value, option, where)
            except ConfigError:
                continue
        raise ConfigError(f"{where}: {shown(value)} is not {_type_name(tp)}")
    if origin in (tuple, list):
        if not isinstance(value, list):
            raise ConfigError(f"{where}: expected a list, got {type(value).__name__}")
        item_type = typing.get_args(tp)[0]
        items = [_convert(v, item_type, f"{where}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if tp is type(None):
        if value is not None:
            raise ConfigError(f"{where}: expected null")
        return None
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false, got {shown(value)}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected an integer, got {shown(value)}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: expected a number, got {shown(value)}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a string, got {shown(value)}")
        return value
    raise ConfigError(f"{where}: unsupported setting type {tp!r}")  # a bug in the dataclasses


def _build(cls: Any, data: dict[str, Any], where: str, base: Any = None) -> Any:
    """``data`` (a mapping of the file) laid over ``base`` (default: the class's defaults). A mapping
    given for a nested part is laid over that part's default here, not over its class's defaults:
    `bot: {leduc: {iterations: 100}}` keeps the Leduc bot's shipped network."""
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls) if not f.metadata.get("internal")}
    unknown = sorted(set(data) - known, key=str)  # YAML keys may be numbers too: `1: a`
    if unknown:
        raise ConfigError(
            f"{where or 'top level'}: unknown key(s) {', '.join(map(shown, unknown))}; known: {', '.join(sorted(known))}",
            key=f"{where}.{unknown[0]}" if where else str(unknown[0]),
        )
    base = cls() if base is None else base
    kwargs = {}
    for k, v in data.items():
        key = f"{where}.{k}" if where else k
        default = getattr(base, k)
        if isinstance(v, dict) and dataclasses.is_dataclass(default):
            kwargs[k] = _build(type(default), v, key, base=default)
        else:
            kwargs[k] = _convert(v, hints[k], key)
    # a setting that only applies with another's value falls back to its class default when the
    # file changes that other setting and leaves it unsaid: `turn: {leaves: checkdown}` over a
    # default of network leaves with `checkdown_spr: 1` drops the 1
    for f in dataclasses.fields(cls):
        if "only_with" in f.metadata and f.name not in data:
            other, needed = f.metadata["only_with"]
            if other in kwargs and kwargs[other] != needed:
                kwargs[f.name] = f.default
    try:
        return dataclasses.replace(base, **kwargs)
    except ConfigError as exc:  # a check of the part's own fields names them without its key path
        first = str(exc).split(":", 1)[0]
        if where and first in known:
            raise ConfigError(f"{where}.{exc}", key=f"{where}.{first}") from None
        raise


def _resolve_paths(obj: Any, given: Any, base: Path) -> Any:
    """``obj`` with its path fields made absolute: a path given in the file (``given``, the
    file's mapping at this level) against ``base``, the file's folder, and a shipped model
    not found there against the package; a built-in default against the package."""
    changes: dict[str, Any] = {}
    given = given if isinstance(given, dict) else {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value):
            changes[f.name] = _resolve_paths(value, given.get(f.name), base)
        elif f.metadata.get("path") and isinstance(value, str) and not Path(value).expanduser().is_absolute():
            relative = Path(value).expanduser()
            if f.name not in given:
                changes[f.name] = str(PACKAGE_ROOT / relative)
                continue
            path = base / relative
            shipped = PACKAGE_ROOT / relative
            if (
                f.metadata["path"] == "model"
                and not _looked_up(path.exists)
                and _looked_up(shipped.is_file)
                and _is_shipped(shipped)
            ):
                path = shipped
            changes[f.name] = str(path)
        elif f.metadata.get("path") and isinstance(value, str):
            changes[f.name] = str(Path(value).expanduser())
    return dataclasses.replace(obj, **changes) if changes else obj


def _looked_up(test: Callable[[], bool]) -> bool:
    """``path.exists`` or ``path.is_file``'s answer; False for a path the file system refuses to look
    up (a name too long): the model check names its key then, not the loader a bare OSError."""
    try:
        return test()
    except OSError:
        return False


def _is_shipped(path: Path) -> bool:
    try:
        path.resolve().relative_to(MODELS_DIR)
    except ValueError:
        return False
    return True


def default_config() -> Config:
    """The built-in defaults, their model paths pointing at the installed package's ``models/``."""
    return _resolve_paths(Config(), {}, PACKAGE_ROOT)


def _key_lines(text: str) -> dict[str, int]:
    """Line (1-based) of every key path in a YAML text, e.g. ``bot.hunl.warm_start.weight``."""
    lines: dict[str, int] = {}

    def walk(node: yaml.Node, where: str) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    path = f"{where}.{key.value}" if where else str(key.value)
                    lines.setdefault(path, key.start_mark.line + 1)
                    walk(value, path)

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return lines
    if root is not None:
        walk(root, "")
    return lines


def config_from_dict(
    data: dict[str, Any], source: str = "<config>", base: Path | None = None, lines: dict[str, int] | None = None
) -> Config:
    """Settings from a file's mapping; ``base`` is the folder its relative paths resolve
    against (None: the package's, as for the built-in defaults), ``lines`` the line of each
    key path, named in errors."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping")
    try:
        config = _build(Config, data, "")
    except ConfigError as exc:
        key = exc.key or str(exc).split(":", 1)[0]  # every message starts with its key path
        while key and key not in (lines or {}):
            key = key.rpartition(".")[0]
        where = f"{source}:{lines[key]}" if lines and key else source
        raise ConfigError(f"{where}: {exc}") from None
    config = _resolve_paths(config, data, base if base is not None else PACKAGE_ROOT)
    return dataclasses.replace(config, source=source)


def _yaml_error(path: Path, exc: yaml.YAMLError) -> str:
    """One line: the file, line and column, and what the parser expected."""
    mark = getattr(exc, "problem_mark", None)
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context, context_mark = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if context and context_mark is not None:
        problem += f" ({context} started at line {context_mark.line + 1}, column {context_mark.column + 1})"
    elif context:
        problem += f" ({context})"
    return f"{where}: not valid YAML: {problem}"


def load_config(path: str | Path | None = None) -> Config:
    """Read and validate ``config.yaml``: ``path``, else ``$DEEPSTACK_CONFIG``, else the shipped one."""
    if path is None and os.environ.get("DEEPSTACK_CONFIG"):
        path = os.environ["DEEPSTACK_CONFIG"]
    path = Path(path) if path is not None else DEFAULT_CONFIG_PATH
    if not path.is_file():
        if path == DEFAULT_CONFIG_PATH:
            return default_config()  # installed without the file: built-in defaults are the file's defaults
        raise ConfigError(f"{path}: {'a folder, not a config file' if path.is_dir() else 'no such config file'}")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not valid YAML: not UTF-8 text (byte {exc.start} is {raw[exc.start]:#04x})") from None
    try:
        data = load_yaml(text)  # a key given twice is refused, not the last one kept
    except yaml.YAMLError as exc:
        raise ConfigError(_yaml_error(path, exc)) from None
    except (ValueError, RecursionError) as exc:  # a number of > 4300 digits; lists nested thousands deep
        raise ConfigError(f"{path}: not a config YAML reads: {str(exc)[:200] or type(exc).__name__}") from None
    return config_from_dict(data or {}, str(path), base=path.resolve().parent, lines=_key_lines(text))
