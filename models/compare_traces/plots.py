"""The traces' jobs side by side: the share of jobs up to each duration and each size, one line per
trace and cell (from the log bins of `model.compare`)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from lakehouse.base.figures import pyplot, save
from lakehouse.models.compare_traces.model import Comparison, label

MEASURES = (("duration_s", "job duration (s, end - start)"), ("size", "job size (tasks; SWF: processors)"))


def plot_comparison(result: Comparison, folder: Path) -> list[Path]:
    plt = pyplot()
    figure, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, (measure, title) in zip(axes, MEASURES, strict=True):
        rows = result.distributions.filter(pl.col("measure") == measure)
        for (trace, cell), part in rows.group_by(["trace", "cell"], maintain_order=True):
            part = part.sort("bin")
            share = part["jobs"].cum_sum() / part["jobs"].sum()
            ax.step((10 ** (part["bin"] + 0.1)).to_list(), share.to_list(), where="post", label=label(trace, cell))
        ax.set_xscale("log")
        ax.set_xlabel(title)
        ax.set_ylabel("share of jobs up to it")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, loc="lower right")
    figure.suptitle("Traces side by side")
    return [save(figure, folder / "compare-traces.png")]
