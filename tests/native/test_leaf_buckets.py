"""The C encoding and decoding of network leaves (native/src/leaf_buckets.c) against torch."""

from __future__ import annotations

import pytest
import torch

from native.leaf_buckets import LeafBuckets


def _torch_reference(reach, rows, slots, valid, pot, weight, K, stack, net):
    r = reach.index_select(1, rows)  # [2, R, H]
    masked = r * valid
    mass = masked.sum(dim=2, keepdim=True)
    b = torch.zeros(2, len(rows), K).scatter_add_(2, slots.long().expand_as(masked), masked) / mass.clamp(min=1e-30)
    x = torch.cat([(pot / stack).unsqueeze(1), b[0], b[1]], dim=1)
    out = net(x).view(-1, 2, K).transpose(0, 1)
    vals = out.gather(2, slots.long().expand(2, -1, -1)).mul_(valid).mul_(pot.view(1, -1, 1)).mul_(mass.flip(0))
    acc = torch.zeros_like(reach).index_add_(1, rows, vals * weight.view(1, -1, 1))
    return x, vals, acc


def test_encode_and_decode_match_the_torch_formulas() -> None:
    gen = torch.Generator().manual_seed(0)
    R, H, K, L = 30, 57, 9, 4
    rows = torch.randint(0, L, (R,), generator=gen)
    slots = torch.randint(0, K, (R, H), generator=gen)
    valid = (torch.rand(R, H, generator=gen) > 0.2).float()
    pot, weight = torch.rand(R, generator=gen) * 100 + 1, torch.rand(R, generator=gen)
    reach = torch.rand(2, L, H, generator=gen)
    reach[1, 2] = 0  # a leaf the opponent never reaches: mass 0, inputs 0
    lin = torch.nn.Linear(1 + 2 * K, 2 * K)
    with torch.no_grad():
        x_ref, vals_ref, acc_ref = _torch_reference(reach, rows, slots, valid, pot, weight, K, 400.0, lin)
        lb = LeafBuckets(rows, slots, valid, pot, weight, L, K, 400.0)
        x = lb.encode(reach)
        torch.testing.assert_close(x, x_ref, rtol=1e-5, atol=1e-7)
        vals, acc = lb.decode(lin(x_ref))  # the same network output (the masses are the C encode's)
    torch.testing.assert_close(vals, vals_ref, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(acc, acc_ref, rtol=1e-5, atol=1e-5 * float(acc_ref.abs().max()))


def test_bad_inputs_are_refused() -> None:
    rows, slots = torch.tensor([0, 1]), torch.zeros(2, 3, dtype=torch.long)
    ones = torch.ones(2, 3)
    with pytest.raises(ValueError, match="slots must be bucket indices"):
        LeafBuckets(rows, slots + 5, ones, torch.ones(2), torch.ones(2), 2, 4, 400.0)
    with pytest.raises(ValueError, match="rows must be 2 leaf indices"):
        LeafBuckets(rows + 1, slots, ones, torch.ones(2), torch.ones(2), 2, 4, 400.0)
    lb = LeafBuckets(rows, slots, ones, torch.ones(2), torch.ones(2), 2, 4, 400.0)
    with pytest.raises(ValueError, match="reach must be a contiguous float32"):
        lb.encode(torch.ones(2, 2, 3, dtype=torch.float64))
    lb.slots[1, 2] = 7  # corrupted after the checks: the C kernel finds it, no write out of bounds
    with pytest.raises(ValueError, match="index out of range at position 7"):
        lb.encode(torch.ones(2, 2, 3))
