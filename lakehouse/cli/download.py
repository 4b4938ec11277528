"""`lakehouse download google-2011`: the whole Google trace (or tables and parts of it) from its public bucket."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lakehouse.base.render import OutputFormat, emit, stderr
from lakehouse.cli.common import FormatOption, OutputOption, byte_progress, clear_errors, command_group

if TYPE_CHECKING:
    from lakehouse.ingest.download import Download, Wanted

#: The folder a download fetches into.
DestArgument = Annotated[Path, typer.Argument(help="The folder to fetch into (made if missing; a rerun continues).")]

download_app = command_group("Fetch public traces into a folder that `ingest` and the nightly inbox take.")


@download_app.command("google-2011")
@clear_errors
def download_google(
    dest: DestArgument,
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
    from lakehouse.base.comma_lists import split_list
    from lakehouse.ingest.download import Download, DownloadError, parse_parts, select

    chosen_tables = split_list(tables) if tables else None
    span = parse_parts(parts)
    download = Download(dest.expanduser(), jobs=jobs)
    with stderr.status(f"reading the trace's file list ({download.url('SHA256SUM')})..."):
        files = select(download.listing(), chosen_tables, span)
    if not files:
        raise DownloadError("no file of the trace matches --tables and --parts")
    with stderr.status(f"asking the size of {len(files):,} files..."):
        sizes = download.sizes(files)
    _fetch(download, files, sizes, fmt, output)


def _fetch(
    download: Download, files: list[Wanted], sizes: dict[str, int | None], fmt: OutputFormat, output: Path | None
) -> None:
    """Fetch `files` with a progress bar after checking the disk; print what came, and exit 1 if any failed."""
    import polars as pl

    from lakehouse.ingest.download import DownloadError, disk_problem

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


@download_app.command("google-2019")
@clear_errors
def download_google2019(
    dest: Annotated[
        Path, typer.Argument(help="The folder to fetch into: the shards go to DEST/clusterdata_2019_CELL/.")
    ],
    cell: Annotated[str, typer.Option(help="The cell, a-h.")] = "a",
    tables: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated tables [default: all five]: collection_events, instance_events, instance_usage, "
            "machine_events, machine_attributes."
        ),
    ] = None,
    shards: Annotated[
        str | None,
        typer.Option(help="Shard numbers, A-B (both included) or one number [default: every shard]."),
    ] = None,
    export: Annotated[
        str, typer.Option("--export", help="The export to fetch: json or parquet (the same rows).")
    ] = "json",
    jobs: Annotated[int, typer.Option(help="Files fetched at a time.", min=1, max=32)] = 4,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Download a cell of clusterdata-2019, Google's 31-day trace of eight Borg cells, from its public
    bucket (storage.googleapis.com/clusterdata_2019_CELL) over HTTPS, without an account: about 350 GiB
    of gzipped shards per cell, most of them instance_usage.

    The bucket is listed by the storage JSON API, with each shard's size, MD5 and CRC-32C; a shard
    counts as fetched only once both are the listed ones (one that differs is deleted and named). A cut
    connection is retried where it stopped, a run stopped by Ctrl-C or a kill continues on the next
    (`NAME.part` files), and shards already whole are not fetched again. The disk must hold what is left
    to fetch: the command says so before it starts. `lakehouse ingest google-2019 DEST/clusterdata_2019_a`
    takes the folder as it is (its name gives the cell); docs/google-2019.md describes the tables.

    Example: `lakehouse download google-2019 traces --cell a --tables machine_events,collection_events`

    Example: `lakehouse download google-2019 traces --cell b --tables instance_usage --shards 0-9 && lakehouse
    ingest google-2019 traces/clusterdata_2019_b`
    """
    from lakehouse.base.comma_lists import split_list
    from lakehouse.base.google2019_format import TABLES, cell_problem
    from lakehouse.ingest.download import Download2019, DownloadError, parse_parts, select_2019

    if problem := cell_problem(cell):
        raise DownloadError(problem)
    if export not in ("json", "parquet"):
        raise DownloadError(f"--export {export!r}: json or parquet")
    chosen = split_list(tables) if tables else list(TABLES)
    if unknown := sorted(set(chosen) - set(TABLES)):
        raise DownloadError(f"unknown table {', '.join(unknown)}; the tables are: {', '.join(TABLES)}")
    span = parse_parts(shards, "--shards")
    download = Download2019(dest.expanduser(), cell, jobs=jobs)
    objects = []
    with stderr.status(f"listing {download.bucket}...") as status:
        for table in chosen:
            status.update(f"listing {download.bucket}: {table}...")
            objects += download.objects(f"{table}-")
    files = select_2019(objects, chosen, span, export)
    if not files:
        raise DownloadError(f"no shard of {download.bucket} matches --tables, --shards and --export")
    download.announced = {item.path: size for item, size in files}
    _fetch(download, [item for item, _ in files], dict(download.announced), fmt, output)


