"""CPU-usage volatility of the Google trace: 1-second samples (mu1s) against the 5-minute means (mu5m).

Everything is computed by DuckDB over the trace's windows in cluster.usage of the tasks of mu1s-measured
jobs (those with a non-zero 1-second sample: google.measured_usage's windows), with their tasks'
attributes from cluster.tasks, and the per-task statistics of google.task_volatility (its macro
google.task_volatility_of), for
four subsets: all tasks, high-SLO tasks (scheduling class 2-3), long-running tasks, and the tasks that are
both (the subset the thesis' section 3.4 studies: high-SLO tasks of month-long-running jobs).  Results are
stored for the analysis.* views: the per-task table (analysis.task_volatility), the trace-wide numbers
(analysis.volatility_summary) and two window histograms: of d (analysis.volatility_d_histogram) and of
mu5m/request vs mu1s/request (analysis.volatility_rate_histogram).

How it fits the whole trace in a memory budget: a task's medians need all its values at once, which
DuckDB cannot spill.  So the windows of measured jobs, and their tasks' attributes, are first written
to Parquet in the lake's spill folder, split into partitions by a hash of (job, task) -- as many as
the memory limit asks for, or `--partitions` -- and each partition's per-task table and histograms are
computed alone: one after the other in this process, or as Ray tasks on a cluster (`--ray`, through
lakehouse.base.partitions; the same function either way).  The per-task tables go from DuckDB to
Parquet (merged into the stored table at the end); Python holds only the summary, the histograms and
what the plots draw.  The trace-wide medians of the per-task values are selected by counting
(`order_statistics.exact_medians`), in bounded memory too.
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass, replace
from pathlib import Path

import duckdb
import numpy as np
import polars as pl

from lakehouse.base.catalog import sql_literal
from lakehouse.base.datasets import DATASETS
from lakehouse.base.errors import TooLittleDataError
from lakehouse.base.lake import Lake, count
from lakehouse.base.partitions import (
    Partitioning,
    partition_files,
    read_files,
    run_partitions,
    split_by_hash,
)
from lakehouse.base.results import store
from lakehouse.base.writer import pending_path
from lakehouse.models.order_statistics import exact_medians
from lakehouse.models.volatility import (
    TASK_VOLATILITY,
    VOLATILITY_D_HISTOGRAM,
    VOLATILITY_RATE_HISTOGRAM,
    VOLATILITY_SUMMARY,
)

#: All tasks of measured jobs, the two filters, then both (the section's: high-SLO tasks running all month).
SUBSETS = ("all", "high_slo", "long_running", "high_slo_long_running")
SUBSET_CONDITIONS = {
    "all": "true",
    "high_slo": "high_slo",
    "long_running": "long_running",
    "high_slo_long_running": "high_slo AND long_running",
}
D_QUANTILES = (0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99)
# Window histograms.  d in bins of 0.001 (below -4 counted at -4; d = 1, i.e. mu1s = 0, fills the top
# bin alone; NULL when mu5m = 0): fine enough to read quantiles from, to the bin.  The rates over the
# task's CPU request in log10 bins of a quarter decade (clamped to [-5, 1]; a rate of 0 has bin NULL).
D_BIN, D_LOWEST = 0.001, -4
RATE_BINS_PER_DECADE, RATE_LOWEST, RATE_HIGHEST = 4, -5, 1
# The per-task distributions the plots draw, as histograms: coefficients of variation in log10 bins of
# a hundredth of a decade (a CV of 0 has bin NULL), mean |d| in bins of 0.05 clipped at 5.
CV_BINS_PER_DECADE, ABS_D_BIN, ABS_D_HIGHEST = 100, 0.05, 5.0
SCATTER_TASKS = 20_000  # tasks drawn for the scatter of per-task means: more hides nothing
# Memory per window of a share's per-task lists (mu1s and mu5m, with DuckDB's list and hash-table
# overhead; measured about 40 bytes), and the part of the memory limit the lists may take.
WINDOW_BYTES, SHARE_OF_LIMIT = 64, 0.5


@dataclass(frozen=True)
class Volatility:
    summary: pl.DataFrame  # metric, then one column per subset
    tasks: int  # rows of the per-task table (stored as analysis.task_volatility, never held here)
    d_histogram: pl.DataFrame  # d_bin, high_slo, long_running, windows, zero_mu1s, sum_d, sum_abs_d
    rate_histogram: pl.DataFrame  # has_request, mu5m_bin, mu1s_bin, high_slo, long_running, windows
    task_histograms: pl.DataFrame  # metric (cv_mu1s, cv_mu5m, mean_abs_d), bin (lower edge), tasks
    task_means: pl.DataFrame  # mean_mu5m, mean_mu1s of at most SCATTER_TASKS tasks with both positive
    partitions: int = 1  # how many partitions the tasks were split into (to fit the memory limit)
    pending: Path | None = None  # the per-task table until it is stored (`store_volatility`)

    def d_distribution(self) -> pl.DataFrame:
        """Windows per bin of d (lower edge) over all windows with mu5m > 0."""
        rows = self.d_histogram.filter(pl.col("d_bin").is_not_null())
        return rows.group_by("d_bin").agg(pl.col("windows").sum()).sort("d_bin")

    def joint(self) -> pl.DataFrame:
        """Windows per cell of (mu5m/request, mu1s/request) over the windows of tasks with a request."""
        rows = self.rate_histogram.filter("has_request")
        return rows.group_by("mu5m_bin", "mu1s_bin").agg(pl.col("windows").sum()).sort("mu5m_bin", "mu1s_bin")


#: What each subset of the summary holds, for the reason a column is empty.
SUBSET_MEANING = {
    "high_slo": "of scheduling class 2 or 3",
    "long_running": "running through the whole trace (there before it began, never ended)",
    "high_slo_long_running": "of scheduling class 2 or 3 and running through the whole trace",
}


def blank_reasons(summary: pl.DataFrame) -> list[str]:
    """Why cells of the summary are empty ("—"), one line each: a subset without a task, or medians of
    coefficients of variation where no task has two 5-minute windows with a non-zero mean."""
    tasks = dict(zip(SUBSETS, summary.filter(pl.col("metric") == "tasks").select(SUBSETS).row(0), strict=True))
    reasons = [
        f"{subset}: no task of the measured jobs is {meaning}"
        for subset, meaning in SUBSET_MEANING.items()
        if not tasks.get(subset)
    ]
    for metric in ("median_cv_mu1s", "median_cv_mu5m"):
        row = dict(zip(SUBSETS, summary.filter(pl.col("metric") == metric).select(SUBSETS).row(0), strict=True))
        empty = [subset for subset, value in row.items() if value is None and tasks.get(subset)]
        if empty:
            reasons.append(
                f"{metric} ({', '.join(empty)}): no task has two 5-minute windows with a non-zero mean "
                "(a coefficient of variation needs two); the robust CVs and |d| are measured"
            )
    return reasons


# The volatility queries are built here rather than kept in sql/queries/: their bins and the counts of
# non-zero samples are the same constants the plots and the tests use (D_BIN, D_LOWEST, RATE_*).
TASK_COUNTS = "count(*) AS tasks, count(*) FILTER (nonzero_samples = 0) AS tasks_with_all_zero_samples, " + ", ".join(
    f"count(*) FILTER (nonzero_samples = {k}) AS tasks_with_{k}_nonzero_samples" for k in range(1, 5)
)
# The per-task medians of the summary: (summary row, per-task column).
TASK_MEDIANS = (
    ("median_samples_per_task", "windows"),
    ("median_nonzero_samples_per_task", "nonzero_samples"),
    ("median_cv_mu1s", "cv_mu1s"),
    ("median_cv_mu5m", "cv_mu5m"),
    ("median_robust_cv_mu1s", "robust_cv_mu1s"),
    ("median_robust_cv_mu5m", "robust_cv_mu5m"),
    ("median_task_mean_abs_d", "mean_abs_d"),
)
# The subsets overlap: one count per subset (none for a subset without tasks, whose cells stay NULL).
TASKS_BY_SUBSET = " UNION ALL ".join(
    f"SELECT '{subset}' AS subset, {TASK_COUNTS} FROM {{tasks}} WHERE {condition} HAVING count(*) > 0"
    for subset, condition in SUBSET_CONDITIONS.items()
)


def _rate_bin(column: str) -> str:
    edge = f"floor(log10({column}) * {RATE_BINS_PER_DECADE}) / {RATE_BINS_PER_DECADE}"
    return f"CASE WHEN {column} > 0 THEN greatest(least({edge}, {RATE_HIGHEST}), {RATE_LOWEST}) END"


HISTOGRAM_COLUMNS = "d_bin, has_request, mu5m_bin, mu1s_bin, high_slo, long_running"
# Both histograms of one share in one scan of its windows (two grouping sets; grouping(d_bin) = 1 marks
# the rate rows), read from the windows joined with the share's per-task table, which holds the task
# attributes (request, flags) of exactly these windows' tasks.
HISTOGRAMS = (
    f"SELECT grouping(d_bin) AS rates, {HISTOGRAM_COLUMNS}, "
    "count(*) AS windows, count(*) FILTER (mu1s = 0) AS zero_mu1s, sum(d) AS sum_d, sum(abs(d)) AS sum_abs_d "
    f"FROM (SELECT greatest(floor(d / {D_BIN}) * {D_BIN}, {D_LOWEST}) AS d_bin, cpu_request > 0 AS has_request, "
    f"{_rate_bin('mu5m / nullif(t.cpu_request, 0)')} AS mu5m_bin, "
    f"{_rate_bin('mu1s / nullif(t.cpu_request, 0)')} AS mu1s_bin, "
    "high_slo, long_running, d, mu1s FROM {windows} JOIN {tasks} AS t USING (job_id, task_index)) "
    "GROUP BY GROUPING SETS ((d_bin, high_slo, long_running), "
    "(has_request, mu5m_bin, mu1s_bin, high_slo, long_running))"
)
# The per-task distributions drawn by the plots (the table itself may be tens of millions of rows).
TASK_HISTOGRAMS = " UNION ALL ".join(
    [
        *(
            f"SELECT '{column}' AS metric, CASE WHEN {column} > 0 THEN "
            f"floor(log10({column}) * {CV_BINS_PER_DECADE}) / {CV_BINS_PER_DECADE} END AS bin, "
            f"count(*) AS tasks FROM {{tasks}} WHERE {column} IS NOT NULL GROUP BY bin"
            for column in ("cv_mu1s", "cv_mu5m")
        ),
        f"SELECT 'mean_abs_d' AS metric, floor(least(mean_abs_d, {ABS_D_HIGHEST}) / {ABS_D_BIN}) * {ABS_D_BIN} AS bin, "
        "count(*) AS tasks FROM {tasks} WHERE mean_abs_d IS NOT NULL GROUP BY bin",
    ]
)
TASK_MEANS = (
    "SELECT mean_mu5m, mean_mu1s FROM {tasks} WHERE mean_mu5m > 0 AND mean_mu1s > 0 "
    f"USING SAMPLE reservoir({SCATTER_TASKS} ROWS) REPEATABLE (0)"
)


def shares_for(windows: int, memory_limit: int) -> int:
    """How many partitions the windows are split into, so that one partition's per-task lists fit the limit."""
    return max(1, math.ceil(windows * WINDOW_BYTES / (memory_limit * SHARE_OF_LIMIT)))


