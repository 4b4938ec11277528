"""A log's jobs as the lake's views give them (swf.jobs_clean, swf.jobs_strong), in the order the
simulator needs: the ground floor's reader of workloads, which the simulator, the reports and
`export` share without loading the engine."""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import numpy as np

from lakehouse.base.catalog import named_query, sql_literal
from lakehouse.base.conditions import one_condition
from lakehouse.base.errors import LakehouseError, QueryError
from lakehouse.base.lake import Lake
from lakehouse.base.log_names import log_named
from lakehouse.base.prediction_tables import PredictionTableError, table_of_column

if TYPE_CHECKING:
    import polars as pl


#: The column of the walltime predictions `lakehouse report predictions` stores for the simulator.
PREDICTED_WALLTIME = "predicted_walltime"


class View(enum.StrEnum):
    jobs_clean = "jobs_clean"  # the canonical cleaning, as the swf.jobs_clean view defines it
    jobs_strong = "jobs_strong"  # the SC'15 strong filter, as the published runs used


#: The column of swf.logs that holds the machine size each view was filtered with, hence the default for
#: simulating it (the rule itself is written once, in the swf.logs view).
MACHINE_SIZE_COLUMN = {View.jobs_clean: "clean_machine_size", View.jobs_strong: "strong_machine_size"}


def resolve_log(lake: Lake, name: str) -> str:
    """The lake's log `name` names (lakehouse.base.log_names: exact, else a unique prefix); otherwise an error
    naming the logs that exist."""
    return log_named(name, lake.log_names())


def log_jobs(
    lake: Lake,
    log: str,
    view: View = View.jobs_clean,
    where: str | None = None,
    columns: Sequence[str] | None = None,
) -> pl.DataFrame:
    """The jobs of `log` in `swf.<view>`, optionally filtered by an SQL condition, in submit order
    (ties in file order, as the log lists them).

    `columns`: only these (a replay needs six of the view's 25, and DuckDB then reads only those from
    Parquet); None means every column plus `predicted_walltime`.  The stored predictions are joined only
    when `predicted_walltime` is asked for.
    """
    _require_tables(lake, log, columns)
    sql, keep_line = _jobs_sql(log, view, where, columns)
    try:
        jobs = lake.query(sql)
    except QueryError as exc:
        raise QueryError(f"cannot select the jobs of {log}: {exc}") from None
    # Sorted here rather than by an ORDER BY: numpy's lexsort and one gather take ~10 MB on CEA-Curie,
    # where DuckDB's ORDER BY and Polars' two-key sort each take ~50 MB, a sixth of the command's peak.
    # (The cleaned views never hold a NULL submit time or line.)
    if jobs["submit_time"].null_count() == 0 and jobs["line"].null_count() == 0:
        jobs = jobs[np.lexsort((jobs["line"].to_numpy(), jobs["submit_time"].to_numpy()))]
    else:
        jobs = jobs.sort("submit_time", "line", nulls_last=True)
    return jobs if keep_line else jobs.drop("line")


def log_columns(
    lake: Lake,
    log: str,
    view: View = View.jobs_clean,
    where: str | None = None,
    columns: Sequence[str] | None = None,
) -> dict[str, np.ndarray]:
    """`log_jobs` as numpy columns (masked where NULL), in the same order: what `simulate` takes
    without loading Polars first (the command line's replay)."""
    _require_tables(lake, log, columns)
    sql, keep_line = _jobs_sql(log, view, where, columns)
    try:
        jobs = lake.query_numpy(sql)
    except QueryError as exc:
        raise QueryError(f"cannot select the jobs of {log}: {exc}") from None
    submit, line = jobs["submit_time"], jobs["line"]
    if np.ma.is_masked(submit) or np.ma.is_masked(line):
        # NULLs last, as log_jobs sorts them (the cleaned views hold none).
        order = np.lexsort((np.ma.filled(line, 0), np.ma.getmaskarray(line), np.ma.filled(submit, 0),
                            np.ma.getmaskarray(submit)))  # fmt: skip
    else:
        order = np.lexsort((line, submit))
    return {name: column[order] for name, column in jobs.items() if keep_line or name != "line"}


def imported_tables(lake: Lake) -> list[str]:
    """The names of the prediction tables the lake holds (`lakehouse import predictions`)."""
    return [str(row[0]) for row in lake.rows("SELECT DISTINCT name FROM analysis.imported_predictions ORDER BY 1")]


def _require_tables(lake: Lake, log: str, columns: Sequence[str] | None) -> None:
    """Refuse a `table:NAME` the lake does not hold (naming those it does), and one imported for another
    content of `log` (the log ingested again since: its job ids may name other jobs)."""
    wanted = [table for c in columns or [] if (table := table_of_column(c)) is not None]
    if not wanted:
        return
    known = imported_tables(lake)
    for table in wanted:
        if table not in known:
            raise PredictionTableError(
                f"no prediction table named {table!r} in the lake (imported: {', '.join(known) or 'none'}); "
                f"import the table first (lakehouse import predictions FILE --name {table})"
            )
        changed = lake.rows(named_query("prediction_log_changed"), [table, log])
        if changed:
            then, now = changed[0]
            raise PredictionTableError(
                f"table:{table} was imported for {log} as its file was then (SHA-256 {then[:12]}…), and the log "
                f"has been ingested again since from other content ({(now or 'none')[:12]}…): its job ids may name "
                f"other jobs now; import the table again (lakehouse import predictions FILE --name {table})"
            )


