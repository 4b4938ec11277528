"""`lakehouse init`, `demo` and `catalog rebuild`: making and maintaining a lake."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from lakehouse.base.catalog import meta_copy
from lakehouse.base.errors import LakehouseError, NoLakeError, SettingsError
from lakehouse.base.lake import Lake
from lakehouse.base.render import OutputFormat, emit, labelled, stderr
from lakehouse.cli.common import (
    FormatOption,
    LakeOption,
    MemoryLimitOption,
    OutputOption,
    ThreadsOption,
    clear_errors,
    command_group,
)
from lakehouse.cli.root import app

catalog_app = command_group("Maintain the DuckDB catalog (lake.duckdb) of a lake made before DuckLake.")


@app.command()
@clear_errors
def init(
    lake: LakeOption = None,
    ducklake: Annotated[
        bool,
        typer.Option(
            "--ducklake",
            help="Make a new lake a DuckLake lake, whatever $LAKEHOUSE_FORMAT says (it is the default: a catalog "
            "with a snapshot per write, readable as of any snapshot, movable as a folder).",
        ),
    ] = False,
    catalog: Annotated[
        str | None,
        typer.Option(
            "--catalog",
            help="A team's lake: its DuckLake catalog, postgresql://USER@HOST:PORT/DATABASE (the password from "
            "PGPASSWORD or ~/.pgpass, never here) or a SQLite file. A catalog that holds a lake already is "
            "joined; an empty database gets a new lake.",
            show_default=False,
        ),
    ] = None,
    data: Annotated[
        str | None,
        typer.Option(
            "--data",
            help="With --catalog, for a new lake: where its Parquet files go, a shared folder or "
            "s3://BUCKET/PREFIX (keys from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL). "
            "Joining a lake, it may be left out.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Create an empty lake. Safe to run again.

    A new lake is a DuckLake lake of one folder: its catalog LAKE/catalog.sqlite, its Parquet files under
    LAKE/data, a snapshot per write (`lakehouse snapshots`, `--as-of N`). LAKEHOUSE_FORMAT=duckdb makes
    one of the DuckDB catalog's format instead (LAKE/lake.duckdb, as lakehouse made before DuckLake).

    A team's lake (--catalog, --data) is one catalog and one data path that every member's lake folder
    names in its lake file (LAKE/lake.toml); the folder keeps only this machine's work in progress. Every
    command then takes the folder as it takes any lake (--lake, $LAKEHOUSE_LAKE).

    Example: `lakehouse init --lake ~/lakes/pwa && lakehouse snapshots --lake ~/lakes/pwa`

    Example: `lakehouse init --lake ~/lakes/team --catalog postgresql://ana@db:5432/traces --data s3://traces/lake`
    (the password in PGPASSWORD, the object store's keys in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)
    """
    from lakehouse.base.ducklake import DuckLake

    target = Lake(lake)
    made: DuckLake | None
    if catalog is not None:
        from lakehouse.base.ducklake_lake import team_lake

        made = team_lake(catalog, data)
    elif data is not None:
        raise SettingsError("--data names a team's lake's data path: give its --catalog too")
    else:
        made = DuckLake.of_folder(target.root) if ducklake else None
    target.init(ducklake=made)
    shared = f" (catalog {made.catalog}, data {made.data})" if made is not None and not made.in_folder else ""
    stderr.print(f"lake ready at {target.root}{shared}")


@catalog_app.command("rebuild")
@clear_errors
def catalog_rebuild(lake: LakeOption = None) -> None:
    """Recreate every view as this version of lakehouse makes it: after an upgrade of lakehouse, where a
    report says the catalog lacks a view (a DuckLake lake's next writer would make them too), and, in a lake
    of the DuckDB catalog's format, after moving it, with its current absolute path (a DuckLake lake, the
    default, moves as a folder and needs none).

    A catalog that DuckDB can no longer open (overwritten, truncated, deleted) is moved aside and
    made again: its tables (the ingest manifest, the analysis files, the nightly history) from the
    copies every writer keeps in the lake's meta/ folder, its views from the lake's files.

    Example: `mv old-lake /data/old-lake && lakehouse catalog rebuild --lake /data/old-lake`
    """
    target = Lake(lake)
    if not target.exists() and not meta_copy(target.root, "manifest").exists():
        raise NoLakeError(f"no lake at {target.root}")
    aside = target.rebuild()
    if aside is not None:
        stderr.print(f"the catalog DuckDB could not open was moved to {aside}")
    stderr.print(f"catalog rebuilt for {target.root}")


