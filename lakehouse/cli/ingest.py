"""`lakehouse ingest swf|google`: raw files into the lake, incrementally."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lakehouse.base.lake import Lake
from lakehouse.base.render import OutputFormat, emit, labelled, stderr
from lakehouse.cli.common import (
    FormatOption,
    LakeOption,
    MemoryLimitOption,
    OutputOption,
    byte_progress,
    clear_errors,
    command_group,
)
from lakehouse.ingest.status import Status

if TYPE_CHECKING:  # (the ingest modules load when a command runs, not when the CLI starts)
    import polars as pl

    from lakehouse.ingest.google import PartResult
    from lakehouse.ingest.pipeline import Task

ingest_app = command_group("Ingest raw files into the lake (incremental: unchanged files are skipped).")


@ingest_app.command("swf")
@clear_errors
def ingest_swf_command(
    paths: Annotated[list[str], typer.Argument(help="SWF files (.swf, .swf.gz), folders or glob patterns.")],
    lake: LakeOption = None,
    name: Annotated[
        str | None, typer.Option(help="Log name for a single file [default: file name without .swf/.swf.gz].")
    ] = None,
    machine_size: Annotated[
        list[str] | None,
        typer.Option(
            help="Processors of the machine: N for the logs whose header gives no MaxProcs (a header's size is "
            "kept, and a note says so), LOG=N for the logs LOG names (a name, unique prefix or glob), over "
            "their header with a warning. Repeatable. A size given once stays with the log on later ingests "
            "until another is given.",
        ),
    ] = None,
    force: Annotated[bool, typer.Option(help="Re-ingest even unchanged files.")] = False,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Ingest SWF job logs; bad lines go to swf.quarantine, broken files are reported and skipped.

    Example: `lakehouse ingest swf ../logs/*.swf.gz` or `lakehouse ingest swf RICC.swf.gz --machine-size 8192`
    """
    from lakehouse.base.machine import parse_machine_sizes
    from lakehouse.ingest.swf import discover, ingest_swf, results_frame

    target = Lake(lake)
    total = sum(p.stat().st_size for p in discover(paths))
    started = time.perf_counter()
    with byte_progress("ingest swf", total, lambda r: r.log) as advance:
        every, per_log = parse_machine_sizes(machine_size or [])
        results = ingest_swf(
            target, paths, name=name, machine_size=every, machine_sizes=per_log, force=force, on_file=advance
        )
    elapsed = time.perf_counter() - started
    emit(results_frame(results), fmt, output)
    failed = [r for r in results if r.status is Status.failed]
    jobs = sum(r.jobs for r in results)
    quarantined = sum(r.quarantined for r in results)
    stderr.print(
        f"{len(results)} files: {jobs:,} jobs ingested, {quarantined:,} lines quarantined, "
        f"{sum(r.status is Status.unchanged for r in results)} unchanged, {len(failed)} failed "
        f"in {elapsed:.1f} s -> {target.root}"
    )
    exit_if_failed(failed)


def exit_if_failed(failed: list) -> None:
    """Name every file that failed, then exit with status 2 (the others are in the lake)."""
    for r in failed:
        stderr.print(labelled("error:", "bold red", r.error), highlight=False)
    if failed:
        raise typer.Exit(2)


