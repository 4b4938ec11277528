"""The standard reports a nightly run re-runs for what changed, each as a section of its HTML page.

Two are the nightly run's own (`lakehouse logs`, and a small campaign of EASY, EASY-SJBF and EASY++);
the others are the reports of the registry (lakehouse.reports) that follow a changed SWF log or trace,
run and stored as their commands run them, with their figures in the run's folder.  A report
that fails is a section with its error: the others still run.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from lakehouse.base.catalog import named_query
from lakehouse.base.errors import TooLittleDataError
from lakehouse.base.interrupts import stopped_by_interrupt
from lakehouse.base.lake import Lake
from lakehouse.campaigns.executors import local_executor
from lakehouse.campaigns.grid import EASY_VARIANTS, Grid
from lakehouse.campaigns.report import Metric, campaign_plots
from lakehouse.campaigns.runner import run_campaign, stored_runs
from lakehouse.nightly.config import Config
from lakehouse.reports import REPORTS as REGISTRY


@dataclass
class Section:
    """One report in the run's page: its tables (caption, frame), figures and error."""

    key: str
    title: str
    tables: list[tuple[str, pl.DataFrame]] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0
    #: Each changed log's replays against its previous version (`change_table`), for the page's headline.
    changes: pl.DataFrame | None = None
    #: Each changed log's replays tonight (`replay_table`), for the headline's line of the log.
    replayed: pl.DataFrame | None = None

    @property
    def skipped(self) -> str | None:
        """Why the report did not run (too little data), if it did not."""
        return next((note.removeprefix("skipped: ") for note in self.notes if note.startswith("skipped: ")), None)


def logs_section(
    section: Section, lake: Lake, logs: Sequence[str], config: Config, figures: Path, traces: Sequence[str] = ()
) -> None:
    section.tables.append(("every SWF log at a glance", lake.query(named_query("log_summary"))))


def replays_section(
    section: Section, lake: Lake, logs: Sequence[str], config: Config, figures: Path, traces: Sequence[str] = ()
) -> None:
    """EASY, EASY-SJBF and EASY++ on each changed log, as the campaign `config.campaign`; the change
    since the log's previous version, when the campaign has replayed one."""
    grid = Grid(name=config.campaign, logs=tuple(logs), view=config.view, explicit=tuple(EASY_VARIANTS.values()))
    executor = local_executor(config.workers or os.cpu_count() or 1, grid.name, grid.view, grid.tau)
    with lake.scratch_folder("nightly") as scratch:
        outcome = run_campaign(lake, grid, executor, scratch=scratch)
    # (A config that changed its view between nights must not compare one view with another.)
    rows = stored_runs(lake, config.campaign).filter(pl.col("log").is_in(list(logs)), pl.col("view") == config.view)
    names = {settings.label(): name for name, settings in EASY_VARIANTS.items()}
    rows = rows.filter(pl.col("variant").is_in(list(names))).with_columns(
        pl.col("variant").replace_strict(names).alias("scheduler")
    )
    section.notes.append(f"stored as campaign {config.campaign!r} on swf.{config.view} (lakehouse campaign show)")
    section.replayed = replay_table(rows)
    section.tables.append(("each changed log, replayed now", section.replayed))
    changes = section.changes = change_table(rows)
    if not changes.is_empty():
        section.tables.append(("change since the log's previous version (mean bounded slowdown)", changes))
        if (changes["engine"] != "same").any():
            section.notes.append(
                "the engine changed since a previous version was replayed (column engine): that change is the "
                "log's and the engine's together"
            )
    failed = rows.filter(pl.col("status") != "ok")
    if outcome.failed or failed.height:
        section.error = "; ".join(f"{r['log']} {r['scheduler']}: {r['error']}" for r in failed.iter_rows(named=True))
    if config.figures and rows.filter(pl.col("status") == "ok")["log"].n_unique() >= 1:
        section.figures += campaign_plots(rows.filter(pl.col("status") == "ok"), Metric.mean_bounded_slowdown, figures)


def _latest_per_version(rows: pl.DataFrame) -> pl.DataFrame:
    """One row per (log, scheduler, jobs fingerprint): the newest replay of that version of the log."""
    return rows.sort("finished_at").unique(["log", "scheduler", "jobs_fingerprint"], keep="last", maintain_order=True)


def replay_table(rows: pl.DataFrame) -> pl.DataFrame:
    """The newest replay of each log and scheduler (EASY, EASY-SJBF, EASY++ in this order)."""
    newest = rows.sort("finished_at").unique(["log", "scheduler"], keep="last", maintain_order=True)
    order = pl.col("scheduler").replace_strict(list(EASY_VARIANTS), range(len(EASY_VARIANTS)), default=None)
    return newest.sort(pl.col("log"), order).select(
        "log",
        "scheduler",
        "status",
        "jobs",
        "mean_wait",
        "mean_bounded_slowdown",
        "max_wait",
        "utilization",
    )