def _jobs_sql(log: str, view: View, where: str | None, columns: Sequence[str] | None) -> tuple[str, bool]:
    """The query of `log_jobs` (with `line`, the file order) and whether the caller asked for `line`."""
    view = View(view)
    wanted = None if columns is None else list(dict.fromkeys(columns))
    with_predictions = wanted is None or PREDICTED_WALLTIME in wanted
    # Columns of imported prediction tables (`--predictor table:NAME`), joined like predicted_walltime.
    tables = [(c, t) for c in wanted or [] if (t := table_of_column(c)) is not None]
    joined = {PREDICTED_WALLTIME, *(c for c, _ in tables)}
    view_columns = "*" if wanted is None else ", ".join(_quoted(c) for c in wanted if c not in joined)
    # The log name goes in as a quoted literal, not a bound parameter: with `log = $log` DuckDB cannot
    # push the filter through the views into the Parquet scan and reads every log (CEA-Curie: 4 s
    # instead of 0.1 s).  The literal is escaped by sql_literal, so any name is safe.
    name = sql_literal(log)
    if where:
        where = one_condition(where)
    if where and OFFSET.search(where):
        # `submit_offset`: seconds since the log's first job in this view, for conditions on the
        # log's own timeline ("submit_offset < 30*86400": its first month) whatever its epoch.
        offsets = (
            f"SELECT *, submit_time - min(submit_time) OVER () AS submit_offset FROM swf.{view} WHERE log = {name}"
        )
        selected = f"SELECT {view_columns}, line FROM ({offsets}) WHERE ({where})"
    else:
        condition = f" AND ({where})" if where else ""
        selected = f"SELECT {view_columns}, line FROM swf.{view} WHERE log = {name}{condition}"
    if with_predictions:
        predictions = f"SELECT job_id, predicted_walltime FROM predict.walltimes WHERE source = {name}"
        sql = f"SELECT j.*, p.predicted_walltime FROM ({selected}) AS j LEFT JOIN ({predictions}) AS p USING (job_id)"
    else:
        sql = f"SELECT * FROM ({selected})"
    for column, table in tables:
        imported = (
            # (Bounded before the cast, so that 1e300 is a number the replay caps at the request, not an
            # overflow of the cast.)
            f"SELECT job_id, CAST(round(least(predicted, {2**53})) AS BIGINT) AS {_quoted(column)} "
            "FROM analysis.imported_predictions "
            f"WHERE name = {sql_literal(table)} AND log = {name}"
        )
        sql = f"SELECT * FROM ({sql}) LEFT JOIN ({imported}) USING (job_id)"
    return sql, wanted is None or "line" in wanted


#: The column `--where` may use besides the view's own.
OFFSET = re.compile(r"\bsubmit_offset\b", re.IGNORECASE)


def _quoted(column: str) -> str:
    return '"' + column.replace('"', '""') + '"'


NUMERIC_TYPES = ("BIGINT", "INTEGER", "SMALLINT", "TINYINT", "HUGEINT", "DOUBLE", "FLOAT", "DECIMAL", "UBIGINT")


def column_types(lake: Lake, view: View) -> dict[str, str]:
    """Every column of `swf.<view>` with its DuckDB type."""
    return {str(name): str(kind) for name, kind, *_ in lake.rows(f"DESCRIBE SELECT * FROM swf.{View(view)}")}


def numeric_columns(lake: Lake, view: View) -> list[str]:
    """The numeric columns of `swf.<view>` (what a queue order's formula may read by name)."""
    return [name for name, kind in column_types(lake, view).items() if kind.upper().startswith(NUMERIC_TYPES)]


def order_problem_columns(lake: Lake, view: View) -> tuple[list[str], dict[str, str]]:
    """(the view's numeric columns, its others with their types): what `check_order_columns` takes."""
    types = column_types(lake, view)
    numeric = [name for name, kind in types.items() if kind.upper().startswith(NUMERIC_TYPES)]
    return numeric, {name: kind for name, kind in types.items() if name not in numeric}


def log_machine_size(lake: Lake, log: str, view: View = View.jobs_clean) -> int:
    """The log's machine size as its view used it; errors name the logs that exist."""
    # A quoted literal, not a bound parameter: binding a Python value makes DuckDB import pandas (0.45 s
    # of every `lakehouse simulate`).
    rows = lake.rows(f"SELECT {MACHINE_SIZE_COLUMN[View(view)]} AS size FROM swf.logs WHERE log = {sql_literal(log)}")
    if not rows:
        return log_machine_size(lake, resolve_log(lake, log), view)  # a prefix, or an error naming the logs
    (size,) = rows[0]
    if size is None:
        raise LakehouseError(f"{log} has no MaxProcs in its header: give --machine-size")
    return int(cast(int, size))
