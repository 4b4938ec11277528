"""The 2011 volatility method checked against the 2019 trace's CPU histograms.

The 2011 trace gives, per 5-minute window, only the mean CPU rate (mu5m) and one randomly chosen
second (mu1s); the volatility study (Reis 2015, section 3.4) reads the spread of the seconds from
d = (mu5m - mu1s) / mu5m.  If the second is drawn uniformly, the expected |d| of a window is the mean
absolute deviation of its seconds over their mean.  The 2019 trace keeps that random second *and* the
percentiles of every window's seconds (0, 10, ..., 100 and 91, ..., 99), so the same number can be read
from the distribution itself: E|X - m| / m, with the quantile function taken linear between the 20
percentiles (trapezoids).  Both on the same windows, per cell and tier, are the comparison: their ratio
is the 2011 estimator's bias (1 = none), their correlation window by window says how much one second
tells about one window.  Beside them, the spread the histograms show directly: (p90 - p10) / mean and
p99 / mean.

The windows are the tasks' (google2019.instance_usage rows of jobs, inside an alloc set or not), as the
2011 study measured tasks: an alloc instance's window sums its tasks' seconds, a series of another
kind.  (Per-window numbers count nothing twice: the double count of the alloc sets matters to sums,
which google2019.usage is for.)  Everything is made of sums and counts, which hold a fixed state, so
its memory does not grow with the trace, and which add up over partitions of the windows (by a hash of
the job, here or as Ray tasks: lakehouse.base.partitions; written once by partition, so that each reads
its own): the means, shares and correlation from
sums per cell and tier, the medians of the spreads selected by counting (`order_statistics`: a count
per bin of each spread, then the values of the bins holding the middle, the median to the last bit).
DuckDB's own median held every window's value (0.05 of a real cell, 71 million windows, did not fit a
1 GB budget), and its t-digest estimate cannot be added up over partitions.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
from collections.abc import Iterator
from pathlib import Path

import duckdb
import polars as pl

from lakehouse.base.catalog import sql_literal
from lakehouse.base.google2019_format import CPU_PERCENTILES, TAIL_CPU_PERCENTILES
from lakehouse.base.lake import JOINS_AS_WRITTEN, Lake
from lakehouse.base.partitions import (
    Partitioning,
    joined,
    partition_files,
    read_files,
    run_partitions,
    split_by_hash,
)
from lakehouse.models.order_statistics import bin_key, counted_in, medians_in, middle_bins

#: The probabilities of the 20 percentiles, in order: 0, .1, ..., .9, .91, ..., .99, 1.
LEVELS = sorted({p / 100 for p in (*CPU_PERCENTILES, *TAIL_CPU_PERCENTILES)})


def _mad_from_percentiles(mean: str, points: str) -> str:
    """E|X - mean| of the distribution whose quantile function is linear between `points` (a list of
    20 values at LEVELS), as a SQL expression: the trapezoid rule over |Q(u) - mean|."""
    steps = [round(b - a, 4) for a, b in zip(LEVELS, LEVELS[1:], strict=False)]
    terms = [
        f"{step} * (abs({points}[{k + 1}] - {mean}) + abs({points}[{k + 2}] - {mean})) / 2"
        for k, step in enumerate(steps)
    ]
    return " + ".join(terms)


def window_values_sql(cell: str | None = None) -> str:
    """One row per task window with a mean above 0, a random second and both histograms, without its
    tier: its cell and job, |d| by the 2011 method, the truth the percentiles give, the spreads and the
    flags."""
    # The 20 points in level order: p0..p90 of the first histogram, p91..p99 of the tail, then p100.
    points = "list_concat(cpu_usage_distribution[1:10], tail_cpu_usage_distribution, cpu_usage_distribution[11:11])"
    of_cell = "" if cell is None else f"AND cell = {sql_literal(cell)}"
    return f"""
        SELECT cell, collection_id, abs(m - s) / m AS abs_d, ({_mad_from_percentiles("m", "q")}) / m AS mad,
               (q[10] - q[2]) / m AS spread_p90_p10, q[19] / m AS p99_over_mean,
               s < q[1] OR s > q[20] AS sample_outside, s = 0 AS zero_sample
        FROM (
            SELECT cell, collection_id, average_usage_cpus AS m, random_sample_usage_cpus AS s, {points} AS q
            FROM google2019.instance_usage
            WHERE collection = 'JOB' AND average_usage_cpus > 0 AND random_sample_usage_cpus IS NOT NULL
              AND len(cpu_usage_distribution) = 11 AND len(tail_cpu_usage_distribution) = 9 {of_cell}
        )
    """


def tier_events_sql(cell: str | None = None) -> str:
    """The collections' events that give each its tier (the last one's)."""
    of_cell = "" if cell is None else f"AND cell = {sql_literal(cell)}"
    return f"SELECT cell, collection_id, time, tier FROM google2019.collection_events WHERE true {of_cell}"


def _with_tiers(values: str, events: str) -> str:
    """The windows of `values` with the tiers of their jobs from `events`: the tiers are the join's side
    held in memory (as written: `_windows_connection`), one row a job, the windows stream past them."""
    return f"""
        WITH tiers AS (
            SELECT cell, collection_id, arg_max(tier, time) AS tier FROM ({events}) GROUP BY cell, collection_id
        )
        SELECT v.cell, coalesce(t.tier, 'unknown') AS tier, abs_d, mad, spread_p90_p10, p99_over_mean,
               sample_outside, zero_sample
        FROM ({values}) AS v LEFT JOIN tiers AS t USING (cell, collection_id)
    """


def windows_sql(cell: str | None = None) -> str:
    """One row per task window (`window_values_sql`) with its tier, read from the lake."""
    return _with_tiers(window_values_sql(cell), tier_events_sql(cell))


@dataclasses.dataclass(frozen=True)
class _Windows:
    """Where each partition reads its windows: the lake (`split` None: one partition), or the files
    `split_windows` wrote, one folder a partition, so that no partition scans the others' windows (a
    scan of the lake's windows per partition made the time grow as the rows times the partitions)."""

    cell: str | None
    split: Path | None = None

    def sql(self, number: int) -> str:
        if self.split is None:
            return windows_sql(self.cell)
        values, events = (partition_files(self.split, name, number) for name in ("windows", "events"))
        if not values:  # a partition with no windows: none, with the columns' types
            return f"SELECT * FROM ({windows_sql(self.cell)}) LIMIT 0"
        events_sql = f"SELECT * FROM {read_files(events)}" if events else f"{tier_events_sql(self.cell)} LIMIT 0"
        return _with_tiers(f"SELECT * FROM {read_files(values)}", events_sql)


