"""From a lake query (numpy columns, Polars or Arrow) to the engine's int64 columns, with clear errors.

The checks run on numpy arrays, so that a replay from the command line loads Polars (~70 ms) only
while the engine runs (`engine.simulate`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from lakehouse.base.errors import SimulationInputError
from lakehouse.base.job_views import PREDICTED_WALLTIME
from lakehouse.base.prediction_tables import table_of_column

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

#: The column of walltime predictions `lakehouse report predictions` stores (joined on demand).
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
    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return (self.id, self.submit, self.run, self.requested, self.procs, self.user)


def input_columns(*, pyss: bool, prediction_column: str | None, formula_columns: Sequence[str] = ()) -> list[str]:
    """The columns of a swf.jobs_* view that a replay reads (the pyss repairs look at both processor
    counts, a formula may read any numeric column); selecting only these keeps a CEA-Curie load at 0.1 s."""
    extra = ["req_procs", "alloc_procs"] if pyss else []
    prediction = [prediction_column] if prediction_column else []
    return list(dict.fromkeys([*REQUIRED, *extra, *prediction, *formula_columns]))


@dataclass(frozen=True)
class Columns:
    """Jobs as named numpy columns of one length, masked where a value is missing, and the type each
    column had where they came from (what an error names: Polars' `String`, numpy's `<U1`)."""

    arrays: dict[str, np.ndarray]
    types: dict[str, str]

    def __len__(self) -> int:
        return len(next(iter(self.arrays.values()), ()))

    def __contains__(self, name: object) -> bool:
        return name in self.arrays

    def null(self, name: str) -> np.ndarray:
        return np.ma.getmaskarray(self.arrays[name])

    def values(self, name: str) -> np.ndarray:
        """The column's values, a missing one read as 0 (look at `null` first)."""
        column = self.arrays[name]
        return np.ma.filled(column, 0) if np.ma.isMaskedArray(column) else column

    def numeric(self, name: str) -> bool:
        return self.arrays[name].dtype.kind in "iuf" or bool(self.null(name).all())

    def take(self, rows: np.ndarray) -> Columns:
        """The jobs at these positions (or where this mask is true), in that order."""
        return Columns({name: column[rows] for name, column in self.arrays.items()}, self.types)

    def only(self, name: str) -> Any:
        """The column's one value if every job has the same, else None."""
        if name not in self.arrays or not len(self) or self.null(name).any():
            return None
        column = self.arrays[name]
        return column[0] if bool((column == column[0]).all()) else None


def as_columns(
    jobs: Columns | Mapping[str, np.ndarray] | pl.DataFrame | pa.Table, names: Sequence[str] | None = None
) -> Columns:
    """Jobs from a mapping of numpy columns (masked arrays for missing values), a Polars frame or an
    Arrow table; `names`: only those of these columns that the jobs have (a replay reads six)."""
    if isinstance(jobs, Columns):
        return jobs
    if isinstance(jobs, Mapping):
        arrays = {
            str(name): column if np.ma.isMaskedArray(column) else np.asarray(column)
            for name, column in jobs.items()
            if names is None or name in names
        }
        if len({len(column) for column in arrays.values()}) > 1:
            raise SimulationInputError("the jobs' columns differ in length")
        return Columns(arrays, {name: str(column.dtype) for name, column in arrays.items()})
    module = type(jobs).__module__.split(".")[0]
    if module == "pyarrow" and type(jobs).__name__ == "Table":
        import polars as pl  # only for Arrow input: numpy columns need no Polars

        jobs = pl.from_arrow(jobs)  # type: ignore[assignment]
        module = "polars"
    if module == "polars" and type(jobs).__name__ == "DataFrame":
        kept = [name for name in jobs.columns if names is None or name in names]  # type: ignore[union-attr]
        return Columns(
            {name: _from_series(jobs[name]) for name in kept},  # type: ignore[index]
            {name: str(jobs.schema[name]) for name in kept},  # type: ignore[union-attr]
        )
    raise SimulationInputError(
        f"jobs must be a Polars DataFrame or an Arrow table (or a dict of numpy columns), not {type(jobs).__name__}"
    )


