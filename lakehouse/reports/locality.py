"""`lakehouse report locality`: the runtime locality of submit times and users, one SWF log at a time
(lakehouse.models.locality)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lakehouse.base.lake import Lake
from lakehouse.reports.base import Report, Tables, lazy

if TYPE_CHECKING:  # the model loads when the report runs, not when a command lists the reports
    from lakehouse.models.locality import Measured
    from lakehouse.models.locality import Settings as LocalitySettings


def _locality(lake: Lake, settings: tuple[str, LocalitySettings]) -> Measured:
    from lakehouse.models.locality import measure

    return measure(lake, *settings)


def _show_locality(result: Measured) -> Tables:
    from lakehouse.models.locality import best_cells

    return [(f"{result.jobs.log}: best cell of each variant", best_cells(result.grid))]


def _plot_locality(lake: Lake, result: Measured, folder: Path) -> list[Path]:
    from lakehouse.models.locality_plots import plot_locality

    return plot_locality(result.grid, folder)


REPORT: Report[tuple[str, LocalitySettings], Measured] = Report(
    "locality",
    "Runtime locality of submit times and users (lakehouse report locality)",
    ("analysis.locality",),
    _locality,
    lazy("lakehouse.models.locality:store_measured"),
    _show_locality,
    _plot_locality,
    order=50,
)
