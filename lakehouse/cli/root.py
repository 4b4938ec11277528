"""The root `lakehouse` command; each module of this package adds its commands to it (`commands` assembles them)."""

from __future__ import annotations

import typer

from lakehouse.cli.common import StrictGroup

app = typer.Typer(
    name="lakehouse",
    help="Job logs and cluster traces as a queryable DuckDB/Parquet lake, for scheduling research.\n\n"
    "Start with `lakehouse demo`, then `lakehouse ingest swf LOGS...` and "
    "`duckdb -readonly lake/lake.duckdb`.",
    cls=StrictGroup,
    no_args_is_help=True,
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def _root() -> None:
    # (No docstring: the help above stays the root's.)  A callback keeps the root a group when the
    # command line loads one command only (`commands.app_for`): typer runs an app of a single command
    # as that command, which would take `simulate` for its first argument.
    pass
