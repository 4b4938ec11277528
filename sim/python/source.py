"""Workloads from the lake: one log's cleaned jobs, in the order the simulator needs."""

from __future__ import annotations

import enum

import duckdb
import polars as pl

from lakehouse.errors import LakehouseError
from lakehouse.lake import Lake


class View(enum.StrEnum):
    jobs_clean = "jobs_clean"  # canonical cleaning (DESIGN section 4)
    jobs_strong = "jobs_strong"  # the SC'15 strong filter, as the published runs used


#: The machine size each view was filtered with, hence the default for simulating it.
MACHINE_SIZE_SQL = {
    View.jobs_clean: "coalesce(machine_size, max_procs)",
    View.jobs_strong: "coalesce(max_procs, machine_size)",
}


def log_jobs(lake: Lake, log: str, view: View = View.jobs_clean, where: str | None = None) -> pl.DataFrame:
    """The jobs of `log` in `swf.<view>`, optionally filtered by an SQL condition, in submit order
    (ties in file order, as the log lists them)."""
    condition = f" AND ({where})" if where else ""
    # predicted_walltime: the walltime predictions of `lakehouse report predictions` (NULL where it has
    # none, which the simulator's column predictor reads as the request).
    predictions = (
        "SELECT source AS log, job AS job_id, any_value(predicted) AS predicted_walltime "
        "FROM analysis.predictions_jobs WHERE resource = 'walltime' AND source = $log GROUP BY ALL"
    )
    try:
        return lake.query(
            f"SELECT j.*, p.predicted_walltime FROM (SELECT * FROM swf.{View(view)} WHERE log = $log{condition}) AS j "
            f"LEFT JOIN ({predictions}) AS p USING (log, job_id) ORDER BY j.submit_time, j.line",
            {"log": log},
        )
    except duckdb.Error as exc:
        raise LakehouseError(f"cannot select the jobs of {log}: {str(exc).strip()}") from None


def log_machine_size(lake: Lake, log: str, view: View = View.jobs_clean) -> int:
    """The log's machine size as its view used it; errors name the logs that exist."""
    rows = lake.query(f"SELECT {MACHINE_SIZE_SQL[View(view)]} AS size FROM swf.logs WHERE log = ?", [log])
    if rows.is_empty():
        known = lake.query("SELECT log FROM swf.logs ORDER BY log")["log"].to_list()
        raise LakehouseError(f"no log named {log!r} in the lake; it has: {', '.join(known) or 'no logs yet'}")
    size = rows["size"][0]
    if size is None:
        raise LakehouseError(f"{log} has no MaxProcs in its header: give --machine-size")
    return int(size)
