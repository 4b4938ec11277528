"""CPU-usage volatility of the Google trace: 1-second samples (mu1s) against the 5-minute means (mu5m).

Everything is computed by DuckDB over google.measured_usage (the windows of the tasks of mu1s-measured
jobs; google.volatility_windows with their tasks' attributes) and google.task_volatility (one row per
such task), for three subsets: all tasks,
high-SLO tasks (scheduling class 2-3) and long-running tasks.  Results are stored for the analysis.*
views: the per-task table (analysis.task_volatility), the trace-wide numbers (analysis.volatility_summary)
and two window histograms: of d (analysis.volatility_d_histogram) and of mu5m/request vs mu1s/request
(analysis.volatility_rate_histogram).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from lakehouse.lake import Lake
from lakehouse.models.results import store
from lakehouse.models.schemas import (
    TASK_VOLATILITY_SCHEMA,
    VOLATILITY_D_HISTOGRAM_SCHEMA,
    VOLATILITY_RATE_HISTOGRAM_SCHEMA,
    VOLATILITY_SUMMARY_SCHEMA,
)

SUBSETS = ("all", "high_slo", "long_running")  # all tasks of measured jobs, then the two filters
D_QUANTILES = (0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99)
# Window histograms.  d in bins of 0.001 (below -4 counted at -4; d = 1, i.e. mu1s = 0, fills the top
# bin alone; NULL when mu5m = 0): fine enough to read quantiles from, to the bin.  The rates over the
# task's CPU request in log10 bins of a quarter decade (clamped to [-5, 1]; a rate of 0 has bin NULL).
D_BIN, D_LOWEST = 0.001, -4
RATE_BINS_PER_DECADE, RATE_LOWEST, RATE_HIGHEST = 4, -5, 1


@dataclass(frozen=True)
class Volatility:
    summary: pl.DataFrame  # metric, then one column per subset
    tasks: pl.DataFrame  # google.task_volatility
    d_histogram: pl.DataFrame  # d_bin, high_slo, long_running, windows, zero_mu1s, sum_d, sum_abs_d
    rate_histogram: pl.DataFrame  # has_request, mu5m_bin, mu1s_bin, high_slo, long_running, windows

    def d_distribution(self) -> pl.DataFrame:
        """Windows per bin of d (lower edge) over all windows with mu5m > 0."""
        rows = self.d_histogram.filter(pl.col("d_bin").is_not_null())
        return rows.group_by("d_bin").agg(pl.col("windows").sum()).sort("d_bin")

    def joint(self) -> pl.DataFrame:
        """Windows per cell of (mu5m/request, mu1s/request) over the windows of tasks with a request."""
        rows = self.rate_histogram.filter("has_request")
        return rows.group_by("mu5m_bin", "mu1s_bin").agg(pl.col("windows").sum()).sort("mu5m_bin", "mu1s_bin")


# The volatility queries are built here rather than kept in sql/queries/: their bins and the counts of
# non-zero samples are the same constants the plots and the tests use (D_BIN, D_LOWEST, RATE_*).
TASK_METRICS = (
    "count(*) AS tasks, count(*) FILTER (nonzero_samples = 0) AS tasks_with_all_zero_samples, "
    + "".join(f"count(*) FILTER (nonzero_samples = {k}) AS tasks_with_{k}_nonzero_samples, " for k in range(1, 5))
    + "median(windows) AS median_samples_per_task, median(nonzero_samples) AS median_nonzero_samples_per_task, "
    "median(cv_mu1s) AS median_cv_mu1s, median(cv_mu5m) AS median_cv_mu5m, "
    "median(robust_cv_mu1s) AS median_robust_cv_mu1s, median(robust_cv_mu5m) AS median_robust_cv_mu5m, "
    "median(mean_abs_d) AS median_task_mean_abs_d"
)
# The subsets overlap, so they are grouping sets, and the rows for `true` are kept.
TASKS_BY_SUBSET = (
    "SELECT CASE WHEN high_slo THEN 'high_slo' WHEN long_running THEN 'long_running' ELSE 'all' END AS subset, "
    f"{TASK_METRICS} FROM tasks GROUP BY GROUPING SETS ((), (high_slo), (long_running)) "
    "HAVING (high_slo IS NULL AND long_running IS NULL) OR high_slo OR long_running"
)


def _rate_bin(column: str) -> str:
    edge = f"floor(log10({column}) * {RATE_BINS_PER_DECADE}) / {RATE_BINS_PER_DECADE}"
    return f"CASE WHEN {column} > 0 THEN greatest(least({edge}, {RATE_HIGHEST}), {RATE_LOWEST}) END"


# Both histograms in one scan of the windows (two grouping sets); grouping(d_bin) = 1 marks the rate rows.
HISTOGRAMS = (
    "SELECT grouping(d_bin) AS rates, d_bin, has_request, mu5m_bin, mu1s_bin, high_slo, long_running, "
    "count(*) AS windows, count(*) FILTER (mu1s = 0) AS zero_mu1s, sum(d) AS sum_d, sum(abs(d)) AS sum_abs_d "
    f"FROM (SELECT greatest(floor(d / {D_BIN}) * {D_BIN}, {D_LOWEST}) AS d_bin, cpu_request > 0 AS has_request, "
    f"{_rate_bin('mu5m / nullif(t.cpu_request, 0)')} AS mu5m_bin, "
    f"{_rate_bin('mu1s / nullif(t.cpu_request, 0)')} AS mu1s_bin, "
    # The windows of google.volatility_windows (mu5m, mu1s, d, rates per request, task attributes), read
    # from the usage joined with the per-task table already computed, which holds exactly the tasks of
    # measured jobs: one join instead of the view's three (measured jobs, their windows, google.tasks).
    "high_slo, long_running, d, mu1s FROM (SELECT job_id, task_index, cpu_rate AS mu5m, sampled_cpu_usage AS mu1s, "
    "google.deviation(mu5m, mu1s) AS d FROM google.task_usage) JOIN tasks AS t USING (job_id, task_index)) "
    "GROUP BY GROUPING SETS ((d_bin, high_slo, long_running), "
    "(has_request, mu5m_bin, mu1s_bin, high_slo, long_running)) "
    "ORDER BY ALL"
)


def compute(lake: Lake) -> Volatility:
    """Every volatility statistic of the lake: one scan of the windows per task, one for the histograms."""
    with lake.connect() as con:
        con.execute("CREATE TEMP TABLE tasks AS SELECT * FROM google.task_volatility")
        per_task = con.execute(TASKS_BY_SUBSET).pl()
        tasks = con.execute("SELECT * FROM tasks ORDER BY job_id, task_index").pl()
        histograms = con.execute(HISTOGRAMS).pl()
    d_histogram = histograms.filter(pl.col("rates") == 0).select(
        "d_bin", "high_slo", "long_running", "windows", "zero_mu1s", "sum_d", "sum_abs_d"
    )
    rate_histogram = histograms.filter(pl.col("rates") == 1).select(
        "has_request", "mu5m_bin", "mu1s_bin", "high_slo", "long_running", "windows"
    )
    return Volatility(_summary(per_task, d_histogram), tasks, d_histogram, rate_histogram)


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
        "share_of_windows_with_zero_mu1s": d_histogram["zero_mu1s"].sum() / windows if windows else None,
        "mean_d": defined["sum_d"].sum() / n if n else None,
        "mean_abs_d": defined["sum_abs_d"].sum() / n if n else None,
    }
    cumulative = np.cumsum(defined["windows"].to_numpy())
    edges = defined["d_bin"].to_numpy()
    for q in D_QUANTILES:
        # The inverted-CDF quantile is the ceil(q n)-th smallest value: its bin is the first to reach it.
        rank = max(int(np.ceil(q * n)), 1)
        metrics[f"d_p{round(q * 100):02d}"] = float(edges[np.searchsorted(cumulative, rank)]) if n else None
    return metrics


def _summary(per_task: pl.DataFrame, d_histogram: pl.DataFrame) -> pl.DataFrame:
    """Metric rows, one column per subset (a subset without tasks has no grouping row: NULLs)."""
    columns: dict[str, dict[str, float | None]] = {}
    for subset in SUBSETS:
        task_row = per_task.filter(pl.col("subset") == subset)
        values = task_row.drop("subset").to_dicts()[0] if task_row.height else {}
        windows = d_histogram if subset == "all" else d_histogram.filter(subset)
        columns[subset] = values | (window_metrics(windows) if windows.height else {})
    metrics = list(max(columns.values(), key=len))
    frame = {"metric": metrics}
    for subset, values in columns.items():
        frame[subset] = [None if values.get(m) is None else float(values[m]) for m in metrics]
    return pl.DataFrame(frame, schema={"metric": pl.String} | dict.fromkeys(SUBSETS, pl.Float64))


def write_volatility(lake: Lake) -> Volatility:
    """Compute and store the results where the analysis.* views read them."""
    result = compute(lake)
    store(lake, "analysis_task_volatility", result.tasks, TASK_VOLATILITY_SCHEMA)
    store(lake, "analysis_volatility_summary", result.summary, VOLATILITY_SUMMARY_SCHEMA)
    store(lake, "analysis_volatility_d_histogram", result.d_histogram, VOLATILITY_D_HISTOGRAM_SCHEMA)
    store(lake, "analysis_volatility_rate_histogram", result.rate_histogram, VOLATILITY_RATE_HISTOGRAM_SCHEMA)
    return result
