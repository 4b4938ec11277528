"""Per-job and summary metrics of a replay (definitions: docs/simulator.md).

- wait = start - submit; response = wait + run, where run is what the job actually ran
  (min(runtime, requested)).
- bounded slowdown = max(response / max(run, tau), 1), tau = 10 s by default.
- utilization = sum(run x procs) / (machine size x makespan); makespan = last end - first submit.
"""

from __future__ import annotations

import polars as pl

DEFAULT_TAU = 10


def per_job_columns(tau: float) -> list[pl.Expr]:
    run = pl.col("end") - pl.col("start")
    wait = pl.col("start") - pl.col("submit")
    return [
        wait.alias("wait"),
        pl.max_horizontal((wait + run) / pl.max_horizontal(run, pl.lit(tau)), pl.lit(1.0)).alias("bounded_slowdown"),
    ]


def summary(jobs: pl.DataFrame, machine_size: int) -> dict[str, float | int | None]:
    """One row of headline numbers; mean_response is pyss's avg (w + r), for comparison."""
    if jobs.is_empty():
        return {"jobs": 0, "mean_wait": None, "mean_bounded_slowdown": None, "max_wait": None,
                "mean_response": None, "utilization": None, "makespan": None}  # fmt: skip
    run = pl.col("end") - pl.col("start")
    row = jobs.select(
        jobs=pl.len(),
        mean_wait=pl.col("wait").mean(),
        mean_bounded_slowdown=pl.col("bounded_slowdown").mean(),
        max_wait=pl.col("wait").max(),
        mean_response=(pl.col("wait") + run).mean(),
        busy=(run * pl.col("procs")).sum(),
        makespan=pl.col("end").max() - pl.col("submit").min(),
    ).row(0, named=True)
    busy, makespan = row.pop("busy"), row["makespan"]
    row["utilization"] = busy / (machine_size * makespan) if makespan else None
    return row