def _from_series(series: pl.Series) -> np.ndarray:
    import polars as pl  # the caller passed Polars: it is loaded already

    if series.dtype == pl.Null:
        return np.ma.masked_all(len(series), dtype=np.float64)
    if series.dtype.is_decimal():
        series = series.cast(pl.Float64)
    if not series.null_count():
        return series.to_numpy()
    filled = series.fill_null(0) if series.dtype.is_numeric() else series
    return np.ma.masked_array(filled.to_numpy(), mask=series.is_null().to_numpy())


def _fail_if(jobs: Columns, offending: np.ndarray, what: str) -> None:
    """SimulationInputError naming the first offending jobs by id, and counting them all."""
    count = int(np.count_nonzero(offending))
    if count:
        ids = jobs.arrays["job_id"][offending][:SHOWN_IDS]
        raise SimulationInputError(what, np.ma.asarray(ids).tolist(), count)


#: The largest time the simulator takes, in seconds (2^53, some 285 million years; every time is then
#: exact as a float), and the bound of the last submit time plus all runtimes (no job ends later: while
#: a job waits, another runs), which keeps every instant of the replay inside int64.
LARGEST_TIME = 2**53
LATEST_END = 2**62
TIME_COLUMNS = ("submit_time", "run_time", "req_time")
#: Beyond this a count or an id does not fit the engine's int64.
LARGEST_INTEGER = 2**63 - 1024  # (the float just below 2^63: a larger float does not convert exactly)


def _integral(jobs: Columns, name: str) -> np.ndarray:
    """A time or count column as int64 (masked where missing); fractions of a second round up (the
    second is occupied).  Non-numeric columns, NaN, infinities and times beyond LARGEST_TIME are
    refused, naming the jobs."""
    if not jobs.numeric(name):
        raise SimulationInputError(f"column {name} must hold numbers, not {jobs.types[name]}")
    missing, values = jobs.null(name), jobs.values(name)
    if values.dtype.kind == "f":
        _fail_if(jobs, ~missing & ~np.isfinite(values), f"{name} is NaN or infinite")
        values = np.ceil(np.where(missing | ~np.isfinite(values), 0, values))
    bound, what = (
        (LARGEST_TIME, "beyond 2^53 s (the simulation clock would overflow)")
        if name in TIME_COLUMNS or name not in REQUIRED
        else (LARGEST_INTEGER, "beyond 2^63 (more than 64 bits)")
    )
    _fail_if(jobs, ~missing & ((values > bound) | (values < -bound)), f"{name} {what}")
    integral = values.astype(np.int64)
    return np.ma.masked_array(integral, mask=missing) if missing.any() else integral


def pyss_repairs(jobs: Columns, machine_size: int) -> Columns:
    """The published simulator's input repairs (docs/simulator.md, pyss semantics), which matter on unfiltered logs.

    procs = requested processors if positive, else allocated, within [1, machine]; a job with a
    non-positive runtime or a negative submit time runs 1 s with a 1 s estimate; a job without a
    requested time runs 1 s (a quirk kept for fidelity) and plans with its runtime; otherwise it plans
    with max(requested, runtime) and runs min(runtime, requested).
    """
    arrays = dict(jobs.arrays)

    def column(name: str) -> np.ma.MaskedArray:
        return np.ma.asarray(jobs.arrays[name])

    procs = column("alloc_procs" if "alloc_procs" in jobs else "procs")
    if "req_procs" in jobs:
        requested_procs = column("req_procs")
        procs = np.ma.where(requested_procs.filled(0) > 0, requested_procs, procs)
    run, req, submit = column("run_time"), column("req_time"), column("submit_time")
    broken = (run.filled(0) <= 0) | (submit.filled(0) < 0)  # (a missing submit time is refused later)
    no_request = np.ma.getmaskarray(req) | (req.filled(0) <= 0)
    # The shorter / longer of runtime and request, either if the other is missing.
    run_missing, req_missing = np.ma.getmaskarray(run), np.ma.getmaskarray(req)
    shorter = np.ma.where(req_missing, run, np.ma.where(run_missing, req, np.ma.minimum(run, req)))
    longer = np.ma.where(req_missing, run, np.ma.where(run_missing, req, np.ma.maximum(run, req)))
    arrays["procs"] = np.ma.clip(procs, 1, machine_size)
    arrays["submit_time"] = np.ma.where(broken, np.ma.clip(submit, 1, None), submit)
    arrays["run_time"] = np.ma.where(broken | no_request, 1, shorter)
    arrays["req_time"] = np.ma.where(broken, 1, np.ma.where(no_request, run, longer))
    return Columns(arrays, jobs.types)


