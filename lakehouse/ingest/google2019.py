"""Ingest Google's clusterdata-2019 shards (trace v3): JSON or Parquet exports -> one Parquet file per shard.

A shard is `<table>-NNNNNNNNNNNN.json.gz` or `….parquet.gz` (plain Parquet despite its name) of one cell
(`a`..`h`, from a folder named `cell_a` or `clusterdata_2019_a`, or `--cell`).  Each is decoded by the
rule of `google2019_format` (quoted integers, left-out fields) and checked row by row; a row that breaks
the documented schema (an unknown enum code, a negative time that is not a sentinel, a histogram of the
wrong length or out of order, a field of another table) goes to the quarantine with its reason and line.
A shard that is not what its name says (a cut gzip stream, an error page, another table's Parquet)
fails alone, naming the file, and nothing of it is committed.

The JSON and the Parquet export of a shard are the same rows: both are stored under the shard's number
(`a.000000000000`), so ingesting the twin replaces the first, never adds to it.  The pipeline (resume,
Ctrl-C, the single writer) is every ingest's (`lakehouse.ingest.pipeline`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl
import pyarrow.parquet as pq

from lakehouse.base.catalog import path_literal, sql_literal
from lakehouse.base.datasets import DATASETS, PARQUET_OPTIONS, ingest_outputs
from lakehouse.base.errors import BrokenFileError, LakehouseError
from lakehouse.base.google2019_format import CONSTRAINT_RELATIONS, TABLES, Field, cell_problem, export_keys
from lakehouse.base.lake import Lake, count
from lakehouse.ingest.google import PartResult, decompress, outcome_counts, results_frame
from lakehouse.ingest.input_files import files_under, not_a_file
from lakehouse.ingest.pipeline import Outcome, Task
from lakehouse.ingest.trace_files import copy_quarantine, discard, ingest_each_file, refuse_if_nothing_kept

SHARD_NAME = re.compile(r"^(?P<table>[a-z_]+)-(?P<number>\d{12})\.(?P<format>json|parquet)(?:\.gz)?$")
CELL_FOLDER = re.compile(r"^(?:cell[_-]?|clusterdata_2019_)(?P<cell>[a-h])$")
DATASET_PREFIX = "google2019."


@dataclass(frozen=True)
class Shard:
    table: str
    cell: str
    number: str
    format: str  # json | parquet
    path: Path

    @property
    def name(self) -> str:
        """Its name in the lake: the cell and the number, whatever its format (twins share it)."""
        return f"{self.cell}.{self.number}"


def cell_of(path: Path, cell: str | None) -> str | None:
    if cell is not None:
        return cell
    for folder in path.absolute().parents:
        if match := CELL_FOLDER.match(folder.name):
            return match.group("cell")
    return None


def discover_shards(paths: Iterable[Path], cell: str | None = None) -> list[Task]:
    """One task per shard under `paths` (files or folders, searched to any depth), in path order; an
    entry that cannot be ingested is a task with its problem (reported, not recorded)."""
    if cell is not None and (problem := cell_problem(cell)):
        raise LakehouseError(problem)
    files = files_under(paths)
    tasks: list[Task] = []
    seen: dict[tuple[str, str], Path] = {}
    for path in files:
        match = SHARD_NAME.match(path.name)
        table = match.group("table") if match else ""
        if not match or table not in TABLES:
            why = (
                f"{path}: not a shard of the 2019 trace (expected <table>-NNNNNNNNNNNN.json.gz or .parquet.gz, "
                f"<table> one of {', '.join(TABLES)})"
            )
            tasks.append(Task(f"{DATASET_PREFIX}{table or '?'}", path.name, path, problem=why))
            continue
        shard_cell = cell_of(path, cell)
        dataset = f"{DATASET_PREFIX}{table}"
        if shard_cell is None:
            why = f"{path}: which cell? (name its folder cell_a .. cell_h, or give --cell)"
            tasks.append(Task(dataset, path.name, path, problem=why))
            continue
        shard = Shard(table, shard_cell, match.group("number"), match.group("format"), path)
        if (unusable := not_a_file(path)) is not None:
            tasks.append(Task(dataset, shard.name, path, problem=f"{path}: {unusable}"))
            continue
        if (first := seen.setdefault((dataset, shard.name), path)) != path:
            why = f"{path}: the same shard as {first} (a JSON and a Parquet export of it): ingest one of them"
            tasks.append(Task(dataset, shard.name, path, problem=why))
            continue
        tasks.append(Task(dataset, shard.name, path))
    if not tasks:
        raise LakehouseError(f"{', '.join(map(str, paths))}: no shards of the 2019 trace found")
    return tasks


def shard_of(task: Task) -> Shard:
    match = SHARD_NAME.match(task.path.name)
    assert match is not None  # (discover_shards made the task from it)
    cell, number = task.name.split(".")
    return Shard(match.group("table"), cell, number, match.group("format"), task.path)


# --- decoding: one SELECT per table and format, from the declarations -------------------------------
# Three layers, so that each value is extracted once: the export's values as they are (`r_<column>`,
# and `p_<message>` for a message's presence), then typed by the decoding rule, then the reasons.


def _raw(field: Field, fmt: str) -> str:
    """The field's value as the export has it: text from the JSON (the row transformed once, `t`), the
    column from Parquet."""
    return ".".join(["t", *(f'"{part}"' for part in field.path)] if fmt == "json" else (f'"{p}"' for p in field.path))


def _presence(message: str, fmt: str) -> str:
    return f't."{message}" IS NOT NULL' if fmt == "json" else f'"{message}" IS NOT NULL'


def _structure(table: str) -> str:
    """The shape json_transform reads a row of `table` into, in one pass (extracting field by field
    parsed the row again for each): every scalar as text (quoted or not, the casts come after), a list
    or the constraints as JSON, a message as an object of texts."""
    shape: dict[str, object] = {}
    for field in TABLES[table]:
        kind = "JSON" if field.type.endswith("[]") else "VARCHAR"
        if len(field.path) > 1:
            members = shape.setdefault(field.path[0], {})
            assert isinstance(members, dict)
            members[field.path[1]] = kind
        else:
            shape[field.name] = kind
    if table == "instance_events":
        shape["constraint"] = "JSON"
    return sql_literal(json.dumps(shape))


def _cast(field: Field) -> str:
    """The field's value as its type, NULL where absent or unreadable (`_problems` tells them apart)."""
    return f'TRY_CAST("r_{field.name}" AS {field.type}) AS "v_{field.name}"'


