"""The Standard Workload Format (SWF) of the Parallel Workloads Archive: its 18 fields and its header.

The field list is the one source of truth for the raw Parquet schema, the parser's type checks and the
names the views expose.  See https://www.cs.huji.ac.il/labs/parallel/workload/swf.html.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa


@dataclass(frozen=True)
class SwfField:
    number: int  # 1-based position in the line, as the SWF definition numbers them
    name: str  # the public column name (a versioned schema: never rename silently)
    fractional: bool = False  # field 6 (average CPU time) is a decimal in many logs


FIELDS: tuple[SwfField, ...] = (
    SwfField(1, "job_id"),
    SwfField(2, "submit_time"),
    SwfField(3, "wait_time"),
    SwfField(4, "run_time"),
    SwfField(5, "alloc_procs"),
    SwfField(6, "avg_cpu_time", fractional=True),
    SwfField(7, "used_memory"),
    SwfField(8, "req_procs"),
    SwfField(9, "req_time"),
    SwfField(10, "req_memory"),
    SwfField(11, "status"),
    SwfField(12, "user_id"),
    SwfField(13, "group_id"),
    SwfField(14, "executable_id"),
    SwfField(15, "queue_id"),
    SwfField(16, "partition_id"),
    SwfField(17, "preceding_job_id"),
    SwfField(18, "think_time"),
)

SCHEMA_VERSION = 1

# Raw job rows: the fields exactly as in the file (-1 kept), plus the log name and the source line.
JOBS_SCHEMA = pa.schema(
    [pa.field("log", pa.string()), pa.field("line", pa.int64())]
    + [pa.field(f.name, pa.float64() if f.fractional else pa.int64()) for f in FIELDS]
)

QUARANTINE_SCHEMA = pa.schema(
    [
        pa.field("log", pa.string()),
        pa.field("source", pa.string()),
        pa.field("line", pa.int64()),
        pa.field("raw", pa.string()),
        pa.field("reason", pa.string()),
    ]
)

# Header keys with a numeric value that get a column of their own in swf.logs; every key (these and
# any other) is also kept in the `header` map and, when its value starts with an integer, in
# `header_numeric`.
NUMERIC_HEADER_COLUMNS = {
    "MaxJobs": "max_jobs",
    "MaxRecords": "max_records",
    "MaxProcs": "max_procs",
    "MaxNodes": "max_nodes",
    "MaxRuntime": "max_runtime",
    "MaxMemory": "max_memory",
    "UnixStartTime": "unix_start_time",
    "TimeZone": "time_zone",
}
TEXT_HEADER_COLUMNS = {
    "Version": "version",
    "Computer": "computer",
    "Installation": "installation",
    "TimeZoneString": "time_zone_string",
    "StartTime": "start_time",
    "EndTime": "end_time",
}

LOGS_SCHEMA = pa.schema(
    [
        pa.field("log", pa.string()),
        pa.field("source", pa.string()),
        pa.field("content_hash", pa.string()),
        pa.field("schema_version", pa.int32()),
        pa.field("job_lines", pa.int64()),
        pa.field("jobs", pa.int64()),
        pa.field("quarantined", pa.int64()),
        pa.field("unsorted_submits", pa.int64()),
        pa.field("crlf_lines", pa.int64()),
    ]
    + [pa.field(col, pa.int64()) for col in NUMERIC_HEADER_COLUMNS.values()]
    + [pa.field(col, pa.string()) for col in TEXT_HEADER_COLUMNS.values()]
    + [
        pa.field("machine_size", pa.int64()),
        pa.field("header", pa.map_(pa.string(), pa.string())),
        pa.field("header_numeric", pa.map_(pa.string(), pa.int64())),
        pa.field("raw_header", pa.string()),
        pa.field("ingested_at", pa.timestamp("us", tz="UTC")),
    ]
)


def comment_line(text: str) -> str:
    """`text` as one SWF header line (`; text`): a line break inside it (a user's --where, a log's
    note) becomes a space, so that no text written into a header can start a job line of its own."""
    return f"; {' '.join(str(text).splitlines())}".rstrip() if text else ";"
