"""The torch counterpart (``native.torch_showdown``) agrees with the C kernels."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from native.board_tables import HandList  # noqa: E402
from native.showdown import ShowdownKernel  # noqa: E402
from native.torch_showdown import TorchShowdown  # noqa: E402

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def random_boards(rng: np.random.Generator, n: int, sizes: tuple[int, ...] = (5,), deck: int = 52) -> list[tuple[int, ...]]:
    return [tuple(int(c) for c in rng.choice(deck, sizes[i % len(sizes)], replace=False)) for i in range(n)]


def random_reach(rng: np.random.Generator, rows: int, H: int) -> np.ndarray:
    r = rng.random((rows, H)).astype(np.float32)
    r[rng.random((rows, H)) < 0.3] = 0
    return r


def tolerance(reach: np.ndarray) -> float:
    return 5e-6 * (1.0 + float(np.abs(reach).sum(axis=1).max()))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_torch_backend_matches_c_kernels(device: str, dtype: torch.dtype) -> None:
    rng = np.random.default_rng(20)
    boards = random_boards(rng, 9, sizes=(5, 5, 4, 3))
    ts = TorchShowdown(None, boards, device=device, dtype=dtype, backend="torch")
    c = ShowdownKernel(None, boards)
    reach = random_reach(rng, 48, 1326)
    rows = rng.integers(0, len(boards), 48)
    t_reach = torch.as_tensor(reach, dtype=dtype, device=device)
    t_rows = torch.as_tensor(rows, device=device)
    scale = torch.linspace(0.5, 3.0, 48, dtype=dtype, device=device)
    for method, ref in ((ts.showdown, c.showdown), (ts.fold, c.fold)):
        got = method(t_reach, t_rows, scale=scale).cpu().double().numpy()
        want = ref(reach, rows, scale=scale.cpu().float().numpy())
        np.testing.assert_allclose(got, want, rtol=0, atol=3 * tolerance(reach))
    prepared = ts.prepare(t_rows)
    np.testing.assert_allclose(
        prepared.showdown(t_reach).cpu().double().numpy(), c.showdown(reach, rows), rtol=0, atol=tolerance(reach)
    )
    np.testing.assert_allclose(prepared.fold(t_reach).cpu().double().numpy(), c.fold(reach, rows), rtol=0, atol=tolerance(reach))
    # blocked hands are exactly zero
    blocked = ~c.valid[rows]
    assert (prepared.showdown(t_reach).cpu().numpy()[blocked] == 0).all()


@pytest.mark.parametrize("deck", [6, 52])
def test_one_card_hands_and_small_lists(deck: int) -> None:
    rng = np.random.default_rng(21)
    hands = HandList(np.arange(deck).reshape(-1, 1))
    boards = random_boards(rng, 4, sizes=(1, 2, 0) if deck == 6 else (5, 1, 3), deck=deck)
    ts = TorchShowdown(hands, boards, backend="torch")
    c = ShowdownKernel(hands, boards)
    reach = random_reach(rng, 20, hands.size)
    rows = rng.integers(0, 4, 20)
    t_reach, t_rows = torch.from_numpy(reach), torch.from_numpy(rows)
    np.testing.assert_allclose(ts.showdown(t_reach, t_rows).numpy(), c.showdown(reach, rows), atol=tolerance(reach))
    np.testing.assert_allclose(ts.fold(t_reach, t_rows).numpy(), c.fold(reach, rows), atol=tolerance(reach))


def test_auto_backend_uses_the_c_kernels_on_cpu_float32() -> None:
    rng = np.random.default_rng(22)
    board = random_boards(rng, 1)[0]
    auto = TorchShowdown(None, board)
    assert auto.backend == "c"
    assert TorchShowdown(None, board, dtype=torch.float64).backend == "torch"
    reach = torch.rand(3, 1326)
    pure = TorchShowdown(None, board, backend="torch")
    torch.testing.assert_close(auto.showdown(reach), pure.showdown(reach), atol=5e-3, rtol=0)
    one = auto.showdown(reach[0], scale=2.0)
    assert one.shape == (1326,)
    torch.testing.assert_close(one, 2.0 * auto.showdown(reach)[0])
    torch.testing.assert_close(auto.prepare(None, rows=3).fold(reach), pure.fold(reach), atol=5e-3, rtol=0)


def test_torch_bad_inputs() -> None:
    ts = TorchShowdown(None, [(0, 1, 2, 3, 4), (5, 6, 7, 8, 9)], backend="torch")
    reach = torch.zeros(2, 1326)
    with pytest.raises(ValueError, match="row_board is required"):
        ts.showdown(reach)
    with pytest.raises(ValueError, match="out of range"):
        ts.showdown(reach, torch.tensor([0, 2]))
    with pytest.raises(ValueError, match="integer"):
        ts.showdown(reach, torch.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="shape"):
        ts.showdown(torch.zeros(2, 100), torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="float32"):
        ts.showdown(reach.double(), torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="scale"):
        ts.showdown(reach, torch.tensor([0, 1]), scale=torch.ones(3))
    with pytest.raises(ValueError, match="expect 2 rows"):
        ts.prepare(torch.tensor([0, 1])).showdown(torch.zeros(3, 1326))
    with pytest.raises(ValueError, match="backend"):
        TorchShowdown(None, [(0, 1, 2)], backend="gpu")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="backend='c'"):
        TorchShowdown(None, [(0, 1, 2)], dtype=torch.float64, backend="c")
