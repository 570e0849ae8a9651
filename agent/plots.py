"""PNG pictures for people: strategy grids, curves with confidence bands."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def strategy_grids_png(path: str | Path, grids: dict[str, np.ndarray], title: str = "") -> None:
    """One 13x13 heat map per action (frequency of the action in each hand class)."""
    from agent.ranges import RANKS_DESC, class_label

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
                    ax.text(j, i, class_label(i, j), ha="center", va="center", fontsize=5, color="white" if g[i, j] < 0.6 else "black")
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
