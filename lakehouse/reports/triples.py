"""`lakehouse report triples`: the heuristic triples of a stored campaign (lakehouse.studies.triples)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lakehouse.base.lake import Lake
from lakehouse.reports.base import Report, lazy

if TYPE_CHECKING:  # the study loads when the report runs, not when a command lists the reports
    from lakehouse.studies.triples import TripleTables


def _plot_triples(lake: Lake, result: TripleTables, folder: Path) -> list[Path]:
    from lakehouse.studies.triples_plots import triples_plots

    return triples_plots(lake, result.rows, folder)


REPORT: Report[str, TripleTables] = Report(
    "triples",
    "Heuristic triples of a campaign (lakehouse report triples)",
    ("analysis.triples", "analysis.triples_loo"),
    lazy("lakehouse.studies.triples:triple_tables"),
    lazy("lakehouse.studies.triples:store_tables"),
    lambda result: [("mean bounded slowdown per log", result.per_log), ("leave-one-out selection", result.loo)],
    _plot_triples,
    order=70,
)
