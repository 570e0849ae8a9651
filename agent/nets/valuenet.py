"""DeepStack's counterfactual value network (section 5).

Input: the pot as a fraction of the total stacks, both players' ranges over B buckets
(probability mass per bucket), and optional public features (e.g. a one-hot board card
in Leduc, where hands are their own buckets). Output: both players' counterfactual values
per bucket, as fractions of the pot. The body is a stack of fully connected layers with
PReLU; the outer zero-sum layer shifts both value vectors by half of the (range-weighted)
sum of the two players' values, so that the prediction is exactly zero-sum.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass

import torch
from torch import nn

#: the pot features a network's body can see (:attr:`NetSpec.pot`)
POT_FEATURES = ("linear", "log")

#: the smallest pot fraction the "log" feature distinguishes (a pot can never be 0; this only keeps log finite)
_LOG_POT_FLOOR = 1e-6


def without_linear_pot(fields: dict) -> dict:
    """``fields`` less a ``pot`` of "linear", the default: records (manifest ``net`` entries, checkpoints) written
    before the field existed then compare equal to those written since."""
    return {k: v for k, v in fields.items() if not (k == "pot" and v == "linear")}


@dataclass(frozen=True)
class NetSpec:
    """A value network's shape, as its manifest entry's ``net`` records it: B buckets per range, the extra
    public features, and the hidden layers' width and count."""

    buckets: int
    extra: int = 0
    hidden: int = 500
    layers: int = 7
    #: how the body sees the pot: "linear" (the input as it is) or "log" (also its logarithm, so that the
    #: small pots, whose deep trees make most of the loss, are not squeezed into the first percent of the input)
    pot: str = "linear"

    def __post_init__(self) -> None:
        if self.pot not in POT_FEATURES:
            raise ValueError(f"pot feature {self.pot!r} is not one of {', '.join(POT_FEATURES)}")

    @property
    def inputs(self) -> int:
        """Width of an input row: the pot, both ranges' B buckets, then the extra public features."""
        return 1 + 2 * self.buckets + self.extra

    @property
    def body_inputs(self) -> int:
        """Width of the first layer's input: the row, and the pot's logarithm after it where ``pot`` is "log"."""
        return self.inputs + (1 if self.pot == "log" else 0)

    @property
    def outputs(self) -> int:
        """Width of an output row: both players' B bucket values."""
        return 2 * self.buckets

    def to_dict(self) -> dict[str, int | str]:
        """The manifest's (and a checkpoint's) ``net`` entry: compared as a whole to refuse weights of another shape.
        ``pot`` only where it is not "linear", so that the entries written before it existed still compare equal."""
        return without_linear_pot(asdict(self))


class ValueNet(nn.Module):
    """``forward(x)`` with ``x = [pot, range0 (B), range1 (B), extra]`` -> ``[cfv0 (B), cfv1 (B)]``."""

    def __init__(self, spec: NetSpec) -> None:
        super().__init__()
        self.buckets = spec.buckets
        self.log_pot = spec.pot == "log"
        self.log_floor = _LOG_POT_FLOOR
        layers: list[nn.Module] = []
        width = spec.body_inputs
        for _ in range(spec.layers):
            layers += [nn.Linear(width, spec.hidden), nn.PReLU()]
            width = spec.hidden
        layers.append(nn.Linear(width, spec.outputs))
        self.body = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The body's values, less half their range-weighted sum: with each range summing to 1 the two
        players' values cancel, as DeepStack's zero-sum output layer does."""
        b = self.buckets
        if self.log_pot:
            raw = self.body(torch.cat([x, torch.log(x[:, :1].clamp_min(self.log_floor))], dim=1))
        else:
            raw = self.body(x)
        ranges = x[:, 1 : 1 + 2 * b]
        value = (ranges * raw).sum(dim=1, keepdim=True)  # sum of both players' range-weighted values
        return raw - 0.5 * value


def masked_huber(pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor, delta: float = 1.0) -> torch.Tensor:
    """Huber loss averaged over the unmasked outputs (impossible buckets do not count)."""
    loss = nn.functional.huber_loss(pred * mask, target * mask, reduction="none", delta=delta)
    return loss.sum() / mask.sum().clamp(min=1.0)


#: how a leaf network's matrix products run: ``auto`` = bfloat16 on a CPU that computes it
#: natively (AVX512-BF16 or AMX), else float32. On such a CPU the river network answers a turn
#: solve's leaves 3-4x faster in bfloat16 and its held-out loss moves in the fifth digit
#: (docs/benchmarks.md, "Network precision"); on CUDA ``auto`` stays float32 (not yet measured there)
NET_PRECISIONS = ("auto", "float32", "bfloat16")


def cpu_has_native_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 matrices in hardware (elsewhere PyTorch emulates it, slower
    than float32)."""
    cpu = getattr(torch, "cpu", None)
    checks = (getattr(cpu, "_is_avx512_bf16_supported", None), getattr(cpu, "_is_amx_tile_supported", None))
    return any(bool(check()) for check in checks if check is not None)


def resolve_precision(precision: str, device: torch.device | str) -> str:
    """``float32`` or ``bfloat16`` for ``precision`` (one of :data:`NET_PRECISIONS`) on ``device``."""
    if precision not in NET_PRECISIONS:
        raise ValueError(f"network precision {precision!r} is not one of {', '.join(NET_PRECISIONS)}")
    if precision != "auto":
        return precision
    return "bfloat16" if torch.device(device).type == "cpu" and cpu_has_native_bf16() else "float32"


class NetOnDevices:
    """A TorchScript value network that answers on whatever device its input is on.

    One leaf function serves lookaheads on the CPU and on CUDA (a bot's chance values are
    computed on the CPU, data generation may solve on either), so the network is copied once
    to each device it is asked on rather than moved back and forth or fed a tensor from
    another device. ``precision`` (:data:`NET_PRECISIONS`, resolved per device) runs its
    matrix products in bfloat16 under autocast; the answer is float32 either way.
    """

    def __init__(self, net: torch.jit.ScriptModule, precision: str = "float32") -> None:
        resolve_precision(precision, "cpu")  # a bad name fails here, not at the first leaf
        self.net = net
        self.precision = precision
        first = next(iter(net.parameters()), None)
        self._copies = {first.device if first is not None else torch.device("cpu"): net}
        self._bf16: dict[torch.device, bool] = {}

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """The network's float32 answer for ``x`` on ``x``'s device, without gradients (copied there on first
        use; in bfloat16 under autocast where ``precision`` resolves so)."""
        net = self._copies.get(x.device)
        if net is None:
            net = copy.deepcopy(self.net).to(x.device)
            self._copies[x.device] = net
        bf16 = self._bf16.get(x.device)
        if bf16 is None:
            bf16 = self._bf16[x.device] = resolve_precision(self.precision, x.device) == "bfloat16"
        with torch.no_grad():
            if not bf16:
                return net(x)
            with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
                return net(x).float()