def _typed(field: Field) -> str:
    cast = f'"v_{field.name}"'
    if len(field.path) > 1:  # a member of a message: NULL without the message, 0 when left out of it
        return f'CASE WHEN "p_{field.path[0]}" THEN coalesce({cast}, 0) END'
    return cast if field.absent is None else f"coalesce({cast}, {field.absent})"


def _problems(field: Field) -> list[tuple[str, str]]:
    """(condition, reason) pairs in SQL: the reason (text) applies where the condition holds."""
    raw, value, name = f'"r_{field.name}"', f'"{field.name}"', field.name
    problems = [
        (
            f'{raw} IS NOT NULL AND "v_{name}" IS NULL',
            f"'{name}: ' || left({raw}::VARCHAR, 40) || ' is not a {field.type}'",
        )
    ]
    if field.values is not None:
        codes = ", ".join(map(str, field.values))
        problems.append(
            (
                f"{value} NOT IN ({codes})",
                f"'{name}: unknown code ' || {value} || ' (the proto has {min(field.values)}-{max(field.values)})'",
            )
        )
    if field.time:
        problems.append((f"{value} < 0", f"'{name}: negative (' || {value} || '), not a time of the trace'"))
    if field.length is not None:
        problems.append(
            (
                f"len({value}) <> {field.length}",
                f"'{name}: ' || len({value}) || ' values, not the documented {field.length}'",
            )
        )
        problems.append(
            (f"len({value}) = {field.length} AND list_sort({value}) <> {value}", f"'{name}: not in increasing order'")
        )
    return problems