def compute_volatility(lake: Lake, partitioning: Partitioning | None = None) -> Volatility:
    """Compute every volatility statistic of the lake, its tasks split into partitions (by default as
    many as the memory limit asks for, in this process).  The per-task table is written beside its final
    place under a name of this process (`pending`); `store_volatility` renames it in, under the writer
    lock, with the small tables."""
    final = DATASETS[TASK_VOLATILITY.key].file(lake.root, "latest")
    final.parent.mkdir(parents=True, exist_ok=True)
    pending = pending_path(final)
    try:
        with lake.connect() as con, lake.query_errors(), lake.scratch_folder("volatility") as work:
            result = _compute(con, lake, work, pending, partitioning or Partitioning())
        if not result.tasks:
            raise TooLittleDataError("no usage windows of mu1s-measured jobs in the lake (ingest task_usage first)")
    except BaseException:
        pending.unlink(missing_ok=True)
        raise
    return replace(result, pending=pending)


def store_volatility(lake: Lake, result: Volatility) -> None:
    """Store the results where the analysis.* views read them (the per-task table renamed into place
    whole, then the small tables)."""
    if result.pending is not None:
        lake.committing.place(TASK_VOLATILITY.key, result.pending, "latest", result.tasks)
    store(lake, VOLATILITY_SUMMARY, result.summary)
    store(lake, VOLATILITY_D_HISTOGRAM, result.d_histogram)
    store(lake, VOLATILITY_RATE_HISTOGRAM, result.rate_histogram)