@download_app.command("alibaba-2018")
@clear_errors
def download_alibaba2018(
    dest: DestArgument,
    tables: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated tables [default: all six]: machine_meta, machine_usage, container_meta, "
            "container_usage, batch_task, batch_instance."
        ),
    ] = None,
    keep_archives: Annotated[
        bool, typer.Option(help="Keep each table's archive once its CSV is extracted [default: remove it].")
    ] = False,
    jobs: Annotated[int, typer.Option(help="Files fetched at a time.", min=1, max=6)] = 2,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Download Alibaba's cluster-trace-v2018 (about 4,000 machines over 8 days) from the object store
    alibaba/clusterdata points to, and extract each table's CSV into DEST: 49 GB of archives, about 280 GB
    of CSV (container_usage alone 28 GB packed).

    Each archive (`<table>.tar.gz`) counts as fetched only once its SHA-256 is the one alibaba/clusterdata
    publishes (trace_2018.md); one that differs is deleted and named. A cut connection is retried where it
    stopped, and a run stopped by Ctrl-C or a kill continues on the next (`NAME.part` files). Then the
    archive's CSV is streamed out to `<table>.csv` (written whole or not at all) and the archive removed
    (`--keep-archives` keeps it); a table whose CSV is there is not fetched again. The disk must hold the
    archives and then about six times each: the command says so before it starts. `lakehouse ingest
    alibaba-2018 DEST` takes the folder as it is; docs/alibaba-2018.md describes the tables.

    Example: `lakehouse download alibaba-2018 traces/alibaba-2018 --tables machine_meta,batch_task`
    """
    from lakehouse.base.alibaba2018_format import TABLES
    from lakehouse.base.comma_lists import split_list
    from lakehouse.ingest.download import (
        ALIBABA_2018_EXTRACTED_RATIO,
        DownloadAlibaba2018,
        DownloadError,
        disk_problem,
    )

    chosen = split_list(tables) if tables else list(TABLES)
    if unknown := sorted(set(chosen) - set(TABLES)):
        raise DownloadError(f"unknown table {', '.join(unknown)}; the tables are: {', '.join(TABLES)}")
    download = DownloadAlibaba2018(dest.expanduser(), jobs=jobs)
    done = [table for table in chosen if download.extracted(table).exists()]
    if done:
        stderr.print(f"already extracted, not fetched again: {', '.join(f'{t}.csv' for t in done)}", highlight=False)
    todo = [table for table in chosen if table not in done]
    if not todo:
        return
    files = download.wanted(todo)
    with stderr.status(f"asking the size of {len(files):,} archives ({download.base_url})..."):
        sizes = download.sizes(files)
    _fetch(download, files, sizes, fmt, output)
    for table in todo:
        archive = download.dest / f"{table}.tar.gz"
        estimate = archive.stat().st_size * ALIBABA_2018_EXTRACTED_RATIO
        if problem := disk_problem(download.dest, estimate):
            raise DownloadError(f"{problem} to extract {table}.csv (about {ALIBABA_2018_EXTRACTED_RATIO}x its archive)")
        with byte_progress(f"extracting {table}.csv", estimate, lambda _: "") as on_bytes:
            download.extract(table, lambda n: on_bytes(None, n))
        if not keep_archives:
            archive.unlink()
        stderr.print(f"{table}.csv extracted -> {download.dest}", highlight=False)
