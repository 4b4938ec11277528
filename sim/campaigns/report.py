"""What `lakehouse campaign show` prints and draws from analysis.campaign_runs rows."""

from __future__ import annotations

import enum
from collections.abc import Collection
from pathlib import Path

import numpy as np
import polars as pl

from lakehouse.base.errors import LakehouseError
from lakehouse.base.figures import pyplot, save
from lakehouse.base.log_names import short_log

#: Inches a character of a variant's name takes as a tick label (fontsize 7), and a little more.
LABEL_INCH = 0.06
#: The variant every other one is compared with in the heatmap.
BASELINE = "easy-fcfs"
SHOWN_METRICS = ("mean_bounded_slowdown", "mean_wait", "max_wait", "utilization")


class Metric(enum.StrEnum):
    """Every summary metric a campaign row stores (CAMPAIGN_METRICS and DISTRIBUTION_METRICS)."""

    mean_bounded_slowdown = "mean_bounded_slowdown"
    mean_wait = "mean_wait"
    max_wait = "max_wait"
    mean_response = "mean_response"
    utilization = "utilization"
    makespan = "makespan"
    geomean_wait = "geomean_wait"
    p50_wait = "p50_wait"
    p90_wait = "p90_wait"
    p99_wait = "p99_wait"
    p50_bounded_slowdown = "p50_bounded_slowdown"
    p90_bounded_slowdown = "p90_bounded_slowdown"
    p99_bounded_slowdown = "p99_bounded_slowdown"


class Block(enum.StrEnum):
    """The blocks a confidence interval resamples (lakehouse.campaigns.confidence)."""

    week = "week"
    month = "month"


DEFAULT_REPLICATES = 1000
DEFAULT_CONFIDENCE = 0.95


def interval_columns(metric: str) -> tuple[str, str]:
    """The columns of a metric's confidence interval (`campaign show --ci`)."""
    return f"{metric}_low", f"{metric}_high"


def latest(rows: pl.DataFrame) -> pl.DataFrame:
    """One row per (log, machine size, variant, tau): the newest, should a campaign hold several."""
    keys = ["log", "machine_size", "variant", "tau"]
    return rows.sort("finished_at").unique(subset=keys, keep="last", maintain_order=True).sort("log", "variant")


#: The `inputs` column of a campaign's table: whether the lake still gives the jobs a row was replayed on
#: (not known for runs stored before campaigns recorded their plans).
CURRENT_INPUTS, CHANGED_INPUTS, UNRECORDED_INPUTS = "current", "changed since the run", "not recorded"


def campaign_table(
    rows: pl.DataFrame,
    metric: Metric = Metric.mean_bounded_slowdown,
    changed: Collection[str] = (),
    planned: Collection[str] | None = None,
) -> pl.DataFrame:
    """log x variant with the headline metrics and `metric` (failed runs show their error), and whether
    each row's inputs are the lake's now (`changed`: the jobs fingerprints the lake no longer gives;
    `planned`: the run keys of the campaign's plans, None when not checked)."""
    if rows.is_empty():
        raise LakehouseError("the campaign has no stored runs")
    metrics = dict.fromkeys([*SHOWN_METRICS, metric.value])
    unrecorded = pl.lit(False) if planned is None else ~pl.col("run_key").is_in(list(planned))
    inputs = (
        pl.when(pl.col("jobs_fingerprint").is_in(list(changed)))
        .then(pl.lit(CHANGED_INPUTS))
        .when(unrecorded)
        .then(pl.lit(UNRECORDED_INPUTS))
    )
    intervals = [c for c in (*interval_columns(metric.value), "blocks") if c in rows.columns]
    return latest(rows).select(
        "log", "machine_size", "variant", "status", "jobs", *metrics, *intervals, "error",
        inputs.otherwise(pl.lit(CURRENT_INPUTS)).alias("inputs"),
    )  # fmt: skip


def variant_summary(table: pl.DataFrame, metric: Metric = Metric.mean_bounded_slowdown) -> pl.DataFrame:
    """One row per variant of a campaign's table: its logs, runs that failed, and the median and the
    range of `metric` over its logs."""
    ok = pl.col("status") == "ok"
    value = pl.col(metric.value).filter(ok)
    return (
        table.group_by("variant", maintain_order=True)
        .agg(
            pl.col("log").n_unique().alias("logs"),
            (~ok).sum().alias("failed"),
            value.median().alias(f"median {metric.value}"),
            value.min().alias("lowest"),
            value.max().alias("highest"),
        )
        .sort("variant")
    )


