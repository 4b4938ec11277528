"""The Standard Workload Format (SWF) of the Parallel Workloads Archive: its 18 fields and its header.

The field list is the one source of truth for the raw Parquet schema, the parser's type checks and the
names the views expose.  See https://www.cs.huji.ac.il/labs/parallel/workload/swf.html.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pyarrow as pa

from lakehouse import _native


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

# Header values the lake computes with stay within the ranges the tokenizer enforces on job lines
# (sim/src/swf.rs): a start time beyond them would make every timestamp of the log overflow.
HEADER_LIMITS = {
    "UnixStartTime": _native.SWF_MAX_SECONDS,
    "MaxRuntime": _native.SWF_MAX_SECONDS,
    "MaxProcs": _native.SWF_MAX_PROCS,
    "MaxNodes": _native.SWF_MAX_PROCS,
}
INT64_MAX = 2**63 - 1

_KEY_LINE = re.compile(r"^;\s*([A-Za-z][A-Za-z0-9_ ]*?)\s*:\s?(.*)$")
_LEADING_INT = re.compile(r"^\s*([-+]?\d+)")


def leading_integer(value: str, limit: int = INT64_MAX) -> int | None:
    """The integer a header value starts with: "338 (batch partition; 512 total)" -> 338.  None when
    there is none, or when its magnitude exceeds `limit` (the value is then kept as text only)."""
    m = _LEADING_INT.match(value)
    if not m:
        return None
    number = int(m.group(1))
    return number if abs(number) <= limit else None


@dataclass
class SwfHeader:
    """The `;` comment lines of a log: every key (in order) and the raw text."""

    entries: dict[str, str] = field(default_factory=dict)
    raw_lines: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, comment_lines: list[str]) -> SwfHeader:
        header = cls(raw_lines=list(comment_lines))
        last_key: str | None = None
        for line in comment_lines:
            m = _KEY_LINE.match(line)
            if m:
                key, value = m.group(1).strip(), m.group(2).strip()
                # Repeated keys (Note:, Queue:, Partition:) accumulate, one value per line.
                if key in header.entries:
                    header.entries[key] += "\n" + value
                else:
                    header.entries[key] = value
                last_key = key
            else:
                text = line.lstrip(";").strip()
                if last_key is not None and text:
                    # An indented continuation of the previous key's value.
                    header.entries[last_key] += "\n" + text
                elif not text:
                    last_key = None
        return header

    def out_of_range(self) -> list[str]:
        """Why each value that starts with an integer is kept as text only: it does not fit in the
        lake's 64-bit columns, or exceeds its key's limit (HEADER_LIMITS)."""
        reasons = []
        for key, value in self.entries.items():
            if _LEADING_INT.match(value) and self._number(key, value) is None:
                if leading_integer(value) is None:
                    bound = "does not fit in 64 bits"
                else:
                    bound = f"exceeds {HEADER_LIMITS[key]:,} in magnitude"
                first = value.splitlines()[0]
                reasons.append(f"header {key}: {first!r} {bound} (kept as text only)")
        return reasons

    @staticmethod
    def _number(key: str, value: str) -> int | None:
        return leading_integer(value, HEADER_LIMITS.get(key, INT64_MAX))

    def numeric(self) -> dict[str, int]:
        out = {}
        for key, value in self.entries.items():
            number = self._number(key, value)
            if number is not None:
                out[key] = number
        return out

    def row(self) -> dict[str, object]:
        numeric = self.numeric()
        row: dict[str, object] = {col: numeric.get(key) for key, col in NUMERIC_HEADER_COLUMNS.items()}
        for key, col in TEXT_HEADER_COLUMNS.items():
            value = self.entries.get(key)
            row[col] = value.split("\n")[0] if value is not None else None
        row["header"] = list(self.entries.items())
        row["header_numeric"] = list(numeric.items())
        row["raw_header"] = "\n".join(self.raw_lines)
        return row
