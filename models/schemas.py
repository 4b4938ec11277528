"""Parquet schemas of the models' results (the analysis.* views read them; kept light to import)."""

from __future__ import annotations

import pyarrow as pa

PERIOD_NAMES = ("hourly", "daily", "weekly")  # as lakehouse.models.spectral.PERIODS

JOB_SINUSOIDS_SCHEMA = pa.schema(
    [
        pa.field("job_id", pa.int64()),
        pa.field("tasks", pa.int64()),
        pa.field("windows", pa.int64()),
        pa.field("c", pa.float64()),
        pa.field("rho", pa.float64()),
        pa.field("phi", pa.float64()),
        pa.field("trend_ratio", pa.float64()),
        pa.field("noise_ratio", pa.float64()),
        *[
            field
            for name in PERIOD_NAMES
            for field in (
                pa.field(f"{name}_ratio", pa.float64()),
                pa.field(f"{name}_phase", pa.float64()),
                pa.field(f"{name}_p", pa.float64()),
            )
        ],
    ]
)


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