@contextlib.contextmanager
def split_windows(lake: Lake, cell: str | None, partitions: int) -> Iterator[_Windows]:
    """The windows' values and their jobs' events, written once by partition (in a work folder of the
    lake, removed at the end) when there are several partitions; read from the lake when one."""
    if partitions == 1:
        yield _Windows(cell)
        return
    with lake.scratch_folder("volatility-2019") as folder:
        with lake.connect() as con, lake.query_errors():
            job = "cell, collection_id"
            split_by_hash(con, folder, "windows", window_values_sql(cell), job, partitions)
            split_by_hash(con, folder, "events", tier_events_sql(cell), job, partitions)
        yield _Windows(cell, folder)


#: The spreads whose medians the comparison gives: exact, selected by counting (`order_statistics`).
SPREADS = ("spread_p90_p10", "p99_over_mean")
#: Bins per octave of a spread for its median: 16 (the per-task medians') left some 5 % of a cell's
#: windows in a middle bin, whose distinct values the second pass counts: 0.2 of a cell peaked at 1.27 GB
#: against 0.81 GB at 0.1.  With 1,024 a middle bin holds some 0.07 % of them (a million at a whole
#: cell), and the first pass's bins are bounded by the spreads' range (some ten octaves: 10,000 a group).
SPREAD_BINS_PER_OCTAVE = 1024
#: What each job takes in a partition's memory (its tier, looked up by each window: measured 190 bytes,
#: 1.09 M jobs at 0.04 of a cell against 0.27 M at 0.01), and the part of the memory limit the jobs may
#: take: the partitions by default are as many as that asks for (the rest of the work holds a fixed state).
JOB_BYTES, SHARE_OF_LIMIT = 256, 0.25


