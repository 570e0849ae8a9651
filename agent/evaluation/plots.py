"""PNG pictures for people: strategy grids, curves with confidence bands."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from agent.common.files import write_png
from agent.evaluation.stats import z95
from agent.solver.ranges import RANKS_DESC, class_label


def _pyplot():
    # imported here: matplotlib costs ~0.5 s at import (measured), paid only when a PNG is drawn
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def strategy_grids_png(path: str | Path, grids: dict[str, np.ndarray], title: str = "") -> None:
    """One 13x13 heat map per action (frequency of the action in each hand class)."""

    plt = _pyplot()
    n = len(grids)
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 4.4 * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.axis("off")
    for ax, (name, g) in zip(axes.flat, grids.items()):
        masked = np.ma.masked_invalid(g)
        im = ax.imshow(masked, vmin=0, vmax=1, cmap="viridis")
        ax.set_title(name)
        ax.set_xticks(range(13), list(RANKS_DESC))
        ax.set_yticks(range(13), list(RANKS_DESC))
        for i in range(13):
            for j in range(13):
                if not math.isnan(g[i, j]):
                    ax.text(
                        j, i, class_label(i, j), ha="center", va="center", fontsize=5, color="white" if g[i, j] < 0.6 else "black"
                    )
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_png(path, fig, dpi=120)
    plt.close(fig)


def winnings_png(path: str | Path, series: dict[str, np.ndarray], unit: float, title: str = "") -> None:
    """Cumulative winnings (chips) with a 95% band, and the running win rate (mbb/g) with its
    95% interval, for each named series of per-hand values."""
    plt = _pyplot()
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    for name, values in series.items():
        v = np.asarray(values, dtype=np.float64)
        n = np.arange(1, len(v) + 1)
        cum = np.cumsum(v)
        mean = cum / n
        var = _running_var(v)
        z = np.array([z95(int(k)) for k in n])  # the reported intervals' multiplier at each count
        band = z * np.sqrt(var * n)
        line = top.plot(n, cum, label=name)[0]
        top.fill_between(n, cum - band, cum + band, color=line.get_color(), alpha=0.2)
        rate = 1000.0 * mean / unit
        half = 1000.0 * z * np.sqrt(var / n) / unit
        start = min(len(v) - 1, max(1, len(v) // 50))  # the first few hands say nothing
        bottom.plot(
            n[start:], rate[start:], color=line.get_color(), label=f"{name}: {rate[-1]:+.0f} ± {half[-1]:.0f} mbb/g (95% CI)"
        )
        bottom.fill_between(n[start:], (rate - half)[start:], (rate + half)[start:], color=line.get_color(), alpha=0.2)
    top.axhline(0, color="grey", lw=0.8)
    bottom.axhline(0, color="grey", lw=0.8)
    top.set_ylabel("cumulative winnings (chips)")
    bottom.set_ylabel("win rate (mbb/g), 95% interval")
    bottom.set_xlabel("hands")
    top.legend(loc="upper left")
    bottom.legend(loc="upper right")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_png(path, fig, dpi=110)
    plt.close(fig)


def _running_var(v: np.ndarray) -> np.ndarray:
    n = np.arange(1, len(v) + 1)
    s1 = np.cumsum(v)
    s2 = np.cumsum(v * v)
    var = (s2 - s1 * s1 / n) / np.maximum(n - 1, 1)
    var[:1] = np.nan  # one hand: no spread known (not a spread of 0)
    return np.maximum(var, 0.0)


def _ms(value: float) -> str:
    """A think time for a label: whole ms, but a cached answer's 0.3 ms is not written "0 ms"."""
    return f"{value:.0f} ms" if value >= 10 else f"{value:.1f} ms"


def think_times_png(path: str | Path, by_street: dict[str, np.ndarray], limit_ms: float | None = None, title: str = "") -> None:
    """Think time per decision, one box per street, with its mean and 95th percentile under it."""
    plt = _pyplot()
    names = list(by_street)
    fig, ax = plt.subplots(figsize=(1.8 * max(len(names), 2) + 2, 4.5))
    data = [np.asarray(by_street[k], dtype=np.float64) for k in names]
    ax.boxplot(data, showfliers=True, whis=(5, 95))
    labels = [f"{k}\nmean {_ms(d.mean())}\np95 {_ms(np.percentile(d, 95))}" if len(d) else k for k, d in zip(names, data)]
    ax.set_xticks(range(1, len(names) + 1), labels)
    if limit_ms is not None:
        ax.axhline(limit_ms, color="red", lw=0.8, ls="--", label=f"{limit_ms:.0f} ms per hand (dealer average)")
        ax.legend(loc="lower right")
    ax.set_ylabel("think time per decision (ms)")
    ax.set_yscale("log")
    if title:
        ax.set_title(title)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_png(path, fig, dpi=110)
    plt.close(fig)