def relative_matrix(rows: pl.DataFrame, metric: Metric) -> tuple[list[str], list[str], np.ndarray]:
    """(variants, logs, metric / metric of EASY-FCFS on the same log); NaN where a run is missing,
    failed or the baseline is absent or zero."""
    ok = latest(rows).filter(pl.col("status") == "ok")
    logs = sorted(ok["log"].unique().to_list())
    variants = sorted(ok["variant"].unique().to_list(), key=lambda v: (v != BASELINE, v))
    matrix = np.full((len(variants), len(logs)), np.nan)
    for row in ok.iter_rows(named=True):
        matrix[variants.index(row["variant"]), logs.index(row["log"])] = row[metric]
    if BASELINE in variants:
        base = matrix[variants.index(BASELINE)].copy()
        base[base == 0] = np.nan
        matrix = matrix / base
    else:
        matrix[:] = np.nan
    return variants, logs, matrix


def campaign_plots(rows: pl.DataFrame, metric: Metric, folder: Path) -> list[Path]:
    """A heatmap of the metric relative to EASY-FCFS (variants x logs) and one bar chart per log."""
    plt = pyplot()
    folder.mkdir(parents=True, exist_ok=True)
    name = rows["campaign"][0]
    variants, logs, matrix = relative_matrix(rows, metric)
    written = []
    # Room for the longest variant name at the labels' size (~0.06 inch a character): tight_layout
    # shrinks the plot for it, and a name longer than the figure would be cut at its edge.
    names = LABEL_INCH * max((len(v) for v in variants), default=0)
    fig, ax = plt.subplots(figsize=(max(6.0, 3.0 + 1.3 * len(logs)) + names, 1.8 + 0.28 * len(variants)))
    shown = np.log2(matrix)
    limit = np.nanmax(np.abs(shown)) if np.isfinite(shown).any() else 1.0
    image = ax.imshow(shown, cmap="RdYlGn" if metric == Metric.utilization else "RdYlGn_r",
                      vmin=-limit, vmax=limit, aspect="auto")  # fmt: skip
    ax.set_xticks(range(len(logs)), [short_log(log) for log in logs], rotation=30)
    ax.set_yticks(range(len(variants)), variants, fontsize=7)
    for i in range(len(variants)):
        for j in range(len(logs)):
            if np.isfinite(matrix[i, j]):
                ax.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=6)
    fig.colorbar(image, ax=ax, label="log2 of the ratio")
    ax.set_title(f"campaign {name}: {metric}\nrelative to {BASELINE} on the same log (green is better)", fontsize=9)
    written.append(save(fig, folder / f"{name}_{metric}_heatmap.png"))
    ok = latest(rows).filter(pl.col("status") == "ok")
    low, high = interval_columns(metric)
    for log in logs:
        part = ok.filter(pl.col("log") == log).sort(metric)
        fig, ax = plt.subplots(figsize=(7 + names, 1.4 + 0.22 * part.height))
        colors = ["tab:red" if v == BASELINE else "tab:blue" for v in part["variant"]]
        values = part[metric].to_numpy()
        # With `--ci`: the interval as error bars (asymmetric: from the value to each end).
        errors = (
            np.vstack([values - part[low].to_numpy(), part[high].to_numpy() - values]) if low in part.columns else None
        )
        ax.barh(part["variant"].to_list(), values, color=colors, xerr=errors, capsize=3 if errors is not None else 0)
        ax.tick_params(axis="y", labelsize=7)
        ax.set_xlabel(metric + (" (bars: the bootstrap interval)" if errors is not None else ""))
        ax.set_title(f"{log}: {metric} per variant ({BASELINE} in red)", fontsize=9)
        written.append(save(fig, folder / f"{name}_{metric}_{log}.png"))
    return written


def campaign_list(rows: pl.DataFrame, stored: pl.DataFrame) -> pl.DataFrame:
    """One row per stored campaign: of its current results (`rows`), logs, variants, runs ok/failed,
    last finished run and the engine builds that made them; and every run it has stored (`stored`,
    older plans' too: another view, an older prediction table)."""
    if rows.is_empty():
        return pl.DataFrame(
            schema={
                "campaign": pl.String,
                "logs": pl.UInt32,
                "variants": pl.UInt32,
                "runs": pl.UInt32,
                "failed": pl.UInt32,
                "stored": pl.UInt32,
                "last_run": pl.Datetime("us", "UTC"),
                "engine": pl.String,
            }  # fmt: skip
        )
    every = stored.group_by("campaign").agg(stored=pl.len().cast(pl.UInt32))
    return (
        rows.group_by("campaign")
        .agg(
            logs=pl.col("log").n_unique(),
            variants=pl.col("variant").n_unique(),
            runs=pl.len().cast(pl.UInt32),
            failed=(pl.col("status") != "ok").sum().cast(pl.UInt32),
            last_run=pl.col("finished_at").max(),
            engine=pl.col("engine_version").unique().sort().str.join(", "),
        )
        .join(every, on="campaign", how="left")
        .select("campaign", "logs", "variants", "runs", "failed", "stored", "last_run", "engine")
        .sort("campaign")
    )
