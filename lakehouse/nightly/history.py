"""meta.nightly_runs: one row per nightly run, written when it starts ('running') and when it ends.

A run killed before its end (kill -9, power loss) leaves its row 'running'; the next run holds the
nightly lock, so that run is surely dead, and it is marked 'failed' with a reason.  Rows and the
inbox file cache (meta.nightly_files) go through the lake's writer session: readers see the catalog
before or after, never half of a change.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from lakehouse.base.catalog import named_query
from lakehouse.base.lake import Lake
from lakehouse.nightly.inbox import InboxFile

KILLED = "interrupted: the run ended without finishing (killed, or the machine stopped); its report is incomplete"


@dataclass
class RunRecord:
    run: str
    started_at: dt.datetime
    inbox: str
    status: str = "running"
    finished_at: dt.datetime | None = None
    files_seen: int = 0
    files_ingested: int = 0
    files_skipped: int = 0
    files_failed: int = 0
    reports_run: list[str] = field(default_factory=list)
    reports_failed: list[str] = field(default_factory=list)
    reports_skipped: list[str] = field(default_factory=list)  # ran, but had too little data to work on
    seconds: dict[str, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    report: str | None = None


def _run_name(taken: set[str], reports: Path, day: dt.date) -> str:
    """YYYY-MM-DD, or YYYY-MM-DD-2, -3, ... when the day already has a run (in the history or on disk)."""
    name, n = day.isoformat(), 1
    while name in taken or (reports / name).exists():
        n += 1
        name = f"{day.isoformat()}-{n}"
    return name


def begin(lake: Lake, inbox: Path, reports: Path) -> tuple[RunRecord, int]:
    """Mark the runs left 'running' as failed, name this run after its local date and record it as
    running.  Returns the record and how many killed runs were marked."""
    started = dt.datetime.now(dt.UTC).astimezone()
    with lake.writer(create=True) as writer:  # the nightly run is an ingest: it may make the lake
        marked = writer.con.execute(named_query("nightly_mark_killed"), [KILLED]).fetchone()
        taken = {row[0] for row in writer.con.execute("SELECT run FROM meta.nightly_runs").fetchall()}
        record = RunRecord(_run_name(taken, reports, started.date()), started, str(inbox))
        record.report = str(reports / record.run / "index.html")
        writer.con.execute(
            named_query("nightly_begin"), [record.run, record.started_at, record.inbox, os.getpid(), record.report]
        )
    return record, int(marked[0]) if marked else 0


def finish(lake: Lake, record: RunRecord, files: Iterable[InboxFile]) -> None:
    """Record the run's end, and the files it hashed (for the next run's quick check)."""
    record.finished_at = record.finished_at or dt.datetime.now(dt.UTC)
    with lake.writer() as writer:
        writer.con.execute(
            named_query("nightly_finish"),
            [
                record.finished_at,
                record.status,
                record.files_seen,
                record.files_ingested,
                record.files_skipped,
                record.files_failed,
                record.reports_run,
                record.reports_failed,
                list(record.seconds),
                list(record.seconds.values()),
                record.errors,
                record.run,
                record.report,
                record.reports_skipped,
            ],
        )
        now = record.finished_at
        cached = [
            (str(f.path.absolute()), f.size, f.mtime_ns, f.content_hash, now)
            for f in files
            if f.content_hash is not None
        ]
        if cached:
            writer.con.executemany(named_query("nightly_remember_file"), cached)


def owe(lake: Lake, run: str, owed: list[tuple[str, str, str, str]]) -> None:
    """Record the reports owed for the versions a run is about to ingest, (report, dataset, name,
    content hash) each: recorded before the ingest, so that a run stopped after it leaves them owed."""
    if owed:
        with lake.writer() as writer:
            writer.con.executemany(named_query("nightly_owe"), [(*row, run) for row in owed])


def due(lake: Lake, reports: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
    """The reports owed now (this run's and those a stopped run left), each with the (dataset, name)
    it is owed for; what is owed for a version the lake does not hold is forgotten."""
    with lake.writer() as writer:
        writer.con.execute(named_query("nightly_forget_unowed"), [list(reports)])
        rows = writer.con.execute(named_query("nightly_owed")).fetchall()
    owed: dict[str, list[tuple[str, str]]] = {}
    for report, dataset, name in rows:
        owed.setdefault(report, []).append((dataset, name))
    return owed


def settle(lake: Lake, report: str) -> None:
    """A report has run (ok, failed or skipped for too little data): it owes nothing more."""
    with lake.writer() as writer:
        writer.con.execute(named_query("nightly_settle"), [report])


def owed(lake: Lake) -> pl.DataFrame:
    """What is owed, by report (`lakehouse nightly --dry-run` and the tests)."""
    return lake.query(named_query("nightly_owed"))


def runs(lake: Lake) -> pl.DataFrame:
    """Every recorded run, newest first (empty in a lake that never had one)."""
    found = lake.query(named_query("nightly_runs"))
    if "reports_skipped" not in found.columns:  # (a catalog not written since the column was added)
        found = found.with_columns(reports_skipped=pl.lit(None, pl.List(pl.String)))
    head = found.columns[: found.columns.index("reports_failed") + 1]
    return found.select(*head, "reports_skipped", "errors", "report")
