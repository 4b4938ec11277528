"""Packing services with daily demand cycles onto machines: its stored table."""

from __future__ import annotations

import pyarrow as pa

from lakehouse.base.tables import StoredTable

PACKING_SCHEMA = pa.schema(
    [
        pa.field("heuristic", pa.string()),
        pa.field("machines", pa.int64()),
        pa.field("lower_bound", pa.float64()),
        pa.field("ratio_to_bound", pa.float64()),
        pa.field("capacity", pa.float64()),
        pa.field("tasks", pa.int64()),
        pa.field("jobs", pa.int64()),
        pa.field("query", pa.string()),
    ]
)

PACKING = StoredTable(
    "packing",
    PACKING_SCHEMA,
    grain="one row per heuristic of the last `lakehouse pack` run on this lake",
    description=(
        "Machines needed to pack the services of the last `lakehouse pack` query (by default the long-running"
        " jobs of analysis.job_sinusoids) by FFD, BFD, MM and MMM (packing by peak), with the lower bound "
        "(sum c + |sum rho e^(i phi)|) / capacity and each count's ratio to it; capacity, tasks, jobs and the"
        " query that gave the jobs."
    ),
)

TABLES = (PACKING,)

#: The traces the report cannot read yet, each with why in one line (lakehouse.base.traces.refuse_unfed).
CANNOT_FEED = {"alibaba-2018": "pack packs the periodic jobs that report periodicity fits, and it fits none on it"}
