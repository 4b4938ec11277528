"""The figures of `lakehouse report predictions --plots DIR`, from the stored per-job predictions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from lakehouse.base.figures import ecdf, pyplot, save

SIZE_BINS = [1, 2, 6, 21, 101, 1001]  # workflow sizes: 1, 2-5, 6-20, 21-100, 101-1000, > 1000


def plot_predictions(jobs: pl.DataFrame, source: str, folder: Path) -> list[Path]:
    """Two PNGs per source, on its evaluation jobs; returns their paths."""
    rows = jobs.filter(~pl.col("train"))
    stem = source.replace("/", "_")
    return [
        _ratio_ecdfs(rows, source, folder / f"predictions_{stem}_ecdf.png"),
        _accuracy_by_size(rows, source, folder / f"predictions_{stem}_accuracy.png"),
    ]


def _ratio_ecdfs(rows: pl.DataFrame, source: str, path: Path) -> Path:
    plt = pyplot()
    resources = rows["resource"].unique().sort().to_list()
    fig, axes = plt.subplots(1, len(resources), figsize=(4.2 * len(resources), 3.6), squeeze=False)
    for ax, resource in zip(axes[0], resources, strict=True):
        part = rows.filter(pl.col("resource") == resource)
        for column, label in (("predicted", "predicted / used"), ("requested", "requested / used")):
            x, p = ecdf((part[column] / part["used"]).to_numpy())
            ax.step(x, p, where="post", label=label)
        ax.axvline(1.0, color="grey", lw=0.8)
        ax.set_xscale("log")
        ax.set_title(f"{resource} ({part.height:,} jobs)", fontsize=9)
        ax.set_xlabel("ratio to the usage (< 1: under-estimated)")
    axes[0, 0].set_ylabel("share of jobs")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(source, fontsize=10)
    return save(fig, path)


def _accuracy_by_size(rows: pl.DataFrame, source: str, path: Path) -> Path:
    plt = pyplot()
    labels = ["1", "2-5", "6-20", "21-100", "101-1000", ">1000"]
    size = np.digitize(rows["workflow_jobs"].to_numpy(), SIZE_BINS) - 1
    accuracy = {
        column: pl.min_horizontal(pl.col(column), pl.col("used")) / pl.max_horizontal(pl.col(column), pl.col("used"))
        for column in ("predicted", "requested")
    }
    data = rows.with_columns(size=pl.Series(size), **{f"{c}_accuracy": e for c, e in accuracy.items()})
    means = data.group_by("resource", "size").agg(
        pl.col("predicted_accuracy").mean(), pl.col("requested_accuracy").mean()
    )
    resources = data["resource"].unique().sort().to_list()
    fig, ax = plt.subplots(figsize=(7, 3.8))
    width = 0.8 / max(len(resources), 1)
    for i, resource in enumerate(resources):
        part = means.filter(pl.col("resource") == resource).sort("size")
        x = part["size"].to_numpy() + i * width
        ax.bar(x, part["predicted_accuracy"], width, label=f"{resource}: predicted")
        ax.scatter(x, part["requested_accuracy"], color="black", marker="_", s=120, zorder=3)
    ax.scatter([], [], color="black", marker="_", label="users' requests")
    ax.set_xticks(np.arange(len(labels)) + width * (len(resources) - 1) / 2, labels)
    ax.set_xlabel("jobs in the workflow")
    ax.set_ylabel("mean accuracy min(p, u) / max(p, u)")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7)
    ax.set_title(f"{source}: accuracy by workflow size", fontsize=10)
    return save(fig, path)
