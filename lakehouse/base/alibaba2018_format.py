"""Alibaba's cluster-trace-v2018, declared once: its six headerless CSV tables, their columns in the
order of the published schema.txt (which the data follows; the tables of trace_2018.md list another order
for batch_task and container_meta), their types and documented ranges.

Every ingest check and every stored schema comes from these declarations: the number of fields a row
must have, each field's type, a value outside its documented range (quarantined), and the abnormal values
the trace documents for its percentages and normalized sizes (-1 and 101), which are kept as they are
and counted by the views' audits.  A file has no header, so which table it holds is told from its name,
and checked against the shape of its first row (`looks_like`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pyarrow as pa

from lakehouse.base.traces import Trace

DUCKDB_TO_ARROW = {"VARCHAR": pa.string(), "BIGINT": pa.int64(), "DOUBLE": pa.float64()}


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # DuckDB's: VARCHAR, BIGINT or DOUBLE
    low: float | None = None  # the documented range; a value outside it is quarantined
    high: float | None = None
    abnormal: tuple[float, ...] = ()  # values the schema names as invalid markers: kept, audited


def _text(*names: str) -> tuple[Column, ...]:
    return tuple(Column(n, "VARCHAR") for n in names)


def _percent(name: str, kind: str) -> Column:
    """A percentage or a normalized size: documented within [0, 100], and -1 or 101 where the value was
    invalid ("there are some invalid values and they are set to either -1 or 101", trace_2018.md)."""
    return Column(name, kind, 0, 100, abnormal=(-1, 101))


DISK_IO = _percent("disk_io_percent", "DOUBLE")

TABLES: dict[str, tuple[Column, ...]] = {
    "machine_meta": (
        *_text("machine_id"),
        Column("time_stamp", "BIGINT"),
        Column("failure_domain_1", "BIGINT"),
        *_text("failure_domain_2"),
        Column("cpu_num", "BIGINT"),
        _percent("mem_size", "BIGINT"),
        *_text("status"),
    ),
    "machine_usage": (
        *_text("machine_id"),
        Column("time_stamp", "DOUBLE"),
        _percent("cpu_util_percent", "BIGINT"),
        _percent("mem_util_percent", "BIGINT"),
        _percent("mem_gps", "DOUBLE"),
        Column("mkpi", "BIGINT"),
        _percent("net_in", "DOUBLE"),
        _percent("net_out", "DOUBLE"),
        DISK_IO,
    ),
    "container_meta": (
        *_text("container_id", "machine_id"),
        Column("time_stamp", "BIGINT"),
        *_text("app_du", "status"),
        Column("cpu_request", "BIGINT"),  # 100 is one core
        Column("cpu_limit", "BIGINT"),
        _percent("mem_size", "DOUBLE"),
    ),
    "container_usage": (
        *_text("container_id", "machine_id"),
        Column("time_stamp", "DOUBLE"),
        Column("cpu_util_percent", "BIGINT"),  # of the container's request: may exceed 100
        _percent("mem_util_percent", "BIGINT"),
        Column("cpi", "DOUBLE"),
        _percent("mem_gps", "DOUBLE"),
        Column("mpki", "BIGINT"),
        _percent("net_in", "DOUBLE"),
        _percent("net_out", "DOUBLE"),
        DISK_IO,
    ),
    "batch_task": (
        *_text("task_name"),
        Column("instance_num", "BIGINT"),
        *_text("job_name", "task_type", "status"),
        Column("start_time", "BIGINT"),
        Column("end_time", "BIGINT"),
        Column("plan_cpu", "DOUBLE"),  # 100 is one core
        _percent("plan_mem", "DOUBLE"),
    ),
    "batch_instance": (
        *_text("instance_name", "task_name", "job_name", "task_type", "status"),
        Column("start_time", "BIGINT"),
        Column("end_time", "BIGINT"),
        *_text("machine_id"),
        Column("seq_no", "BIGINT"),
        Column("total_seq_no", "BIGINT"),
        Column("cpu_avg", "DOUBLE"),
        Column("cpu_max", "DOUBLE"),
        Column("mem_avg", "DOUBLE"),
        _percent("mem_max", "DOUBLE"),
    ),
}

#: A file of the trace: `<table>.csv`, `.csv.gz`, or a piece of one (`batch_task_part2.csv.gz`).
FILE_NAME = re.compile(
    rf"^(?P<table>{'|'.join(sorted(TABLES, key=len, reverse=True))})(?P<piece>[\w.-]*?)\.csv(\.gz)?$"
)

#: Where a row came from, stored beside the columns.
PROVENANCE = (pa.field("part", pa.string()), pa.field("line", pa.int64()))


def arrow_schema(table: str) -> pa.Schema:
    return pa.schema([*(pa.field(c.name, DUCKDB_TO_ARROW[c.type]) for c in TABLES[table]), *PROVENANCE])


#: Alibaba's 2018 trace, declared (lakehouse.base.traces): its clock starts at 0, a unit of CPU is a core,
#: memory is a percentage of the machine's; a file's name begins with its table (its quarantine's too).
TRACE = Trace("alibaba-2018", "alibaba2018", tuple(TABLES), arrow_schema, 0, "core", 100, quarantine_by_table=False)


# What the first field of each table looks like (ids are `m_<n>`, `c_<n>`, `j_<n>`, ...), to tell two
# tables with as many columns apart (machine_usage and batch_task both have 9).
_SIGNATURES: dict[str, tuple[int, re.Pattern[str]]] = {
    "machine_meta": (0, re.compile(r"^m_\d+$")),
    "machine_usage": (0, re.compile(r"^m_\d+$")),
    "container_meta": (0, re.compile(r"^c_\d+$")),
    "container_usage": (0, re.compile(r"^c_\d+$")),
    "batch_task": (2, re.compile(r"^j_\d+$")),
    "batch_instance": (2, re.compile(r"^j_\d+$")),
}


def looks_like(fields: list[str]) -> list[str]:
    """The tables a row of these fields could belong to, by its number of fields and its ids."""
    return [
        table
        for table, columns in TABLES.items()
        if len(columns) == len(fields) and _SIGNATURES[table][1].match(fields[_SIGNATURES[table][0]])
    ]
