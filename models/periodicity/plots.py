"""The figures of `lakehouse report periodicity --plots DIR`, from the fitted jobs and their series."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from lakehouse.base.figures import pyplot, save
from lakehouse.models.periodicity.job_sinusoids import DemandSeries, overlaid_jobs
from lakehouse.models.periodicity.spectral import ALPHA, DAY_S, PERIODS, peak_time_s


def plot_periodicity(fits: pl.DataFrame, series: list[DemandSeries], folder: Path) -> list[Path]:
    """Write the three PNGs into `folder`; returns their paths.  `series` holds at least the demand of
    the overlaid jobs (`job_sinusoids.overlaid_jobs`)."""
    return [
        _ratio_boxplots(fits, folder / "periodicity_ratios.png"),
        _daily_phases(fits, folder / "periodicity_daily_phases.png"),
        _overlays(fits, series, folder / "periodicity_fits.png"),
    ]


def _ratio_boxplots(fits: pl.DataFrame, path: Path) -> Path:
    plt = pyplot()
    names = [*PERIODS, "trend", "noise"]
    data = [np.abs(fits[f"{name}_ratio"].drop_nans().to_numpy()) for name in names]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.boxplot(data, tick_labels=names, showfliers=True)
    ax.set_ylabel("amplitude / level C (trend: |change| / C)")
    ax.set_title(f"Components of the demand of {fits.height:,} long-running jobs")
    return save(fig, path)


def _daily_phases(fits: pl.DataFrame, path: Path) -> Path:
    """Each significant daily component as a bar at its peak hour, as long as its amplitude ratio."""
    plt = pyplot()
    daily = fits.filter(pl.col("daily_p") < ALPHA)
    peaks = np.array([peak_time_s(phase, DAY_S) for phase in daily["daily_phase"]])
    fig = plt.figure(figsize=(5, 5))
    ax = fig.add_subplot(projection="polar")
    ax.bar(2 * np.pi * peaks / DAY_S, daily["daily_ratio"].to_numpy(), width=2 * np.pi / 96, alpha=0.6)
    ax.set_theta_zero_location("N")
    ax.set_theta_direction(-1)
    ax.set_xticks(np.linspace(0, 2 * np.pi, 8, endpoint=False), [f"{h}h" for h in range(0, 24, 3)])
    ax.set_title(f"Daily peaks (time of day after the trace start) of {daily.height:,} jobs\nradius: ratio to C")
    return save(fig, path)


def _overlays(fits: pl.DataFrame, series: list[DemandSeries], path: Path) -> Path:
    """The jobs with the largest, the median and the smallest daily ratio: data and fitted cycles."""
    plt = pyplot()
    picked = overlaid_jobs(fits)
    found = {s.job_id: s for s in series if s.job_id in picked}
    fig, axes = plt.subplots(len(picked), 1, figsize=(9, 2.4 * max(len(picked), 1)), squeeze=False)
    for ax, job in zip(axes[:, 0], picked, strict=True):
        fit = fits.filter(pl.col("job_id") == job).row(0, named=True)
        one = found[job]
        days = one.t / DAY_S
        model = fit["c"] + sum(
            fit[f"{name}_ratio"] * fit["c"] * np.sin(2 * np.pi * one.t / period + fit[f"{name}_phase"])
            for name, period in PERIODS.items()
        )
        ax.plot(days, one.per_task, lw=0.4, color="grey", label="demand per task (5 min)")
        ax.plot(days, model, lw=1.0, color="C3", label="fit: C + hourly + daily + weekly")
        ax.set_title(f"job {job}: daily ratio {fit['daily_ratio']:.2f}, weekly {fit['weekly_ratio']:.2f}", fontsize=9)
        ax.set_ylabel("CPU")
    axes[0, 0].legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("days since the trace start")
    return save(fig, path)


def plot_periodicity_2019(fits: pl.DataFrame, folder: Path) -> list[Path]:
    """The figures of `report periodicity --trace google-2019 --plots DIR`: the components' ratios, and
    each cell's daily peaks on its own clock (analysis.periodicity_2019's fits)."""
    return [
        _ratio_boxplots(fits, folder / "periodicity_2019_ratios.png"),
        _local_peaks(fits, folder / "periodicity_2019_local_peaks.png"),
    ]


def _local_peaks(fits: pl.DataFrame, path: Path) -> Path:
    """Each significant daily component as a bar at its peak hour in its cell's local time, as long as
    its amplitude ratio, one colour per cell: cells whose users keep office hours peak alike there."""
    plt = pyplot()
    fig = plt.figure(figsize=(5.5, 5.5))
    ax = fig.add_subplot(projection="polar")
    significant = fits.filter(pl.col("daily_p") < ALPHA)
    for cell in sorted(set(significant["cell"])):
        one = significant.filter(pl.col("cell") == cell)
        hours = one["daily_peak_local_h"].to_numpy()
        ax.bar(2 * np.pi * hours / 24, one["daily_ratio"].to_numpy(), width=2 * np.pi / 96, alpha=0.6, label=cell)
    ax.set_theta_zero_location("N")
    ax.set_theta_direction(-1)
    ax.set_xticks(np.linspace(0, 2 * np.pi, 8, endpoint=False), [f"{h}h" for h in range(0, 24, 3)])
    ax.legend(title="cell", fontsize=7, loc="upper right", bbox_to_anchor=(1.15, 1.1))
    ax.set_title(f"Daily peaks in each cell's local time, {significant.height:,} jobs\nradius: ratio to C")
    return save(fig, path)
