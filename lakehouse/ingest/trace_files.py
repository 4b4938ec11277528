"""Ingesting a trace whose every input file becomes one Parquet file of one table (Google's 2019 shards,
Alibaba's 2018 CSV files): the pipeline's source for such files and the ingest loop, written once.

A trace gives its datasets' prefix (`google2019.`: the manifest's dataset `google2019.instance_usage`
is stored as `google2019_instance_usage`) and its function that writes one file aside."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from lakehouse.base.catalog import sql_literal
from lakehouse.base.errors import BrokenFileError
from lakehouse.base.lake import Lake
from lakehouse.ingest.google import PartResult, file_hash
from lakehouse.ingest.pipeline import Outcome, Task, ingest_files

#: Writes one file's rows (and quarantine) aside: the lake, the task, the share of the budget it may use.
WriteFile = Callable[[Lake, Task, float], Outcome]


@dataclass
class OneFileOneTable:
    """How the pipeline reads a trace of such files: a file is known by its content's hash, committed
    once its table's Parquet file is in place."""

    lake: Lake
    write: WriteFile
    workers: int

    def fingerprint(self, task: Task) -> tuple[str, int]:
        return file_hash(task.path), task.path.stat().st_size

    def committed(self, task: Task) -> bool:
        key = task.dataset.replace(".", "_", 1)
        return self.lake.committing.has_output(key, task.name)

    def process(self, task: Task) -> Outcome:
        return self.write(self.lake, task, 1 / self.workers)

    def failed(self, task: Task, outcome: Outcome) -> None:
        pass


def ingest_each_file(
    lake: Lake,
    tasks: list[Task],
    prefix: str,
    write: WriteFile,
    force: bool = False,
    workers: int | None = None,
    on_file: Callable[[PartResult, int], None] | None = None,
) -> list[PartResult]:
    """Run the tasks through the pipeline; one result per file (and per unusable entry), `on_file` told
    of each as it ends (with its size in bytes, for progress)."""
    workers = workers or os.cpu_count() or 1

    def done(task: Task, outcome: Outcome) -> None:
        if on_file is not None:
            on_file(PartResult.of(task, outcome, prefix=prefix), outcome.size)

    source = OneFileOneTable(lake, write, workers)
    outcomes = ingest_files(lake, tasks, source, force=force, workers=workers, on_done=done)
    return [PartResult.of(task, outcome, prefix=prefix) for task, outcome in outcomes]


def copy_quarantine(
    con: duckdb.DuckDBPyConnection, table: str, part: str, source: Path, raw_rows: str, rejected: int, into: Path
) -> None:
    """Write the rejected rows of TEMP `decoded` (line, reason) to `into`, each with its raw text from
    `raw_rows` (a SELECT of line, raw), which is read again only when some were rejected (reading a file's
    text twice was a tenth of its time)."""
    raws = f"({raw_rows})" if rejected else "(SELECT 0 AS line, NULL::VARCHAR AS raw)"
    con.execute(
        f"COPY (SELECT {sql_literal(table)} AS table_name, {sql_literal(part)} AS part, "
        f"{sql_literal(str(source))} AS source, line, raw, reason "
        f"FROM (SELECT line, reason FROM decoded WHERE reason IS NOT NULL) JOIN {raws} USING (line) "
        f"ORDER BY line) TO {sql_literal(str(into))} (FORMAT parquet)"
    )


def discard(aside: list[tuple[Path, Path]]) -> None:
    """Remove the files written aside (a file that failed commits nothing)."""
    for written, _ in aside:
        written.unlink(missing_ok=True)


def refuse_if_nothing_kept(aside: list[tuple[Path, Path]], source: Path, rows: int, rejected: int, what: str) -> None:
    """A file none of whose rows is a row of its table (`what`) fails whole, its files aside removed."""
    if rows == 0 and rejected > 0:
        discard(aside)
        raise BrokenFileError(str(source), f"none of its {rejected:,} rows is a row of {what}: not ingested")
