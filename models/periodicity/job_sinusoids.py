"""Per-job periodic fits of the long-running jobs of a trace -> analysis.job_sinusoids (Google 2011).

Each long-running job's demand per measured task (its usage windows in cluster.usage over each 5-minute
bucket, each weighted by its length, over the length measured: so a task's missing window is a gap,
not a dip) is fitted by `spectral.fit_periodic`, on the trace-start time origin for the 2011 trace.
The daily component gives the packing model W(t) = C + rho sin(2 pi t / 1 day + phi) per task.  The
jobs and their series are read through the common views (cluster.tasks' long_running, cluster.usage),
so that the 2019 trace's cells (`cells_2019`) are read by the same queries, on their local clocks.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa
from threadpoolctl import threadpool_limits

from lakehouse.base.catalog import named_query
from lakehouse.base.errors import TooLittleDataError
from lakehouse.base.lake import Lake
from lakehouse.base.partitions import Partitioning, run_partitions
from lakehouse.base.results import store
from lakehouse.models.periodicity import JOB_SINUSOIDS, JOB_SINUSOIDS_SCHEMA
from lakehouse.models.periodicity.spectral import ALPHA, PERIODS, false_positive_rates, fit_periodic, phase_spread

#: Google's clocks (2011 and 2019) are at 600 s at the trace start (cluster.traces' clock).
TRACE_START_S = 600
BUCKET_S = 300  # the buckets of the series: the traces' 5-minute usage windows
MIN_WINDOWS = 288  # one day of 5-minute windows: less cannot separate a daily cycle from a trend
STREAM_ROWS = 1 << 18  # demand rows fetched from DuckDB at a time
OVERLAID_JOBS = 3


@dataclass(frozen=True)
class SeriesClock:
    """Whose jobs a run fits (a trace of cluster.*, and its cell where it has cells), and the time axis:
    seconds since the trace start, plus `origin_s` (the 2019 cells: the local hour of the trace start,
    so that t counts from local midnight)."""

    trace: str = "google-2011"
    cell: str | None = None
    origin_s: int = 0

    @property
    def params(self) -> dict[str, object]:
        return {"trace": self.trace, "cell": self.cell}


GOOGLE_2011 = SeriesClock()


@dataclass(frozen=True)
class DemandSeries:
    job_id: int
    tasks: int
    t: np.ndarray  # seconds since the trace start, observed windows only
    per_task: np.ndarray  # CPU demand per reporting task


def long_running_jobs(lake: Lake, clock: SeriesClock = GOOGLE_2011) -> list[tuple[int, int, int]]:
    """The jobs with long-running tasks (job, how many such tasks, its hash), in job order."""
    rows = lake.rows(named_query("long_running_jobs", __package__), clock.params)
    return [(int(job), int(tasks), int(hashed)) for job, tasks, hashed in rows]


def _series_sql(jobs: Iterable[int], clock: SeriesClock) -> str:
    """Each job's demand per measured task over the buckets, on the clock's time axis.  The jobs are
    joined by their numbers: a literal IN list of 2,000 was tested row by row (4.5 minutes on 143 M
    windows, the join 3.5 s), and the jobs' names as text took twice the join's time."""
    return f"""
        SELECT job_number AS job_id,
               floor((start_s - {TRACE_START_S}) / {BUCKET_S}) * {BUCKET_S} + {clock.origin_s} AS t,
               sum(cpu_mean * (end_s - start_s)) / sum(end_s - start_s) AS per_task
        FROM cluster.usage
        JOIN (SELECT unnest([{", ".join(map(str, jobs))}]::BIGINT[]) AS job_number) AS wanted USING (job_number)
        WHERE trace = $trace AND cell IS NOT DISTINCT FROM $cell::VARCHAR AND counted_once
          AND cpu_mean IS NOT NULL AND start_s IS NOT NULL
        GROUP BY ALL
        ORDER BY job_id, t"""


def demand_series(lake: Lake, tasks: Mapping[int, int], clock: SeriesClock = GOOGLE_2011) -> Iterator[DemandSeries]:
    """The demand series of the jobs of `tasks` (job -> its long-running tasks) with at least MIN_WINDOWS
    windows, in job order, streamed from DuckDB: one job's series is in memory at a time."""
    if not tasks:
        return
    with lake.connect() as con, lake.query_errors():
        carry: pa.Table | None = None  # the rows of the last job seen, which the next batch may continue
        for batch in con.execute(_series_sql(sorted(tasks), clock), clock.params).to_arrow_reader(STREAM_ROWS):
            rows = pa.Table.from_batches([batch]) if carry is None else pa.concat_tables([carry, pa.table(batch)])
            ids = rows.column("job_id").to_numpy()
            last = int(np.searchsorted(ids, ids[-1]))  # rows are in job order
            yield from _by_job(rows.slice(0, last), tasks)
            carry = rows.slice(last)
        if carry is not None:
            yield from _by_job(carry, tasks)