@ingest_app.command("google")
@clear_errors
def ingest_google_command(
    folder: Annotated[Path, typer.Argument(help="A trace folder: job_events/, task_events/, task_usage/, ...")],
    lake: LakeOption = None,
    force: Annotated[bool, typer.Option(help="Re-ingest even unchanged parts.")] = False,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Ingest the Google cluster trace (clusterdata-2011-2): one Parquet file per gzipped CSV part.

    Bad lines go to google.quarantine with their part and line number; a broken part is reported and
    the rest is ingested; unchanged parts are skipped, so an interrupted ingest resumes where it stopped.
    Prints one row per table (and per failed part).

    Example: `lakehouse ingest google ~/traces/clusterdata-2011-2`
    """
    from lakehouse.ingest.google import discover_trace, ingest_google, tables_frame

    target = Lake(lake)
    parts, _, _ = discover_trace(folder)
    total = sum(p.path.stat().st_size for p in parts)
    started = time.perf_counter()
    with byte_progress("ingest google", total, lambda r: f"{r.table}/{r.part}") as advance:
        results, warnings = ingest_google(target, folder, force=force, on_part=advance)
    elapsed = time.perf_counter() - started
    emit(tables_frame(results), fmt, output)
    failed = [r for r in results if r.status is Status.failed]
    rows = sum(r.rows for r in results)
    stderr.print(
        f"{len(results)} parts: {rows:,} rows ingested, {sum(r.quarantined for r in results):,} lines quarantined, "
        f"{len(failed)} failed in {elapsed:.1f} s ({total / 1e6 / max(elapsed, 1e-9):,.1f} MB/s gzip) -> {target.root}"
    )
    for warning in warnings + [f"{r.table}/{r.part}: {w}" for r in results for w in r.warnings]:
        stderr.print(labelled("warning:", "yellow", warning), highlight=False)
    exit_if_failed(failed)


@ingest_app.command("google-2019")
@clear_errors
def ingest_google2019_command(
    paths: Annotated[
        list[Path],
        typer.Argument(help="Shards (<table>-NNNNNNNNNNNN.json.gz or .parquet.gz) or folders holding them."),
    ],
    cell: Annotated[
        str | None,
        typer.Option(
            help="The cell (a-h) of every shard given [default: from a folder named cell_a or clusterdata_2019_a]."
        ),
    ] = None,
    lake: LakeOption = None,
    memory_limit: MemoryLimitOption = None,
    force: Annotated[bool, typer.Option(help="Re-ingest even unchanged shards.")] = False,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Ingest Google's 2019 trace (clusterdata-2019, format v3): one Parquet file per shard of a cell.

    JSON and Parquet exports are read alike (quoted integers, left-out fields by the proto's defaults);
    a shard and its twin in the other format are the same rows, stored once. Rows that break the
    documented schema go to google2019.quarantine with their line and reason; a shard that is not what
    its name says is reported and the rest is ingested; unchanged shards are skipped. Prints one row
    per table (and per failed shard). docs/google-2019.md describes the tables and the views.

    Example: `lakehouse ingest google-2019 ~/traces/clusterdata_2019_a/`
    """
    from lakehouse.ingest.google2019 import discover_shards, ingest_google2019, tables_frame

    target = Lake(lake, memory_limit)
    _each_file_ingest(
        "ingest google-2019",
        "shards",
        "rows",
        discover_shards(paths, cell),
        lambda advance: ingest_google2019(target, paths, cell=cell, force=force, on_shard=advance),
        tables_frame,
        target,
        fmt,
        output,
    )


@ingest_app.command("alibaba-2018")
@clear_errors
def ingest_alibaba2018_command(
    paths: Annotated[
        list[Path],
        typer.Argument(help="The trace's files (<table>.csv or .csv.gz, as extracted from its archives) or folders."),
    ],
    lake: LakeOption = None,
    memory_limit: MemoryLimitOption = None,
    force: Annotated[bool, typer.Option(help="Re-ingest even unchanged files.")] = False,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Ingest Alibaba's cluster-trace-v2018: one Parquet file per CSV file, read by the columns of the
    published schema.txt.

    Each file's table comes from its name (machine_meta, machine_usage, container_meta, container_usage,
    batch_task, batch_instance) and is checked against its first row: the files have no header. Lines
    with too many or too few fields, fields not of their type or values outside their documented range
    go to alibaba2018.quarantine with their line and reason; a file of another table is refused, naming
    the table it looks like; unchanged files are skipped. Prints one row per table.
    docs/alibaba-2018.md describes the tables, the views and the trace's quirks.

    Example: `lakehouse ingest alibaba-2018 ~/traces/alibaba-2018/machine_meta.csv ~/traces/alibaba-2018/batch_task.csv`
    """
    from lakehouse.ingest.alibaba2018 import discover_files, ingest_alibaba2018, tables_frame

    target = Lake(lake, memory_limit)
    _each_file_ingest(
        "ingest alibaba-2018",
        "files",
        "lines",
        discover_files(paths),
        lambda advance: ingest_alibaba2018(target, paths, force=force, on_file=advance),
        tables_frame,
        target,
        fmt,
        output,
    )


def _each_file_ingest(
    command: str,
    unit: str,
    lines: str,
    tasks: list[Task],
    run: Callable[[Callable[[PartResult, int], None]], list[PartResult]],
    tables: Callable[[list[PartResult]], pl.DataFrame],
    target: Lake,
    fmt: OutputFormat,
    output: Path | None,
) -> None:
    """Run an ingest of a trace whose every file is one table's (2019 shards, Alibaba files) with a progress
    bar over the files' bytes; print its table, one summary line, the warnings and the failures."""
    total = sum(t.path.stat().st_size for t in tasks if t.problem is None)
    started = time.perf_counter()
    with byte_progress(command, total, lambda r: f"{r.table}/{r.part}") as advance:
        results = run(advance)
    elapsed = time.perf_counter() - started
    emit(tables(results), fmt, output)
    failed = [r for r in results if r.status == Status.failed]
    stderr.print(
        f"{len(results)} {unit}: {sum(r.rows for r in results):,} rows ingested, "
        f"{sum(r.quarantined for r in results):,} {lines} quarantined, {len(failed)} failed in {elapsed:.1f} s "
        f"-> {target.root}"
    )
    for r in results:
        for warning in r.warnings:
            stderr.print(labelled("warning:", "yellow", f"{r.table}/{r.part}: {warning}"), highlight=False)
    exit_if_failed(failed)
