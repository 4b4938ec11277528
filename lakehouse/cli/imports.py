"""`lakehouse import predictions`: tables made outside lakehouse, brought into the lake for replays."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lakehouse.base.lake import Lake
from lakehouse.base.render import OutputFormat, emit, stderr
from lakehouse.cli.common import FormatOption, LakeOption, clear_errors, command_group

import_app = command_group("Bring tables made outside lakehouse into the lake (run-time predictions).")


@import_app.command("predictions")
@clear_errors
def import_predictions_command(
    file: Annotated[Path, typer.Argument(help="A .parquet or .csv file (with a header): log, job_id, predicted.")],
    name: Annotated[str, typer.Option("--name", help="The table's name: --predictor table:NAME reads it.")],
    lake: LakeOption = None,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Import run-time predictions made elsewhere (a notebook, another tool) for replays to use.

    The file has one row per job: `log` (as the lake names it), `job_id` and `predicted` (seconds). It is
    checked whole first: a missing column, an empty or negative or non-finite prediction, a job listed
    twice, a log the lake lacks or a job its log lacks refuses the file with one line naming its row, and
    nothing is stored. Then `--predictor table:NAME` replays with these predictions (rounded to whole
    seconds; a job without one uses its request, and the replay says how many). Importing again under the
    same name replaces the table; campaigns key their runs by the predictions themselves, so a changed
    table never mixes with runs of the old one. The rows are the view analysis.imported_predictions.

    Example: `lakehouse import predictions medians.csv --name user-median`
    """
    import polars as pl

    from lakehouse.ingest.predictions import import_predictions

    imported = import_predictions(Lake(lake), file, name)
    emit(
        pl.DataFrame(
            {
                "name": [imported.name],
                "jobs": [imported.rows],
                "logs": [imported.logs],
                "content_hash": [imported.content_hash[:16]],
            }
        ),
        fmt,
    )
    stderr.print(f"use it with --predictor table:{imported.name}")


predictions_app = command_group(
    "The prediction tables imported into the lake (`lakehouse import predictions`): list them, drop one."
)


@predictions_app.command("list")
@clear_errors
def list_predictions(lake: LakeOption = None, fmt: FormatOption = OutputFormat.table) -> None:
    """List the imported prediction tables: name, jobs and logs it predicts, the hash of its rows and the
    file it was imported from.  `--predictor table:NAME` replays with one.

    Example: `lakehouse predictions list --format csv`
    """
    import polars as pl

    from lakehouse.ingest.predictions import prediction_tables

    rows = prediction_tables(Lake(lake))
    columns = ["name", "jobs", "logs", "content_hash", "source_file"]
    emit(pl.DataFrame(rows, schema=columns, orient="row"), fmt)


@predictions_app.command("drop")
@clear_errors
def drop_predictions_command(
    name: Annotated[str, typer.Argument(help="The table's name (see `lakehouse predictions list`).")],
    lake: LakeOption = None,
) -> None:
    """Remove an imported prediction table from the lake. Campaign runs that replayed it stay stored
    (their keys hold its predictions); replaying `--predictor table:NAME` again needs it imported again.

    Example: `lakehouse predictions drop user-median`
    """
    from lakehouse.ingest.predictions import drop_predictions

    rows = drop_predictions(Lake(lake), name)
    stderr.print(f"prediction table {name!r} dropped ({rows:,} rows)")
