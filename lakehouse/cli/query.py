"""`lakehouse sql`, `views` and `logs`: asking the lake questions."""

from __future__ import annotations

from typing import Annotated

import typer

from lakehouse.base.catalog import named_query
from lakehouse.base.lake import Lake
from lakehouse.base.render import OutputFormat, emit, stream_parquet
from lakehouse.cli.common import (
    AsOfOption,
    FormatOption,
    LakeOption,
    MemoryLimitOption,
    OutputOption,
    ThreadsOption,
    clear_errors,
)
from lakehouse.cli.root import app


@app.command()
@clear_errors
def sql(
    query: Annotated[
        str,
        typer.Argument(help="SQL (DuckDB dialect) over the lake's views; several statements may be separated by ';'."),
    ],
    lake: LakeOption = None,
    allow_writes: Annotated[
        bool,
        typer.Option(
            "--allow-writes",
            help="Also run statements that write files (COPY ... TO, EXPORT, ATTACH, INSTALL, CALL), on a "
            "connection that may reach any file. Never write into the lake's folders: the views would read "
            "what you write there.",
        ),
    ] = False,
    memory_limit: MemoryLimitOption = None,
    threads: ThreadsOption = None,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
    as_of: AsOfOption = None,
) -> None:
    """Run SQL on the lake (read-only: no statement can write a file) and print or save the last statement's
    result ("ok" if it has none).

    Example: `lakehouse sql "select log, count(*) from swf.jobs_clean group by log" --format csv`

    Example: `lakehouse sql "select count(*) from swf.jobs" --as-of 1` (the lake as its snapshot 1 left it:
    `lakehouse snapshots` lists them)
    """
    target = Lake(lake, memory_limit, threads, snapshot=as_of)
    if fmt is OutputFormat.parquet:  # written batch by batch as the query runs: any size, in bounded memory
        streamed: list[object] = []

        def write(reader: object) -> None:
            streamed.append(reader)
            stream_parquet(reader, output)

        target.user_sql(query, allow_writes, stream=write)
        if not streamed:  # the last statement returns no rows
            print("ok")
        return
    frame = target.user_sql(query, allow_writes=allow_writes)
    if frame is None:
        print("ok")
        return
    emit(frame, fmt, output)


@app.command()
@clear_errors
def views(lake: LakeOption = None, fmt: FormatOption = OutputFormat.table, output: OutputOption = None) -> None:
    """List the lake's views with their descriptions.

    Example: `lakehouse views --format csv`
    """
    emit(Lake(lake).views(), fmt, output)


@app.command()
@clear_errors
def logs(lake: LakeOption = None, fmt: FormatOption = OutputFormat.table, output: OutputOption = None) -> None:
    """Summarize each SWF log: jobs, users, span, machine size, offered load, overruns, estimate ratio.

    Example: `lakehouse logs --format json`
    """
    emit(Lake(lake).query(named_query("log_summary")), fmt, output)


def duckdb_command_line() -> str:
    """The `duckdb` command line the package installs (duckdb-cli, pinned with DuckDB): beside this
    interpreter, else on PATH."""
    import shutil
    import sys
    import sysconfig
    from pathlib import Path

    from lakehouse.base.errors import LakehouseError

    for folder in (sysconfig.get_path("scripts"), str(Path(sys.executable).parent)):
        if (found := Path(folder) / "duckdb").is_file():
            return str(found)
    if found_on_path := shutil.which("duckdb"):
        return found_on_path
    raise LakehouseError("the duckdb command line is not installed: pip install duckdb-cli (make install does)")


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
@clear_errors
def shell(ctx: typer.Context, lake: LakeOption = None, as_of: AsOfOption = None) -> None:
    """Open the `duckdb` command line on the lake, read-only, its views ready to query (`.tables`,
    `select ... from swf.jobs_clean`); any number of shells can read while an ingest writes. Words after
    `--` go to duckdb itself (`-c "SQL"` runs one query and exits, `-csv` prints CSV).

    A shell reads the lake as it was when it opened: open another to see a later ingest. Unlike `lakehouse
    sql`, the shell may write files where you point it (`COPY ... TO`): never into the lake's folders.

    Example: `lakehouse shell --lake lake`

    Example: `lakehouse shell -- -c "select log, count(*) from swf.jobs group by log"`
    """
    import os

    target = Lake(lake, snapshot=as_of)
    with target.connect():  # (refuses a missing lake, a broken catalog and one built for another place)
        pass
    line = shell_line(target)
    os.execv(line[0], [*line, *ctx.args])


def shell_line(target: Lake) -> list[str]:
    """The `duckdb` command line that opens the lake read-only (as of its snapshot), before duckdb's own
    words: a lake of the DuckDB catalog's format is its catalog file; a DuckLake lake is attached by
    statements the shell runs before its prompt or `-c`, after loading the extensions from the installed
    wheels (as the connections of `lakehouse.base.ducklake` do).  A team's lake: the catalog's password
    and the object store's keys stay in the environment, which the shell reads (libpq its PGPASSWORD, the
    secret its getenv), never on its command line."""
    command = duckdb_command_line()
    if (ducklake := target.ducklake) is None:
        return [command, "-readonly", str(target.catalog_path)]
    from lakehouse.base.ducklake import ALIAS, object_store_secret_statement
    from lakehouse.base.extensions import opening_statements

    setup = ["-cmd", "; ".join(opening_statements(*ducklake.extensions))]
    if ducklake.on_object_store:  # (its one-row answer, "Success", is not shown)
        setup += ["-cmd", ".output /dev/null", "-cmd", object_store_secret_statement(in_shell=True), "-cmd", ".output"]
    setup += ["-cmd", f"{ducklake.attach_statement(True, target.snapshot)}; USE {ALIAS}"]
    return [command, "-unsigned", *setup]