def _reason(problems: list[tuple[str, str]]) -> str:
    """Every reason that applies, joined by '; ', or NULL.  The text is built for the bad rows only:
    built on every row, it measured a quarter of the decoding."""
    any_problem = " OR ".join(f"coalesce({condition}, false)" for condition, _ in problems)
    texts = ", ".join(f"CASE WHEN {condition} THEN {text} END" for condition, text in problems)
    return f"CASE WHEN {any_problem} THEN concat_ws('; ', {texts}) END"


CONSTRAINT_TYPE = "STRUCT(name VARCHAR, value VARCHAR, relation VARCHAR)[]"


def decode_sql(table: str, fmt: str, source: str) -> str:
    """SELECT of every declared column, `line` and `reason` (NULL for a good row) from `source` (JSON: a
    relation of `line`, `raw`; Parquet: the file with `file_row_number`).  The raw rows are not kept:
    `raw_sql` reads them again for the rejected rows only (a shard's text held for every row measured
    a third of the ingest's time)."""
    fields = TABLES[table]
    messages = dict.fromkeys(f.path[0] for f in fields if len(f.path) > 1)
    extracted = [f'{_raw(f, fmt)} AS "r_{f.name}"' for f in fields]
    extracted += [f'{_presence(m, fmt)} AS "p_{m}"' for m in messages]
    casts = [_cast(f) for f in fields]
    typed = [f'{_typed(f)} AS "{f.name}"' for f in fields]
    problems = [problem for f in fields for problem in _problems(f)]
    if fmt == "json":
        keys = ", ".join(sql_literal(k) for k in export_keys(table))
        alien = f"list_filter(json_keys(j), k -> NOT list_contains([{keys}], k))"
        extracted.append(f"CASE WHEN kind = 'OBJECT' THEN {alien} END AS alien_keys")
        empty = "raw IS NULL OR trim(raw) = ''"
        problems = [
            (empty, "'an empty line'"),
            (f"NOT ({empty}) AND (j IS NULL OR kind <> 'OBJECT')", "'not a JSON object'"),
            ("len(alien_keys) > 0", f"'fields that {table} does not have: ' || array_to_string(alien_keys, ', ')"),
            *problems,
        ]
        # (A JSON value is text to DuckDB: each json_* function parses it again, so each runs once here.)
        frame = (
            f"(SELECT line, raw, j, json_type(j) AS kind, json_transform(j, {_structure(table)}) AS t "
            f"FROM (SELECT line, raw, TRY_CAST(raw AS JSON) AS j FROM {source}))"
        )
        provenance = "line, raw, j, kind"
    else:
        frame, provenance = f"(SELECT file_row_number + 1 AS line, * FROM {source})", "line"
    if table == "instance_events":
        constraint = 't."constraint"' if fmt == "json" else '"constraint"'
        extracted.append(f"{constraint} AS r_constraint")
        typed.append(f"TRY_CAST(r_constraint AS {CONSTRAINT_TYPE}) AS constraints")
        codes = ", ".join(sql_literal(str(code)) for code in CONSTRAINT_RELATIONS)
        unknown = f"list_filter(constraints, c -> NOT list_contains([{codes}], coalesce(c.relation, '0')))"
        problems.append(("r_constraint IS NOT NULL AND constraints IS NULL", "'constraint: not a list of constraints'"))
        problems.append((f"len({unknown}) > 0", "'constraint: a relation the proto does not have'"))
    raws = f"SELECT {provenance}, {', '.join(extracted)} FROM {frame}"
    values = f"SELECT *, {', '.join(casts)} FROM ({raws})"
    types = f"SELECT *, {', '.join(typed)} FROM ({values})"
    kept = ", ".join([*(f'"{f.name}"' for f in fields), *(["constraints"] if table == "instance_events" else [])])
    return f"SELECT {kept}, line, {_reason(problems)} AS reason FROM ({types})"