@app.command()
@clear_errors
def migrate(
    old: Annotated[Path, typer.Argument(help="The lake to migrate (a folder with lake.duckdb); it is only read.")],
    new: Annotated[Path, typer.Argument(help="Where to make the DuckLake lake: a new or empty folder.")],
) -> None:
    """Make a DuckLake lake of a lake of the DuckDB-catalog format: the same rows in every view, checked.

    The new folder holds catalog.sqlite (DuckLake's catalog, in SQLite) and data/ (the rows as Parquet,
    written again by DuckLake), in one snapshot whose message names the old lake. Every view is counted in
    both lakes before that snapshot is kept; on any difference or error the new folder is left as it was.
    Every command reads and writes the new lake as it does the old; each write is a snapshot
    (`lakehouse snapshots`, `--as-of N`), and the folder can be moved with no rebuild.

    Example: `lakehouse migrate old-lake new-lake && lakehouse logs --lake new-lake`
    """
    from lakehouse.base.migrate import migrate as migrate_lake

    migrated = migrate_lake(Lake(old), new.expanduser().absolute(), progress=stderr.print)
    rows, tables = sum(migrated.stored_rows.values()), len(migrated.stored_rows)
    stderr.print(f"{new}: a DuckLake lake of {rows:,} rows in {tables} stored tables, snapshot {migrated.snapshot}")


@app.command()
@clear_errors
def snapshots(
    lake: LakeOption = None,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
    expire_before: Annotated[
        int | None,
        typer.Option(
            "--expire-before",
            help="Forget every snapshot before this one (it is kept) and delete the files only they read; "
            "waits for a writer at work.",
            min=0,
            show_default=False,
        ),
    ] = None,
) -> None:
    """List a DuckLake lake's snapshots: each commit, with its time, author and message (what ran).

    A snapshot's number reads the lake as that commit left it: `lakehouse sql --as-of N`. Snapshots keep
    the files of the rows they read (a log ingested again keeps its old file); `--expire-before N` forgets
    the snapshots before N and deletes the files no kept snapshot reads. A paper's numbers stay
    recomputable as long as the snapshot it cites is kept.

    Example: `lakehouse snapshots --lake lake`
    """
    import polars as pl

    target = Lake(lake)
    target.require()
    if (ducklake := target.ducklake) is None:
        raise LakehouseError(
            f"{target.root}: a lake of the DuckDB-catalog format keeps no snapshots (`lakehouse migrate` makes a "
            "DuckLake lake of it)"
        )
    if expire_before is not None:
        from lakehouse.base.ducklake import expire_before as expire

        with target.writer(wait=True), ducklake.connection() as con:
            forgotten, deleted = expire(con, expire_before)
        stderr.print(f"{forgotten} snapshot(s) before {expire_before} forgotten, {deleted} file(s) deleted")
    rows = ducklake.snapshots()
    frame = pl.DataFrame(rows, schema=["snapshot", "time", "author", "message"], orient="row")
    emit(frame, fmt, output)


@app.command()
@clear_errors
def demo(lake: LakeOption = None, fmt: FormatOption = OutputFormat.table) -> None:
    """Run the main job on the embedded samples: build a lake, ingest the real KTH-SP2 log and replay it,
    the real Google 2011 slice (and a generated trace with its planted truth) through the Google reports,
    the real Alibaba 2018 slice, and put the three traces side by side; then two nightly runs over an
    inbox made from the samples, with their HTML report.

    Example: `lakehouse demo --lake demo-lake`
    """
    from lakehouse.demo import run_demo_with_nightly

    target = Lake(lake)
    started = time.perf_counter()
    with stderr.status("building the demo lake, then two nightly runs..."):
        frames, page = run_demo_with_nightly(target)
    for title, frame in frames.items():
        if fmt is OutputFormat.table:
            emit(frame, fmt, None, title=title)
        else:
            stderr.print(title)
            emit(frame, fmt, None)
    if page is not None:
        stderr.print(f"nightly HTML report -> {page} (every run: {page.parent.parent / 'index.html'})")
    stderr.print(
        f"demo done in {time.perf_counter() - started:.1f} s. Explore it: lakehouse shell --lake {target.root}"
    )


@app.command()
@clear_errors
def audit(
    lake: LakeOption = None,
    memory_limit: MemoryLimitOption = None,
    threads: ThreadsOption = None,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Check the lake's invariants: each audit is a query that must return no rows.

    Prints one row per audit (ok or FAILED, with what it checks), then the offending rows of each
    failed audit on stderr; exits 1 if any failed.  The audits: every SWF job id once per log, every
    cleaned job replayable on its machine, the manifest and swf.logs in agreement, the Google trace's
    reused job ids split into instances and its unsampled jobs kept out of the volatility study.

    Example: `lakehouse audit` (the lake in ./lake), or after `lakehouse demo --lake demo-lake`:
    `lakehouse audit --lake demo-lake`
    """
    from lakehouse.base.audit import run_audits, summary

    results = run_audits(Lake(lake, memory_limit, threads))  # (the Google audits group the whole trace)
    emit(summary(results), fmt, output)
    failed = [r for r in results if not r.passed]
    for result in failed:
        emit(
            result.offenders.head(20),
            OutputFormat.table,
            None,
            title=f"{result.audit.name}: offending rows",
            console=stderr,
        )
    if failed:
        stderr.print(labelled(f"{len(failed)} of {len(results)}", "bold red", "audits failed"))
        raise typer.Exit(1)
    stderr.print(f"{len(results)} audits passed")
