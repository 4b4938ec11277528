"""Every report in one list: how it computes, what it stores (its analysis.* tables), what it shows and
what it draws.  `lakehouse report ...`, the demo and the nightly run all go through `REPORTS`.

A report computes without the writer lock (reading the lake may take minutes; ingests go on) and
`Report.run` stores the result under it: the one place a report takes the lock, so readers see the
old tables or the new ones, whole.  Studies stored as campaigns (`report hmm-backfilling`, and the
runs behind `selection` and `triples`) keep their runs in analysis.campaign_runs as each run ends.

The models, studies and matplotlib are imported inside the functions below, when a report runs: every
command lists this registry at start and must not pay for them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

import polars as pl

from lakehouse.lake import Lake

if TYPE_CHECKING:
    from lakehouse.models.hmm import LogModels
    from lakehouse.models.hmm import Settings as HmmSettings
    from lakehouse.models.job_sinusoids import Periodicity
    from lakehouse.models.locality import Measured
    from lakehouse.models.locality import Settings as LocalitySettings
    from lakehouse.models.packing import Packed
    from lakehouse.models.predict import Report as Predictions
    from lakehouse.models.predict import Settings as PredictionSettings
    from lakehouse.models.volatility import Volatility
    from lakehouse.studies.selection import SelectionTables
    from lakehouse.studies.triples import TripleTables

S = TypeVar("S")
R = TypeVar("R")
Tables = list[tuple[str, pl.DataFrame]]  # (caption, frame) as a page or a terminal shows them


@dataclass(frozen=True)
class Report(Generic[S, R]):
    name: str  # as in `lakehouse report NAME` and the nightly config's `reports`
    title: str  # its section's title in the nightly page
    tables: tuple[str, ...]  # the analysis.* views that read what it stores
    compute: Callable[[Lake, S], R]  # reads the lake; TooLittleDataError when it has nothing to work on
    store: Callable[[Lake, R], None]  # writes the tables (called under the writer lock)
    show: Callable[[R], Tables]  # the tables a page shows
    plot: Callable[[Lake, R, Path], list[Path]] | None = None
    follows: Literal["swf", "google"] | None = None  # the nightly run re-runs it when this family changes

    def run(self, lake: Lake, settings: S) -> R:
        """Compute, then store under the writer lock."""
        lake.require()  # a mistyped --lake: said before minutes of work, and no folder made there
        result = self.compute(lake, settings)
        with lake.writer():
            self.store(lake, result)
        return result

    def plots(self, lake: Lake, result: R, folder: Path) -> list[Path]:
        """Its figures of `result`, written into `folder` (none for a report without figures)."""
        return self.plot(lake, result, folder) if self.plot is not None else []

    @property
    def stored(self) -> str:
        """What a command says after storing: `-> analysis.x, analysis.y`."""
        return "-> " + ", ".join(self.tables)


# -- periodicity -------------------------------------------------------------------------------------


#: The most pure-noise series a periodicity run fits: 10,000 take minutes; more holds a nightly run's lock
#: for hours.
MAX_NOISE_TRIALS = 10_000


@dataclass(frozen=True)
class PeriodicitySettings:
    noise_trials: int = 200  # pure-noise series fitted to measure the test's false-positive rate
    overlays: bool = True  # keep the series of the jobs the plots overlay with their fits


def _periodicity(lake: Lake, settings: PeriodicitySettings) -> Periodicity:
    from lakehouse.models.job_sinusoids import periodicity

    return periodicity(lake, settings.noise_trials, settings.overlays)


def _store_periodicity(lake: Lake, result: Periodicity) -> None:
    from lakehouse.models.job_sinusoids import store_periodicity

    store_periodicity(lake, result)


def _show_periodicity(result: Periodicity) -> Tables:
    from lakehouse.models.job_sinusoids import summary

    caption = f"{result.fits.height:,} long-running jobs fitted"
    return [(caption, summary(result.fits, false_positive=result.false_positive))]


def _plot_periodicity(lake: Lake, result: Periodicity, folder: Path) -> list[Path]:
    from lakehouse.models.periodicity_plots import plot_periodicity

    return plot_periodicity(result.fits, result.series, folder)


PERIODICITY: Report[PeriodicitySettings, Periodicity] = Report(
    "periodicity",
    "Hourly, daily and weekly cycles (lakehouse report periodicity)",
    ("analysis.job_sinusoids",),
    _periodicity,
    _store_periodicity,
    _show_periodicity,
    _plot_periodicity,
    follows="google",
)


# -- volatility ----------------------------------------------------------------------------------------


def _volatility(lake: Lake, settings: None) -> Volatility:
    from lakehouse.models.volatility import compute_volatility

    return compute_volatility(lake)


def _store_volatility(lake: Lake, result: Volatility) -> None:
    from lakehouse.models.volatility import store_volatility

    store_volatility(lake, result)


def _plot_volatility(lake: Lake, result: Volatility, folder: Path) -> list[Path]:
    from lakehouse.models.volatility_plots import plot_volatility

    return plot_volatility(result, folder)


VOLATILITY: Report[None, Volatility] = Report(
    "volatility",
    "CPU volatility, 1 s samples vs 5 min means (lakehouse report volatility)",
    (
        "analysis.task_volatility",
        "analysis.volatility_summary",
        "analysis.volatility_d_histogram",
        "analysis.volatility_rate_histogram",
    ),
    _volatility,
    _store_volatility,
    lambda result: [(f"{result.tasks:,} tasks of measured jobs", result.summary)],
    _plot_volatility,
    follows="google",
)


# -- predictions ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """One source to predict: an SWF log (family `swf`) or the Google trace (`google`)."""

    family: str
    name: str
    settings: PredictionSettings | None = None  # None: the defaults


def _predictions(lake: Lake, source: Source) -> Predictions:
    from lakehouse.models.predict import Settings, report

    return report(lake, source.family, source.name, source.settings or Settings())


def _store_predictions(lake: Lake, result: Predictions) -> None:
    from lakehouse.models.predict import write_report

    write_report(lake, result)


def _plot_predictions(lake: Lake, result: Predictions, folder: Path) -> list[Path]:
    from lakehouse.models.predictions_plots import plot_predictions

    return plot_predictions(result.jobs, str(result.table["source"][0]), folder)


def _glance(result: Predictions) -> pl.DataFrame:
    from lakehouse.models.predict import glance

    return glance(result.table)


PREDICTIONS: Report[Source, Predictions] = Report(
    "predictions",
    "Walltime, memory and processor predictions (lakehouse report predictions)",
    ("analysis.predictions_scores", "analysis.predictions_jobs"),
    _predictions,
    _store_predictions,
    lambda r: [(f"{r.table['source'][0]}: sliding windows over the {r.grouping!r} grouping", _glance(r))],
    _plot_predictions,
    follows="swf",
)


# -- locality and the workload HMM, one log at a time ----------------------------------------------


def _locality(lake: Lake, settings: tuple[str, LocalitySettings]) -> Measured:
    from lakehouse.models.locality import measure

    return measure(lake, *settings)


def _store_locality(lake: Lake, result: Measured) -> None:
    from lakehouse.models.locality import store_measured

    store_measured(lake, result)


def _show_locality(result: Measured) -> Tables:
    from lakehouse.models.locality import best_cells

    return [(f"{result.jobs.log}: best cell of each variant", best_cells(result.grid))]


def _plot_locality(lake: Lake, result: Measured, folder: Path) -> list[Path]:
    from lakehouse.models.locality_plots import plot_locality

    return plot_locality(result.grid, folder)


LOCALITY: Report[tuple[str, LocalitySettings], Measured] = Report(
    "locality",
    "Runtime locality of submit times and users (lakehouse report locality)",
    ("analysis.locality",),
    _locality,
    _store_locality,
    _show_locality,
    _plot_locality,
)


def _hmm(lake: Lake, settings: tuple[str, Sequence[HmmSettings]]) -> LogModels:
    from lakehouse.models.hmm import model_log

    return model_log(lake, *settings)


def _store_hmm(lake: Lake, result: LogModels) -> None:
    from lakehouse.models.hmm import store_models

    store_models(lake, result)


def _plot_hmm(lake: Lake, result: LogModels, folder: Path) -> list[Path]:
    from lakehouse.models.hmm_plots import plot_hmm

    return plot_hmm(result.log, result.studies, folder)


HMM: Report[tuple[str, Sequence[HmmSettings]], LogModels] = Report(
    "hmm",
    "The workload as a hidden Markov model (lakehouse report hmm)",
    ("analysis.hmm_fits", "analysis.hmm_states"),
    _hmm,
    _store_hmm,
    lambda result: [(f"{result.log}: workload HMM", result.fits)],
    _plot_hmm,
)


# -- the studies made from a campaign's runs -------------------------------------------------------


def _triples(lake: Lake, campaign: str) -> TripleTables:
    from lakehouse.studies.triples import triple_tables

    return triple_tables(lake, campaign)


def _store_triples(lake: Lake, result: TripleTables) -> None:
    from lakehouse.studies.triples import store_tables

    store_tables(lake, result)


def _plot_triples(lake: Lake, result: TripleTables, folder: Path) -> list[Path]:
    from lakehouse.studies.triples_plots import triples_plots

    return triples_plots(lake, result.rows, folder)


TRIPLES: Report[str, TripleTables] = Report(
    "triples",
    "Heuristic triples of a campaign (lakehouse report triples)",
    ("analysis.triples", "analysis.triples_loo"),
    _triples,
    _store_triples,
    lambda result: [("mean bounded slowdown per log", result.per_log), ("leave-one-out selection", result.loo)],
    _plot_triples,
)


def _selection(lake: Lake, campaign: str) -> SelectionTables:
    from lakehouse.studies.selection import selection_tables

    return selection_tables(lake, campaign)


def _store_selection(lake: Lake, result: SelectionTables) -> None:
    from lakehouse.studies.selection import store_tables

    store_tables(lake, result)


def _plot_selection(lake: Lake, result: SelectionTables, folder: Path) -> list[Path]:
    from lakehouse.studies.selection_plots import selection_plots

    return selection_plots(result.rows, result.curves, folder)


SELECTION: Report[str, SelectionTables] = Report(
    "selection",
    "Online policy selection (lakehouse report selection)",
    ("analysis.selection_runs", "analysis.selection_curves"),
    _selection,
    _store_selection,
    lambda result: [("average wait / EASY-FCFS's, over resamples", result.table)],
    _plot_selection,
)


# -- packing -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PackRequest:
    query: str | None = None  # None: the periodic jobs of analysis.job_sinusoids
    capacity: float | None = None  # None: the most common machine's CPU capacity
    order: str = "c"
    clip: bool = False


def _pack(lake: Lake, request: PackRequest) -> Packed:
    from lakehouse.models.packing import DEFAULT_PACK_QUERY, pack_lake

    query = request.query or DEFAULT_PACK_QUERY
    return pack_lake(lake, query, request.capacity, order=request.order, clip=request.clip)


def _store_pack(lake: Lake, result: Packed) -> None:
    from lakehouse.models.packing import store_packing

    store_packing(lake, result)


PACK: Report[PackRequest, Packed] = Report(
    "pack",
    "Packing the periodic services onto machines (lakehouse pack)",
    ("analysis.packing",),
    _pack,
    _store_pack,
    lambda p: [(f"{p.tasks:,} tasks of {p.jobs:,} jobs, machine capacity {p.capacity:g}", p.table)],
    follows="google",
)


REPORTS: dict[str, Report[Any, Any]] = {
    r.name: r for r in (PREDICTIONS, VOLATILITY, PERIODICITY, PACK, LOCALITY, HMM, TRIPLES, SELECTION)
}