def raw_sql(fmt: str, source: str) -> str:
    """Each row of `source` as the shard has it (`line`, `raw`): a JSON line, or a Parquet row as JSON."""
    if fmt == "json":
        return f"SELECT line, raw FROM {source}"
    return f"SELECT file_row_number + 1 AS line, to_json(r)::VARCHAR AS raw FROM {source} AS r"


def _json_lines(path: Path, numbered: bool = True) -> str:
    """A JSON shard's lines, numbered (DuckDB reads it as one text column: no delimiter, no quotes).
    Unnumbered, a query that needs a few lines reads only those (the numbering reads them all).  A line
    may hold 4 MiB (a row is under a kilobyte); the reader's buffer is 8 MiB: DuckDB's default for a
    16 MiB line was a 256 MiB block, more than a worker's share of a 1 GB budget."""
    lines = (
        f"read_csv({path_literal(path)}, columns = {{'raw': 'VARCHAR'}}, delim = '\x01', quote = '', escape = '', "
        "header = false, auto_detect = false, strict_mode = false, max_line_size = 4194304, buffer_size = 8388608)"
    )
    return f"(SELECT row_number() OVER () AS line, raw FROM {lines})" if numbered else f"(SELECT raw FROM {lines})"


def _check_json_shard(shard: Shard, con: duckdb.DuckDBPyConnection) -> None:
    """Refuse a JSON shard that is not one of its table: gzip checked to its end (DuckDB reads a cut
    stream without a word), the first line an object of the table's fields."""
    if shard.path.name.endswith(".gz"):
        decompress(shard.path)
    lines = _json_lines(shard.path, numbered=False)
    first = con.execute(f"SELECT raw, TRY_CAST(raw AS JSON) FROM {lines} WHERE trim(raw) <> '' LIMIT 1").fetchone()
    if first is None:
        raise BrokenFileError(str(shard.path), "an empty shard (no rows)")
    raw, parsed = first
    if parsed is None or not str(parsed).lstrip().startswith("{"):
        raise BrokenFileError(
            str(shard.path), f"not JSON lines (its first line begins {raw[:40]!r}: an error page?): not ingested"
        )
    keys = con.execute("SELECT json_keys(?::JSON)", [parsed]).fetchone()[0]  # type: ignore[index]
    alien = [k for k in keys if k not in export_keys(shard.table)]
    if alien and not set(keys) & set(export_keys(shard.table)) - {"time"} or len(alien) > len(keys) // 2:
        raise BrokenFileError(
            str(shard.path),
            f"its first row has fields {', '.join(alien)} that {shard.table} does not have "
            "(a shard of another table?): not ingested",
        )


def _check_parquet_shard(shard: Shard) -> list[str]:
    """Refuse a Parquet shard without the table's columns; warn of columns the proto lacks."""
    try:
        names = pq.ParquetFile(shard.path).schema_arrow.names
    except Exception as exc:  # pyarrow raises several kinds for a file that is not Parquet or is cut
        raise BrokenFileError(str(shard.path), f"not a readable Parquet file ({str(exc).splitlines()[0]})") from None
    wanted = export_keys(shard.table)
    if missing := [k for k in wanted if k not in names and k != "constraint"]:
        raise BrokenFileError(
            str(shard.path),
            f"a Parquet file without the columns {', '.join(missing)} of {shard.table} "
            f"(it has {', '.join(names)}): not ingested",
        )
    return (
        [f"columns not in the trace's format, not kept: {', '.join(extra)}"]
        if (extra := [n for n in names if n not in wanted])
        else []
    )


