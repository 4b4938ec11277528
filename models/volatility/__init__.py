"""CPU-usage volatility (the 1-second samples against the 5-minute means): its stored tables."""

from __future__ import annotations

import pyarrow as pa

from lakehouse.base.tables import StoredTable, fields

SUBSET_FLAGS = fields(pa.bool_(), "high_slo", "long_running")

TASK_VOLATILITY_SCHEMA = pa.schema(  # as google.task_volatility
    [
        *fields(pa.int64(), "job_id", "task_index", "windows", "nonzero_samples"),
        *fields(pa.float64(), "cv_mu1s", "cv_mu5m", "robust_cv_mu1s", "robust_cv_mu5m"),
        *fields(pa.float64(), "mean_abs_d", "mean_mu5m", "mean_mu1s"),
        pa.field("scheduling_class", pa.int64()),
        pa.field("cpu_request", pa.float64()),
        *fields(pa.bool_(), "high_slo", "long_running"),
    ]
)

TASK_VOLATILITY = StoredTable(
    "task_volatility",
    TASK_VOLATILITY_SCHEMA,
    grain=(
        "one row per task of a mu1s-measured job, as google.task_volatility when `lakehouse report volatility` last ran"
    ),
    description=(
        "The per-task volatility table stored by the report (coefficients of variation of mu1s and mu5m, "
        "their MAD/median counterparts, mean |d|, mean rates, class, request, high_slo, long_running), so "
        "later queries need not rescan the usage windows."
    ),
)

VOLATILITY_SUMMARY_SCHEMA = pa.schema(
    [
        pa.field("metric", pa.string()),
        *fields(pa.float64(), "all", "high_slo", "long_running", "high_slo_long_running"),
    ]
)

VOLATILITY_SUMMARY = StoredTable(
    "volatility_summary",
    VOLATILITY_SUMMARY_SCHEMA,
    grain="one row per trace-wide volatility metric",
    description=(
        "The numbers of `lakehouse report volatility`, one column per subset of tasks of mu1s-measured jobs "
        "(all; high_slo = scheduling class 2-3; long_running): tasks with all-zero and with exactly 1-4 "
        "non-zero samples, median samples per task, median coefficients of variation (plain and MAD/median) "
        "of mu1s and mu5m, median per-task mean |d|, windows, share of windows with mu1s = 0, mean d, mean "
        "|d| and quantiles of d = (mu5m - mu1s) / mu5m over all windows with mu5m > 0."
    ),
)

#: `report volatility --trace google-2019`: the 2011 method against the windows' percentiles, per cell and tier.
VOLATILITY_2019_SCHEMA = pa.schema(
    [
        pa.field("cell", pa.string()),
        pa.field("tier", pa.string()),
        pa.field("windows", pa.int64()),
        *fields(
            pa.float64(),
            "mean_abs_d_2011",
            "mean_mad_percentiles",
            "ratio_2011_to_percentiles",
            "window_correlation",
            "median_spread_p90_p10",
            "median_p99_over_mean",
            "share_sample_outside_range",
            "share_zero_sample",
        ),
    ]
)

VOLATILITY_2019 = StoredTable(
    "volatility_2019",
    VOLATILITY_2019_SCHEMA,
    grain="one row per cell of Google's 2019 trace and priority tier (and one per cell for all tiers)",
    description=(
        "Written by `lakehouse report volatility --trace google-2019`: the 2011 volatility method checked on "
        "the same windows against the truth of the 2019 CPU histograms. windows = the tasks' windows (inside "
        "alloc sets or not; alloc instances' windows, sums of their tasks, left out) with a mean above 0, a "
        "random second and both histograms; mean_abs_d_2011 = mean |d|, d = (mean - random second) / mean, "
        "the 2011 estimate of how far a second strays from its window's mean; mean_mad_percentiles = the mean"
        " of each window's E|X - mean| / mean read from its 20 percentiles (quantile function linear between "
        "them); ratio_2011_to_percentiles (1 = the 2011 estimator is unbiased); window_correlation of the "
        "two, window by window; median_spread_p90_p10 = median (p90 - p10) / mean and median_p99_over_mean, "
        "both exact, selected by counting (memory that does not grow with the windows); "
        "share_sample_outside_range = random seconds outside [p0, p100]; share_zero_sample."
    ),
)

VOLATILITY_D_HISTOGRAM_SCHEMA = pa.schema(
    [
        pa.field("d_bin", pa.float64()),
        *SUBSET_FLAGS,
        *fields(pa.int64(), "windows", "zero_mu1s"),
        *fields(pa.float64(), "sum_d", "sum_abs_d"),
    ]
)

VOLATILITY_D_HISTOGRAM = StoredTable(
    "volatility_d_histogram",
    VOLATILITY_D_HISTOGRAM_SCHEMA,
    grain="one row per bin of d and subset flags, as `lakehouse report volatility` last counted them",
    description=(
        "Usage windows of the tasks of mu1s-measured jobs by d_bin = lower edge of d = (mu5m - mu1s) / mu5m "
        "in bins of 0.001 (values below -4 counted at -4; d = 1, i.e. mu1s = 0, alone in the 1.0 bin; NULL "
        "when mu5m = 0), high_slo and long_running: windows, zero_mu1s = windows with mu1s = 0, and the sums "
        "of d and |d| (for exact means). Sum over the flags you do not filter on."
    ),
)

VOLATILITY_RATE_HISTOGRAM_SCHEMA = pa.schema(
    [
        pa.field("has_request", pa.bool_()),
        *fields(pa.float64(), "mu5m_bin", "mu1s_bin"),
        *SUBSET_FLAGS,
        pa.field("windows", pa.int64()),
    ]
)

VOLATILITY_RATE_HISTOGRAM = StoredTable(
    "volatility_rate_histogram",
    VOLATILITY_RATE_HISTOGRAM_SCHEMA,
    grain="one row per non-empty cell of the joint histogram of mu5m/request vs mu1s/request and subset flags",
    description=(
        "Usage windows of the tasks of mu1s-measured jobs by has_request (the task has a positive CPU "
        "request), mu5m_bin and mu1s_bin (lower edges, log10, of the two rates as ratios to the request, in "
        "quarter decades clamped to [-5, 1]; NULL for a rate of 0 or no request), high_slo and long_running. "
        "The joint distribution of `lakehouse report volatility`: the rows with has_request."
    ),
)

TABLES = (
    TASK_VOLATILITY,
    VOLATILITY_SUMMARY,
    VOLATILITY_2019,
    VOLATILITY_D_HISTOGRAM,
    VOLATILITY_RATE_HISTOGRAM,
)

#: The traces the report cannot read yet, each with why in one line (lakehouse.base.traces.refuse_unfed).
CANNOT_FEED = {
    "alibaba-2018": (
        "the method compares each 5-minute window's mean CPU with one random second of it (Google's traces); "
        "Alibaba 2018 gives a batch instance's mean and maximum over its whole life, and a machine's CPU "
        "every ten seconds or so, never a window's random second"
    )
}
