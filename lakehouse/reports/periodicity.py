"""`lakehouse report periodicity`: hourly, daily and weekly cycles of the Google trace's long-running
jobs (lakehouse.models.job_sinusoids)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lakehouse.base.lake import Lake
from lakehouse.reports.base import Call, Option, Report, Tables, lazy

if TYPE_CHECKING:  # the model loads when the report runs, not when a command lists the reports
    from lakehouse.models.job_sinusoids import Periodicity

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


SUMMARY = """Fit hourly, daily and weekly cycles to every long-running job of the Google lake.

Each job's CPU demand per task at 5-minute resolution (google.job_demand_5min, observed windows only)
is fitted by least squares with a level, a linear trend and a sine/cosine pair per period; a component
is significant when the Wald test (HAC covariance) rejects at 1 %.  Stores one row per job in
analysis.job_sinusoids (level c, daily amplitude rho and phase phi per task: the input of `lakehouse
pack`) and prints, per component: the distribution of amplitude ratios over jobs, the share of jobs
where it is significant, the test's false-positive rate measured on pure-noise series with the jobs'
own gaps, and how spread the peaks of the significant jobs are (mean resultant length; circular
standard deviation in hours).

`--plots DIR` writes boxplots of the ratios, a polar plot of the daily peaks and three jobs' demand
overlaid with their fits.

Example: `lakehouse report periodicity --plots figures/`"""


def _runs(lake: Lake, call: Call) -> tuple[list[PeriodicitySettings], list[str]]:
    """One run; the series of the jobs the figures overlay are kept only when it draws them."""
    return [PeriodicitySettings(call.options["noise_trials"], overlays=call.plots)], []


def _periodicity(lake: Lake, settings: PeriodicitySettings) -> Periodicity:
    from lakehouse.models.job_sinusoids import periodicity

    return periodicity(lake, settings.noise_trials, settings.overlays)


def _show_periodicity(result: Periodicity) -> Tables:
    from lakehouse.models.job_sinusoids import summary

    caption = f"{result.fits.height:,} long-running jobs fitted"
    return [(caption, summary(result.fits, false_positive=result.false_positive))]


def _plot_periodicity(lake: Lake, result: Periodicity, folder: Path) -> list[Path]:
    from lakehouse.models.periodicity_plots import plot_periodicity

    return plot_periodicity(result.fits, result.series, folder)


REPORT: Report[PeriodicitySettings, Periodicity] = Report(
    "periodicity",
    "Hourly, daily and weekly cycles (lakehouse report periodicity)",
    ("analysis.job_sinusoids",),
    _periodicity,
    lazy("lakehouse.models.job_sinusoids:store_periodicity"),
    _show_periodicity,
    _plot_periodicity,
    follows="google",
    make=PeriodicitySettings,
    options=(NOISE_TRIALS,),
    order=30,
    summary=SUMMARY,
    doing=lambda s: f"fitting long-running jobs, then {s.noise_trials} pure-noise series...",
    runs=_runs,
)
