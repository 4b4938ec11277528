"""Packing tasks with periodic demand onto machines.

Each task of job j demands W_j(t) = C_j + rho_j sin(2 pi t / P + phi_j), with one period P for all.  A
set S of tasks fits on a machine of capacity K at every instant iff

    sum_S C_j + | sum_S rho_j e^{i phi_j} | <= K,

since the sum of sinusoids of one period is one sinusoid whose amplitude is the modulus of the sum of
the phasors.  A machine's state is therefore three numbers: (sum C, sum rho cos phi, sum rho sin phi),
and its peak load is sum C + |phasor sum|.

Lower bound.  Summing the machine constraints over the K machines used, with the triangle inequality
|sum_k z_k| <= sum_k |z_k|:  sum_j N_j C_j + |sum_j N_j rho_j e^{i phi_j}| <= K_used * capacity, so

    machines >= (sum_j N_j C_j + |sum_j N_j rho_j e^{i phi_j}|) / capacity,

the optimum of the continuous relaxation of the exact model (spreading every job evenly over that many
machines gives every machine the same phasor, so the triangle inequality holds with equality).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import cast

import numpy as np
import polars as pl

from lakehouse import _native
from lakehouse.base.catalog import named_query, sql_literal
from lakehouse.base.errors import LakehouseError, TooLittleDataError
from lakehouse.base.results import store
from lakehouse.models.packing import PACKING

EPS = 1e-9  # slack on the capacity test: sums of floats


class PackingInputError(LakehouseError, ValueError):
    """Demands that cannot be packed; the message names the rows."""


@dataclass(frozen=True)
class Tasks:
    """One entry per task (jobs expanded), in packing order."""

    job: np.ndarray
    c: np.ndarray
    dx: np.ndarray  # rho cos phi
    dy: np.ndarray  # rho sin phi

    @property
    def peak(self) -> np.ndarray:
        return self.c + np.hypot(self.dx, self.dy)


def check_jobs(jobs: pl.DataFrame, capacity: float, clip: bool = False) -> pl.DataFrame:
    """Columns job, tasks, c, rho, phi; errors name the offending jobs."""
    missing = {"job", "tasks", "c", "rho", "phi"} - set(jobs.columns)
    if missing:
        raise PackingInputError(f"the jobs lack column(s) {', '.join(sorted(missing))} (need job, tasks, c, rho, phi)")
    if capacity <= 0 or not math.isfinite(capacity):
        raise PackingInputError(f"machine capacity must be positive, got {capacity}")
    try:
        jobs = jobs.with_columns(pl.col("c", "rho", "phi").cast(pl.Float64), pl.col("tasks").cast(pl.Int64))
    except pl.exceptions.PolarsError as exc:
        raise PackingInputError(f"c, rho and phi must be numbers and tasks an integer ({exc})") from None

    def fail_if(mask: pl.Expr, what: str) -> None:
        bad = jobs.filter(mask)["job"].to_list()
        if bad:
            shown = ", ".join(map(str, bad[:10])) + (f" and {len(bad) - 10} more" if len(bad) > 10 else "")
            raise PackingInputError(f"{what}: job {shown}")

    values = [pl.col(c) for c in ("c", "rho", "phi")]
    fail_if(pl.any_horizontal([v.is_null() | v.is_nan() | v.is_infinite() for v in values]), "missing or NaN demands")
    fail_if(pl.any_horizontal([pl.col("c") < 0, pl.col("rho") < 0]), "negative demands")
    fail_if(pl.col("tasks").is_null() | (pl.col("tasks") <= 0), "jobs need at least one task")
    if clip:
        jobs = jobs.with_columns(rho=pl.min_horizontal("rho", "c"))
    fail_if(
        pl.col("rho") > pl.col("c"),
        "amplitude above the level (demand would go negative; pass clip=True / --clip to use rho = c)",
    )
    fail_if(pl.col("c") + pl.col("rho") > capacity + EPS, f"a task peaks above the machine capacity {capacity}")
    return jobs


class TaskOrder(enum.StrEnum):
    c = "c"  # decreasing level C
    peak = "peak"  # decreasing peak C + rho


#: What `lakehouse pack` packs by default: the fits of `lakehouse report periodicity`.
DEFAULT_PACK_QUERY = "SELECT job_id AS job, tasks, c, rho, phi FROM analysis.job_sinusoids"


def expand(jobs: pl.DataFrame, order: str = "c") -> Tasks:
    """Tasks by decreasing C (order="c") or decreasing C + rho (order="peak"); ties keep job order."""
    counts = jobs["tasks"].to_numpy()
    pick = lambda name: np.repeat(jobs[name].to_numpy().astype(float), counts)  # noqa: E731
    job = np.repeat(jobs["job"].to_numpy(), counts)
    c, rho, phi = pick("c"), pick("rho"), pick("phi")
    key = c if order == "c" else c + rho
    if order not in ("c", "peak"):
        raise PackingInputError(f"unknown order {order!r}: c or peak")
    idx = np.argsort(-key, kind="stable")
    return Tasks(job[idx], c[idx], (rho * np.cos(phi))[idx], (rho * np.sin(phi))[idx])


def lower_bound(jobs: pl.DataFrame, capacity: float) -> float:
    """(sum N C + |sum N rho e^{i phi}|) / capacity (see the module docstring)."""
    n = jobs["tasks"].to_numpy().astype(float)
    phasor = np.sum(n * jobs["rho"].to_numpy() * np.exp(1j * jobs["phi"].to_numpy()))
    return float((np.sum(n * jobs["c"].to_numpy()) + abs(phasor)) / capacity)


def _place(tasks: Tasks, capacity: float, rule: str, machines: int | None = None) -> np.ndarray | None:
    """Machine of each task (packing order), or None when a fixed number of machines is too few.

    The scan over machines per task runs compiled (`lakehouse._native.pack_tasks`, sim/src/packing.rs).
    """
    return _native.pack_tasks(
        np.ascontiguousarray(tasks.c, dtype=np.float64),
        np.ascontiguousarray(tasks.dx, dtype=np.float64),
        np.ascontiguousarray(tasks.dy, dtype=np.float64),
        float(capacity),
        rule,
        machines,
    )


def _unbounded(where: np.ndarray | None) -> np.ndarray:
    """A packing without a machine count (each task finds a machine, a new one at worst)."""
    assert where is not None
    return where


def ffd(tasks: Tasks, capacity: float) -> np.ndarray:
    """First fit: the lowest-index machine where the task fits, else a new one."""
    return _unbounded(_place(tasks, capacity, "first"))


def bfd(tasks: Tasks, capacity: float) -> np.ndarray:
    """Best fit: the machine whose peak after adding the task is largest while <= capacity."""
    return _unbounded(_place(tasks, capacity, "best"))


def mm(tasks: Tasks, capacity: float, machines: int) -> np.ndarray | None:
    """With `machines` machines, each task to the one whose resulting peak is smallest (None: fails)."""
    return _place(tasks, capacity, "least", machines)


def by_peak(tasks: Tasks) -> Tasks:
    """Every task as a constant at its peak C + rho (what packing by peak assumes)."""
    zero = np.zeros_like(tasks.c)
    return Tasks(tasks.job, tasks.peak, zero, zero)


DOWNWARD_CHECKS = 3


def smallest_mm(tasks: Tasks, capacity: float, start: int) -> tuple[int, np.ndarray]:
    """A small M from `start` up for which MM(M) succeeds, and its packing.

    Feasibility of MM is not monotone in M, so a plain bisection can step over a feasible M.  The
    search gallops up from `start` (the lower bound: start, +1, +2, +4, ...) to a feasible M, bisects
    between the last failure and it, and then, as the guard, also tries the DOWNWARD_CHECKS values
    just below the result, keeping any that succeeds.  The answer is always MM's own packing (never
    another heuristic's: on big tasks MM may need more machines than FFD, which is one of the paper's
    findings); it is the smallest feasible M unless feasibility flips more often than the guard looks.
    The gallop ends: with a machine per task, every task fits (each task's peak is at most the
    capacity, as check_jobs ensures).
    """
    tried: dict[int, np.ndarray | None] = {}

    def attempt(machines: int) -> np.ndarray | None:
        if machines not in tried:
            tried[machines] = mm(tasks, capacity, machines)
        return tried[machines]

    low, step, high = max(start, 1) - 1, 1, None  # low: largest M known to fail (or below the range)
    enough = max(len(tasks.c), 1)  # a machine per task
    while high is None:
        candidate = min(low + step, enough)
        if attempt(candidate) is not None:
            high = candidate
        elif candidate == enough:  # (check_jobs refuses such a task before any packing)
            raise ValueError("MM cannot place a task even on a machine of its own: its peak exceeds the capacity")
        else:
            low, step = candidate, step * 2
    while high - low > 1:
        middle = (low + high) // 2
        if attempt(middle) is not None:
            high = middle
        else:
            low = middle
    for machines in range(high - 1, max(high - 1 - DOWNWARD_CHECKS, max(start, 1) - 1), -1):
        if attempt(machines) is not None:
            high = machines
    return high, _unbounded(tried[high])  # high succeeded


def peak_loads(tasks: Tasks, where: np.ndarray) -> np.ndarray:
    """Peak load of each machine used, from the phasor sums."""
    machines = int(where.max()) + 1 if len(where) else 0
    s = np.bincount(where, tasks.c, machines)
    x = np.bincount(where, tasks.dx, machines)
    y = np.bincount(where, tasks.dy, machines)
    return s + np.hypot(x, y)


def pack_all(jobs: pl.DataFrame, capacity: float, order: str = "c", clip: bool = False) -> pl.DataFrame:
    """Machines needed by each heuristic, next to the lower bound (every ratio is relative to it)."""
    jobs = check_jobs(jobs, capacity, clip)
    tasks = expand(jobs, order)
    bound = lower_bound(jobs, capacity)
    first = ffd(tasks, capacity)
    used = {"FFD": int(first.max()) + 1, "BFD": int(bfd(tasks, capacity).max()) + 1}
    used["MM"] = smallest_mm(tasks, capacity, math.ceil(bound - EPS))[0]
    used["MMM"] = smallest_mm(by_peak(expand(jobs, "peak")), capacity, math.ceil(bound - EPS))[0]
    return pl.DataFrame(
        {
            "heuristic": list(used),
            "machines": list(used.values()),
            "lower_bound": [bound] * len(used),
            "ratio_to_bound": [m / bound if bound else None for m in used.values()],
        }
    )


@dataclass(frozen=True)
class ExactResult:
    machines: int  # the best packing found (proved optimal when `optimal`)
    optimal: bool
    where: np.ndarray  # machine of each task, in the order of `expand(jobs)`
    solver_statuses: dict[int, str]  # status of each decision problem "do K machines suffice?"


def exact(jobs: pl.DataFrame, capacity: float, time_limit: float = 60.0) -> ExactResult:
    """Fewest machines, by the integer conic model solved with SCIP (through cvxpy).

    Decision version, counting down from the best heuristic: "do K machines suffice?" with integer
    X[j, k] >= 0 tasks of job j on machine k, sum_k X[j, k] = N_j, and for every machine the cone
    || (sum_j X[j,k] rho_j cos phi_j, sum_j X[j,k] rho_j sin phi_j) || <= capacity - sum_j X[j,k] C_j.
    Machine symmetry is broken by ordering the machines by level (sum_j X[j,k] C_j non-increasing).
    The first K that SCIP proves infeasible makes K + 1 optimal; a time-out leaves the answer unproved.
    Every solution is re-checked with our own peak function.
    """
    import cvxpy as cp  # a second to import: only the exact packing needs it

    jobs = check_jobs(jobs, capacity)
    n = jobs["tasks"].to_numpy().astype(float)
    c, rho, phi = (jobs[k].to_numpy() for k in ("c", "rho", "phi"))
    tasks = expand(jobs)
    best_where = ffd(tasks, capacity)
    alternative = bfd(tasks, capacity)
    if alternative.max() < best_where.max():
        best_where = alternative
    best = int(best_where.max()) + 1
    floor = max(1, math.ceil(lower_bound(jobs, capacity) - EPS))
    statuses: dict[int, str] = {}
    for machines in range(best - 1, floor - 1, -1):
        x = cp.Variable((len(n), machines), integer=True)
        level = c @ x
        constraints = [x >= 0, cp.sum(x, axis=1) == n, level[:-1] >= level[1:]]
        for k in range(machines):
            phasor = cp.hstack([(rho * np.cos(phi)) @ x[:, k], (rho * np.sin(phi)) @ x[:, k]])
            constraints.append(cp.norm(phasor, 2) <= capacity - level[k])
        problem = cp.Problem(cp.Minimize(0), constraints)
        try:
            problem.solve(solver=cp.SCIP, scip_params={"limits/time": time_limit})
        except cp.error.SolverError:
            # cvxpy raises when SCIP stops without a solution, e.g. at the time limit.
            statuses[machines] = f"not settled (SCIP stopped, time limit {time_limit:g} s)"
            return ExactResult(best, False, best_where, statuses)
        statuses[machines] = problem.status
        if problem.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
            return ExactResult(best, True, best_where, statuses)
        if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            return ExactResult(best, False, best_where, statuses)
        where = _assignment(np.rint(cast(np.ndarray, x.value)).astype(int), tasks, jobs["job"].to_numpy())
        if peak_loads(tasks, where).max() > capacity + 1e-6:  # our own check, not the solver's word
            statuses[machines] += " (rejected: over capacity on re-check)"
            return ExactResult(best, False, best_where, statuses)
        best, best_where = machines, where
    return ExactResult(best, True, best_where, statuses)


def _assignment(counts: np.ndarray, tasks: Tasks, job_ids: np.ndarray) -> np.ndarray:
    """Machine of each task (in `tasks` order) from the per-job, per-machine task counts."""
    row_of = {job: i for i, job in enumerate(job_ids)}
    remaining = counts.copy()
    where = np.empty(len(tasks.job), dtype=np.int64)
    for i, job in enumerate(tasks.job):
        row = row_of[job]
        machine = int(np.flatnonzero(remaining[row] > 0)[0])
        remaining[row, machine] -= 1
        where[i] = machine
    return where


@dataclass(frozen=True)
class Packed:
    table: pl.DataFrame  # one row per heuristic (`pack_all`)
    capacity: float
    jobs: int
    tasks: int
    query: str  # the query that chose the jobs


def store_packing(lake, packed: Packed) -> None:
    """Store a packing where analysis.packing reads it."""
    rows = packed.table.with_columns(
        capacity=pl.lit(packed.capacity),
        tasks=pl.lit(packed.tasks),
        jobs=pl.lit(packed.jobs),
        query=pl.lit(packed.query),
    )
    store(lake, PACKING, rows)


def default_capacity(lake, cell: str | None = None) -> float:
    """The most common CPU capacity among the machines of the 2011 trace, or of one cell of the 2019
    trace (in NCU), read from cluster.machines."""
    trace = "google-2011" if cell is None else "google-2019"
    capacity = lake.query(named_query("machine_capacity", __package__), {"trace": trace, "cell": cell})["capacity"][0]
    if capacity is None:
        where = f"{trace} cell {cell}" if cell else trace
        raise TooLittleDataError(
            f"no machine with a CPU capacity in cluster.machines ({where}): give --capacity, or ingest the trace's "
            "machine_events"
        )
    return float(capacity)


def periodic_jobs_2019(cell: str) -> str:
    """The query of one cell's periodic jobs of the 2019 trace: a cell's jobs share its machines, so a
    packing is per cell."""
    return f"SELECT job_id AS job, tasks, c, rho, phi FROM analysis.periodicity_2019 WHERE cell = {sql_literal(cell)}"


def cell_to_pack(lake, cell: str | None) -> str:
    """The cell of the 2019 trace to pack: the one named, or the only one with periodic jobs."""
    cells = lake.query(named_query("periodicity_2019_cells", __package__))["cell"].to_list()
    if not cells:
        raise TooLittleDataError(
            "no periodic job of Google's 2019 trace to pack: run `lakehouse report periodicity --trace google-2019`"
        )
    if cell is None:
        if len(cells) > 1:
            raise PackingInputError(
                f"cells {', '.join(cells)} have periodic jobs: name one with --cell (a cell's jobs share its machines)"
            )
        return str(cells[0])
    if cell not in cells:
        raise TooLittleDataError(f"no periodic job of cell {cell} to pack: the fits are of cell(s) {', '.join(cells)}")
    return cell


def pack_lake(
    lake,
    query: str = DEFAULT_PACK_QUERY,
    capacity: float | None = None,
    order: str = "c",
    clip: bool = False,
    cell: str | None = None,
) -> Packed:
    """Pack the jobs a query over the lake returns (`store_packing` keeps the result as analysis.packing);
    `cell`: the query reads that cell of the 2019 trace, whose machines give the default capacity."""
    jobs = lake.user_select(query)
    if jobs.is_empty():
        if query == DEFAULT_PACK_QUERY:
            raise TooLittleDataError(
                "no periodic job to pack: analysis.job_sinusoids is empty (run `lakehouse report periodicity` "
                "on a Google lake with at least a day of task_usage)"
            )
        raise TooLittleDataError("the query returned no jobs")
    capacity = default_capacity(lake, cell) if capacity is None else float(capacity)
    table = pack_all(jobs, capacity, order=order, clip=clip)
    return Packed(table, capacity, jobs.height, int(jobs["tasks"].sum()), query)
