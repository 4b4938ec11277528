"""`lakehouse report compare-traces`: every trace of the lake side by side, through the common views
cluster.* (lakehouse.models.compare_traces.model)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lakehouse.base.lake import Lake
from lakehouse.base.report import Report
from lakehouse.models import compare_traces as compare_topic

if TYPE_CHECKING:  # the model loads when the report runs, not when a command lists the reports
    from lakehouse.models.compare_traces.model import Comparison

SUMMARY = """Every trace of the lake side by side: SWF logs (one row each), Google 2011, each Google 2019 cell
and Alibaba 2018, read through the common views cluster.* (docs/traces.md).

Per trace and cell: jobs, tasks, users, machines and the days spanned; the job size (tasks, or an SWF
job's processors) and duration (end - start, hours) at the median and the 90th percentile; the median
wait (start - submit); the CPU utilisation (the CPU-seconds cluster.usage measures over each machine's
largest capacity times the span measured; Alibaba 2018 measures its batch instances only); and, where
`report volatility` and `report periodicity` ran on that trace, its volatility (the 2011 method's mean
|d|) and the median daily amplitude over the mean of its long-running jobs.  A number a trace does not
give is empty.  Stored as analysis.trace_comparison.

`--plots DIR` draws the share of jobs up to each duration and each size, one line per trace and cell.

Example: `lakehouse report compare-traces --plots figures/`"""


def _compare(lake: Lake, settings: None) -> Comparison:
    from lakehouse.models.compare_traces.model import compare

    return compare(lake)


def _plot(lake: Lake, result: Comparison, folder: Path) -> list[Path]:
    from lakehouse.models.compare_traces.plots import plot_comparison

    return plot_comparison(result, folder)


def _store_comparison(*args: Any, **kwargs: Any) -> Any:
    from lakehouse.models.compare_traces.model import store_comparison

    return store_comparison(*args, **kwargs)


REPORT: Report[None, Comparison] = Report(
    "compare-traces",
    "Every trace side by side (lakehouse report compare-traces)",
    compare_topic.TABLES,
    _compare,
    _store_comparison,
    lambda result: [("every trace and cell of the lake, side by side", result.table)],
    _plot,
    follows="google",  # the nightly page shows it when a cluster trace arrives, after the reports it reads
    order=45,
    summary=SUMMARY,
)
