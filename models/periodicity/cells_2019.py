"""Daily and weekly cycles of Google's 2019 trace, in each cell's local time.

The fits are the 2011 study's (`lakehouse.models.periodicity.job_sinusoids`, `spectral.fit_periodic`): each job
that runs through the trace has its CPU demand per task over 5-minute buckets fitted with a level, a
trend and a sine per period.  What differs is the clock.  The eight cells ran in five time zones, and
the trace's clock starts at 00:00 PDT everywhere, so a daily phase on the trace's clock would put New
York's and Singapore's peaks at hours that mean nothing.  Here t is the seconds since local midnight
of the day the trace starts in the cell, and the daily phase gives the local hour of the peak
(`daily_peak_local_h`).

The input is each cell's top-level usage windows in cluster.usage (a task inside an alloc set is in
its alloc instance's window), per job with a task there before the trace window and never ended
(cluster.tasks' long_running): the 2011 trace's queries (`job_sinusoids.demand_series`), on the cell's
clock.  One job's series is in memory at a time.  A cell's jobs may be split into partitions by a hash
of the job (the collection), fitted one partition after the other or as Ray tasks
(lakehouse.base.partitions), as the 2011 trace's are: each job is fitted alone, so the fits do not
depend on the split.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
import polars as pl

from lakehouse.base.errors import TooLittleDataError
from lakehouse.base.lake import Lake
from lakehouse.base.partitions import Partitioning, joined
from lakehouse.base.results import store
from lakehouse.models.periodicity import PERIODICITY_2019, PERIODICITY_2019_SCHEMA
from lakehouse.models.periodicity.job_sinusoids import (
    TRACE_START_S,
    SeriesClock,
    fit_partitions,
    long_running_jobs,
    summary,
)
from lakehouse.models.periodicity.spectral import ALPHA, PERIODS, peak_time_s

HOUR_S = 3600


def _clock(lake: Lake, cell: str) -> SeriesClock:
    """The cell's jobs on a clock whose 0 is local midnight of the day the trace starts in the cell."""
    [(hour,)] = lake.rows(f"SELECT hour(google2019.local_time({TRACE_START_S * 1_000_000}, $cell))", {"cell": cell})
    return SeriesClock("google-2019", cell, int(hour) * HOUR_S)


@dataclass(frozen=True)
class Periodicity2019:
    fits: pl.DataFrame  # as stored in analysis.periodicity_2019: one row per cell and job
    summary: pl.DataFrame  # per cell and component


def periodicity_2019(lake: Lake, cell: str | None = None, partitioning: Partitioning | None = None) -> Periodicity2019:
    """Every long-running job of every ingested cell (or of `cell`) fitted in its cell's local time, each
    cell's jobs in partitions (one by default, in this process: `partitioning`)."""
    partitioning = partitioning or Partitioning()
    cells = [cell] if cell else [c for (c,) in lake.rows("SELECT DISTINCT cell FROM google2019.instances ORDER BY 1")]
    fits, summaries = [], []
    with joined(partitioning.ray) if partitioning.ray else contextlib.nullcontext():  # one join for every cell
        found_by_cell = [(one, _fits(lake, one, partitioning)) for one in cells]
    for one, found in found_by_cell:
        if found.is_empty():
            continue
        peaks = [peak_time_s(phase, PERIODS["daily"]) / HOUR_S for phase in found["daily_phase"].to_list()]
        found = found.with_columns(cell=pl.lit(one), daily_peak_local_h=pl.Series(peaks, dtype=pl.Float64))
        fits.append(found.select(PERIODICITY_2019_SCHEMA.names))
        table = summary(found)
        significant = found.filter(pl.col("daily_p") < ALPHA)
        peak = _mean_peak_hour(significant["daily_phase"].to_numpy()) if significant.height else None
        summaries.append(
            table.with_columns(
                cell=pl.lit(one),
                mean_peak_local_h=pl.when(pl.col("component") == "daily").then(peak).otherwise(None),
            ).select("cell", *table.columns, "mean_peak_local_h")
        )
    if not fits:
        where = f"cell {cell}" if cell else "any ingested cell"
        raise TooLittleDataError(
            f"no job of {where} runs through a day of Google's 2019 trace with usage (ingest its instance_events "
            "and instance_usage shards: lakehouse ingest google-2019)"
        )
    return Periodicity2019(pl.concat(fits), pl.concat(summaries))


def _fits(lake: Lake, cell: str, partitioning: Partitioning) -> pl.DataFrame:
    """One cell's fits, its jobs in partitions, in job order."""
    clock = _clock(lake, cell)
    jobs = long_running_jobs(lake, clock)
    partitions = partitioning.resolve(1, lambda: len(jobs), f"jobs running through the trace in cell {cell}")
    parts = fit_partitions(lake, jobs, partitions, partitioning, clock=clock)
    return pl.concat([fits for fits, _ in parts]).sort("job_id")


def _mean_peak_hour(phases: np.ndarray) -> float:
    """The circular mean of the daily peaks, as a local hour in [0, 24)."""
    mean_phase = float(np.angle(np.mean(np.exp(1j * phases))))
    return peak_time_s(mean_phase, PERIODS["daily"]) / HOUR_S


def store_periodicity_2019(lake: Lake, result: Periodicity2019) -> None:
    store(lake, PERIODICITY_2019, result.fits)
