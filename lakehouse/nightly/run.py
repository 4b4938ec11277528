"""`lakehouse nightly`: discover -> incremental ingest -> the reports for what changed -> a dated HTML
page and a row of meta.nightly_runs.

One nightly run at a time (a lock file in the lake; a second run exits at once with `EXIT_BUSY`).
Readers are never disturbed: every ingest swaps the catalog in atomically, every report's table is
renamed into place whole.  A file that fails is reported and the rest goes on; a report that fails
is a section with its error.  The exit code says how it went: 0 all ok, 1 partial (some files or
reports failed), 2 nothing could be done, 75 another nightly run holds the lake.
"""

from __future__ import annotations

import datetime as dt
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl

from lakehouse.base.catalog import named_query
from lakehouse.base.errors import LakehouseError
from lakehouse.base.interrupts import interrupts_deferred
from lakehouse.base.lake import Lake
from lakehouse.base.writer import process_lock
from lakehouse.ingest.google import ingest_google
from lakehouse.ingest.google2019 import ingest_google2019
from lakehouse.ingest.status import Status
from lakehouse.ingest.swf import DATASET as SWF_DATASET
from lakehouse.ingest.swf import ingest_swf
from lakehouse.nightly import history
from lakehouse.nightly.config import GOOGLE_REPORTS, SWF_REPORTS, Config
from lakehouse.nightly.html import render_index, render_run
from lakehouse.nightly.inbox import Inbox, InboxFile, Kind, State, files_frame, scan
from lakehouse.nightly.reports import Section, run_report

EXIT_OK, EXIT_PARTIAL, EXIT_FAILED = 0, 1, 2
#: Another nightly run holds the lake: EX_TEMPFAIL of sysexits.h ("try again later"), which cron
#: wrappers and systemd treat as a failure of this start only.
EXIT_BUSY = 75
NIGHTLY_LOCK = ".nightly.lock"
REPORTS_FOLDER = "reports"


class NightlyBusyError(LakehouseError):
    """Another nightly run holds the lake."""


class NothingDoneError(LakehouseError):
    """The run could not even start (the lake busy with another writer, a full disk): exit 2."""


@dataclass
class Plan:
    """What a run will do: the files to ingest (and those that cannot be), then each report with the
    SWF logs it covers."""

    inbox: Inbox
    swf: list[InboxFile]
    google: list[InboxFile]
    failed: list[tuple[InboxFile, str]]
    reports: list[str]

    def describe(self) -> pl.DataFrame:
        """One row per inbox file with what the run does with it: ingest, skip or fail."""
        failing = [str(item.path) for item, _ in self.failed]
        return files_frame(self.inbox.files).with_columns(
            pl.when(pl.col("path").is_in(failing))
            .then(pl.lit("fail"))
            .when(pl.col("state").is_in([State.new, State.changed]))
            .then(pl.lit("ingest"))
            .otherwise(pl.lit("skip"))
            .alias("action")
        )

    def owed(self) -> list[tuple[str, str, str, str]]:
        """(report, dataset, name, content hash): each report owed for each version to ingest."""
        return [
            (report, f.dataset, f.name, f.content_hash)
            for f in [*self.swf, *self.google]
            if f.content_hash is not None
            for report in self.reports
            if report in (SWF_REPORTS if f.kind is Kind.swf else GOOGLE_REPORTS)
        ]


def plan(lake: Lake, inbox: Path, config: Config, verify: bool = False) -> Plan:
    """What a run of `inbox` would do, found without changing anything (the dry run prints it)."""
    if not inbox.is_dir():
        raise LakehouseError(f"inbox {inbox}: not a folder")
    found = scan(lake, inbox, verify)
    arrived = found.arrived()
    failed = [(f, f.problem or "unreadable") for f in found.by_state(State.unreadable)]
    swf = [f for f in arrived if f.kind is Kind.swf]
    names = [f.name for f in swf]
    clashes = {n for n in names if names.count(n) > 1}
    for f in swf:
        if f.name in clashes:
            failed.append((f, f"{f.path}: another inbox file is also log {f.name!r}; keep one of them"))
    swf = [f for f in swf if f.name not in clashes]
    google = [f for f in arrived if f.kind in (Kind.google, Kind.google2019)]
    # What the files bring, and what earlier runs stopped before running.
    earlier = set(history.owed(lake)["report"].to_list()) if lake.exists() else set()
    reports = [
        r for r in config.reports if (swf and r in SWF_REPORTS) or (google and r in GOOGLE_REPORTS) or r in earlier
    ]
    return Plan(found, swf, google, failed, reports)


@dataclass
class Outcome:
    record: history.RunRecord
    plan: Plan | None
    sections: list[Section] = field(default_factory=list)
    #: What went into the lake: the SWF logs and the trace's parts (`table/part`).
    ingested: list[str] = field(default_factory=list)
    page: Path | None = None
    index: Path | None = None
    killed_runs: int = 0

    @property
    def exit_code(self) -> int:
        return {"ok": EXIT_OK, "partial": EXIT_PARTIAL}.get(self.record.status, EXIT_FAILED)


