"""`lakehouse report periodicity`: hourly, daily and weekly cycles of the Google trace's long-running
jobs (lakehouse.models.periodicity.job_sinusoids)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lakehouse.base.lake import Lake
from lakehouse.base.partitions import Partitioning
from lakehouse.base.report import PARTITION_OPTIONS, TRACE_OPTIONS, Call, Option, Report, Tables
from lakehouse.base.traces import refuse_unfed
from lakehouse.models import periodicity as periodicity_topic

if TYPE_CHECKING:  # the model loads when the report runs, not when a command lists the reports
    from lakehouse.models.periodicity.cells_2019 import Periodicity2019
    from lakehouse.models.periodicity.job_sinusoids import Periodicity

#: The most pure-noise series a periodicity run fits: 10,000 take minutes; more holds a nightly run's lock
#: for hours.
MAX_NOISE_TRIALS = 10_000
NOISE_TRIALS = Option(
    "noise_trials",
    200,
    "Pure-noise series fitted to measure the test's false-positive rate (0: skip).",
    minimum=0,
    maximum=MAX_NOISE_TRIALS,
)


@dataclass(frozen=True)
class PeriodicitySettings:
    noise_trials: int = 200  # pure-noise series fitted to measure the test's false-positive rate
    overlays: bool = True  # keep the series of the jobs the plots overlay with their fits
    trace: str = "google-2011"
    cell: str | None = None  # google-2019: one cell [default: every ingested cell]
    partitions: int | None = None  # how many [default: one; google-2019: per cell]
    ray: str | None = None  # the Ray cluster the partitions run on [default: this process]

    @property
    def partitioning(self) -> Partitioning:
        return Partitioning(self.partitions, self.ray)


SUMMARY = """Fit hourly, daily and weekly cycles to every long-running job of the Google lake.

Each job's CPU demand per task at 5-minute resolution (its usage windows in cluster.usage, observed
windows only) is fitted by least squares with a level, a linear trend and a sine/cosine pair per period; a component
is significant when the Wald test (HAC covariance) rejects at 1 %.  Stores one row per job in
analysis.job_sinusoids (level c, daily amplitude rho and phase phi per task: the input of `lakehouse
pack`) and prints, per component: the distribution of amplitude ratios over jobs, the share of jobs
where it is significant, the test's false-positive rate measured on pure-noise series with the jobs'
own gaps, and how spread the peaks of the significant jobs are (mean resultant length; circular
standard deviation in hours).

The jobs (on the 2019 trace, each cell's) may be split into partitions by a hash of the job
(`--partitions N`, default one: a job's series is streamed, so memory does not ask for more), fitted
one after the other or as Ray tasks on a cluster (`--ray auto|HOST:PORT`, docs/scale-out.md); the fits
do not depend on either.

`--plots DIR` writes boxplots of the ratios, a polar plot of the daily peaks and three jobs' demand
overlaid with their fits.

`--trace google-2019` fits the jobs that run through Google's 2019 trace, cell by cell, on the clock of
each cell's time zone: the daily phase then says the local hour of the peak (the summary's
mean_peak_local_h, per cell). Stores analysis.periodicity_2019; `--cell` takes one cell.

Example: `lakehouse report periodicity --plots figures/`"""


def _runs(lake: Lake, call: Call) -> tuple[list[PeriodicitySettings], list[str]]:
    """One run; the series of the jobs the figures overlay are kept only when it draws them."""
    options = call.options
    settings = PeriodicitySettings(
        options["noise_trials"], call.plots, options["trace"], options["cell"], options["partitions"], options["ray"]
    )
    return [settings], []


def _periodicity(lake: Lake, settings: PeriodicitySettings) -> Periodicity | Periodicity2019:
    refuse_unfed("periodicity", settings.trace, periodicity_topic.CANNOT_FEED)
    if settings.trace == "google-2019":
        from lakehouse.models.periodicity.cells_2019 import periodicity_2019

        return periodicity_2019(lake, settings.cell, settings.partitioning)
    from lakehouse.models.periodicity.job_sinusoids import periodicity

    return periodicity(lake, settings.noise_trials, settings.overlays, settings.partitioning)


def _store(lake: Lake, result: Periodicity | Periodicity2019) -> None:
    from lakehouse.models.periodicity.cells_2019 import store_periodicity_2019
    from lakehouse.models.periodicity.job_sinusoids import Periodicity, store_periodicity

    if isinstance(result, Periodicity):
        store_periodicity(lake, result)
    else:
        store_periodicity_2019(lake, result)


def _show_periodicity(result: Periodicity | Periodicity2019) -> Tables:
    from lakehouse.models.periodicity.job_sinusoids import Periodicity, summary

    if not isinstance(result, Periodicity):
        caption = f"{result.fits.height:,} long-running jobs of Google's 2019 trace fitted in their cells' local time"
        return [(caption, result.summary)]
    caption = f"{result.fits.height:,} long-running jobs fitted"
    return [(caption, summary(result.fits, false_positive=result.false_positive))]


def _plot_periodicity(lake: Lake, result: Periodicity | Periodicity2019, folder: Path) -> list[Path]:
    from lakehouse.models.periodicity.job_sinusoids import Periodicity
    from lakehouse.models.periodicity.plots import plot_periodicity, plot_periodicity_2019

    if not isinstance(result, Periodicity):
        return plot_periodicity_2019(result.fits, folder)
    return plot_periodicity(result.fits, result.series, folder)


def run_2011(lake: Lake, settings: PeriodicitySettings) -> Periodicity:
    """The report on the 2011 trace, computed and stored (the demo's and `reproduce packing`'s run)."""
    from lakehouse.models.periodicity.job_sinusoids import Periodicity

    result = REPORT.run(lake, settings)
    assert isinstance(result, Periodicity)  # (the 2011 trace gives a Periodicity)
    return result


REPORT: Report[PeriodicitySettings, Periodicity | Periodicity2019] = Report(
    "periodicity",
    "Hourly, daily and weekly cycles (lakehouse report periodicity)",
    periodicity_topic.TABLES,
    _periodicity,
    _store,
    _show_periodicity,
    _plot_periodicity,
    follows="google",
    make=PeriodicitySettings,
    options=(NOISE_TRIALS, *TRACE_OPTIONS, *PARTITION_OPTIONS),
    order=30,
    summary=SUMMARY,
    doing=lambda s: (
        "fitting the long-running jobs of Google's 2019 trace..."
        if s.trace == "google-2019"
        else f"fitting long-running jobs, then {s.noise_trials} pure-noise series..."
    ),
    runs=_runs,
)
