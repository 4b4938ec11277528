"""`lakehouse report volatility`: 1-second CPU samples against the 5-minute means of the Google trace
(lakehouse.models.volatility)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lakehouse.lake import Lake
from lakehouse.reports.base import Report, lazy

if TYPE_CHECKING:  # the model loads when the report runs, not when a command lists the reports
    from lakehouse.models.volatility import Volatility


def _volatility(lake: Lake, settings: None) -> Volatility:
    from lakehouse.models.volatility import compute_volatility

    return compute_volatility(lake)


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
)
