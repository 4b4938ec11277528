"""`lakehouse report selection`: online policy selection over a stored campaign
(lakehouse.studies.selection)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lakehouse.base.lake import Lake
from lakehouse.reports.base import Report, lazy

if TYPE_CHECKING:  # the study loads when the report runs, not when a command lists the reports
    from lakehouse.studies.selection import SelectionTables


def _plot_selection(lake: Lake, result: SelectionTables, folder: Path) -> list[Path]:
    from lakehouse.studies.selection_plots import selection_plots

    return selection_plots(result.rows, result.curves, folder)


REPORT: Report[str, SelectionTables] = Report(
    "selection",
    "Online policy selection (lakehouse report selection)",
    ("analysis.selection_runs", "analysis.selection_curves"),
    lazy("lakehouse.studies.selection:selection_tables"),
    lazy("lakehouse.studies.selection:store_tables"),
    lambda result: [("average wait / EASY-FCFS's, over resamples", result.table)],
    _plot_selection,
    order=80,
)
