"""Google's clusterdata-2019 (trace format v3): its tables and columns, declared once.

Read from Google's `clusterdata_trace_format_v3.proto` and the v3 document (2020-04-01); the names are
the proto's, a `Resources` message flattened into `<field>_cpus` and `<field>_memory`.  Every view,
the ingest's decoding and checks, and docs/google-2019.md's column lists come from here.

The decoding rule of the export (JSON and Parquet alike): a field the export leaves out (JSON) or NULL
(Parquet) is the proto's default when the field is a number or an enum (0: SUBMIT, JOB, no alloc set,
no missing data...), and NULL when it is a message (a machine's capacity, a usage measurement) or a
measured float: a machine ADD without capacity stays without one (459 such rows in cell a), and is
counted by an audit.  Integers come quoted in the JSON export ("123"); both are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

import pyarrow as pa

from lakehouse.base.traces import Trace

#: Cells of the 2019 trace, and the time zone each ran in (from the v3 document): all start on
#: 1 May 2019 00:00 Pacific Daylight Time.
CELL_TIME_ZONES = {
    "a": "America/New_York",
    "b": "America/Chicago",
    "c": "America/New_York",
    "d": "America/New_York",
    "e": "Europe/Helsinki",
    "f": "America/Chicago",
    "g": "Asia/Singapore",
    "h": "Europe/Brussels",
}


def cell_problem(cell: str, option: str = "--cell") -> str | None:
    """Why `cell` names no cell of the trace, if it does not (one message wherever a cell is given)."""
    return (
        None if cell in CELL_TIME_ZONES else f"{option} {cell!r}: the 2019 trace has cells {', '.join(CELL_TIME_ZONES)}"
    )


#: Times are microseconds since 600 s before the trace's start; these two stand for "before the trace
#: window" and "after it" and are kept as flags in the views, never turned into dates.
BEFORE_WINDOW = 0
AFTER_WINDOW = 2**63 - 1

EVENT_TYPES = {
    0: "SUBMIT",
    1: "QUEUE",
    2: "ENABLE",
    3: "SCHEDULE",
    4: "EVICT",
    5: "FAIL",
    6: "FINISH",
    7: "KILL",
    8: "LOST",
    9: "UPDATE_PENDING",
    10: "UPDATE_RUNNING",
}
MACHINE_EVENT_TYPES = {0: "EVENT_TYPE_UNKNOWN", 1: "ADD", 2: "REMOVE", 3: "UPDATE"}
MISSING_TYPES = {
    0: "MISSING_TYPE_NONE",
    1: "SNAPSHOT_BUT_NO_TRANSITION",
    2: "NO_SNAPSHOT_OR_TRANSITION",
    3: "EXISTS_BUT_NO_CREATION",
    4: "TRANSITION_MISSING_STEP",
    5: "TOO_MANY_EVENTS",
}
MISSING_DATA_REASONS = {0: "MISSING_DATA_REASON_NONE", 1: "SNAPSHOT_BUT_NO_TRANSITION"}
COLLECTION_TYPES = {0: "JOB", 1: "ALLOC_SET"}
LATENCY_SENSITIVITY = {0: "MOST_INSENSITIVE", 1: "INSENSITIVE", 2: "SENSITIVE", 3: "MOST_SENSITIVE"}
SCHEDULERS = {0: "SCHEDULER_DEFAULT", 1: "SCHEDULER_BATCH"}
VERTICAL_SCALING = {
    0: "VERTICAL_SCALING_SETTING_UNKNOWN",
    1: "VERTICAL_SCALING_OFF",
    2: "VERTICAL_SCALING_CONSTRAINED",
    3: "VERTICAL_SCALING_FULLY_AUTOMATED",
}
CONSTRAINT_RELATIONS = {
    0: "EQUAL",
    1: "NOT_EQUAL",
    2: "LESS_THAN",
    3: "GREATER_THAN",
    4: "LESS_THAN_EQUAL",
    5: "GREATER_THAN_EQUAL",
    6: "PRESENT",
    7: "NOT_PRESENT",
}

#: The percentiles of instance_usage's two CPU histograms.  The proto's comment says the first has "10
#: elements" but lists 11 (0, 10, ..., 100 %); the data has 11 (the real row of cell a, the colab), so 11.
CPU_PERCENTILES = tuple(range(0, 101, 10))
TAIL_CPU_PERCENTILES = tuple(range(91, 100))


@dataclass(frozen=True)
class Field:
    """One column: where the export keeps it and how it is read."""

    name: str  # the column in the lake
    path: tuple[str, ...]  # the keys that lead to it in a row of the export
    type: str  # DuckDB type of the column
    absent: str | None = "0"  # what a left-out field is (SQL); None: it stays NULL
    values: Mapping[int, str] | None = None  # an enum's names by code: any other code is refused
    length: int | None = None  # a histogram's documented length: any other, or a decreasing one, is refused
    time: bool = False  # microseconds of the trace: negative is refused, the sentinels are kept

    @property
    def arrow_type(self) -> pa.DataType:
        return ARROW_TYPES[self.type]


ARROW_TYPES = {
    "BIGINT": pa.int64(),
    "INTEGER": pa.int32(),
    "SMALLINT": pa.int16(),
    "DOUBLE": pa.float64(),
    "VARCHAR": pa.string(),
    "BOOLEAN": pa.bool_(),
    "DOUBLE[]": pa.list_(pa.float64()),
    "BIGINT[]": pa.list_(pa.int64()),
}


def _time(name: str) -> Field:
    return Field(name, (name,), "BIGINT", time=True)


def _id(name: str, kind: str = "BIGINT") -> Field:
    return Field(name, (name,), kind)


def _enum(name: str, values: Mapping[int, str]) -> Field:
    return Field(name, (name,), "SMALLINT", values=values)


def _text(name: str) -> Field:
    return Field(name, (name,), "VARCHAR", absent=None)


def _measure(name: str) -> Field:
    return Field(name, (name,), "DOUBLE", absent=None)


def _resources(name: str, memory: bool = True) -> tuple[Field, ...]:
    """A Resources message: absent, both columns are NULL; present, a left-out member is 0."""
    members = ("cpus", "memory") if memory else ("cpus",)
    return tuple(Field(f"{name}_{member}", (name, member), "DOUBLE", absent=None) for member in members)


_COMMON_EVENT = (
    _time("time"),
    _enum("type", EVENT_TYPES),
    _id("collection_id"),
    _enum("scheduling_class", LATENCY_SENSITIVITY),
    _enum("missing_type", MISSING_TYPES),
    _enum("collection_type", COLLECTION_TYPES),
    _id("priority", "INTEGER"),
    _id("alloc_collection_id"),
)

#: The tables of a cell, their columns in the proto's order.
TABLES: dict[str, tuple[Field, ...]] = {
    "collection_events": (
        *_COMMON_EVENT,
        _text("user"),
        _text("collection_name"),
        _text("collection_logical_name"),
        _id("parent_collection_id"),
        Field("start_after_collection_ids", ("start_after_collection_ids",), "BIGINT[]", absent="[]"),
        _id("max_per_machine", "INTEGER"),
        _id("max_per_switch", "INTEGER"),
        _enum("vertical_scaling", VERTICAL_SCALING),
        _enum("scheduler", SCHEDULERS),
    ),
    "instance_events": (
        *_COMMON_EVENT,
        _id("instance_index", "INTEGER"),
        _id("machine_id"),
        _id("alloc_instance_index", "INTEGER"),
        *_resources("resource_request"),
    ),
    "machine_events": (
        _time("time"),
        _id("machine_id"),
        _enum("type", MACHINE_EVENT_TYPES),
        _text("switch_id"),
        *_resources("capacity"),
        _text("platform_id"),
        _enum("missing_data_reason", MISSING_DATA_REASONS),
    ),
    "machine_attributes": (
        _time("time"),
        _id("machine_id"),
        _text("name"),
        _text("value"),
        Field("deleted", ("deleted",), "BOOLEAN", absent="false"),
    ),
    "instance_usage": (
        _time("start_time"),
        _time("end_time"),
        _id("collection_id"),
        _id("instance_index", "INTEGER"),
        _id("machine_id"),
        _id("alloc_collection_id"),
        _id("alloc_instance_index"),
        _enum("collection_type", COLLECTION_TYPES),
        *_resources("average_usage"),
        *_resources("maximum_usage"),
        *_resources("random_sample_usage", memory=False),
        _measure("assigned_memory"),
        _measure("page_cache_memory"),
        _measure("cycles_per_instruction"),
        _measure("memory_accesses_per_instruction"),
        _measure("sample_rate"),
        Field("cpu_usage_distribution", ("cpu_usage_distribution",), "DOUBLE[]", None, length=len(CPU_PERCENTILES)),
        Field(
            "tail_cpu_usage_distribution",
            ("tail_cpu_usage_distribution",),
            "DOUBLE[]",
            None,
            length=len(TAIL_CPU_PERCENTILES),
        ),
    ),
}

#: instance_events' repeated `constraint` message, as a child table: one row per constraint of an event
#: (the event's time, collection and instance identify it).
CONSTRAINT_FIELDS = (
    _time("time"),
    _id("collection_id"),
    _id("instance_index", "INTEGER"),
    _text("name"),
    _text("value"),
    _enum("relation", CONSTRAINT_RELATIONS),
)


#: Keys a row of each table may hold in the export (the top level of `path`, and instance_events'
#: constraints): any other key means the row is not of this table.
def export_keys(table: str) -> tuple[str, ...]:
    keys = dict.fromkeys(field.path[0] for field in TABLES[table])
    if table == "instance_events":
        keys["constraint"] = None
    return tuple(keys)


def parquet_export_schema(table: str) -> pa.Schema:
    """The columns of the table's Parquet export, as Google's bucket holds them (cell a's machine_events:
    integers and enums as int64, a message as a struct): every column, even one that is NULL throughout."""
    columns: dict[str, pa.DataType] = {}
    for field in TABLES[table]:
        if len(field.path) > 1:
            members = columns.get(field.path[0], pa.struct([]))
            columns[field.path[0]] = pa.struct([*members, pa.field(field.path[1], pa.float64())])
        elif field.type in ("SMALLINT", "INTEGER"):
            columns[field.name] = pa.int64()
        else:
            columns[field.name] = field.arrow_type
    if table == "instance_events":
        relation = [pa.field("name", pa.string()), pa.field("value", pa.string()), pa.field("relation", pa.int64())]
        columns["constraint"] = pa.list_(pa.struct(relation))
    return pa.schema(columns.items())


#: Columns every stored table adds: the cell, the shard the row came from and its line (JSON) or row
#: (Parquet, from 1) in it.
PROVENANCE = (("cell", pa.string()), ("shard", pa.string()), ("line", pa.int64()))


@cache
def arrow_schema(table: str) -> pa.Schema:
    fields = CONSTRAINT_FIELDS if table == "instance_constraints" else TABLES[table]
    return pa.schema([*(pa.field(f.name, f.arrow_type) for f in fields), *(pa.field(n, t) for n, t in PROVENANCE)])


#: The stored tables: the five of the trace and the constraints' child table.
STORED_TABLES = (*TABLES, "instance_constraints")

#: The 2019 trace, declared (lakehouse.base.traces): a shard of instance_events writes its constraints too.
TRACE = Trace(
    "google-2019",
    "google2019",
    STORED_TABLES,
    arrow_schema,
    600,
    "machine",
    1,
    children={"instance_events": ("instance_constraints",)},
)
