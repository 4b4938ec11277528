"""The daily cycles of long-running jobs (the periodic spectral fits): their stored tables."""

from __future__ import annotations

import pyarrow as pa

from lakehouse.base.tables import StoredTable

PERIOD_NAMES = ("hourly", "daily", "weekly")  # as spectral.PERIODS

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

JOB_SINUSOIDS = StoredTable(
    "job_sinusoids",
    JOB_SINUSOIDS_SCHEMA,
    grain="one row per long-running job of the Google lake with at least a day of demand windows",
    description=(
        "Periodic fits of each long-running job's CPU demand per task (lakehouse report periodicity): level "
        "c, daily amplitude rho = daily_ratio * c and phase phi (radians, time origin the trace start), so a "
        "task demands W(t) = c + rho sin(2 pi t / 86400 + phi); amplitude ratios, phases and Wald-test "
        "p-values of the hourly, daily and weekly components; trend (change over the series / c) and noise "
        "(residual sd / c). The input of packing."
    ),
)

#: `report periodicity --trace google-2019`: a job's fits (as analysis.job_sinusoids) in its cell's local time.
PERIODICITY_2019_SCHEMA = pa.schema(
    [pa.field("cell", pa.string()), *JOB_SINUSOIDS_SCHEMA, pa.field("daily_peak_local_h", pa.float64())]
)

PERIODICITY_2019 = StoredTable(
    "periodicity_2019",
    PERIODICITY_2019_SCHEMA,
    grain="one row per cell of Google's 2019 trace and job running through it",
    description=(
        "Written by `lakehouse report periodicity --trace google-2019`: per cell and long-running job (job_id"
        " = its collection_id), the fits of analysis.job_sinusoids (level c, daily amplitude rho and phase "
        "phi, each component's ratio, phase and p-value) on the clock of the cell's own time zone (t = "
        "seconds since local midnight of the trace's first day there), and daily_peak_local_h, the local hour"
        " the daily component peaks at."
    ),
)

TABLES = (
    JOB_SINUSOIDS,
    PERIODICITY_2019,
)

#: The traces the report cannot read yet, each with why in one line (lakehouse.base.traces.refuse_unfed).
CANNOT_FEED = {
    "alibaba-2018": (
        "the fits need services running through the trace with usage windows (Google's long-running jobs); "
        "Alibaba 2018's services are its containers, whose usage (container_usage) the report does not read "
        "yet, and its 8 days hold one week at most: no weekly component"
    )
}
