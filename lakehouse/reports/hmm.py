"""`lakehouse report hmm`: the workload of one SWF log as a hidden Markov model (lakehouse.models.hmm)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lakehouse.base.lake import Lake
from lakehouse.reports.base import Report, lazy

if TYPE_CHECKING:  # the model loads when the report runs, not when a command lists the reports
    from lakehouse.models.hmm import LogModels
    from lakehouse.models.hmm import Settings as HmmSettings


def _hmm(lake: Lake, settings: tuple[str, Sequence[HmmSettings]]) -> LogModels:
    from lakehouse.models.hmm import model_log

    return model_log(lake, *settings)


def _plot_hmm(lake: Lake, result: LogModels, folder: Path) -> list[Path]:
    from lakehouse.models.hmm_plots import plot_hmm

    return plot_hmm(result.log, result.studies, folder)


REPORT: Report[tuple[str, Sequence[HmmSettings]], LogModels] = Report(
    "hmm",
    "The workload as a hidden Markov model (lakehouse report hmm)",
    ("analysis.hmm_fits", "analysis.hmm_states"),
    _hmm,
    lazy("lakehouse.models.hmm:store_models"),
    lambda result: [(f"{result.log}: workload HMM", result.fits)],
    _plot_hmm,
    order=60,
)