@contextmanager
def nightly_lock(root: Path) -> Iterator[None]:
    """One nightly run per lake (released with the process: a killed run never holds it)."""
    root.mkdir(parents=True, exist_ok=True)

    def busy(holder: str) -> LakehouseError:
        return NightlyBusyError(f"{root}: another nightly run is in progress (pid {holder}); this one does nothing")

    with process_lock(root / NIGHTLY_LOCK, busy):
        yield


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """systemd stops a service with SIGTERM: end like a Ctrl-C, recording the run as failed."""

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


#: How long each of the run's writes waits for another writer to finish (seconds).
WRITER_WAIT = 3600.0


def run(
    lake: Lake,
    inbox: Path,
    config: Config | None = None,
    *,
    reports_root: Path | None = None,
    verify: bool = False,
    say: Callable[[str], None] = lambda _: None,
) -> Outcome:
    """One nightly run (see the module's docstring); `say` hears one line per step."""
    config = config or Config()
    reports = reports_root or lake.root / REPORTS_FOLDER
    inbox = inbox.expanduser().absolute()
    # Each write of the run (an ingest, a report's tables, the run's record) queues behind another
    # writer (a user's ingest) rather than failing half-way through the night.
    patience, lake.wait_for_writer = lake.wait_for_writer, WRITER_WAIT
    try:
        return _locked_run(lake, inbox, config, reports, verify, say)
    finally:
        lake.wait_for_writer = patience


def _locked_run(
    lake: Lake, inbox: Path, config: Config, reports: Path, verify: bool, say: Callable[[str], None]
) -> Outcome:
    with nightly_lock(lake.root), _terminate_as_interrupt():
        try:
            record, killed = history.begin(lake, inbox, reports)
        except (LakehouseError, OSError, duckdb.Error) as exc:
            raise NothingDoneError(f"the run could not start: {_one_line(exc)}") from None
        if killed:
            say(f"{killed} earlier run(s) had been interrupted: marked failed")
        outcome = Outcome(record, None, killed_runs=killed)
        started = time.perf_counter()
        try:
            _run(lake, inbox, config, verify, reports / record.run, outcome, say)
        except KeyboardInterrupt:
            record.status = "failed"
            record.errors.append("interrupted (Ctrl-C or SIGTERM): what was ingested is kept; run again to finish")
            _close(lake, reports, outcome, started)
            raise
        except (LakehouseError, OSError, duckdb.Error) as exc:  # e.g. a full disk while the catalog is swapped
            record.status = "failed"
            record.errors.append(_one_line(exc))
        _close(lake, reports, outcome, started)
        return outcome


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.filename or ''}: {exc.strerror}".lstrip(": ")
    return str(exc) or type(exc).__name__


def _run(
    lake: Lake, inbox: Path, config: Config, verify: bool, folder: Path, outcome: Outcome, say: Callable[[str], None]
) -> None:
    record = outcome.record
    step = time.perf_counter()
    outcome.plan = todo = plan(lake, inbox, config, verify)
    record.files_seen = len(todo.inbox.files)
    record.files_skipped = len(todo.inbox.by_state(State.unchanged))
    record.seconds["scan"] = time.perf_counter() - step
    record.errors += [why for _, why in todo.failed]
    say(
        f"inbox: {record.files_seen} files, {len(todo.swf)} SWF logs and {len(todo.google)} trace parts to ingest, "
        f"{record.files_skipped} unchanged"
    )
    step = time.perf_counter()
    history.owe(lake, record.run, todo.owed())  # before the ingest: a run stopped after it leaves them owed
    logs, parts, failures = _ingest(lake, todo, config)
    outcome.ingested = logs + parts
    record.seconds["ingest"] = time.perf_counter() - step
    record.errors += failures
    record.files_ingested = len(logs) + len(parts)
    record.files_failed = len(todo.failed) + len(failures)
    owed = history.due(lake, config.reports)
    if not todo.swf and not todo.google:
        say(f"nothing new; {len(owed)} report(s) owed by an earlier run" if owed else "nothing new")
    for key in (r for r in config.reports if r in owed):
        say(f"report {key}...")
        logs_owed = [name for dataset, name in owed[key] if dataset == SWF_DATASET]
        traces = sorted({"google-2019" if d.startswith("google2019.") else "google-2011" for d, _ in owed[key]
                         if d != SWF_DATASET})  # fmt: skip
        section = run_report(key, lake, logs_owed, config, folder / "figures", traces)
        history.settle(lake, key)
        outcome.sections.append(section)
        record.seconds[key] = section.seconds
        record.reports_run.append(key)
        if section.skipped:
            record.reports_skipped.append(key)
        if section.error:
            record.reports_failed.append(key)
            record.errors.append(f"report {key}: {section.error}")
    done_something = bool(record.files_ingested or len(record.reports_failed) < len(record.reports_run))
    if not record.errors:
        record.status = "ok"
    else:
        record.status = "partial" if done_something else "failed"


