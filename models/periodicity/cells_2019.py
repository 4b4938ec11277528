"""Daily and weekly cycles of Google's 2019 trace, in each cell's local time.

The fits are the 2011 study's (`lakehouse.models.periodicity.job_sinusoids`, `spectral.fit_periodic`): each job
that runs through the trace has its CPU demand per task over 5-minute buckets fitted with a level, a
trend and a sine per period.  What differs is the clock.  The eight cells ran in five time zones, and
the trace's clock starts at 00:00 PDT everywhere, so a daily phase on the trace's clock would put New
York's and Singapore's peaks at hours that mean nothing.  Here t is the seconds since local midnight
of the day the trace starts in the cell, and the daily phase gives the local hour of the peak
(`daily_peak_local_h`).

The input is google2019.usage (top-level windows: a task inside an alloc set is in its alloc
instance's window), per job of google2019.collections with an instance there before the trace window
and never ended; one job's series is in memory at a time.  A cell's jobs may be split into partitions
by a hash of the job (the collection), fitted one partition after the other or as Ray tasks
(lakehouse.base.partitions), as the 2011 trace's are: each job is fitted alone, so the fits do not
depend on the split.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa

from lakehouse.base.errors import TooLittleDataError
from lakehouse.base.lake import Lake
from lakehouse.base.partitions import Partitioning, joined, run_partitions
from lakehouse.base.results import store
from lakehouse.models.periodicity import PERIODICITY_2019, PERIODICITY_2019_SCHEMA
from lakehouse.models.periodicity.job_sinusoids import (
    MIN_WINDOWS,
    STREAM_ROWS,
    DemandSeries,
    fit_long_running_jobs,
    summary,
)
from lakehouse.models.periodicity.spectral import ALPHA, PERIODS, peak_time_s

HOUR_S = 3600


def _running_jobs(cell: str) -> str:
    """The cell's jobs that run through the trace, with their long-running tasks and their hash (DuckDB's,
    as every partitioned report splits)."""
    return f"""
        SELECT collection_id, count(*) AS tasks, hash(collection_id) AS hashed FROM google2019.instances
        WHERE cell = '{cell}' AND long_running AND collection = 'JOB' GROUP BY collection_id"""


def _series_sql(cell: str, partition: tuple[int, int] = (0, 1)) -> str:
    """Per job of the cell that runs through the trace (of partition `number` of `count`, by a hash of
    the job), its demand per measured task over 5-minute buckets, t in seconds since local midnight of
    the trace's first day in the cell."""
    number, count = partition
    return f"""
        WITH running AS (SELECT * FROM ({_running_jobs(cell)}) WHERE hashed % {count} = {number})
        SELECT collection_id, any_value(tasks) AS tasks,
               (start_time - 600000000) // 300000000 * 300
                 + hour(google2019.local_time(600000000, '{cell}')) * 3600 AS t_local,
               sum(average_usage_cpus * (end_time - start_time)) / sum(end_time - start_time) AS per_task
        FROM google2019.usage JOIN running USING (collection_id)
        WHERE cell = '{cell}' AND average_usage_cpus IS NOT NULL AND NOT google2019.special_time(start_time)
        GROUP BY collection_id, t_local
        ORDER BY collection_id, t_local
    """


def demand_series(lake: Lake, cell: str, partition: tuple[int, int] = (0, 1)) -> Iterator[DemandSeries]:
    """The cell's long-running jobs' series with at least MIN_WINDOWS buckets (those of partition `number`
    of `count`), streamed job by job."""
    with lake.connect() as con, lake.query_errors():
        carry: pa.Table | None = None
        for batch in con.execute(_series_sql(cell, partition)).to_arrow_reader(STREAM_ROWS):
            rows = pa.Table.from_batches([batch]) if carry is None else pa.concat_tables([carry, pa.table(batch)])
            ids = rows.column("collection_id").to_numpy()
            last = int(np.searchsorted(ids, ids[-1]))
            yield from _by_job(rows.slice(0, last))
            carry = rows.slice(last)
        if carry is not None:
            yield from _by_job(carry)


def _by_job(rows: pa.Table) -> Iterator[DemandSeries]:
    ids = rows.column("collection_id").to_numpy()
    if not ids.size:
        return
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    t, per_task = rows.column("t_local").to_numpy(), rows.column("per_task").to_numpy()
    tasks = rows.column("tasks").to_numpy()
    for start, end in zip(starts, [*starts[1:], ids.size], strict=True):
        if end - start >= MIN_WINDOWS:
            yield DemandSeries(int(ids[start]), int(tasks[start]), t[start:end].astype(float), per_task[start:end])


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
    partitions = partitioning.resolve(
        1, lambda: len(lake.rows(_running_jobs(cell))), f"jobs running through the trace in cell {cell}"
    )
    parts = run_partitions(functools.partial(_fit_partition, lake, cell, partitions), partitions, partitioning.ray)
    return pl.concat(parts).sort("job_id")


def _fit_partition(lake: Lake, cell: str, partitions: int, number: int) -> pl.DataFrame:
    return fit_long_running_jobs(lake, demand_series(lake, cell, (number, partitions)))


def _mean_peak_hour(phases: np.ndarray) -> float:
    """The circular mean of the daily peaks, as a local hour in [0, 24)."""
    mean_phase = float(np.angle(np.mean(np.exp(1j * phases))))
    return peak_time_s(mean_phase, PERIODS["daily"]) / HOUR_S


def store_periodicity_2019(lake: Lake, result: Periodicity2019) -> None:
    store(lake, PERIODICITY_2019, result.fits)
