"""`lakehouse report volatility`: 1-second CPU samples against the 5-minute means of the Google trace
(lakehouse.models.volatility)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lakehouse.base.lake import Lake
from lakehouse.reports.base import Report, lazy

if TYPE_CHECKING:  # the model loads when the report runs, not when a command lists the reports
    from lakehouse.models.volatility import Volatility


def _volatility(lake: Lake, settings: None) -> Volatility:
    from lakehouse.models.volatility import compute_volatility

    return compute_volatility(lake)


def _blanks(result: Volatility) -> list[str]:
    from lakehouse.models.volatility import blank_reasons

    return [f"—: {reason}" for reason in blank_reasons(result.summary)]


SUMMARY = """How far 1-second CPU samples (mu1s) stray from the 5-minute means (mu5m) of the Google trace.

Only tasks of mu1s-measured jobs count (google.job_sampling: jobs whose samples were never recorded
are left out), in four columns: all of them, the high-SLO ones (scheduling class 2-3), the
long-running ones, and those that are both (high_slo_long_running: the tasks the published study,
Reis 2015 section 3.4, analyses; `lakehouse reproduce volatility` reads that column).  Rows: tasks
with all-zero and with exactly 1-4 non-zero samples, median samples per task, median coefficients of
variation (sd / mean, and the robust MAD / median) of mu1s and mu5m, the median of the per-task mean
|d| with d = (mu5m - mu1s) / mu5m, then over all windows the share with mu1s = 0, mean d, mean |d|
and quantiles of d.  Stores analysis.task_volatility, analysis.volatility_summary,
analysis.volatility_d_histogram (d binned) and analysis.volatility_rate_histogram (mu5m and mu1s per
request, binned).

`--plots DIR` writes ECDFs of both CVs, a histogram of per-task mean |d|, the ECDF of d, a
log-count heatmap of mu5m/request vs mu1s/request and a scatter of per-task mean mu5m vs mu1s.

Example: `lakehouse report volatility --plots figures/ --format csv`"""


def _plot_volatility(lake: Lake, result: Volatility, folder: Path) -> list[Path]:
    from lakehouse.models.volatility_plots import plot_volatility

    return plot_volatility(result, folder)


REPORT: Report[None, Volatility] = Report(
    "volatility",
    "CPU volatility, 1 s samples vs 5 min means (lakehouse report volatility)",
    (
        "analysis.task_volatility",
        "analysis.volatility_summary",
        "analysis.volatility_d_histogram",
        "analysis.volatility_rate_histogram",
    ),
    _volatility,
    lazy("lakehouse.models.volatility:store_volatility"),
    lambda result: [(f"{result.tasks:,} tasks of measured jobs", result.summary)],
    _plot_volatility,
    follows="google",
    order=20,
    summary=SUMMARY,
    doing="measuring volatility over the usage windows...",
    notes=_blanks,
)