def _by_job(rows: pa.Table, tasks: Mapping[int, int]) -> Iterator[DemandSeries]:
    """The series of the whole jobs in `rows` (in job, then time order) with at least MIN_WINDOWS windows."""
    ids = rows.column("job_id").to_numpy()
    if not ids.size:
        return
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    t, per_task = rows.column("t").to_numpy(), rows.column("per_task").to_numpy()
    for start, end in zip(starts, [*starts[1:], ids.size], strict=True):
        if end - start >= MIN_WINDOWS:
            job_id = int(ids[start])
            yield DemandSeries(job_id, int(tasks[job_id]), t[start:end].astype(float), per_task[start:end])


def fit_long_running_jobs(lake: Lake, series: Iterable[DemandSeries] | None = None) -> pl.DataFrame:
    """One row per long-running job with at least a day of demand windows.  BLAS is kept to one
    thread: on these small matrices its threads only add overhead (~30 % of a fit's time); the jobs are
    fitted by one thread per core instead (numpy releases the GIL in its loops: ~1.3x on two cores),
    a few at a time, as they stream in."""
    if series is None:
        series = demand_series(lake, {job: tasks for job, tasks, _ in long_running_jobs(lake)})
    rows: list[dict[str, object]] = []
    workers = os.cpu_count() or 1
    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(workers) as pool:
        iterator = iter(series)
        while chunk := list(itertools.islice(iterator, 8 * workers)):
            rows += pool.map(_fit_row, chunk)
    return pl.DataFrame(rows, schema=pl.Schema(JOB_SINUSOIDS_SCHEMA))


def _fit_row(one: DemandSeries) -> dict[str, object]:
    fit = fit_periodic(one.t, one.per_task)
    daily = fit.components["daily"]
    row: dict[str, object] = {
        "job_id": one.job_id,
        "tasks": one.tasks,
        "windows": fit.windows,
        "c": fit.level,
        "rho": daily.ratio * fit.level,
        "phi": daily.phase,
        "trend_ratio": fit.trend_ratio,
        "noise_ratio": fit.noise_ratio,
    }
    for name, component in fit.components.items():
        row |= {f"{name}_ratio": component.ratio, f"{name}_phase": component.phase, f"{name}_p": component.p_value}
    return row


@dataclass(frozen=True)
class Periodicity:
    fits: pl.DataFrame  # as stored in analysis.job_sinusoids
    series: list[DemandSeries]  # the series of the jobs the plots overlay with their fits (`overlaid_jobs`)
    false_positive: dict[str, float] | None  # the test's level measured on pure noise, per component


def periodicity(
    lake: Lake, noise_trials: int = 200, overlays: bool = True, partitioning: Partitioning | None = None
) -> Periodicity:
    """What `lakehouse report periodicity` computes: every long-running job fitted (`store_periodicity`
    keeps the fits), and the false-positive rate of the test on `noise_trials` pure-noise series with
    the jobs' own gaps (those of the first `noise_trials` jobs, in turn).  With `overlays`, the series
    of the jobs the plots draw.  The jobs may be split into partitions by a hash of the job, fitted one
    partition after the other or on a Ray cluster (`partitioning`; one partition by default: a job's
    series is streamed, so memory does not ask for more)."""
    partitioning = partitioning or Partitioning()
    jobs = long_running_jobs(lake)
    partitions = partitioning.resolve(1, lambda: len(jobs), "long-running jobs")
    parts = fit_partitions(lake, jobs, partitions, partitioning, noise_trials)
    fits = pl.concat([fits for fits, _ in parts]).sort("job_id")
    if fits.is_empty():
        raise TooLittleDataError(f"nothing to fit: {_what_the_trace_covers(lake)}")
    # The noise grids of the first `noise_trials` jobs in job order, whichever partition fitted them.
    grids = [t for _, t in sorted(itertools.chain.from_iterable(grids for _, grids in parts), key=lambda g: g[0])]
    grids = grids[:noise_trials]
    rates = false_positive_rates(grids, noise_trials) if noise_trials > 0 and grids else None
    if overlays:
        tasks = dict(zip(fits["job_id"].to_list(), fits["tasks"].to_list(), strict=True))
        shown = list(demand_series(lake, {job: tasks[job] for job in overlaid_jobs(fits)}))
    else:
        shown = []
    return Periodicity(fits, shown, rates)