#: The 2011 trace's rows of the common views (read by number: a job's and a task's ids as text took twice
#: as long to join and group).
TRACE = "trace = 'google-2011'"
#: The windows of the tasks of measured jobs, with the quantities the study compares: mu5m = the window's
#: mean CPU, mu1s = its 1-second sample, d = (mu5m - mu1s) / mu5m.
MEASURED_WINDOWS = f"""
    SELECT job_number AS job_id, task_number AS task_index, cpu_mean AS mu5m, cpu_sample AS mu1s,
           google.deviation(cpu_mean, cpu_sample) AS d
    FROM cluster.usage SEMI JOIN measured USING (job_number)
    WHERE {TRACE}"""
#: Their tasks' attributes, high_slo as google.tasks gives it.
TASK_ATTRIBUTES = """
    job_number AS job_id, task_number AS task_index, scheduling_class::BIGINT AS scheduling_class, cpu_request,
    google.high_slo(scheduling_class) AS high_slo, coalesce(long_running, false) AS long_running"""
MEASURED_TASKS = f"SELECT {TASK_ATTRIBUTES} FROM cluster.tasks SEMI JOIN measured USING (job_number) WHERE {TRACE}"


def _split(con: duckdb.DuckDBPyConnection, lake: Lake, work: Path, partitioning: Partitioning) -> int:
    """Write the measured windows and their tasks' attributes into `work`, split by a hash of the task
    into partitions (a task's medians need all its windows in one); how many partitions."""
    usage_rows = count(con, f"SELECT count(*) FROM cluster.usage WHERE {TRACE}")
    # The mu1s-measured jobs: the trace recorded their 1-second samples (a job whose samples were never
    # recorded has a sample of 0 in every window).
    con.execute(
        f"CREATE TEMP TABLE measured AS SELECT DISTINCT job_number FROM cluster.usage WHERE {TRACE} AND cpu_sample > 0"
    )

    def tasks() -> int:  # (a scan of the task events: made only to check a count asked for)
        return count(con, f"SELECT count(*) FROM ({MEASURED_TASKS})")

    # Measured windows are fewer than the usage rows: an upper bound of what the memory limit asks for.
    partitions = partitioning.resolve(shares_for(usage_rows, lake.budget.memory), tasks, "tasks of measured jobs")
    task = "job_id, task_index"
    split_by_hash(con, work, "windows", MEASURED_WINDOWS, task, partitions)
    split_by_hash(con, work, "tasks", MEASURED_TASKS, task, partitions)
    return partitions


