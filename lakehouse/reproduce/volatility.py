"""The CPU volatility of the Google trace (Reis, MSc thesis, 2015, section 3.4)."""

from __future__ import annotations

from lakehouse.base.errors import TooLittleDataError
from lakehouse.base.lake import Lake
from lakehouse.base.published import Published
from lakehouse.reproduce.study import (
    MEASURED,
    Request,
    Study,
    row,
)

#: The tasks section 3.4 studies: high-SLO (scheduling class 2-3) tasks of month-long-running jobs, the
#: column of `report volatility`'s summary that holds them; its `all` column is the variant over every
#: task of the measured jobs.
VOLATILITY_SUBSET = "high_slo_long_running"


def _volatility(lake: Lake, rows: list[Published], request: Request) -> list[dict[str, object]]:
    """Section 3.4 publishes one number, the per-job sampling it states for every job; the numbers of its
    text are placeholders and its results figures.  Ours, on the section's tasks (VOLATILITY_SUBSET):
    `report volatility`'s summary over them, and the sampling of the jobs they belong to
    (google.job_sampling)."""
    from lakehouse.models.volatility.report import run_2011

    try:
        summary = run_2011(lake).summary
    except TooLittleDataError as exc:
        return [
            row(p, None, None, f"needs the Google trace with usage (lakehouse ingest google DIR): {exc}") for p in rows
        ]
    values = dict(zip(summary["metric"], summary[VOLATILITY_SUBSET], strict=True))
    jobs = lake.query(
        "SELECT 100 * avg(consistent::INT) FILTER (tasks_used > 0) AS consistent_jobs, "
        "count(*) FILTER (measured) AS measured_jobs FROM google.job_sampling "
        "WHERE job_id IN (SELECT job_id FROM google.tasks WHERE high_slo AND long_running)"
    ).row(0, named=True)
    values |= jobs
    out = []
    for p in rows:
        s = p.settings()
        value = values.get(s["metric"])
        note = MEASURED if p.value is not None else "the paper leaves this number blank"
        other = values.get(s.get("above", ""))  # a finding without a number: this quantity above that one
        if value is not None and other is not None:
            holds = "holds" if value > other else "does not hold"
            note += f"; its finding ({s['metric']} above {s['above']}) {holds} here"
        if value is None:  # (a CV needs two windows of a task; a median, one task)
            note = (
                "not defined on this lake's tasks: it holds no high-SLO task running through the whole trace "
                "(their task_events, from the trace's first part, and their usage)"
                if not values.get("tasks")
                else "not defined on this lake's tasks"
            )
        out.append(row(p, None, None if value is None else float(value), note))
    return out


STUDY = Study(
    "volatility",
    _volatility,
    (
        "Reis 2015, section 3.4: its one stated number, every job sampled all or nothing, from "
        "google.job_sampling; and ours alone for each number its text leaves blank, from `lakehouse report "
        "volatility`"
    ),
    order=70,
    citation=(
        "V. Reis, Modeling and Estimation for Resource Allocation Problems in Large-Scale Computing "
        "Systems, MSc thesis, 2015, section 3.4 (the CPU usage of the Google trace)"
    ),
    lake="google",
)
