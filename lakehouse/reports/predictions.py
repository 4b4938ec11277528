"""`lakehouse report predictions`: sliding-window predictions of walltime, memory and processors, per
SWF log or for the Google trace (lakehouse.models.predict)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from lakehouse.base.lake import Lake
from lakehouse.reports.base import Report, lazy

if TYPE_CHECKING:  # the model loads when the report runs, not when a command lists the reports
    from lakehouse.models.predict import Report as Predictions
    from lakehouse.models.predict import Settings as PredictionSettings


@dataclass(frozen=True)
class Source:
    """One source to predict: an SWF log (family `swf`) or the Google trace (`google`)."""

    family: str
    name: str
    settings: PredictionSettings | None = None  # None: the defaults


def _predictions(lake: Lake, source: Source) -> Predictions:
    from lakehouse.models.predict import Settings, report

    return report(lake, source.family, source.name, source.settings or Settings())


def _plot_predictions(lake: Lake, result: Predictions, folder: Path) -> list[Path]:
    from lakehouse.models.predictions_plots import plot_predictions

    return plot_predictions(result.jobs, str(result.table["source"][0]), folder)


def _glance(result: Predictions) -> pl.DataFrame:
    from lakehouse.models.predict import glance

    return glance(result.table)


def _nightly(lake: Lake, logs: Sequence[str], options: Mapping[str, Any]) -> tuple[list[Any], list[str]]:
    """Each changed SWF log that has targets to predict; a note for each that has none."""
    from lakehouse.models.predict import no_targets, sources

    with_targets = {name for family, name in sources(lake) if family == "swf"}
    notes = [f"skipped {no_targets(log)}" for log in logs if log not in with_targets]
    return [Source("swf", log) for log in logs if log in with_targets], notes


REPORT: Report[Source, Predictions] = Report(
    "predictions",
    "Walltime, memory and processor predictions (lakehouse report predictions)",
    ("analysis.predictions_scores", "analysis.predictions_jobs"),
    _predictions,
    lazy("lakehouse.models.predict:write_report"),
    lambda r: [(f"{r.table['source'][0]}: sliding windows over the {r.grouping!r} grouping", _glance(r))],
    _plot_predictions,
    follows="swf",
    nightly=_nightly,
    order=10,
)