def fit_partitions(
    lake: Lake,
    jobs: list[tuple[int, int, int]],
    partitions: int,
    partitioning: Partitioning,
    noise_trials: int = 0,
    clock: SeriesClock = GOOGLE_2011,
) -> list[tuple[pl.DataFrame, list[tuple[int, np.ndarray]]]]:
    """The fits of `jobs` (job, tasks, hash), split by their hash into `partitions` fitted one after the
    other or on Ray (`partitioning.ray`), with each partition's first `noise_trials` time grids."""
    by_partition: list[dict[int, int]] = [{} for _ in range(partitions)]
    for job, tasks, hashed in jobs:
        by_partition[hashed % partitions][job] = tasks
    work = functools.partial(_fit_partition, lake, by_partition, noise_trials, clock)
    return run_partitions(work, partitions, partitioning.ray)


def _fit_partition(
    lake: Lake, by_partition: list[dict[int, int]], noise_trials: int, clock: SeriesClock, number: int
) -> tuple[pl.DataFrame, list[tuple[int, np.ndarray]]]:
    """The fits of one partition's jobs, and the time grids of its first `noise_trials` jobs (with
    their job ids, to take the first of the whole trace)."""
    grids: list[tuple[int, np.ndarray]] = []

    def keeping_grids(series: Iterator[DemandSeries]) -> Iterator[DemandSeries]:
        for one in series:
            if len(grids) < noise_trials:
                grids.append((one.job_id, one.t))
            yield one

    tasks = by_partition[number]
    fits = fit_long_running_jobs(lake, keeping_grids(demand_series(lake, tasks, clock))) if tasks else None
    return (fits if fits is not None else pl.DataFrame(schema=pl.Schema(JOB_SINUSOIDS_SCHEMA))), grids


def store_periodicity(lake: Lake, result: Periodicity) -> None:
    store(lake, JOB_SINUSOIDS, result.fits)


def overlaid_jobs(fits: pl.DataFrame) -> list[int]:
    """The jobs the plots overlay with their fits: the largest, the median and the smallest daily ratio."""
    by_ratio = fits.sort("daily_ratio", descending=True)["job_id"].to_list()
    return list(dict.fromkeys([by_ratio[0], by_ratio[len(by_ratio) // 2], by_ratio[-1]]))[:OVERLAID_JOBS]


def _what_the_trace_covers(lake: Lake) -> str:
    """Why no job could be fitted, in terms of what was ingested and what to ingest."""
    row = lake.query(named_query("trace_coverage", __package__), GOOGLE_2011.params).row(0, named=True)
    hours = row["usage_hours"] or 0.0
    if not row["long_running"]:
        return "no long-running task in cluster.tasks (ingest the trace's task_events, from its first part on)"
    return (
        f"{row['long_running']:,} long-running tasks, but task_usage covers {hours:,.1f} hours and a fit needs a "
        "day of 5-minute windows (ingest more task_usage parts)"
    )


def summary(fits: pl.DataFrame, alpha: float = ALPHA, false_positive: dict[str, float] | None = None) -> pl.DataFrame:
    """Per component: the distribution of amplitude ratios over jobs, the share significant at alpha
    (beside the test's false-positive rate on pure noise, when measured), and for the periodic
    components the spread of the peaks among the significant jobs (mean resultant length, and the
    circular standard deviation in hours)."""
    rows = []
    for name in (*PERIODS, "trend", "noise"):
        column = fits[f"{name}_ratio"].abs() if name == "trend" else fits[f"{name}_ratio"]
        values = column.drop_nans().to_numpy()
        row: dict[str, object] = {"component": name, "jobs": len(values)}
        for statistic, value in (
            ("mean", np.mean),
            ("std", lambda v: np.std(v, ddof=1) if len(v) > 1 else None),
            ("min", np.min),
            ("q1", lambda v: np.quantile(v, 0.25)),
            ("median", np.median),
            ("q3", lambda v: np.quantile(v, 0.75)),
            ("max", np.max),
        ):
            result = value(values) if len(values) else None
            row[statistic] = None if result is None else float(result)
        row |= {"significant_share": None, "false_positive_rate": None, "peak_resultant": None, "peak_spread_h": None}
        if name in PERIODS:
            significant = fits.filter(pl.col(f"{name}_p") < alpha)
            row["significant_share"] = significant.height / fits.height if fits.height else None
            row["false_positive_rate"] = (false_positive or {}).get(name)
            if significant.height:
                resultant, spread = phase_spread(significant[f"{name}_phase"].to_numpy(), PERIODS[name])
                row["peak_resultant"], row["peak_spread_h"] = resultant, spread
        rows.append(row)
    return pl.DataFrame(rows, schema=SUMMARY_SCHEMA)


SUMMARY_SCHEMA = {"component": pl.String, "jobs": pl.Int64} | dict.fromkeys(
    (
        "mean", "std", "min", "q1", "median", "q3", "max",
        "significant_share", "false_positive_rate", "peak_resultant", "peak_spread_h",
    ),
    pl.Float64,
)  # fmt: skip
