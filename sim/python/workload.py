"""From a lake query (Polars or Arrow) to the engine's int64 columns, with clear errors."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl
import pyarrow as pa

from lakehouse.errors import SimulationInputError

#: The column of walltime predictions `lakehouse report predictions` stores (joined on demand).
PREDICTED_WALLTIME = "predicted_walltime"
#: Columns the simulator reads, as the lake's swf.jobs* views name them.
REQUIRED = ("job_id", "submit_time", "run_time", "req_time", "procs", "user_id")
SHOWN_IDS = 10


@dataclass(frozen=True)
class Workload:
    """Engine input: int64 numpy columns, one entry per job, in submit order."""

    id: np.ndarray
    submit: np.ndarray
    run: np.ndarray
    requested: np.ndarray
    procs: np.ndarray
    user: np.ndarray
    prediction: np.ndarray | None
    warnings: list[str] = field(default_factory=list)  # what the input repaired, for the user to read

    @property
    def columns(self) -> tuple[np.ndarray, ...]:
        return (self.id, self.submit, self.run, self.requested, self.procs, self.user)


def input_columns(*, pyss: bool, prediction_column: str | None) -> list[str]:
    """The columns of a swf.jobs_* view that a replay reads (the pyss repairs look at both processor
    counts); selecting only these keeps a CEA-Curie load at 0.1 s."""
    extra = ["req_procs", "alloc_procs"] if pyss else []
    return [*REQUIRED, *extra, *([prediction_column] if prediction_column else [])]


def as_frame(jobs: pl.DataFrame | pa.Table) -> pl.DataFrame:
    if isinstance(jobs, pl.DataFrame):
        return jobs
    if isinstance(jobs, pa.Table):
        return pl.from_arrow(jobs)  # type: ignore[return-value]
    raise SimulationInputError(f"jobs must be a Polars DataFrame or an Arrow table, not {type(jobs).__name__}")


def _ids(frame: pl.DataFrame, mask: pl.Expr) -> tuple[list[int], int]:
    bad = frame.filter(mask)["job_id"]
    return bad.head(SHOWN_IDS).to_list(), bad.len()


def _fail_if(frame: pl.DataFrame, mask: pl.Expr, what: str) -> None:
    ids, count = _ids(frame, mask)
    if count:
        raise SimulationInputError(what, ids, count)


#: The largest time the simulator takes, in seconds (2^53, some 285 million years; every time is then
#: exact as a float), and the bound of the last submit time plus all runtimes (no job ends later: while
#: a job waits, another runs), which keeps every instant of the replay inside int64.
LARGEST_TIME = 2**53
LATEST_END = 2**62
TIME_COLUMNS = ("submit_time", "run_time", "req_time")


def _integral(frame: pl.DataFrame, name: str) -> pl.Expr:
    """A time or count column as int64; fractions of a second round up (the second is occupied).
    Non-numeric columns, NaN, infinities and times beyond LARGEST_TIME are refused, naming the jobs."""
    dtype = frame.schema[name]
    if not (dtype.is_numeric() or dtype == pl.Null):
        raise SimulationInputError(f"column {name} must hold numbers, not {dtype}")
    column = pl.col(name)
    if dtype.is_float():
        _fail_if(frame, column.is_nan() | column.is_infinite(), f"{name} is NaN or infinite")
    if dtype.is_numeric() and (name in TIME_COLUMNS or name not in REQUIRED):
        _fail_if(frame, column.abs() > LARGEST_TIME, f"{name} beyond 2^53 s (the simulation clock would overflow)")
    if dtype.is_float():
        column = column.ceil()
    return column.cast(pl.Int64)


def pyss_repairs(frame: pl.DataFrame, machine_size: int) -> pl.DataFrame:
    """The published simulator's input repairs (docs/simulator.md, pyss semantics), which matter on unfiltered logs.

    procs = requested processors if positive, else allocated, within [1, machine]; a job with a
    non-positive runtime or a negative submit time runs 1 s with a 1 s estimate; a job without a
    requested time runs 1 s (a quirk kept for fidelity) and plans with its runtime; otherwise it plans
    with max(requested, runtime) and runs min(runtime, requested).
    """
    requested_procs = pl.col("req_procs") if "req_procs" in frame.columns else pl.lit(None, pl.Int64)
    allocated = pl.col("alloc_procs") if "alloc_procs" in frame.columns else pl.col("procs")
    run, req = pl.col("run_time"), pl.col("req_time")
    broken = (run.fill_null(0) <= 0) | (pl.col("submit_time") < 0)
    no_request = req.is_null() | (req <= 0)
    return frame.with_columns(
        procs=pl.when(requested_procs > 0).then(requested_procs).otherwise(allocated).clip(1, machine_size),
        submit_time=pl.when(broken).then(pl.col("submit_time").clip(lower_bound=1)).otherwise(pl.col("submit_time")),
        run_time=pl.when(broken | no_request).then(1).otherwise(pl.min_horizontal(run, req)),
        req_time=pl.when(broken).then(1).when(no_request).then(run).otherwise(pl.max_horizontal(run, req)),
    )


def workload_from(
    jobs: pl.DataFrame | pa.Table, machine_size: int, *, pyss: bool, prediction_column: str | None
) -> tuple[Workload, pl.DataFrame]:
    """Checks the columns and returns the engine input and the frame it came from (after repairs)."""
    frame = as_frame(jobs)
    wanted = (*REQUIRED, *([prediction_column] if prediction_column else []))
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise SimulationInputError(
            f"the jobs lack column(s) {', '.join(missing)}; the simulator reads {', '.join(wanted)} "
            "(as in the lake's swf.jobs_clean and swf.jobs_strong views)"
        )
    if pyss:
        # A repaired submit time (max(submit, 1)) may move a job; pyss orders events by time and
        # then by file order, which a stable sort keeps.
        frame = pyss_repairs(frame, machine_size).sort("submit_time", maintain_order=True)
    _fail_if(frame, pl.col("job_id").is_null(), "missing job ids")
    for name, what in (("submit_time", "submit"), ("run_time", "run"), ("procs", "procs")):
        _fail_if(frame, pl.col(name).is_null(), f"missing {what} values")
    typed = frame.select(
        job_id=_integral(frame, "job_id"),
        submit_time=_integral(frame, "submit_time"),
        run_time=_integral(frame, "run_time"),
        # A job without a requested time plans with its runtime (an exact estimate).
        req_time=pl.coalesce(_integral(frame, "req_time"), _integral(frame, "run_time")),
        procs=_integral(frame, "procs"),
        user_id=_integral(frame, "user_id").fill_null(-1),
    )
    last_submit, work = typed.select(
        pl.col("submit_time").max(), pl.min_horizontal("run_time", "req_time").clip(lower_bound=0).sum()
    ).row(0)
    if (last_submit or 0) + (work or 0) > LATEST_END:
        raise SimulationInputError(
            f"the last submit time ({last_submit} s) plus the jobs' runtimes ({work} s) exceed 2^62 s: "
            "the simulated clock could overflow"
        )
    prediction, warnings = None, []
    if prediction_column:
        missing_predictions = frame[prediction_column].null_count()
        if frame.height and missing_predictions == frame.height:
            hint = (
                f": run `lakehouse report predictions LOG` first, which stores {PREDICTED_WALLTIME}"
                if prediction_column == PREDICTED_WALLTIME
                else ""
            )
            raise SimulationInputError(
                f"column {prediction_column} holds no prediction for any of the {frame.height:,} jobs{hint}"
            )
        if missing_predictions:
            warnings.append(
                f"{missing_predictions:,} of {frame.height:,} jobs have no {prediction_column}: they use their "
                "requested time"
            )
        # Missing predictions fall back to the requested time (counted in the warning above).
        predicted = pl.coalesce(_integral(frame, prediction_column), typed["req_time"])
        prediction = frame.select(predicted).to_series().to_numpy()
    arrays = [np.ascontiguousarray(typed[c].to_numpy(), dtype=np.int64) for c in typed.columns]
    workload = Workload(
        *arrays, prediction=None if prediction is None else np.ascontiguousarray(prediction), warnings=warnings
    )
    return workload, frame