def shares_for(jobs: int, memory_limit: int) -> int:
    """How many partitions the jobs are split into, so that one partition's tiers fit the limit."""
    return max(1, math.ceil(jobs * JOB_BYTES / (memory_limit * SHARE_OF_LIMIT)))


#: A median's group: the cell, the tier (or ALL_TIERS) and the spread.
GROUPS = ("cell", "tier", "metric")
ALL_TIERS = "all"
#: The sums each partition gives per cell and tier, of which the means, shares and correlation are made.
SUMS = ("windows", "abs_d", "mad", "abs_d2", "mad2", "abs_d_mad", "outside", "zero")


def _sums_and_bins(lake: Lake, windows: _Windows, number: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Partition `number`'s SUMS per cell and tier, and its counts per bin of each spread, in one scan of
    its windows."""
    keys = ", ".join(f"{bin_key(spread, SPREAD_BINS_PER_OCTAVE)} AS {spread}_key" for spread in SPREADS)
    flags = ", ".join(f"{spread}_key, grouping({spread}_key) = 0 AS by_{spread}" for spread in SPREADS)
    sets = ", ".join(f"(cell, tier, {spread}_key)" for spread in SPREADS)
    query = f"""
        SELECT cell, tier, {flags}, count(*) AS windows, sum(abs_d) AS abs_d, sum(mad) AS mad,
               sum(abs_d * abs_d) AS abs_d2, sum(mad * mad) AS mad2, sum(abs_d * mad) AS abs_d_mad,
               count(*) FILTER (sample_outside) AS outside, count(*) FILTER (zero_sample) AS zero
        FROM (SELECT *, {keys} FROM ({windows.sql(number)}))
        GROUP BY GROUPING SETS ((cell, tier), {sets})
    """
    with _windows_connection(lake) as con:
        rows = con.execute(query).pl()
    by_bin = [pl.col(f"by_{spread}") for spread in SPREADS]
    sums = rows.filter(~pl.any_horizontal(by_bin)).select("cell", "tier", *SUMS)
    bins = pl.concat(
        rows.filter(f"by_{spread}").select(
            "cell",
            "tier",
            pl.lit(spread).alias("metric"),
            pl.col(f"{spread}_key").alias("key"),
            pl.col("windows").alias("n"),
        )
        for spread in SPREADS
    )
    return sums, bins


def _counted(lake: Lake, windows: _Windows, wanted: pl.DataFrame, number: int) -> pl.DataFrame:
    """Partition `number`'s values of each spread that fall in the bins holding the medians (`wanted`),
    each value counted for its tier and for all tiers."""
    every = f"CASE WHEN every THEN '{ALL_TIERS}' ELSE tier END AS tier"
    unpivoted = f"""(SELECT *, {bin_key("x", SPREAD_BINS_PER_OCTAVE)} AS key FROM (UNPIVOT (
        SELECT cell, {every}, {", ".join(SPREADS)} FROM ({windows.sql(number)}),
            (VALUES (false), (true)) AS d(every)
        ) ON {", ".join(SPREADS)} INTO NAME metric VALUE x))"""
    with _windows_connection(lake) as con:
        return counted_in(con, unpivoted, GROUPS, wanted)


@contextlib.contextmanager
def _windows_connection(lake: Lake) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection of the lake's budget whose joins keep the side they are written with in memory
    (`Lake.joins_as_written` says why): the windows stream past the tiers of their collections."""
    with lake.connect() as con, lake.query_errors():
        con.execute(JOINS_AS_WRITTEN)
        yield con


def _with_all_tiers(frame: pl.DataFrame, by: list[str], sums: list[str]) -> pl.DataFrame:
    """`frame`'s rows summed per `by` (over the partitions), and again with every tier as ALL_TIERS."""
    per_tier = frame.group_by(*by).agg(pl.col(sums).sum())
    every = frame.with_columns(tier=pl.lit(ALL_TIERS)).group_by(*by).agg(pl.col(sums).sum())
    return pl.concat([per_tier, every.select(per_tier.columns)])


def compare(lake: Lake, cell: str | None = None, partitioning: Partitioning | None = None) -> pl.DataFrame:
    """Per cell and tier (and each cell's 'all'): windows, the 2011 estimate (mean |d|), the truth from
    the percentiles (mean MAD / mean), their ratio and window-by-window correlation, the medians of the
    spreads, and the shares of samples outside [p0, p100] and of zero samples.  The windows are split
    into partitions by a hash of the job (one by default, in this process: `partitioning`); each gives
    sums and counts, added up here, so the split changes nothing but the order of the sums."""
    partitioning = partitioning or Partitioning()
    where = "" if cell is None else f"WHERE cell = {sql_literal(cell)}"
    jobs = int(
        lake.rows(f"SELECT count(DISTINCT (cell, collection_id)) FROM google2019.collection_events {where}")[0][0]
    )
    partitions = partitioning.resolve(shares_for(jobs, lake.budget.memory), lambda: jobs, "jobs")
    ray = partitioning.ray
    with (
        joined(ray) if ray else contextlib.nullcontext(),  # one join of the cluster for both steps
        split_windows(lake, cell, partitions) as windows,
    ):
        parts = run_partitions(functools.partial(_sums_and_bins, lake, windows), partitions, ray)
        wanted = middle_bins(_with_all_tiers(pl.concat(b for _, b in parts), [*GROUPS, "key"], ["n"]), GROUPS)
        counted = []
        if not wanted.is_empty():
            counted = run_partitions(functools.partial(_counted, lake, windows, wanted), partitions, ray)
    medians = medians_in(pl.concat(counted), wanted, GROUPS) if counted else {}
    sums = _with_all_tiers(pl.concat(s for s, _ in parts), ["cell", "tier"], list(SUMS))
    n = pl.col("windows")
    mean_d, mean_mad = pl.col("abs_d") / n, pl.col("mad") / n
    covariance = pl.col("abs_d_mad") / n - mean_d * mean_mad
    variances = (pl.col("abs_d2") / n - mean_d**2) * (pl.col("mad2") / n - mean_mad**2)
    table = sums.select(
        "cell",
        "tier",
        "windows",
        mean_d.alias("mean_abs_d_2011"),
        mean_mad.alias("mean_mad_percentiles"),
        pl.when(mean_mad != 0).then(mean_d / mean_mad).alias("ratio_2011_to_percentiles"),
        pl.when(variances > 0).then(covariance / variances.sqrt()).alias("window_correlation"),
        (pl.col("outside") / n).alias("share_sample_outside_range"),
        (pl.col("zero") / n).alias("share_zero_sample"),
    )
    for spread in SPREADS:
        found = [(c, t, value) for (c, t, metric), value in medians.items() if metric == spread]
        schema = {"cell": pl.String, "tier": pl.String, f"median_{spread}": pl.Float64}
        table = table.join(pl.DataFrame(found, schema=schema, orient="row"), on=["cell", "tier"], how="left")
    columns = [*table.columns[:7], *(f"median_{spread}" for spread in SPREADS), *table.columns[7:9]]
    return table.select(columns).sort("cell", pl.col("tier") == ALL_TIERS, "tier")  # each cell's "all" last
