"""The Google cluster trace clusterdata-2011-2: its tables and columns, from the official schema.csv.

The schema file ships with the package (lakehouse/data/google_schema.csv, the trace's own text with LF
line ends).  Column names are the schema's "content" in snake_case ("job ID" -> job_id, "disk I/O
time" -> disk_io_time); they are a public schema and never renamed silently.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

import pyarrow as pa

from lakehouse.base.traces import Trace

#: DuckDB and Arrow types of the schema's formats.  Hashes stay strings; "STRING_HASH_OR_INTEGER"
#: (attribute values) mixes both, so it is a string too.
FORMAT_TYPES = {
    "INTEGER": ("BIGINT", pa.int64()),
    "FLOAT": ("DOUBLE", pa.float64()),
    "BOOLEAN": ("BOOLEAN", pa.bool_()),
    "STRING_HASH": ("VARCHAR", pa.string()),
    "STRING_HASH_OR_INTEGER": ("VARCHAR", pa.string()),
}


@dataclass(frozen=True)
class Column:
    name: str
    content: str  # as the schema says it
    format: str

    @property
    def duckdb_type(self) -> str:
        return FORMAT_TYPES[self.format][0]


def column_name(content: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", content.lower().replace("/", "")).strip("_")


@cache
def tables() -> dict[str, tuple[Column, ...]]:
    """Table name -> its columns in file order."""
    text = resources.files("lakehouse.data").joinpath("google_schema.csv").read_text(encoding="utf-8")
    columns: dict[str, list[tuple[int, Column]]] = {}
    for row in csv.DictReader(text.splitlines()):
        table = row["file pattern"].split("/", 1)[0]
        column = Column(column_name(row["content"]), row["content"], row["format"])
        columns.setdefault(table, []).append((int(row["field number"]), column))
    return {table: tuple(c for _, c in sorted(cols)) for table, cols in columns.items()}


def arrow_schema(table: str) -> pa.Schema:
    """Schema of the Parquet files of a table: its columns, then the part they came from."""
    fields = [pa.field(c.name, FORMAT_TYPES[c.format][1]) for c in tables()[table]]
    return pa.schema([*fields, pa.field("part", pa.string())])


QUARANTINE_SCHEMA = pa.schema(
    [
        pa.field("table_name", pa.string()),
        pa.field("part", pa.string()),
        pa.field("source", pa.string()),
        pa.field("line", pa.int64()),
        pa.field("raw", pa.string()),
        pa.field("reason", pa.string()),
    ]
)

#: The 2011 trace, declared (lakehouse.base.traces).
TRACE = Trace("google-2011", "google", tuple(tables()), arrow_schema, 600, "machine", 1)

#: Column whose order within a part the trace promises (non-decreasing), per table.
TIME_COLUMN = {table: ("start_time" if table == "task_usage" else "time") for table in tables()}
