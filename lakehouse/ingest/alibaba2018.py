"""Ingest Alibaba's cluster-trace-v2018: headerless CSV files -> one Parquet file per input file.

A file is `<table>.csv` or `.csv.gz` (or a piece, `<table>_part2.csv.gz`), its table told by its name and
checked against its first row's shape (lakehouse.base.alibaba2018_format declares the tables).  Each line
is split on commas (the trace quotes nothing) and each field cast by the declarations; a line with too
few or too many fields, a field that is not of its type, or a value outside its documented range goes to
alibaba2018.quarantine with its line number and reason.  A file whose first row is another table's, a cut
gzip stream, or a file of which no line is a row of its table fails alone, naming the file.  The pipeline
is every ingest's: a file commits whole or not at all, unchanged files are skipped, Ctrl-C and crashes
leave the lake as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import duckdb
import polars as pl

from lakehouse.base.alibaba2018_format import FILE_NAME, TABLES, Column, looks_like
from lakehouse.base.catalog import path_literal, sql_literal
from lakehouse.base.datasets import DATASETS, PARQUET_OPTIONS, ingest_outputs
from lakehouse.base.errors import BrokenFileError, LakehouseError
from lakehouse.base.lake import Lake, count
from lakehouse.ingest.google import PartResult, decompress, outcome_counts, results_frame
from lakehouse.ingest.input_files import files_under, not_a_file
from lakehouse.ingest.pipeline import Outcome, Task
from lakehouse.ingest.trace_files import copy_quarantine, discard, ingest_each_file, refuse_if_nothing_kept

DATASET_PREFIX = "alibaba2018."


def discover_files(paths: Iterable[Path]) -> list[Task]:
    """One task per file of the trace under `paths` (files or folders, searched to any depth); an entry
    that cannot be ingested is a task with its problem (reported, not recorded)."""
    files = files_under(paths, "*.csv*")
    tasks = []
    for path in files:
        match = FILE_NAME.match(path.name)
        if match is None:
            why = (
                f"{path}: not a file of the trace (expected <table>.csv or .csv.gz, <table> one of {', '.join(TABLES)})"
            )
            tasks.append(Task(f"{DATASET_PREFIX}?", path.name, path, problem=why))
            continue
        name = path.name.removesuffix(".gz").removesuffix(".csv")
        dataset = f"{DATASET_PREFIX}{match.group('table')}"
        unusable = not_a_file(path)
        tasks.append(Task(dataset, name, path, problem=None if unusable is None else f"{path}: {unusable}"))
    if not tasks:
        raise LakehouseError(f"{', '.join(map(str, paths))}: no files of Alibaba's 2018 trace found")
    return tasks


def _lines(path: Path) -> str:
    """The file's lines, numbered, as one text column (no delimiter, no quotes)."""
    text = (
        f"read_csv({path_literal(path)}, columns = {{'raw': 'VARCHAR'}}, delim = '\x01', quote = '', escape = '', "
        "header = false, auto_detect = false, strict_mode = false)"
    )
    return f"(SELECT row_number() OVER () AS line, raw FROM {text})"


def _problems(column: Column, index: int) -> list[tuple[str, str]]:
    """(condition, reason) pairs in SQL for one column, the field f[index]."""
    field, value, name = f"f[{index}]", f'"{column.name}"', column.name
    problems = [(f"{field} <> '' AND {value} IS NULL", f"'{name}: ' || left({field}, 40) || ' is not a {column.type}'")]
    if column.low is not None and column.high is not None:
        outside = f"({value} < {column.low} OR {value} > {column.high})"
        if column.abnormal:
            outside += f" AND {value} NOT IN ({', '.join(map(str, column.abnormal))})"
        problems.append((outside, f"'{name}: ' || {value} || ' outside [{column.low:g}, {column.high:g}]'"))
    return problems