def _ingest(lake: Lake, todo: Plan, config: Config) -> tuple[list[str], list[str], list[str]]:
    """Ingest the plan's files; returns the SWF logs and the Google parts (table/part) now in the lake,
    and one line per file that failed."""

    logs: list[str] = []
    parts: list[str] = []
    failures: list[str] = []
    known = sorted({*lake.log_names(), *(item.name for item in todo.swf)})
    # The config's sizes are given per log, as `ingest swf --machine-size LOG=N` takes them.
    sizes = [(item.name, size) for item in todo.swf if (size := config.size_for(item.name, known)) is not None]
    if todo.swf:
        for result in ingest_swf(lake, [str(i.path) for i in todo.swf], machine_sizes=sizes):
            if result.status is Status.failed:
                failures.append(result.error or f"{result.source}: failed")
            elif result.status is Status.ok:
                logs.append(result.log)
    shards = [f.path for f in todo.google if f.kind is Kind.google2019]
    if shards:
        for shard in ingest_google2019(lake, shards):
            if shard.status == Status.failed:
                failures.append(shard.error or f"{shard.source}: failed")
            elif shard.status == Status.ok:
                parts.append(f"{shard.table}/{shard.part}")
    for trace in sorted({f.trace for f in todo.google if f.trace is not None and f.kind is Kind.google}):
        wanted = [f.path for f in todo.google if f.trace == trace]
        results, _ = ingest_google(lake, trace, only=wanted)
        for part in results:
            if part.status is Status.failed:
                failures.append(part.error or f"{part.source}: failed")
            elif part.status is Status.ok:
                parts.append(f"{part.table}/{part.part}")
    return logs, parts, failures


def _close(lake: Lake, reports: Path, outcome: Outcome, started: float) -> None:
    """Write the run's page, its row, then the index, even after a failure (a page that cannot be
    written is one more error of the run).  A Ctrl-C or SIGTERM meanwhile waits for the end: the run
    is recorded as it went, not left 'running'."""
    with interrupts_deferred():
        _write_close(lake, reports, outcome, started)


def _write_close(lake: Lake, reports: Path, outcome: Outcome, started: float) -> None:
    record = outcome.record
    record.seconds["total"] = time.perf_counter() - started
    record.finished_at = dt.datetime.now(dt.UTC).astimezone()
    try:
        # A quiet night (nothing new, nothing owed, nothing wrong) is a row of the index, not a page.
        quiet = not (record.files_ingested or record.files_failed or record.reports_run or record.errors)
        if quiet:
            record.report = None
        else:
            outcome.page = _page(lake, reports / record.run, outcome)
    except (LakehouseError, OSError) as exc:
        record.errors.append(f"the HTML report could not be written: {_one_line(exc)}")
        record.status = "partial" if record.status == "ok" else record.status
    try:
        history.finish(lake, record, outcome.plan.inbox.files if outcome.plan else [])
    except (LakehouseError, OSError, duckdb.Error) as exc:
        # The run's row stays 'running' and the next run marks it failed; say why here.
        record.status = "failed"
        record.errors.append(f"the run's end could not be recorded: {_one_line(exc)}")
    try:
        outcome.index = _index(lake, reports)
    except (LakehouseError, OSError) as exc:
        record.errors.append(f"the HTML index could not be written: {_one_line(exc)}")


def _page(lake: Lake, folder: Path, outcome: Outcome) -> Path:
    todo = outcome.plan
    arrived = files_frame(todo.inbox.arrived()) if todo else files_frame([])
    quarantine = pl.DataFrame()
    if todo and (todo.swf or todo.google):
        logs = [f.name for f in todo.swf]
        parts = [f.label for f in todo.google]
        quarantine = lake.query(named_query("nightly_quarantine"), [logs, parts])
    counts = {
        "new": len(todo.inbox.by_state(State.new)) if todo else 0,
        "changed": len(todo.inbox.by_state(State.changed)) if todo else 0,
    }
    ignored = [str(p) for p in todo.inbox.ignored] if todo else []
    # The snapshot the run's ingests and reports left (its own record, written after the page, makes one more).
    snapshot = lake.ducklake.snapshots()[-1][0] if lake.ducklake is not None else None
    return render_run(
        folder, outcome.record, lake.root, arrived.drop("path"), ignored, quarantine, outcome.sections, counts,
        outcome.ingested, snapshot,
    )  # fmt: skip


def _index(lake: Lake, reports: Path) -> Path:
    return render_index(reports, lake.root, history.runs(lake))