def write_shard(lake: Lake, shard: Shard, share: float = 1.0) -> Outcome:
    """Decode one shard, write its rows (and constraints) and its quarantined rows aside; the outcome
    lists the renames that commit them."""
    dataset = f"{DATASET_PREFIX}{shard.table}"
    outputs = [(key, DATASETS[key].file(lake.root, stem)) for key, stem in ingest_outputs(dataset, shard.name)]
    aside = [(final.with_name(f".{final.name}.tmp"), final) for _, final in outputs]
    table_tmp, quarantine_tmp = aside[0][0], aside[-1][0]
    warnings: list[str] = []
    try:
        with lake.scratch("google2019", share, threads=1) as con:
            if shard.format == "json":
                _check_json_shard(shard, con)
                source = _json_lines(shard.path)
            else:
                warnings = _check_parquet_shard(shard)
                source = f"read_parquet({path_literal(shard.path)}, file_row_number = true)"
            try:
                con.execute(f"CREATE TEMP TABLE decoded AS {decode_sql(shard.table, shard.format, source)}")
            except duckdb.Error as exc:
                raise BrokenFileError(str(shard.path), str(exc).strip().splitlines()[0]) from None
            names = ", ".join(f'"{f.name}"' for f in TABLES[shard.table])
            provenance = f"{sql_literal(shard.cell)} AS cell, {sql_literal(shard.number)} AS shard, line"
            con.execute(
                f"COPY (SELECT {names}, {provenance} FROM decoded WHERE reason IS NULL ORDER BY line) "
                f"TO {sql_literal(str(table_tmp))} ({PARQUET_OPTIONS})"
            )
            if shard.table == "instance_events":
                con.execute(
                    "COPY (SELECT time, collection_id, instance_index, c.name, c.value, "
                    "coalesce(c.relation, '0')::SMALLINT AS relation, "
                    f"{provenance} FROM (SELECT *, unnest(constraints) AS c FROM decoded WHERE reason IS NULL) "
                    f"ORDER BY line) TO {sql_literal(str(aside[1][0]))} ({PARQUET_OPTIONS})"
                )
            rows = count(con, "SELECT count(*) FROM decoded WHERE reason IS NULL")
            quarantined = count(con, "SELECT count(*) FROM decoded WHERE reason IS NOT NULL")
            copy_quarantine(
                con, shard.table, shard.name, shard.path, raw_sql(shard.format, source), quarantined, quarantine_tmp
            )
    except BaseException:
        discard(aside)
        raise
    refuse_if_nothing_kept(aside, shard.path, rows, quarantined, shard.table)
    # The quarantine first, the rows last: a crash between the renames leaves no rows without their record.
    return Outcome(
        rows_in=rows + quarantined,
        rows_out=rows,
        quarantined=quarantined,
        warnings=warnings,
        renames=[aside[-1], *aside[1:-1], aside[0]],
    )


def ingest_google2019(
    lake: Lake,
    paths: Iterable[Path],
    cell: str | None = None,
    force: bool = False,
    workers: int | None = None,
    on_shard: Callable[[PartResult, int], None] | None = None,
) -> list[PartResult]:
    """Ingest 2019 shards; one result per shard (and per unusable entry)."""
    tasks = discover_shards(list(paths), cell)

    def write(lake: Lake, task: Task, share: float) -> Outcome:
        return write_shard(lake, shard_of(task), share)

    return ingest_each_file(lake, tasks, DATASET_PREFIX, write, force, workers, on_shard)


def tables_frame(results: list[PartResult]) -> pl.DataFrame:
    """One row per cell and table (shards ok, unchanged and failed; rows and quarantined rows): what
    `lakehouse ingest google-2019` prints.  A shard's part is `cell.number` (else the file's name)."""
    shards = results_frame(results).select(
        pl.when(pl.col("part").str.contains(r"^[a-h]\.\d{12}$"))
        .then(pl.col("part").str.slice(0, 1))
        .otherwise(pl.lit("?"))
        .alias("cell"),
        pl.exclude("part"),
    )
    return outcome_counts(shards, ["cell", "table"], "shards")