def _partition(con: duckdb.DuckDBPyConnection, work: Path, number: int) -> tuple[Path, pl.DataFrame] | None:
    """One partition's per-task table (a file in `work`) and window histograms, or None when none of its
    tasks has a measured window.  Written under a temporary name, then renamed: a worker killed midway
    leaves nothing its retry would count twice."""
    windows = partition_files(work, "windows", number)
    if not windows:
        return None
    events = partition_files(work, "tasks", number)
    con.execute(f"CREATE OR REPLACE TEMP VIEW partition_windows AS SELECT * FROM {read_files(windows)}")
    if events:
        con.execute(f"CREATE OR REPLACE TEMP VIEW partition_tasks AS SELECT * FROM {read_files(events)}")
    else:  # no task events for these windows: the attributes are NULL (the flags false)
        no_tasks = f"SELECT {TASK_ATTRIBUTES} FROM cluster.tasks LIMIT 0"
        con.execute(f"CREATE OR REPLACE TEMP VIEW partition_tasks AS {no_tasks}")
    output = work / f"task_volatility_{number}.parquet"
    written = output.with_name(f".{output.name}.tmp")
    con.execute(
        "COPY (SELECT * FROM google.task_volatility_of('partition_windows', 'partition_tasks')) "
        f"TO {sql_literal(written.as_posix())} (FORMAT parquet)"
    )
    histograms = con.execute(HISTOGRAMS.format(windows="partition_windows", tasks=read_files([written]))).pl()
    os.replace(written, output)
    return output, histograms


