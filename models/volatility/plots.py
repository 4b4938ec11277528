"""The figures of `lakehouse report volatility --plots DIR`, from a computed `Volatility`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from lakehouse.base.figures import pyplot, save
from lakehouse.base.lake import Lake
from lakehouse.models.volatility.model import (
    ABS_D_BIN,
    ABS_D_HIGHEST,
    CV_BINS_PER_DECADE,
    D_BIN,
    RATE_BINS_PER_DECADE,
    RATE_LOWEST,
    Volatility,
)


def plot_volatility(result: Volatility, folder: Path) -> list[Path]:
    """Write the five PNGs into `folder`; returns their paths.  The per-task figures draw the stored
    histograms and sample of the per-task table (`Volatility.task_histograms`, `task_means`)."""
    histograms = result.task_histograms
    figures = [
        _cv_ecdfs(histograms, result.tasks, folder / "volatility_cv_ecdf.png"),
        _mean_abs_d_histogram(
            histograms.filter(pl.col("metric") == "mean_abs_d"), folder / "volatility_task_mean_abs_d.png"
        ),
        _d_ecdf(result.d_distribution(), folder / "volatility_d_ecdf.png"),
        _joint_heatmap(result.joint(), folder / "volatility_joint_heatmap.png"),
        _mean_scatter(result.task_means, folder / "volatility_task_means.png"),
    ]
    return [path for path in figures if path is not None]


def _cv_ecdfs(histograms: pl.DataFrame, tasks: int, path: Path) -> Path | None:
    """The ECDF of each coefficient of variation at the upper edges of its bins (exact there); None
    when no task has one (a CV needs two 5-minute windows: a trace of short tasks has none), rather
    than empty axes."""
    cvs = histograms.filter(pl.col("metric").is_in(["cv_mu1s", "cv_mu5m"]))
    if cvs.is_empty() or cvs["tasks"].sum() == 0:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for column, label in (("cv_mu1s", "1-second samples (µ1s)"), ("cv_mu5m", "5-minute means (µ5m)")):
        bins = histograms.filter(pl.col("metric") == column).sort("bin", nulls_last=False)
        # A CV of 0 has no log bin (NULL): it is the ECDF's value at 0.
        upper = bins["bin"].fill_null(-np.inf).to_numpy() + 1 / CV_BINS_PER_DECADE
        x = np.where(np.isfinite(upper), 10.0**upper, 0.0)
        counts = bins["tasks"].to_numpy()
        ax.step(x, np.cumsum(counts) / max(counts.sum(), 1), where="post", label=label)
    ax.set_xscale("symlog", linthresh=0.1)
    ax.set_xlabel("coefficient of variation per task")
    ax.set_ylabel("share of tasks")
    ax.set_title(f"CPU usage variability, {tasks:,} tasks of measured jobs")
    ax.legend()
    return save(fig, path)


def _mean_abs_d_histogram(histogram: pl.DataFrame, path: Path) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.bar(histogram["bin"].to_numpy(), histogram["tasks"].to_numpy(), width=ABS_D_BIN, align="edge")
    ax.set_xlim(0, ABS_D_HIGHEST + ABS_D_BIN)
    ax.set_xlabel(f"mean |d| per task, d = (µ5m − µ1s) / µ5m (clipped at {ABS_D_HIGHEST:g})")
    ax.set_ylabel("tasks")
    ax.set_title("How far 1-second samples stray from the 5-minute mean")
    return save(fig, path)


def _d_ecdf(histogram: pl.DataFrame, path: Path) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    counts = histogram["windows"].to_numpy()
    # The ECDF at each bin's upper edge (exact there: the bins are the stored histogram).
    upper = histogram["d_bin"].to_numpy() + D_BIN
    ax.step(upper, np.cumsum(counts) / max(counts.sum(), 1), where="post")
    ax.set_xlim(-4, 1.05)
    ax.set_xlabel("d = (µ5m − µ1s) / µ5m (below −4 counted at −4)")
    ax.set_ylabel("share of windows ≤ d")
    ax.set_title(f"Distribution of d over {counts.sum():,} windows")
    return save(fig, path)


def _joint_heatmap(joint: pl.DataFrame, path: Path) -> Path:
    plt = pyplot()
    # Bin index 0 holds rates of 0; then quarter decades from RATE_LOWEST.
    index = lambda column: (  # noqa: E731
        ((joint[column].fill_null(RATE_LOWEST - 1 / RATE_BINS_PER_DECADE) - RATE_LOWEST) * RATE_BINS_PER_DECADE + 1)
        .round()
        .cast(pl.Int64)
        .to_numpy()
    )
    size = int(max(index("mu5m_bin").max(initial=0), index("mu1s_bin").max(initial=0))) + 1 if joint.height else 1
    grid = np.zeros((size, size))
    np.add.at(grid, (index("mu1s_bin"), index("mu5m_bin")), joint["windows"].to_numpy())
    fig, ax = plt.subplots(figsize=(6, 5))
    image = ax.imshow(np.log10(np.where(grid > 0, grid, np.nan)), origin="lower", cmap="viridis", aspect="auto")
    ticks = [0, *range(1 + RATE_BINS_PER_DECADE, size, RATE_BINS_PER_DECADE)]  # 1e-5 would touch 0
    labels = ["0" if t == 0 else f"1e{RATE_LOWEST + (t - 1) // RATE_BINS_PER_DECADE}" for t in ticks]
    ax.set_xticks(ticks, labels)
    ax.set_yticks(ticks, labels)
    ax.set_xlabel("µ5m / CPU request")
    ax.set_ylabel("µ1s / CPU request")
    fig.colorbar(image, label="log10 windows")
    ax.set_title("Joint distribution of the two rates (quarter decades)")
    return save(fig, path)


def _mean_scatter(points: pl.DataFrame, path: Path) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.scatter(points["mean_mu5m"], points["mean_mu1s"], s=2, alpha=0.3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    low, high = ax.get_xlim()
    ax.plot([low, high], [low, high], color="grey", lw=0.8, label="µ1s = µ5m")
    ax.set_xlabel("mean µ5m per task")
    ax.set_ylabel("mean µ1s per task")
    ax.set_title(f"Per-task means ({points.height:,} tasks shown)")
    ax.legend()
    return save(fig, path)


def plot_volatility_2019(lake: Lake, folder: Path, sample: int = 50_000) -> list[Path]:
    """The 2011 method against the 2019 percentiles: each window's |d| (one random second) against its
    E|X - mean| / mean read from the percentiles, on a sample of windows, with the line where they agree
    and each cell's mean of both.  (A sample: the figure's memory stays the same on any trace.)"""
    from lakehouse.models.volatility.cells_2019 import windows_sql

    with lake.reading():
        windows = lake.query(f"SELECT cell, abs_d, mad FROM ({windows_sql()}) USING SAMPLE {int(sample)} ROWS")
    if windows.is_empty():
        return []
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 5))
    ax.hexbin(windows["mad"], windows["abs_d"], gridsize=60, bins="log", cmap="viridis", mincnt=1)
    top = float(max(windows["mad"].quantile(0.99) or 1.0, windows["abs_d"].quantile(0.99) or 1.0))
    ax.plot([0, top], [0, top], color="black", linewidth=1, label="the two agree")
    means = windows.group_by("cell").agg(pl.col("mad").mean(), pl.col("abs_d").mean()).sort("cell")
    ax.scatter(means["mad"], means["abs_d"], color="red", marker="x", label="a cell's means")
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ax.set_xlabel("E|X − mean| / mean from the window's percentiles")
    ax.set_ylabel("|d| = |mean − random second| / mean (2011 method)")
    ax.set_title(f"2011 method vs 2019 percentiles ({windows.height:,} windows)")
    ax.legend(loc="upper left")
    path = folder / "volatility_2019_method_check.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return [path]
