"""Figures of `lakehouse report triples --plots DIR`: how three predictors' initial predictions are
distributed on each log of a triple campaign (the SC'15 study's Figures 2.4 and 2.5), and how the
triples' results on one log relate to another's (a scatter per pair of logs)."""

from __future__ import annotations

import itertools
from pathlib import Path

import polars as pl

from lakehouse.base.figures import ecdf, pyplot, save
from lakehouse.base.job_views import View, log_jobs
from lakehouse.base.lake import Lake
from lakehouse.base.log_names import short_log
from lakehouse.campaigns.report import latest
from lakehouse.sim.engine import simulate
from lakehouse.studies.triples import EASY, EASY_PLUS_PLUS, METRIC, triple_runs

#: The predictors compared, replayed with EASY-SJBF: (label, predictor).
COMPARED = (
    ("AVE2", "ave2"),
    ("squared-loss regression", "eloss:over-factor=1,weight=one"),
    ("E-Loss", "eloss"),
)


def prediction_frames(lake: Lake, rows: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """Per log of the campaign: each compared predictor's initial predictions and the runtimes, from an
    EASY-SJBF replay with the campaign's view, machine size and semantics."""
    frames = {}
    ok = latest(rows).filter(pl.col("status") == "ok")
    for log, size, view, compat in ok.select("log", "machine_size", "view", "compat").unique().sort("log").rows():
        jobs = log_jobs(lake, log, View(view))
        parts = []
        for label, predictor in COMPARED:
            result = simulate(jobs, size, backfill="sjbf", predictor=predictor, compat=compat).jobs
            parts.append(
                result.select(
                    predictor=pl.lit(label),
                    predicted=pl.col("initial_prediction"),
                    run=pl.col("end_time") - pl.col("start_time"),
                )
            )
        frames[log] = pl.concat(parts)
    return frames


def triples_plots(lake: Lake, rows: pl.DataFrame, folder: Path) -> list[Path]:
    plt = pyplot()
    name = rows["campaign"][0]
    written = []
    for log, frame in prediction_frames(lake, rows).items():
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
        for label, _ in COMPARED:
            part = frame.filter(pl.col("predictor") == label)
            error = (part["predicted"] - part["run"]).to_numpy().astype(float)
            left.plot(*ecdf(error), label=label)
            right.plot(*ecdf(part["predicted"].to_numpy().astype(float)), label=label)
        runs = frame.filter(pl.col("predictor") == COMPARED[0][0])["run"].to_numpy().astype(float)
        right.plot(*ecdf(runs), label="actual runtime", color="black", linestyle="--")
        left.set_xscale("symlog", linthresh=60)
        # Durations a reader knows, not 10^k labels crowding each other around 0.
        left.set_xticks(list(ERROR_TICKS.values()), list(ERROR_TICKS), fontsize=7)
        left.axvline(0, color="grey", linewidth=0.8)
        left.set_xlabel("prediction - runtime (s; left of 0: under-predicted)")
        right.set_xscale("log")
        right.set_xlabel("predicted runtime (s)")
        for ax in (left, right):
            ax.set_ylabel("share of jobs")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        left.set_title(f"{short_log(log)}: ECDF of prediction errors (EASY-SJBF)", fontsize=9)
        right.set_title(f"{short_log(log)}: ECDF of predicted values", fontsize=9)
        written.append(save(fig, folder / f"{name}_predictions_{log}.png"))
    written += _scatter(plt, save, rows, folder / f"{name}_triples_scatter.png")
    return written


#: The x ticks of the prediction errors' ECDF (seconds, symmetric log scale).
ERROR_TICKS = {"-1 d": -86_400, "-1 h": -3_600, "-1 min": -60, "0": 0, "1 min": 60, "1 h": 3_600, "1 d": 86_400}


def _scatter(plt: object, save: object, rows: pl.DataFrame, path: Path) -> list[Path]:
    """Mean bounded slowdown of every triple on one log against another, for each pair of logs."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # loaded with pyplot(), on Agg

    runs = triple_runs(rows).pivot(on="log", index="triple", values=METRIC)
    logs = sorted(c for c in runs.columns if c != "triple")
    pairs = list(itertools.combinations(logs, 2))
    if not pairs:
        return []
    columns = min(len(pairs), 3)
    lines = -(-len(pairs) // columns)
    fig, axes = plt.subplots(lines, columns, figsize=(4.2 * columns, 3.8 * lines), squeeze=False)  # type: ignore[attr-defined]
    for ax, (a, b) in zip(axes.flat, pairs, strict=False):
        both = runs.drop_nulls([a, b])
        learned = both.filter(pl.col("triple").str.starts_with("eloss"))
        ax.scatter(learned[a], learned[b], s=10, alpha=0.6, label="E-Loss triples")
        others = both.filter(~pl.col("triple").str.starts_with("eloss"))
        ax.scatter(others[a], others[b], s=10, alpha=0.6, color="grey", label="other triples")
        for triple, marker in ((EASY, "s"), (EASY_PLUS_PLUS, "^")):
            hit = both.filter(pl.col("triple") == triple)
            if hit.height:
                ax.scatter(hit[a], hit[b], s=50, marker=marker, color="red", label=triple)
        for values, axis, scale in ((both[a], ax.xaxis, ax.set_xscale), (both[b], ax.yaxis, ax.set_yscale)):
            finite = values.cast(pl.Float64).to_numpy()
            low, high = (float(finite.min()), float(finite.max())) if finite.size else (1.0, 1.0)
            if low > 0 and high / low >= 10:  # several decades: a log scale labelled at 1, 2, 5 x 10^k
                scale("log")
                axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
                axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
                axis.set_minor_formatter(NullFormatter())
            # (within a decade a log scale has no labelled tick at all: the linear one is kept)
        ax.set_xlabel(f"{short_log(a)} mean bounded slowdown", fontsize=8)
        ax.set_ylabel(f"{short_log(b)}", fontsize=8)
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(pairs) :]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.suptitle("every triple's mean bounded slowdown, one log against another", fontsize=10, y=1.0)
    return [save(fig, path)]  # type: ignore[operator]
