"""Per-job periodic fits of the long-running jobs of a Google lake -> analysis.job_sinusoids.

Each long-running job's demand per task (google.job_demand_5min: CPU rate summed over the reporting
tasks, divided by how many reported, so a task's missing window is a gap, not a dip) is fitted by
`spectral.fit_periodic` on the trace-start time origin.  The daily component gives the packing model
W(t) = C + rho sin(2 pi t / 1 day + phi) per task.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from lakehouse.lake import Lake
from lakehouse.models.results import store
from lakehouse.models.schemas import JOB_SINUSOIDS_SCHEMA
from lakehouse.models.spectral import PERIODS, fit_periodic

TRACE_START_S = 600  # the trace clock's 600 s is the trace start (ClusterData2011_2.md)
MIN_WINDOWS = 288  # one day of 5-minute windows: less cannot separate a daily cycle from a trend


def fit_long_running_jobs(lake: Lake) -> pl.DataFrame:
    """One row per long-running job with at least a day of demand windows."""
    demand = lake.query(
        "SELECT d.job_id, d.bucket_s, d.cpu_rate / d.tasks AS per_task, l.tasks "
        "FROM google.job_demand_5min AS d "
        "JOIN (SELECT job_id, count(*) AS tasks FROM google.tasks_long_running GROUP BY job_id) AS l USING (job_id) "
        "ORDER BY d.job_id, d.bucket_s"
    )
    rows = []
    for (job_id,), series in demand.group_by(["job_id"], maintain_order=True):
        if series.height < MIN_WINDOWS:
            continue
        t = series["bucket_s"].to_numpy().astype(float) - TRACE_START_S
        fit = fit_periodic(t, series["per_task"].to_numpy())
        daily = fit.components["daily"]
        row = {
            "job_id": job_id,
            "tasks": int(series["tasks"][0]),
            "windows": fit.windows,
            "c": fit.level,
            "rho": daily.ratio * fit.level,
            "phi": daily.phase,
            "trend_ratio": fit.trend_ratio,
            "noise_ratio": fit.noise_ratio,
        }
        for name, component in fit.components.items():
            row |= {f"{name}_ratio": component.ratio, f"{name}_phase": component.phase, f"{name}_p": component.p_value}
        rows.append(row)
    return pl.DataFrame(rows, schema=pl.Schema(JOB_SINUSOIDS_SCHEMA))


def write_job_sinusoids(lake: Lake) -> pl.DataFrame:
    """Fit and store the result where analysis.job_sinusoids reads it."""
    fits = fit_long_running_jobs(lake)
    store(lake, "analysis_job_sinusoids", fits, JOB_SINUSOIDS_SCHEMA)
    return fits


def summary(fits: pl.DataFrame, alpha: float = 0.05) -> pl.DataFrame:
    """Per component: the distribution of amplitude ratios over jobs, and the share significant at alpha."""
    rows = []
    for name in (*PERIODS, "trend", "noise"):
        column = fits[f"{name}_ratio"].abs() if name == "trend" else fits[f"{name}_ratio"]
        values = column.to_numpy()
        p = fits[f"{name}_p"].to_numpy() if name in PERIODS else None
        rows.append(
            {
                "component": name,
                "jobs": len(values),
                "mean": float(np.mean(values)) if len(values) else None,
                "std": float(np.std(values, ddof=1)) if len(values) > 1 else None,
                "min": float(np.min(values)) if len(values) else None,
                "q1": float(np.quantile(values, 0.25)) if len(values) else None,
                "median": float(np.median(values)) if len(values) else None,
                "q3": float(np.quantile(values, 0.75)) if len(values) else None,
                "max": float(np.max(values)) if len(values) else None,
                "significant_share": float(np.mean(p < alpha)) if p is not None and len(p) else None,
            }
        )
    return pl.DataFrame(rows)
