"""The names of imported prediction tables (`lakehouse import predictions`, `--predictor table:NAME`):
what a replay's settings and the jobs' query need, without the importer (and DuckDB) behind them."""

from __future__ import annotations

import re

from lakehouse.base.errors import LakehouseError

#: A table's name: what `--predictor table:NAME` and the view's `name` column say.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
TABLE_PREFIX = "table:"


class PredictionTableError(LakehouseError, ValueError):
    """A prediction table that cannot be imported (the message names the file and the row)."""


def check_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise PredictionTableError(
            f"{name!r} cannot name a prediction table: 1 to 64 letters, digits, '_', '-' or '.', starting "
            "with a letter or a digit"
        )
    return name


def prediction_column(name: str) -> str:
    """The column of a replay's jobs that holds the predictions of table `name`."""
    return f"predicted_by_{name}"


def table_of_column(column: str) -> str | None:
    """The table a `prediction_column` reads, if it is one."""
    return column.removeprefix("predicted_by_") if column.startswith("predicted_by_") else None
