"""Run-time predictions made outside lakehouse, imported as a table that replays read
(`lakehouse import predictions FILE --name NAME`, then `--predictor table:NAME`).

A table is Parquet or CSV (with a header) holding the columns `log`, `job_id` and `predicted` (seconds;
a Parquet duration, as Polars writes a `timedelta`, is read as the seconds it holds).  It is checked
whole before anything is written: a missing column, a table without rows, a column of true/false, a row
without a log, a job or a prediction, a job id that is not a whole number, a prediction that is
negative or not a finite number, a job listed twice, a log the lake does not hold or a job id that log
does not have: each refuses the table with one line naming the file and the row, and nothing reaches
the lake.  A table that passes is stored as one Parquet file of the
`analysis.imported_predictions` view, under the writer lock, replacing an earlier table of that name.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from lakehouse.base.catalog import path_literal, sql_literal
from lakehouse.base.datasets import DATASETS, PARQUET_OPTIONS
from lakehouse.base.lake import Lake
from lakehouse.base.prediction_tables import PredictionTableError, check_name
from lakehouse.base.readable import not_a_file
from lakehouse.base.writer import pending_path

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
            seconds = _check_columns(con, path, source)
            rows = _checked_rows(con, path, source, seconds)
        except duckdb.Error as exc:
            raise PredictionTableError(f"{path}: cannot read it as a table: {str(exc).splitlines()[0]}") from None
        digest = _content_hash(con)
        final = DATASETS[DATASET].file(lake.root, name)
        final.parent.mkdir(parents=True, exist_ok=True)
        written = pending_path(final)
        con.execute(
            f"COPY (SELECT {sql_literal(name)} AS name, c.log, job_id, predicted, {sql_literal(str(path))} AS "
            f"source_file, {sql_literal(digest)} AS content_hash, m.content_hash AS log_content_hash "
            "FROM checked c LEFT JOIN meta.manifest m ON m.dataset = 'swf' AND m.name = c.log "
            f"ORDER BY c.log, job_id) TO {sql_literal(str(written))} ({PARQUET_OPTIONS})"
        )
        logs = con.execute("SELECT count(DISTINCT log) FROM checked").fetchone()[0]  # type: ignore[index]
        con.execute("DROP TABLE checked")
        writer.place(DATASET, written, name, rows)
    return Imported(name, rows, int(logs), digest)


def _reader(path: Path) -> str:
    """The DuckDB table function that reads `path` (by its ending)."""
    if not path.exists():
        raise PredictionTableError(f"{path}: no such file")
    if problem := not_a_file(path):  # a FIFO would block the reader, /dev/zero never end
        raise PredictionTableError(f"{path}: {problem}")
    literal = path_literal(path)
    suffixes = "".join(path.suffixes[-2:]).lower()
    if suffixes.endswith(".parquet"):
        return f"read_parquet({literal})"
    if suffixes.endswith((".csv", ".csv.gz", ".tsv")):
        return f"read_csv({literal}, header = true)"
    raise PredictionTableError(f"{path}: a prediction table is a .parquet or .csv file (with a header)")


#: A Parquet duration's units per second (DuckDB reads a duration column as its count of units).
DURATION_UNITS = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def _check_columns(con: duckdb.DuckDBPyConnection, path: Path, source: str) -> str:
    """Refuse a table without the columns or with true/false in them; the SQL of `predicted` in
    seconds (a Parquet duration divided by its units per second)."""
    types = {str(row[0]): str(row[1]) for row in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    missing = [c for c in COLUMNS if c not in types]
    if missing:
        raise PredictionTableError(
            f"{path}: no column {', '.join(missing)} (a prediction table has the columns log, job_id and "
            f"predicted, in seconds; it has {', '.join(types)})"
        )
    for column in ("job_id", "predicted"):
        if types[column] == "BOOLEAN":
            raise PredictionTableError(f"{path}: column {column} holds true/false, not numbers")
    if "read_parquet" in source:
        import pyarrow as pa
        import pyarrow.parquet as pq

        kind = pq.read_schema(path).field("predicted").type
        if pa.types.is_duration(kind):
            return f"CAST(predicted AS DOUBLE) / {DURATION_UNITS[kind.unit]}"
    return "predicted"


#: Each check: (a condition a row fails, what the line says).  `row` is the row's number in the file:
#: its line for a CSV (the header is line 1), from 1 for Parquet.
ROW_CHECKS = (
    ("log IS NULL", "has no log"),
    ("job_id IS NULL AND given_job_id IS NULL", "has no job_id"),
    ("job_id IS NULL", "has a job_id that is not a whole number"),
    ("predicted IS NULL", "has no prediction (or one that is not a number)"),
    ("NOT isfinite(predicted)", "has a prediction that is not a finite number"),
    ("predicted < 0", "has a negative prediction"),
)


def _checked_rows(con: duckdb.DuckDBPyConnection, path: Path, source: str, seconds: str) -> int:
    """Load the table into `checked` and check it; the number of rows.  `seconds`: the SQL of the
    prediction in seconds."""
    # `row`: the record's number from 1 (a Parquet row as such; a CSV record is named by its line, `_at`).
    given = "TRY_CAST(job_id AS DOUBLE)"  # (a job id is taken only whole: casting 1.5 to BIGINT gives 2)
    con.execute(
        "CREATE OR REPLACE TEMP TABLE checked AS SELECT row_number() OVER () AS row, "
        f"CAST(log AS VARCHAR) AS log, CAST(job_id AS VARCHAR) AS given_job_id, "
        f"CASE WHEN {given} = floor({given}) THEN TRY_CAST({given} AS BIGINT) END AS job_id, "
        f"TRY_CAST({seconds} AS DOUBLE) AS predicted FROM {source}"
    )
    place = "line" if "read_csv" in source else "row"

    def at(*records: int) -> str:
        """The records' places as the user counts them: CSV lines (from 1, the header's included), or rows."""
        return ", ".join(str(n) for n in (_csv_lines(path, records) if place == "line" else records))

    if not con.execute("SELECT count(*) FROM checked").fetchone()[0]:  # type: ignore[index]
        raise PredictionTableError(f"{path}: the table has no rows (a prediction table has one row per job)")
    for condition, says in ROW_CHECKS:
        bad = con.execute(f"SELECT row, given_job_id FROM checked WHERE {condition} ORDER BY row LIMIT 1").fetchone()
        if bad:
            given = f" ({bad[1]})" if "whole number" in says else ""
            raise PredictionTableError(f"{path}, {place} {at(bad[0])}: {says}{given}")
    twice = con.execute(
        "SELECT log, job_id, list(row ORDER BY row) FROM checked GROUP BY log, job_id HAVING count(*) > 1 "
        "ORDER BY min(row) LIMIT 1"
    ).fetchone()
    if twice:
        rows = twice[2]
        raise PredictionTableError(
            f"{path}, {place} {at(rows[1])}: job {twice[1]} of {twice[0]} is listed twice ({place}s "
            f"{at(*rows[:5])}); give one prediction per job"
        )
    unknown_log = con.execute(
        "SELECT row, log FROM checked WHERE log NOT IN (SELECT log FROM swf.logs) ORDER BY row LIMIT 1"
    ).fetchone()
    if unknown_log:
        known = [row[0] for row in con.execute("SELECT log FROM swf.logs ORDER BY log").fetchall()]
        raise PredictionTableError(
            f"{path}, {place} {at(unknown_log[0])}: the lake has no log {unknown_log[1]!r} (it has: "
            f"{', '.join(known) or 'none'})"
        )
    unknown_job = con.execute(
        "SELECT c.row, c.log, c.job_id FROM checked c ANTI JOIN swf.jobs j ON j.log = c.log AND j.job_id = c.job_id "
        "ORDER BY c.row LIMIT 1"
    ).fetchone()
    if unknown_job:
        raise PredictionTableError(
            f"{path}, {place} {at(unknown_job[0])}: {unknown_job[1]} has no job {unknown_job[2]}"
        )
    return int(con.execute("SELECT count(*) FROM checked").fetchone()[0])  # type: ignore[index]


def _csv_lines(path: Path, records: Sequence[int]) -> list[int]:
    """The line each of a CSV file's records (numbered from 1 after the header) begins on, as an editor
    counts lines: DuckDB skips blank lines and a quoted field may span lines, so the record's number is
    not its line.  Read again only to name a refused record."""
    wanted = set(records)
    found: dict[int, int] = {}
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace", newline="") as file:
        reader = csv.reader(file, delimiter="\t" if path.name.lower().endswith(".tsv") else ",")
        next(reader, None)  # the header
        record, before = 0, reader.line_num
        for fields in reader:
            if fields:  # (a blank line is no record)
                record += 1
                if record in wanted:
                    found[record] = before + 1
                    if len(found) == len(wanted):
                        break
            before = reader.line_num
    return [found.get(n, n + 1) for n in records]


def _content_hash(con: duckdb.DuckDBPyConnection) -> str:
    """SHA-256 of the rows as stored (log, job_id, predicted), in their stored order."""
    digest = hashlib.sha256()
    cursor = con.execute("SELECT log, job_id, predicted FROM checked ORDER BY log, job_id")
    while batch := cursor.fetchmany(65_536):
        digest.update(repr(batch).encode())
    return digest.hexdigest()


def prediction_tables(lake: Lake) -> list[tuple[str, int, int, str, str]]:
    """Every imported table: (name, jobs, logs, content hash, file imported), by name."""
    return lake.rows(
        "SELECT name, count(*), count(DISTINCT log), any_value(content_hash), any_value(source_file) "
        "FROM analysis.imported_predictions GROUP BY name ORDER BY name"
    )


def drop_predictions(lake: Lake, name: str) -> int:
    """Remove the imported table `name` from the lake; its rows.  An unknown name is refused, naming
    the tables there are."""
    tables = {row[0]: row[1] for row in prediction_tables(lake)}
    if name not in tables:
        raise PredictionTableError(
            f"no prediction table named {name!r} in the lake (imported: {', '.join(tables) or 'none'})"
        )
    with lake.writer() as writer:
        writer.remove(DATASET, name)
    return int(tables[name])
