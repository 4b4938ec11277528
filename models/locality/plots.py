"""Figures of `lakehouse report locality`: the grid of f per log as heatmaps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from lakehouse.base.figures import pyplot, save
from lakehouse.base.units import format_duration
from lakehouse.models.locality.model import Variant


def plot_locality(frame: pl.DataFrame, folder: Path) -> list[Path]:
    """One PNG per log: f over (submit bin, run-time ratio) for the time and time+user variants, the best
    cell of each framed, and the user variant's f against the ratio."""
    plt = pyplot()
    paths = []
    for log in frame["log"].unique(maintain_order=True):
        panels = [v for v in (Variant.time, Variant.pair) if frame.filter(log=log, variant=str(v)).height]
        users = frame.filter(log=log, variant=str(Variant.user)).sort("t_r")
        fig, axes = plt.subplots(1, len(panels) + bool(users.height), figsize=(5.2 * (len(panels) + 1), 4.2))
        axes = np.atleast_1d(axes)
        for ax, variant in zip(axes, panels, strict=False):
            cells = frame.filter(log=log, variant=str(variant))
            t_s = sorted(cells["t_s"].unique())
            t_r = sorted(cells["t_r"].unique())
            f = np.full((len(t_s), len(t_r)), np.nan)
            for row in cells.iter_rows(named=True):
                f[t_s.index(row["t_s"]), t_r.index(row["t_r"])] = row["locality"]
            image = ax.imshow(f, cmap="viridis", aspect="auto", origin="lower")
            fig.colorbar(image, ax=ax, label="f (bits)")
            ax.set_xticks(range(len(t_r)), [f"{x:g}" for x in t_r])
            ax.set_yticks(range(len(t_s)), [format_duration(x) for x in t_s])
            ax.set_xlabel("run-time bin ratio t_r")
            ax.set_ylabel("submit bin t_s")
            ax.set_title(f"{variant} variant")
            best = np.unravel_index(np.nanargmax(f), f.shape)
            ax.add_patch(plt.Rectangle((best[1] - 0.5, best[0] - 0.5), 1, 1, fill=False, edgecolor="red", lw=2))
            middle = (np.nanmin(f) + np.nanmax(f)) / 2
            for (i, j), value in np.ndenumerate(f):
                shade = "black" if value > middle else "white"  # readable on viridis' light and dark ends
                ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7, color=shade)
        if users.height:
            ax = axes[-1]
            ax.plot(users["t_r"], users["locality"], marker="o")
            ax.set_xlabel("run-time bin ratio t_r")
            ax.set_ylabel("f (bits)")
            ax.set_title("user variant")
        fig.suptitle(f"runtime locality of {log}")
        paths.append(save(fig, folder / f"locality-{log}.png"))
    return paths
