"""The figures of `lakehouse report volatility --plots DIR`, from a computed `Volatility`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from lakehouse.models.figures import ecdf, pyplot, save
from lakehouse.models.volatility import D_BIN, RATE_BINS_PER_DECADE, RATE_LOWEST, Volatility

SCATTER_POINTS = 20_000  # more hides nothing and slows the PNG


def plot_volatility(result: Volatility, folder: Path) -> list[Path]:
    """Write the five PNGs into `folder`; returns their paths."""
    tasks = result.tasks
    return [
        _cv_ecdfs(tasks, folder / "volatility_cv_ecdf.png"),
        _mean_abs_d_histogram(tasks, folder / "volatility_task_mean_abs_d.png"),
        _d_ecdf(result.d_distribution(), folder / "volatility_d_ecdf.png"),
        _joint_heatmap(result.joint(), folder / "volatility_joint_heatmap.png"),
        _mean_scatter(tasks, folder / "volatility_task_means.png"),
    ]


def _cv_ecdfs(tasks: pl.DataFrame, path: Path) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for column, label in (("cv_mu1s", "1-second samples (µ1s)"), ("cv_mu5m", "5-minute means (µ5m)")):
        x, p = ecdf(tasks[column].drop_nulls().to_numpy())
        ax.step(x, p, where="post", label=label)
    ax.set_xscale("symlog", linthresh=0.1)
    ax.set_xlabel("coefficient of variation per task")
    ax.set_ylabel("share of tasks")
    ax.set_title(f"CPU usage variability, {tasks.height:,} tasks of measured jobs")
    ax.legend()
    return save(fig, path)


def _mean_abs_d_histogram(tasks: pl.DataFrame, path: Path) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    values = tasks["mean_abs_d"].drop_nulls().to_numpy()
    ax.hist(np.clip(values, 0, 5), bins=100, range=(0, 5))
    ax.set_xlabel("mean |d| per task, d = (µ5m − µ1s) / µ5m (clipped at 5)")
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


def _mean_scatter(tasks: pl.DataFrame, path: Path) -> Path:
    plt = pyplot()
    points = tasks.filter((pl.col("mean_mu5m") > 0) & (pl.col("mean_mu1s") > 0))
    if points.height > SCATTER_POINTS:
        points = points.sample(SCATTER_POINTS, seed=0)
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