def decode_sql(table: str, source: str) -> str:
    """SELECT of every declared column, `line` and `reason` (NULL for a good row) from `source` (line, raw)."""
    columns = TABLES[table]
    width = len(columns)
    typed = ", ".join(f"TRY_CAST(nullif(f[{i}], '') AS {c.type}) AS \"{c.name}\"" for i, c in enumerate(columns, 1))
    problems = [
        ("raw IS NULL OR trim(raw) = ''", "'an empty line'"),
        (f"len(f) <> {width} AND trim(raw) <> ''", f"len(f) || ' fields, not the {width} of {table}'"),
    ]
    problems += [p for i, c in enumerate(columns, 1) for p in _problems(c, i)]
    fitting = f"len(f) = {width}"
    any_problem = " OR ".join(f"coalesce({condition}, false)" for condition, _ in problems)
    texts = ", ".join(
        f"CASE WHEN {condition} THEN {text} END" if k < 2 else f"CASE WHEN {fitting} AND {condition} THEN {text} END"
        for k, (condition, text) in enumerate(problems)
    )
    names = ", ".join(f'"{c.name}"' for c in columns)
    return (
        f"SELECT {names}, line, CASE WHEN {any_problem} THEN concat_ws('; ', {texts}) END AS reason "
        f"FROM (SELECT line, raw, f, {typed} FROM (SELECT line, raw, string_split(raw, ',') AS f FROM {source}))"
    )


def _check_file(task: Task, table: str, con: duckdb.DuckDBPyConnection) -> None:
    """Refuse a file that is not of its table: gzip checked to its end (DuckDB reads a cut stream
    without a word), its first row shaped as a row of the table its name gives."""
    if task.path.name.endswith(".gz"):
        decompress(task.path)
    lines = _lines(task.path).replace("row_number() OVER () AS line, ", "")  # (the first line: no numbering)
    first = con.execute(f"SELECT raw FROM {lines} WHERE trim(raw) <> '' LIMIT 1").fetchone()
    if first is None:
        raise BrokenFileError(str(task.path), "an empty file (no rows)")
    fields = first[0].split(",")
    candidates = looks_like(fields)
    if table not in candidates:
        seems = f"it looks like {' or '.join(candidates)}" if candidates else "it looks like no table of the trace"
        raise BrokenFileError(
            str(task.path),
            f"its first row has {len(fields)} fields ({first[0][:60]!r}), not a row of {table} "
            f"({len(TABLES[table])} fields): {seems}; not ingested",
        )


def write_file(lake: Lake, task: Task, share: float = 1.0) -> Outcome:
    """Decode one file, write its rows and its quarantined rows aside; the outcome lists the renames."""
    table = task.dataset.removeprefix(DATASET_PREFIX)
    outputs = [(key, DATASETS[key].file(lake.root, stem)) for key, stem in ingest_outputs(task.dataset, task.name)]
    aside = [(final.with_name(f".{final.name}.tmp"), final) for _, final in outputs]
    table_tmp, quarantine_tmp = aside[0][0], aside[-1][0]
    try:
        with lake.scratch("alibaba2018", share, threads=1) as con:
            _check_file(task, table, con)
            source = _lines(task.path)
            con.execute(f"CREATE TEMP TABLE decoded AS {decode_sql(table, source)}")
            names = ", ".join(f'"{c.name}"' for c in TABLES[table])
            con.execute(
                f"COPY (SELECT {names}, {sql_literal(task.name)} AS part, line FROM decoded WHERE reason IS NULL "
                f"ORDER BY line) TO {sql_literal(str(table_tmp))} ({PARQUET_OPTIONS})"
            )
            rows = count(con, "SELECT count(*) FROM decoded WHERE reason IS NULL")
            quarantined = count(con, "SELECT count(*) FROM decoded WHERE reason IS NOT NULL")
            lines = f"SELECT line, raw FROM {source}"
            copy_quarantine(con, table, task.name, task.path, lines, quarantined, quarantine_tmp)
    except duckdb.Error as exc:
        discard(aside)
        raise BrokenFileError(str(task.path), str(exc).strip().splitlines()[0]) from None
    except BaseException:
        discard(aside)
        raise
    refuse_if_nothing_kept(aside, task.path, rows, quarantined, table)
    return Outcome(rows_in=rows + quarantined, rows_out=rows, quarantined=quarantined, renames=[aside[-1], aside[0]])


def ingest_alibaba2018(
    lake: Lake,
    paths: Iterable[Path],
    force: bool = False,
    workers: int | None = None,
    on_file: Callable[[PartResult, int], None] | None = None,
) -> list[PartResult]:
    """Ingest the trace's files; one result per file (and per unusable entry)."""
    return ingest_each_file(lake, discover_files(list(paths)), DATASET_PREFIX, write_file, force, workers, on_file)


def tables_frame(results: list[PartResult]) -> pl.DataFrame:
    """One row per table (files ok, unchanged and failed; rows and quarantined lines): what `lakehouse
    ingest alibaba-2018` prints."""
    return outcome_counts(results_frame(results), ["table"], "files")
