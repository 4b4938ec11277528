"""`lakehouse download google-2011`: the whole Google trace (or tables and parts of it) from its public bucket."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lakehouse.base.render import OutputFormat, emit, stderr
from lakehouse.cli.common import FormatOption, OutputOption, byte_progress, clear_errors, command_group

download_app = command_group("Fetch public traces into a folder that `ingest` and the nightly inbox take.")


@download_app.command("google-2011")
@clear_errors
def download_google(
    dest: Annotated[Path, typer.Argument(help="The folder to fetch into (made if missing; a rerun continues).")],
    tables: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated tables [default: all six]: job_events, task_events, task_usage, "
            "machine_events, machine_attributes, task_constraints."
        ),
    ] = None,
    parts: Annotated[
        str | None,
        typer.Option(help="Part numbers, A-B (both included) or one number [default: all 500]."),
    ] = None,
    jobs: Annotated[int, typer.Option(help="Files fetched at a time.", min=1, max=32)] = 4,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Download clusterdata-2011-2, Google's 29-day trace of a 12,500-machine cell, from its public
    bucket (storage.googleapis.com/clusterdata-2011-2) over HTTPS: 41-47 GB of gzipped CSV in about
    2,000 files (task_usage alone 500 parts of ~90 MB).

    DEST keeps the bucket's layout (one folder per table, schema.csv, SHA256SUM), which `lakehouse ingest
    google DEST` and the nightly inbox take as it is. A file counts as fetched only once its SHA-256 is
    the published one (SHA256SUM); one that differs is deleted and named. A cut connection is retried
    where it stopped, and a run stopped by Ctrl-C or a kill continues on the next (`NAME.part` files);
    files already whole are not fetched again. The disk must hold what is left to fetch: the command
    says so before it starts. docs/full-trace.md gives the sizes and times.

    Example: `lakehouse download google-2011 ~/traces/clusterdata-2011-2 --tables job_events,task_events`

    Example: `lakehouse download google-2011 trace --parts 0-9 && lakehouse ingest google trace`
    """
    import polars as pl

    from lakehouse.base.comma_lists import split_list
    from lakehouse.ingest.download import Download, DownloadError, disk_problem, parse_parts, select

    chosen_tables = split_list(tables) if tables else None
    span = parse_parts(parts)
    download = Download(dest.expanduser(), jobs=jobs)
    with stderr.status(f"reading the trace's file list ({download.url('SHA256SUM')})..."):
        files = select(download.listing(), chosen_tables, span)
    if not files:
        raise DownloadError("no file of the trace matches --tables and --parts")
    with stderr.status(f"asking the size of {len(files):,} files..."):
        sizes = download.sizes(files)
    total = sum(size or 0 for size in sizes.values())
    left = sum(sizes[item.path] or 0 for item in files if not (download.dest / item.path).exists())
    if problem := disk_problem(download.dest, left):
        raise DownloadError(problem)
    stderr.print(f"{len(files):,} files, {total / 1e9:,.2f} GB -> {download.dest}")
    with byte_progress("download", total, lambda _: "") as on_bytes:
        results = download.run(files, lambda n: on_bytes(None, n))
    table = pl.DataFrame(
        [{"file": r.path, "status": r.status, "bytes": r.bytes} for r in results if r.status != "present"],
        schema={"file": pl.String, "status": pl.String, "bytes": pl.Int64},
    )
    if not table.is_empty():
        emit(table, fmt, output)
    failed = [r for r in results if r.status == "failed"]
    for result in failed:
        stderr.print(f"failed: {result.error}", highlight=False)
    counts = {s: sum(r.status == s for r in results) for s in ("fetched", "present", "failed")}
    stderr.print(
        f"{counts['fetched']:,} fetched, {counts['present']:,} already whole, {counts['failed']:,} failed -> "
        f"{download.dest}" + ("; run the same command again to finish" if failed else "")
    )
    if failed:
        raise typer.Exit(1)