def _partition_on_worker(lake: Lake, work: Path, number: int) -> tuple[Path, pl.DataFrame] | None:
    """`_partition` in a worker of a cluster, on a connection of its own under the lake's budget."""
    with lake.connect() as con, lake.query_errors():
        return _partition(con, work, number)


def _compute(
    con: duckdb.DuckDBPyConnection, lake: Lake, work: Path, out: Path, partitioning: Partitioning
) -> Volatility:
    partitions = _split(con, lake, work, partitioning)
    if partitioning.ray is None:
        parts = run_partitions(functools.partial(_partition, con, work), partitions)
    else:
        parts = run_partitions(functools.partial(_partition_on_worker, lake, work), partitions, partitioning.ray)
    outputs = [output for output, _ in filter(None, parts)]
    histograms = [frame for _, frame in filter(None, parts)]
    per_task = read_files(outputs) if outputs else "(SELECT * FROM google.task_volatility LIMIT 0)"
    con.execute(
        f"COPY (SELECT * FROM {per_task} ORDER BY job_id, task_index) TO {sql_literal(out.as_posix())} "
        "(FORMAT parquet, COMPRESSION zstd)"
    )
    stored = read_files([out])
    tasks = count(con, f"SELECT count(*) FROM {stored}")
    counts = con.execute(TASKS_BY_SUBSET.format(tasks=stored)).pl()
    medians = exact_medians(con, stored, [column for _, column in TASK_MEDIANS], SUBSET_CONDITIONS)
    task_histograms = con.execute(TASK_HISTOGRAMS.format(tasks=stored)).pl().sort("metric", "bin", nulls_last=False)
    task_means = con.execute(TASK_MEANS.format(tasks=stored)).pl()
    d_histogram, rate_histogram = _combined(histograms)
    summary = _summary(counts, medians, d_histogram)
    return Volatility(summary, tasks, d_histogram, rate_histogram, task_histograms, task_means, partitions)


