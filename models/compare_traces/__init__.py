"""Every trace of the lake side by side (`lakehouse report compare-traces`): its stored table."""

from __future__ import annotations

import pyarrow as pa

from lakehouse.base.tables import StoredTable, fields

TRACE_COMPARISON_SCHEMA = pa.schema(
    [
        *fields(pa.string(), "trace", "cell"),
        *fields(pa.int64(), "jobs", "tasks", "users", "machines"),
        pa.field("days", pa.float64()),
        *fields(pa.float64(), "median_job_size", "p90_job_size", "median_duration_h", "p90_duration_h"),
        *fields(pa.float64(), "median_wait_s", "cpu_utilisation", "volatility_mean_abs_d", "daily_amplitude_median"),
    ]
)

TRACE_COMPARISON = StoredTable(
    "trace_comparison",
    TRACE_COMPARISON_SCHEMA,
    grain="one row per trace and cell of the lake (an SWF log; a Google 2019 cell), as `lakehouse report "
    "compare-traces` last measured them",
    description=(
        "Every trace side by side, from the common views cluster.*: jobs, tasks, users, machines, days spanned, "
        "job size (tasks; an SWF job's processors) and duration (end - start, hours) at the median and 90th "
        "percentile, median wait (start - submit, seconds), cpu_utilisation (the CPU-seconds cluster.usage "
        "measures, counted once, over each machine's largest capacity times the span measured; Alibaba 2018 "
        "measures batch instances only), and where those reports ran: volatility_mean_abs_d (the 2011 "
        "method's mean |d|: analysis.volatility_summary, analysis.volatility_2019) and daily_amplitude_median "
        "(the median daily amplitude over the mean of long-running jobs: analysis.job_sinusoids, "
        "analysis.periodicity_2019). NULL where a trace does not give the number."
    ),
)

TABLES = (TRACE_COMPARISON,)
