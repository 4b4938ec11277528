"""Run-time predictions made outside lakehouse, imported as a table that replays read
(`lakehouse import predictions FILE --name NAME`, then `--predictor table:NAME`).

A table is Parquet or CSV (with a header) holding the columns `log`, `job_id` and `predicted` (seconds).
It is checked whole before anything is written: a missing column, a row without a log, a job or a
prediction, a prediction that is negative or not a finite number, a job listed twice, a log the lake
does not hold or a job id that log does not have: each refuses the table with one line naming the file
and the row, and nothing reaches the lake.  A table that passes is stored as one Parquet file of the
`analysis.imported_predictions` view, under the writer lock, replacing an earlier table of that name.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import duckdb

from lakehouse.base.catalog import sql_literal
from lakehouse.base.datasets import DATASETS, PARQUET_OPTIONS
from lakehouse.base.lake import Lake, pending_path
from lakehouse.base.prediction_tables import PredictionTableError, check_name

DATASET = "analysis_imported_predictions"
#: The columns a table must have.
COLUMNS = ("log", "job_id", "predicted")


@dataclass(frozen=True)
class Imported:
    name: str
    rows: int
    logs: int
    content_hash: str


def import_predictions(lake: Lake, path: Path, name: str) -> Imported:
    """Check the table at `path` and store it as the prediction table `name` (see the module)."""
    check_name(name)
    source = _reader(path)
    with lake.writer() as writer:
        con = writer.con
        try:
            _check_columns(con, path, source)
            rows = _checked_rows(con, path, source)
        except duckdb.Error as exc:
            raise PredictionTableError(f"{path}: cannot read it as a table: {str(exc).splitlines()[0]}") from None
        digest = _content_hash(con)
        final = DATASETS[DATASET].file(lake.root, name)
        final.parent.mkdir(parents=True, exist_ok=True)
        written = pending_path(final)
        con.execute(
            f"COPY (SELECT {sql_literal(name)} AS name, log, job_id, predicted, {sql_literal(str(path))} AS "
            f"source_file, {sql_literal(digest)} AS content_hash FROM checked ORDER BY log, job_id) "
            f"TO {sql_literal(str(written))} ({PARQUET_OPTIONS})"
        )
        logs = con.execute("SELECT count(DISTINCT log) FROM checked").fetchone()[0]  # type: ignore[index]
        con.execute("DROP TABLE checked")
        writer.place(DATASET, written, name, rows)
    return Imported(name, rows, int(logs), digest)


def _reader(path: Path) -> str:
    """The DuckDB table function that reads `path` (by its ending)."""
    if not path.is_file():
        raise PredictionTableError(f"{path}: no such file")
    literal = sql_literal(str(path))
    suffixes = "".join(path.suffixes[-2:]).lower()
    if suffixes.endswith(".parquet"):
        return f"read_parquet({literal})"
    if suffixes.endswith((".csv", ".csv.gz", ".tsv")):
        return f"read_csv({literal}, header = true)"
    raise PredictionTableError(f"{path}: a prediction table is a .parquet or .csv file (with a header)")


def _check_columns(con: duckdb.DuckDBPyConnection, path: Path, source: str) -> None:
    found = [row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()]
    missing = [c for c in COLUMNS if c not in found]
    if missing:
        raise PredictionTableError(
            f"{path}: no column {', '.join(missing)} (a prediction table has the columns log, job_id and "
            f"predicted, in seconds; it has {', '.join(found)})"
        )


#: Each check: (a condition a row fails, what the line says).  `row` is the row's number in the file:
#: its line for a CSV (the header is line 1), from 1 for Parquet.
ROW_CHECKS = (
    ("log IS NULL", "has no log"),
    ("job_id IS NULL", "has no job_id (or one that is not a whole number)"),
    ("predicted IS NULL", "has no prediction (or one that is not a number)"),
    ("NOT isfinite(predicted)", "has a prediction that is not a finite number"),
    ("predicted < 0", "has a negative prediction"),
)


def _checked_rows(con: duckdb.DuckDBPyConnection, path: Path, source: str) -> int:
    """Load the table into `checked` and check it; the number of rows."""
    first_row = 2 if "read_csv" in source else 1
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE checked AS SELECT row_number() OVER () - 1 + {first_row} AS row, "
        "CAST(log AS VARCHAR) AS log, TRY_CAST(job_id AS BIGINT) AS job_id, "
        f"TRY_CAST(predicted AS DOUBLE) AS predicted FROM {source}"
    )
    place = "line" if first_row == 2 else "row"
    for condition, says in ROW_CHECKS:
        bad = con.execute(f"SELECT row, log, job_id FROM checked WHERE {condition} ORDER BY row LIMIT 1").fetchone()
        if bad:
            raise PredictionTableError(f"{path}, {place} {bad[0]}: {says}")
    twice = con.execute(
        "SELECT log, job_id, list(row ORDER BY row) FROM checked GROUP BY log, job_id HAVING count(*) > 1 "
        "ORDER BY min(row) LIMIT 1"
    ).fetchone()
    if twice:
        rows = twice[2]
        raise PredictionTableError(
            f"{path}, {place} {rows[1]}: job {twice[1]} of {twice[0]} is listed twice ({place}s "
            f"{', '.join(map(str, rows[:5]))}); give one prediction per job"
        )
    unknown_log = con.execute(
        "SELECT row, log FROM checked WHERE log NOT IN (SELECT log FROM swf.logs) ORDER BY row LIMIT 1"
    ).fetchone()
    if unknown_log:
        known = [row[0] for row in con.execute("SELECT log FROM swf.logs ORDER BY log").fetchall()]
        raise PredictionTableError(
            f"{path}, {place} {unknown_log[0]}: the lake has no log {unknown_log[1]!r} (it has: "
            f"{', '.join(known) or 'none'})"
        )
    unknown_job = con.execute(
        "SELECT c.row, c.log, c.job_id FROM checked c ANTI JOIN swf.jobs j ON j.log = c.log AND j.job_id = c.job_id "
        "ORDER BY c.row LIMIT 1"
    ).fetchone()
    if unknown_job:
        raise PredictionTableError(f"{path}, {place} {unknown_job[0]}: {unknown_job[1]} has no job {unknown_job[2]}")
    return int(con.execute("SELECT count(*) FROM checked").fetchone()[0])  # type: ignore[index]


def _content_hash(con: duckdb.DuckDBPyConnection) -> str:
    """SHA-256 of the rows as stored (log, job_id, predicted), in their stored order."""
    digest = hashlib.sha256()
    cursor = con.execute("SELECT log, job_id, predicted FROM checked ORDER BY log, job_id")
    while batch := cursor.fetchmany(65_536):
        digest.update(repr(batch).encode())
    return digest.hexdigest()
