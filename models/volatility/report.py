"""`lakehouse report volatility`: 1-second CPU samples against the 5-minute means of the Google trace
(lakehouse.models.volatility.model)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from lakehouse.base.lake import Lake
from lakehouse.base.partitions import Partitioning
from lakehouse.base.report import PARTITION_OPTIONS, TRACE_OPTIONS, Report, Tables
from lakehouse.base.traces import refuse_unfed
from lakehouse.models import volatility as volatility_topic

if TYPE_CHECKING:  # the model loads when the report runs, not when a command lists the reports
    from lakehouse.models.volatility.model import Volatility


@dataclass(frozen=True)
class VolatilitySettings:
    trace: str = "google-2011"
    cell: str | None = None  # google-2019: one cell [default: every ingested cell]
    partitions: int | None = None  # how many [default: 2011 as many as the memory limit asks for; 2019 one]
    ray: str | None = None  # the Ray cluster the partitions run on [default: this process]

    @property
    def partitioning(self) -> Partitioning:
        return Partitioning(self.partitions, self.ray)


@dataclass(frozen=True)
class Volatility2019:
    """The 2011 method against the 2019 percentiles (lakehouse.models.volatility.cells_2019.compare)."""

    comparison: pl.DataFrame


def _volatility(lake: Lake, settings: VolatilitySettings | None) -> Volatility | Volatility2019:
    if settings is not None:
        refuse_unfed("volatility", settings.trace, volatility_topic.CANNOT_FEED)
    if settings is not None and settings.trace == "google-2019":
        from lakehouse.base.errors import TooLittleDataError
        from lakehouse.models.volatility.cells_2019 import compare

        comparison = compare(lake, settings.cell, settings.partitioning)
        if comparison.is_empty():
            where = f"cell {settings.cell}" if settings.cell else "the lake"
            raise TooLittleDataError(
                f"no usage windows of Google's 2019 trace in {where} (ingest instance_usage and collection_events "
                "shards: lakehouse ingest google-2019)"
            )
        return Volatility2019(comparison)
    from lakehouse.models.volatility.model import compute_volatility

    return compute_volatility(lake, settings.partitioning if settings is not None else None)


def _store(lake: Lake, result: Volatility | Volatility2019) -> None:
    if isinstance(result, Volatility2019):
        from lakehouse.base.results import store
        from lakehouse.models.volatility import VOLATILITY_2019

        store(lake, VOLATILITY_2019, result.comparison)
        return
    from lakehouse.models.volatility.model import store_volatility

    store_volatility(lake, result)


def _show(result: Volatility | Volatility2019) -> Tables:
    if isinstance(result, Volatility2019):
        windows = int(result.comparison.filter(pl.col("tier") == "all")["windows"].sum())
        return [
            (f"{windows:,} usage windows of Google's 2019 trace: the 2011 method vs the percentiles", result.comparison)
        ]
    return [(f"{result.tasks:,} tasks of measured jobs", result.summary)]


def _blanks(result: Volatility | Volatility2019) -> list[str]:
    if isinstance(result, Volatility2019):
        return []
    from lakehouse.models.volatility.model import blank_reasons

    return [f"—: {reason}" for reason in blank_reasons(result.summary)]


SUMMARY = """How far 1-second CPU samples (mu1s) stray from the 5-minute means (mu5m) of the Google trace.

Only tasks of mu1s-measured jobs count (google.job_sampling: jobs whose samples were never recorded
are left out), in four columns: all of them, the high-SLO ones (scheduling class 2-3), the
long-running ones, and those that are both (high_slo_long_running: the tasks the published study,
Reis 2015 section 3.4, analyses; `lakehouse reproduce volatility` reads that column).  Rows: tasks
with all-zero and with exactly 1-4 non-zero samples, median samples per task, median coefficients of
variation (sd / mean, and the robust MAD / median) of mu1s and mu5m, the median of the per-task mean
|d| with d = (mu5m - mu1s) / mu5m, then over all windows the share with mu1s = 0, mean d, mean |d|
and quantiles of d.  Stores analysis.task_volatility, analysis.volatility_summary,
analysis.volatility_d_histogram (d binned) and analysis.volatility_rate_histogram (mu5m and mu1s per
request, binned).

`--trace google-2019` checks that method on Google's 2019 trace, whose windows keep the percentiles of
their seconds: per cell and priority tier, the 2011 estimate (mean |d|) beside the truth the percentiles
give (mean E|X - mean| / mean), their ratio and correlation, and the spreads (p90 - p10) / mean and
p99 / mean. Stores analysis.volatility_2019; `--cell` takes one cell.

On the 2011 trace the tasks are split into partitions by a hash of (job, task), each computed alone:
as many as `--memory-limit` asks for, or `--partitions N`; on the 2019 trace the windows by a hash of
the job, as many as `--memory-limit` asks for (each holds the tiers of its jobs), or `--partitions N`,
the windows written once by partition so that each reads its own.  `--ray
auto|HOST:PORT` runs them as Ray tasks on a cluster whose workers share the lake's folder
(docs/scale-out.md).  The numbers do not depend on either.

`--plots DIR` writes ECDFs of both CVs, a histogram of per-task mean |d|, the ECDF of d, a
log-count heatmap of mu5m/request vs mu1s/request and a scatter of per-task mean mu5m vs mu1s.

Example: `lakehouse report volatility --plots figures/ --format csv`, or on 2019: `lakehouse report
volatility --trace google-2019 --cell a`"""


def _plot_volatility(lake: Lake, result: Volatility | Volatility2019, folder: Path) -> list[Path]:
    if isinstance(result, Volatility2019):
        from lakehouse.models.volatility.plots import plot_volatility_2019

        return plot_volatility_2019(lake, folder)
    from lakehouse.models.volatility.plots import plot_volatility

    return plot_volatility(result, folder)


def run_2011(lake: Lake) -> Volatility:
    """The report on the 2011 trace, computed and stored (the demo's and `reproduce volatility`'s run)."""
    result = REPORT.run(lake, VolatilitySettings())
    assert not isinstance(result, Volatility2019)  # (the 2011 trace gives a Volatility)
    return result


REPORT: Report[VolatilitySettings | None, Volatility | Volatility2019] = Report(
    "volatility",
    "CPU volatility, 1 s samples vs 5 min means (lakehouse report volatility)",
    volatility_topic.TABLES,
    _volatility,
    _store,
    _show,
    _plot_volatility,
    follows="google",
    options=TRACE_OPTIONS + PARTITION_OPTIONS,
    make=VolatilitySettings,
    order=20,
    summary=SUMMARY,
    doing="measuring volatility over the usage windows...",
    notes=_blanks,
)