def workload_from(
    jobs: Columns | Mapping[str, np.ndarray] | pl.DataFrame | pa.Table,
    machine_size: int,
    *,
    pyss: bool,
    prediction_column: str | None,
) -> tuple[Workload, Columns]:
    """Checks the columns and returns the engine input and the columns it came from (after repairs)."""
    columns = as_columns(jobs)
    wanted = (*REQUIRED, *([prediction_column] if prediction_column else []))
    missing = [c for c in wanted if c not in columns]
    if missing:
        raise SimulationInputError(
            f"the jobs lack column(s) {', '.join(missing)}; the simulator reads {', '.join(wanted)} "
            "(as in the lake's swf.jobs_clean and swf.jobs_strong views)"
        )
    if pyss:
        # A repaired submit time (max(submit, 1)) may move a job; pyss orders events by time and
        # then by file order, which a stable sort keeps (missing times first).
        columns = pyss_repairs(columns, machine_size)
        submit = columns.values("submit_time").astype(np.float64)
        columns = columns.take(np.argsort(np.where(columns.null("submit_time"), -np.inf, submit), kind="stable"))
    _fail_if(columns, columns.null("job_id"), "missing job ids")
    for name, what in (("submit_time", "submit"), ("run_time", "run"), ("procs", "procs")):
        _fail_if(columns, columns.null(name), f"missing {what} values")
    job_id = _integral(columns, "job_id")
    submit = _integral(columns, "submit_time")
    run = _integral(columns, "run_time")
    # A job without a requested time plans with its runtime (an exact estimate).
    requested = np.ma.filled(np.ma.where(columns.null("req_time"), run, _integral(columns, "req_time")), 0)
    procs = _integral(columns, "procs")
    user = np.ma.filled(_integral(columns, "user_id"), -1)
    if len(columns):
        last_submit = int(submit.max())
        work = np.clip(np.minimum(run, requested), 0, None)
        # (Summed as floats: int64 could wrap; the bound is far from where a float is inexact.)
        if last_submit + float(work.sum(dtype=np.float64)) > LATEST_END:
            raise SimulationInputError(
                f"the last submit time ({last_submit} s) plus the jobs' runtimes ({sum(work.tolist())} s) "
                "exceed 2^62 s: the simulated clock could overflow"
            )
    prediction, warnings = None, []
    if prediction_column:
        missing_predictions = int(columns.null(prediction_column).sum())
        if len(columns) and missing_predictions == len(columns):
            table = table_of_column(prediction_column)
            hint = (
                f": run `lakehouse report predictions LOG` first, which stores {PREDICTED_WALLTIME}"
                if prediction_column == PREDICTED_WALLTIME
                else f": import the table first (lakehouse import predictions FILE --name {table})"
                if table is not None
                else ""
            )
            raise SimulationInputError(
                f"column {prediction_column} holds no prediction for any of the {len(columns):,} jobs{hint}"
            )
        if missing_predictions:
            warnings.append(
                f"{missing_predictions:,} of {len(columns):,} jobs have no {prediction_column}: they use their "
                "requested time"
            )
        # Missing predictions fall back to the requested time (counted in the warning above).
        prediction = np.ma.filled(
            np.ma.where(columns.null(prediction_column), requested, _integral(columns, prediction_column)), 0
        )
        if table_of_column(prediction_column) is not None:
            # An imported table's prediction is capped at the job's request, as the built-in predictors'
            # are: the job is killed at its request, so a longer prediction says nothing more.
            over = prediction > requested
            if over.any():
                table = table_of_column(prediction_column)
                warnings.append(
                    f"{int(over.sum()):,} of {len(columns):,} predictions of table:{table} exceed their job's "
                    "requested time: capped at it"
                )
                prediction = np.minimum(prediction, requested)
    ids, submits, runs, requests, widths, users = (
        np.ascontiguousarray(np.ma.filled(c, 0), dtype=np.int64) for c in (job_id, submit, run, requested, procs, user)
    )
    workload = Workload(
        ids,
        submits,
        runs,
        requests,
        widths,
        users,
        prediction=None if prediction is None else np.ascontiguousarray(prediction, dtype=np.int64),
        warnings=warnings,
    )
    return workload, columns
