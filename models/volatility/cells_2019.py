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
which google2019.usage is for.)  Everything is one query of aggregates that hold a fixed state, so its
memory does not grow with the trace: the medians of the spreads are t-digest estimates (DuckDB's
approx_quantile).  Exact medians held every window's value: 0.05 of a real cell (71 million windows)
did not fit a 1 GB budget.
"""

from __future__ import annotations

import polars as pl

from lakehouse.base.google2019_format import CPU_PERCENTILES, TAIL_CPU_PERCENTILES
from lakehouse.base.lake import Lake

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


def windows_sql(cell: str | None = None) -> str:
    """One row per task window with a mean above 0, a random second and both histograms: its cell, tier,
    |d| by the 2011 method and the truth the percentiles give."""
    # The 20 points in level order: p0..p90 of the first histogram, p91..p99 of the tail, then p100.
    points = "list_concat(cpu_usage_distribution[1:10], tail_cpu_usage_distribution, cpu_usage_distribution[11:11])"
    where = "" if cell is None else f"AND u.cell = '{cell}'"
    return f"""
        WITH tiers AS (
            SELECT cell, collection_id, arg_max(tier, time) AS tier
            FROM google2019.collection_events GROUP BY cell, collection_id
        ),
        windows AS (
            SELECT u.cell, coalesce(t.tier, 'unknown') AS tier, u.average_usage_cpus AS m,
                   u.random_sample_usage_cpus AS s, {points} AS q
            FROM google2019.instance_usage AS u LEFT JOIN tiers AS t USING (cell, collection_id)
            WHERE u.collection = 'JOB' AND u.average_usage_cpus > 0 AND u.random_sample_usage_cpus IS NOT NULL
              AND len(u.cpu_usage_distribution) = 11 AND len(u.tail_cpu_usage_distribution) = 9 {where}
        )
        SELECT cell, tier, m, s, abs(m - s) / m AS abs_d, ({_mad_from_percentiles("m", "q")}) / m AS mad,
               (q[10] - q[2]) / m AS spread_p90_p10, q[19] / m AS p99_over_mean,
               s < q[1] OR s > q[20] AS sample_outside, s = 0 AS zero_sample
        FROM windows
    """


def compare(lake: Lake, cell: str | None = None) -> pl.DataFrame:
    """Per cell and tier (and each cell's 'all'): windows, the 2011 estimate (mean |d|), the truth from
    the percentiles (mean MAD / mean), their ratio and window-by-window correlation, the medians of the
    spreads (t-digest estimates), and the shares of samples outside [p0, p100] and of zero samples."""
    query = f"""
        SELECT cell, coalesce(tier, 'all') AS tier, count(*) AS windows,
               avg(abs_d) AS mean_abs_d_2011, avg(mad) AS mean_mad_percentiles,
               avg(abs_d) / nullif(avg(mad), 0) AS ratio_2011_to_percentiles,
               corr(abs_d, mad) AS window_correlation,
               approx_quantile(spread_p90_p10, 0.5) AS median_spread_p90_p10,
               approx_quantile(p99_over_mean, 0.5) AS median_p99_over_mean,
               avg(sample_outside::INTEGER) AS share_sample_outside_range,
               avg(zero_sample::INTEGER) AS share_zero_sample
        FROM ({windows_sql(cell)})
        GROUP BY GROUPING SETS ((cell, tier), (cell))
        ORDER BY cell, tier = 'all' DESC, tier
    """
    with lake.joins_as_written():  # the windows stream past the tiers of their collections
        return lake.query(query)