def _combined(histograms: list[pl.DataFrame]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The partitions' histograms summed cell by cell: the d histogram and the rate histogram."""
    empty = pl.DataFrame(
        schema={"rates": pl.Int64, "d_bin": pl.Float64, "has_request": pl.Boolean, "mu5m_bin": pl.Float64,
                "mu1s_bin": pl.Float64, "high_slo": pl.Boolean, "long_running": pl.Boolean, "windows": pl.Int64,
                "zero_mu1s": pl.Int64, "sum_d": pl.Float64, "sum_abs_d": pl.Float64}
    )  # fmt: skip
    rows = pl.concat([empty, *histograms], how="vertical_relaxed")
    rows = (
        rows.group_by("rates", *HISTOGRAM_COLUMNS.split(", "))
        .agg(pl.col("windows", "zero_mu1s").sum(), pl.col("sum_d", "sum_abs_d").sum())
        .sort("rates", *HISTOGRAM_COLUMNS.split(", "), nulls_last=True)
    )
    d_histogram = rows.filter(pl.col("rates") == 0).select(
        "d_bin", "high_slo", "long_running", "windows", "zero_mu1s", "sum_d", "sum_abs_d"
    )
    rate_histogram = rows.filter(pl.col("rates") == 1).select(
        "has_request", "mu5m_bin", "mu1s_bin", "high_slo", "long_running", "windows"
    )
    return d_histogram, rate_histogram


def window_metrics(d_histogram: pl.DataFrame) -> dict[str, float | None]:
    """Windows, share with mu1s = 0, mean d and mean |d| (over windows with mu5m > 0), and the quantiles
    of d to the bin: d_pXX is the lower edge of the bin holding the XX % quantile (the smallest d whose
    empirical CDF reaches XX %), so the exact quantile lies in [d_pXX, d_pXX + D_BIN)."""
    windows = int(d_histogram["windows"].sum())
    defined = (
        d_histogram.filter(pl.col("d_bin").is_not_null())
        .group_by("d_bin")
        .agg(pl.col("windows").sum(), pl.col("sum_d").sum(), pl.col("sum_abs_d").sum())
    )
    defined = defined.sort("d_bin")
    n = int(defined["windows"].sum())
    metrics: dict[str, float | None] = {
        "windows": float(windows),
        "share_of_windows_with_zero_mu1s": float(d_histogram["zero_mu1s"].sum()) / windows if windows else None,
        "mean_d": float(defined["sum_d"].sum()) / n if n else None,
        "mean_abs_d": float(defined["sum_abs_d"].sum()) / n if n else None,
    }
    cumulative = np.cumsum(defined["windows"].to_numpy())
    edges = defined["d_bin"].to_numpy()
    for q in D_QUANTILES:
        # The inverted-CDF quantile is the ceil(q n)-th smallest value: its bin is the first to reach it.
        rank = max(int(np.ceil(q * n)), 1)
        metrics[f"d_p{round(q * 100):02d}"] = float(edges[np.searchsorted(cumulative, rank)]) if n else None
    return metrics


def _summary(
    counts: pl.DataFrame, medians: dict[tuple[str, str], float | None], d_histogram: pl.DataFrame
) -> pl.DataFrame:
    """Metric rows, one column per subset (a subset without tasks has no grouping row: NULLs)."""
    columns: dict[str, dict[str, float | None]] = {}
    for subset in SUBSETS:
        task_row = counts.filter(pl.col("subset") == subset)
        values: dict[str, float | None] = {}
        if task_row.height:
            values = task_row.drop("subset").to_dicts()[0]
            values |= {row: medians[(subset, column)] for row, column in TASK_MEDIANS}
        windows = d_histogram.filter(pl.sql_expr(SUBSET_CONDITIONS[subset]))
        columns[subset] = values | (window_metrics(windows) if windows.height else {})
    widest = max(columns.values(), key=len)  # the metrics of a subset with tasks and windows
    metrics = list(widest)
    frame: dict[str, list[str] | list[float | None]] = {"metric": metrics}
    for subset, values in columns.items():
        frame[subset] = [None if (value := values.get(m)) is None else float(value) for m in metrics]
    return pl.DataFrame(frame, schema={"metric": pl.String} | dict.fromkeys(SUBSETS, pl.Float64))
