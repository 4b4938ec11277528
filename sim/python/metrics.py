"""Per-job and summary metrics of a replay (definitions: docs/simulator.md).

- wait = start - submit; response = wait + run, where run is what the job actually ran
  (min(runtime, requested)).
- bounded slowdown = max(response / max(run, tau), 1), tau = 10 s by default.
- utilization = sum(run x procs) / (machine size x makespan); makespan = last end - first submit.
- geomean_wait = exp(mean(ln(max(wait, 10 s)))): the geometric mean, waits below 10 s counted as 10 s
  (a zero wait would make it zero); p50/p90/p99 of wait and bounded slowdown: linear interpolation
  between the order statistics (numpy's default).
"""

from __future__ import annotations

from typing import cast

import polars as pl

from lakehouse import _native
from lakehouse.models.campaigns import DISTRIBUTION_METRICS, PERCENTILES
from lakehouse.sim.options import JobClass

#: Waits below this count as this in the geometric mean.
GEOMEAN_FLOOR = 10

#: How initial predictions are scored: the E-Loss as the SC'15 study states it (over-predictions
#: squared, under-predictions linear, job weight 1 + ln(q p)), in seconds; `eloss:` parameters.
SCORING_LOSS = "over=squared,over-factor=1,under=linear,weight=log-area"


def per_job_columns(tau: float) -> list[pl.Expr]:
    run = pl.col("end_time") - pl.col("start_time")
    wait = pl.col("start_time") - pl.col("submit_time")
    return [
        wait.alias("wait"),
        pl.max_horizontal((wait + run) / pl.max_horizontal(run, pl.lit(tau)), pl.lit(1.0)).alias("bounded_slowdown"),
    ]


#: The classes of each breakdown, in table order: (label, upper bound included or excluded).
SIZE_CLASSES = ("1 processor", "<= 10 %", "<= 50 %", "> 50 %")
LENGTH_CLASSES = ("< 1 min", "< 1 h", "< 10 h", ">= 10 h")


def job_class(by: JobClass, machine_size: int) -> pl.Expr:
    """Each job's class (a string) for `by`; sizes as shares of the machine, lengths of what it ran."""
    if by is JobClass.user:
        return pl.col("user_id").cast(pl.String)
    if by is JobClass.size:
        procs = pl.col("procs")
        return (
            pl.when(procs == 1)
            .then(pl.lit(SIZE_CLASSES[0]))
            .when(procs * 10 <= machine_size)
            .then(pl.lit(SIZE_CLASSES[1]))
            .when(procs * 2 <= machine_size)
            .then(pl.lit(SIZE_CLASSES[2]))
            .otherwise(pl.lit(SIZE_CLASSES[3]))
        )
    run = pl.col("end_time") - pl.col("start_time")
    return (
        pl.when(run < 60)
        .then(pl.lit(LENGTH_CLASSES[0]))
        .when(run < 3600)
        .then(pl.lit(LENGTH_CLASSES[1]))
        .when(run < 36000)
        .then(pl.lit(LENGTH_CLASSES[2]))
        .otherwise(pl.lit(LENGTH_CLASSES[3]))
    )


def measured(jobs: pl.DataFrame, warmup: float = 0, cooldown: float = 0) -> pl.DataFrame:
    """The jobs the summary counts: those submitted neither in the first `warmup` nor in the last
    `cooldown` seconds of the submissions (all of them are simulated)."""
    if jobs.is_empty() or (not warmup and not cooldown):
        return jobs
    first, last = cast(float, jobs["submit_time"].min()), cast(float, jobs["submit_time"].max())
    return jobs.filter(pl.col("submit_time").is_between(first + warmup, last - cooldown))


def summary_by(jobs: pl.DataFrame, machine_size: int, by: JobClass) -> pl.DataFrame:
    """One summary row per class of `by`, in class order (users by id)."""
    classes = jobs.with_columns(job_class(by, machine_size).alias(str(by)))
    order = {JobClass.size: SIZE_CLASSES, JobClass.length: LENGTH_CLASSES}.get(by)
    labels = list(order) if order else sorted(classes[str(by)].unique().to_list(), key=_user_order)
    present = set(classes[str(by)].to_list())
    rows = [
        {str(by): label, **summary(classes.filter(pl.col(str(by)) == label), machine_size)}
        for label in labels
        if label in present
    ]
    return pl.DataFrame(rows)


def _user_order(label: str | None) -> tuple[int, float, str]:
    """Users by number (unknown last)."""
    if label is None:
        return (2, 0, "")
    try:
        return (0, float(label), "")
    except ValueError:
        return (1, 0, label)


def summary(jobs: pl.DataFrame, machine_size: int) -> dict[str, float | int | None]:
    """One row of headline numbers; mean_response is pyss's avg (w + r), for comparison."""
    if jobs.is_empty():
        return {"jobs": 0, "mean_wait": None, "mean_bounded_slowdown": None, "max_wait": None,
                "mean_response": None, "utilization": None, "makespan": None,
                **dict.fromkeys(DISTRIBUTION_METRICS)}  # fmt: skip
    run = pl.col("end_time") - pl.col("start_time")
    row = jobs.select(
        jobs=pl.len(),
        mean_wait=pl.col("wait").mean(),
        mean_bounded_slowdown=pl.col("bounded_slowdown").mean(),
        max_wait=pl.col("wait").max(),
        mean_response=(pl.col("wait") + run).mean(),
        busy=(run * pl.col("procs")).sum(),
        makespan=pl.col("end_time").max() - pl.col("submit_time").min(),
        geomean_wait=pl.col("wait").clip(lower_bound=GEOMEAN_FLOOR).cast(pl.Float64).log().mean().exp(),
        **{
            f"p{q}_{metric}": pl.col(metric).quantile(q / 100, interpolation="linear")
            for metric in ("wait", "bounded_slowdown")
            for q in PERCENTILES
        },
    ).row(0, named=True)
    busy, makespan = row.pop("busy"), row["makespan"]
    row["utilization"] = busy / (machine_size * makespan) if makespan else None
    return row


def prediction_errors(jobs: pl.DataFrame) -> dict[str, float | None]:
    """How the initial predictions compare with what each job ran (end - start): the mean absolute
    error (s), the mean E-Loss (SCORING_LOSS; its weight counts a runtime under 1 s as 1 s) and the
    share of under-predicted jobs."""
    if jobs.is_empty():
        return {"prediction_mae": None, "prediction_mean_eloss": None, "prediction_under_share": None}
    run = (jobs["end_time"] - jobs["start_time"]).to_numpy()
    predicted = jobs["initial_prediction"].to_numpy()
    losses = _native.eloss_values(SCORING_LOSS, predicted.astype("float64"), run, jobs["procs"].to_numpy())
    return {
        "prediction_mae": float(abs(predicted - run).mean()),
        "prediction_mean_eloss": float(losses.mean()),
        "prediction_under_share": float((predicted < run).mean()),
    }