def change_table(rows: pl.DataFrame) -> pl.DataFrame:
    """Per log and scheduler: the mean bounded slowdown of the newest version of the log against the
    version replayed before it (a new log has no row), and whether the same build of the engine
    replayed both."""
    ok = _latest_per_version(rows.filter(pl.col("status") == "ok")).sort("finished_at")
    pairs = ok.group_by("log", "scheduler", maintain_order=True).agg(
        pl.col("jobs").tail(2), pl.col("mean_bounded_slowdown").tail(2), pl.col("engine_version").tail(2)
    )
    pairs = pairs.filter(pl.col("jobs").list.len() == 2)
    return pairs.select(
        "log",
        "scheduler",
        pl.col("jobs").list.first().alias("jobs before"),
        pl.col("jobs").list.last().alias("jobs now"),
        pl.col("mean_bounded_slowdown").list.first().alias("bsld before"),
        pl.col("mean_bounded_slowdown").list.last().alias("bsld now"),
        (100 * (pl.col("mean_bounded_slowdown").list.last() / pl.col("mean_bounded_slowdown").list.first() - 1)).alias(
            "change %"
        ),
        # (The previous version cannot be replayed again: its jobs are gone from the lake.)
        pl.when(pl.col("engine_version").list.first() == pl.col("engine_version").list.last())
        .then(pl.lit("same"))
        .otherwise(pl.lit("before: ") + pl.col("engine_version").list.first())
        .alias("engine"),
    ).sort("log", "scheduler")


def registry_section(
    section: Section, lake: Lake, logs: Sequence[str], config: Config, figures: Path, traces: Sequence[str] = ()
) -> None:
    """A report of the registry, run as its command runs it, on what its nightly hook says (once for the
    Google trace, once per changed SWF log with targets...), with the config's options; for a report that
    follows the SWF logs, one log's failure is reported and the others go on.  A report that reads
    either Google trace (a `trace` option) runs on each trace in `traces` (none given: the config's)."""
    report = REGISTRY[section.key]
    errors = []
    options = config.options_of(section.key)
    runs, notes = [], []
    for trace in traces if traces and "trace" in options else [None]:
        chosen = options if trace is None else {**options, "trace": trace}
        found, said = report.nightly_runs(lake, logs, chosen)
        runs += found
        notes += said
    section.notes += notes
    for settings in runs:
        try:
            result = report.run(lake, settings)
        except Exception as exc:
            if report.follows != "swf" or stopped_by_interrupt(exc):  # the section's error, or a stop
                raise
            errors.append(f"{getattr(settings, 'name', settings)}: {exc}")
            continue
        section.tables += report.show(result)
        section.notes += report.notes_of(result)
        if report.plot is not None and config.figures:
            section.figures += report.plot(lake, result, figures)
    section.error = "; ".join(errors) or None


Report = Callable[[Section, Lake, Sequence[str], Config, Path, Sequence[str]], None]
#: Each report: its title in the page and the function that fills its section.
SECTIONS: dict[str, tuple[str, Report]] = {
    "logs": ("Logs in the lake (lakehouse logs)", logs_section),
    "replays": ("Backfilling replays: EASY, EASY-SJBF, EASY++ (a campaign)", replays_section),
    **{name: (report.title, registry_section) for name, report in REGISTRY.items() if report.follows},
}


def run_report(
    key: str, lake: Lake, logs: Sequence[str], config: Config, figures: Path, traces: Sequence[str] = ()
) -> Section:
    """One report, timed; an error becomes the section's error, too little data a note (Ctrl-C still
    stops the run).  `traces`: the Google traces whose new files owe it (a report with a `trace` option
    runs on each)."""
    title, fill = SECTIONS[key]
    section = Section(key, title)
    started = time.perf_counter()
    figures.mkdir(parents=True, exist_ok=True)
    try:
        fill(section, lake, logs, config, figures, traces)
    except TooLittleDataError as exc:  # not a failure: the data does not call for this report yet
        section.notes.append(f"skipped: {exc}")
    except Exception as exc:
        if stopped_by_interrupt(exc):  # Ctrl-C or SIGTERM inside a query: the run stops, as anywhere else
            raise KeyboardInterrupt from None
        section.error = str(exc) or type(exc).__name__
    section.seconds = time.perf_counter() - started
    return section
