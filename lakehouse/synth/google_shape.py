"""A Google trace with the shape of the whole clusterdata-2011-2, scaled by one factor.

`lakehouse.synth.google_trace` plants ground truth in small traces; this one is for proving the
reports at the real trace's size.  At scale 1 it has the published totals of the real trace over its
29 days: 672,074 jobs, about 25.4 million tasks, 1.23 billion task_usage rows and 144.6 million task
events, on 12,583 machines.  A scale of 0.2 has a fifth of every count (jobs, tasks, machines, usage
rows, parts of 2.5 million usage rows as in the published trace) over the same 29 days.

Calibrated on the real data kept with the tests (`tests/test_google_shape.py` checks the generated
statistics against these targets):

- jobs: 3,981 of the 672,074 had tasks before the trace window, 2,329 of which never end (the
  long-running services, their tasks running through all 8,352 windows) and 1,652 end after a
  time drawn from the real end times of such jobs (median 2.9 days); the others are submitted
  uniformly over the 29 days;
- scheduling classes of jobs in the real shares (38 / 32 / 29 / 1 % for classes 0-3);
- tasks per job: single-task in the real shares (79 % of submitted jobs, 58 % of the long-running ones,
  62 % of the other jobs present at the start), else log-normal around the real medians of the
  multi-task jobs (22, 5 and 10 tasks), with the spreads that give the real means (27 tasks per
  long-running job, 49 per other job present at the start) and the published total of tasks;
- task durations (schedule to end) log-normal around the real median (582 s), with the spread that
  gives the published number of usage rows (about 21 windows per submitted task);
- a third of the jobs, the large ones likelier, have their 1-second samples switched off, which leaves
  about 27 % of the usage windows measured, as in the real sample;
- task events: submit, schedule and end, and evictions (each: evict, submit, schedule) drawn to give
  the published events per task.

Not modelled: the machines tasks run on beyond a uniform draw, the resource measures other than CPU
(zero), the exact times within a window.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
from scipy.special import ndtri

from lakehouse.base.google_format import tables
from lakehouse.synth.google_trace import (
    DAY_S,
    END_SHARES,
    FAIL,
    FINISH,
    KILL,
    PRIORITIES,
    PRIORITY_SHARES,
    SCHEDULE,
    SUBMIT,
    TRACE_START_US,
    US,
    WEEK_S,
    WINDOW_US,
    ZERO_SAMPLE_SHARE,
)
from lakehouse.synth.lake_parts import LakeParts

EVICT = 2
DAYS = 29
WINDOWS = DAYS * DAY_S * US // WINDOW_US  # 8,352 five-minute windows
END_US = TRACE_START_US + WINDOWS * WINDOW_US

#: The real trace's published totals (scale 1).
JOBS = 672_074
TASKS = 25_424_731
USAGE_ROWS = 1_232_799_308
TASK_EVENTS = 144_648_288
MACHINES = 12_583
USAGE_ROWS_PER_PART = USAGE_ROWS // 500  # the trace is published in 500 parts per table
#: Jobs with tasks before the trace window (real task_events): those that never end (job_events), the others.
LONG_RUNNING_JOBS, ENDING_EARLY_JOBS = 2_329, 1_652
#: Days after the trace start by which the jobs present at the start that do end have ended (real
#: quantiles, at probabilities 0, 0.05, 0.1, ..., 0.9, 0.95, 1).
EARLY_END_DAYS = (0.0, 0.053, 0.247, 1.053, 1.840, 1.927, 2.905, 4.997, 9.761, 15.178, 22.399, 23.120, 29.0)
EARLY_END_PROBABILITIES = (0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)
JOB_CLASS_SHARES = (0.383, 0.320, 0.289, 0.008)  # of jobs, classes 0-3 (real job_events)
MAX_TASKS = 20_000


def stratified(rng: np.random.Generator, n: int) -> np.ndarray:
    """n uniforms, one in each n-th of [0, 1), in random order: a few draws (the 47 long-running jobs of
    a scale of 0.02) still span the distribution, tail included."""
    return (rng.permutation(n) + rng.random(n)) / n


def systematic(rng: np.random.Generator, p: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Each item drawn with probability p, by systematic sampling along `order` (one random offset):
    as many items as p sums to, spread evenly along the order.  Along the jobs' sizes, the few large
    jobs that hold most usage windows are split between drawn and not as the probabilities say, not
    as a handful of coin flips happen to fall."""
    ranked = np.argsort(order, kind="stable")
    cumulative = np.cumsum(p[ranked]) + rng.random()
    drawn = np.zeros(p.size, dtype=bool)
    drawn[ranked] = np.floor(cumulative) > np.floor(cumulative - p[ranked])
    return drawn


@dataclass(frozen=True)
class TasksPerJob:
    """One task with probability `single`, else about exp(N(ln median, spread)) tasks (at least 2),
    scaled so that the jobs have `mean` tasks on average (the real means, which a heavy tail drawn a few
    times would miss by far)."""

    single: float
    median: float
    spread: float
    mean: float

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        u = stratified(rng, n)
        single = u < self.single
        z = ndtri(np.clip((u - self.single) / (1 - self.single), 1e-12, 1 - 1e-12))
        multi = np.where(single, 0.0, np.exp(math.log(self.median) + self.spread * z))
        wanted = self.mean * n - single.sum()  # tasks the multi-task jobs must have together
        for _ in range(4):  # scale the jobs below the cap until the total is reached
            capped = multi >= MAX_TASKS
            free = multi[~capped].sum()
            if free <= 0 or wanted <= 0:
                break
            multi = np.where(
                capped, MAX_TASKS, np.minimum(multi * (wanted - capped.sum() * MAX_TASKS) / free, MAX_TASKS)
            )
        return np.where(single, 1, np.clip(np.round(multi), 2, MAX_TASKS)).astype(np.int64)


# Multi-task medians and spreads as measured in the real data; means: the long-running and the other
# jobs present at the start as measured, the submitted jobs those that give the published total of tasks.
LONG_RUNNING_TASKS = TasksPerJob(0.578, 5, 2.25, 27.09)
ENDING_EARLY_TASKS = TasksPerJob(0.616, 10, 2.25, 49.18)
BATCH_TASKS = TasksPerJob(
    0.79, 16, 2.08, (TASKS - LONG_RUNNING_JOBS * 27.09 - ENDING_EARLY_JOBS * 49.18) / (JOBS - 3_981)
)
TASK_SECONDS_MEDIAN, TASK_SECONDS_SPREAD = 582.0, 2.25
SAMPLING_OFF_SHARE, MULTI_TASK_SAMPLING_OFF_WEIGHT = 0.33, 3.5
EVICTIONS_PER_TASK = 0.9
MISSING_WINDOW_SHARE = 0.05  # services' windows missing from the usage table

LONG_RUNNING, ENDING_EARLY, BATCH = 0, 1, 2


@dataclass(frozen=True)
class Shape:
    scale: float = 0.01
    seed: int = 0

    @property
    def parts(self) -> int:
        return max(1, round(500 * self.scale))


@dataclass
class Tasks:
    """Every task of the trace as columns (index = task number)."""

    job: np.ndarray  # index into the jobs
    index: np.ndarray  # task index within its job
    start_us: np.ndarray  # first schedule (0: before the trace window)
    end_us: np.ndarray  # end event time; END_US for a task that never ends
    ends: np.ndarray  # bool: an end event within the trace
    machine: np.ndarray
    cpu_request: np.ndarray
    memory_request: np.ndarray
    level: np.ndarray  # mean CPU rate (services: the level of the daily and weekly cycles)
    daily: np.ndarray
    daily_phase: np.ndarray
    weekly: np.ndarray
    weekly_phase: np.ndarray


def generate_shape_lake(
    root: Path, shape: Shape = Shape(), on_part: Callable[[str], None] | None = None
) -> dict[str, object]:
    """Write a trace of this shape into the lake at `root` (made if missing); returns its counts.
    `on_part` hears of each part written ("task_usage 12/100")."""
    rng = np.random.default_rng(shape.seed)
    jobs = _jobs(rng, shape.scale)
    tasks = _tasks(rng, jobs, shape.scale)
    writer = LakeParts(root, on_part)
    machine_ids = np.arange(1, max(1, round(MACHINES * shape.scale)) + 1) * 1000 + 7
    writer.write("machine_events", 0, 1, _machine_events(rng, machine_ids))
    job_events = _events_by_part(writer, "job_events", _job_events(rng, jobs), jobs, tasks, shape.parts)
    task_events = _events_by_part(writer, "task_events", _task_events(rng, tasks, jobs), jobs, tasks, shape.parts)
    usage_rows, measured_rows = _usage_by_part(writer, rng, jobs, tasks, machine_ids, shape.parts)
    writer.commit()
    return {
        "shape": asdict(shape),
        "jobs": int(jobs["id"].size),
        "tasks": int(tasks.job.size),
        "usage_rows": usage_rows,
        "measured_usage_rows": measured_rows,
        "task_events": task_events,
        "job_events": job_events,
        "machines": int(machine_ids.size),
        "parts": shape.parts,
    }


def _jobs(rng: np.random.Generator, scale: float) -> dict[str, np.ndarray]:
    counts = [max(1, round(n * scale)) for n in (LONG_RUNNING_JOBS, ENDING_EARLY_JOBS)]
    counts.append(max(1, round(JOBS * scale)) - sum(counts))
    kind = np.repeat([LONG_RUNNING, ENDING_EARLY, BATCH], counts)
    n = kind.size
    tasks = np.empty(n, dtype=np.int64)
    for which, model in ((LONG_RUNNING, LONG_RUNNING_TASKS), (ENDING_EARLY, ENDING_EARLY_TASKS), (BATCH, BATCH_TASKS)):
        tasks[kind == which] = model.draw(rng, int((kind == which).sum()))
    submit = np.where(kind == BATCH, rng.integers(TRACE_START_US, END_US - WINDOW_US, n), 0)
    early_end_s = np.interp(stratified(rng, n), EARLY_END_PROBABILITIES, EARLY_END_DAYS) * DAY_S
    end = np.where(kind == ENDING_EARLY, TRACE_START_US + (early_end_s * US).astype(np.int64), END_US)
    klass = rng.choice(4, size=n, p=JOB_CLASS_SHARES)
    weight = np.where(tasks > 1, MULTI_TASK_SAMPLING_OFF_WEIGHT, 1.0)
    sampling_off = systematic(rng, np.minimum(SAMPLING_OFF_SHARE * weight / weight.mean(), 1.0), order=-tasks)
    return {
        "id": 6_000_000_000 + np.arange(n, dtype=np.int64) * 13,
        "kind": kind,
        "tasks": tasks,
        "submit": submit,
        "end": end,
        "class": klass,
        "priority": rng.choice(PRIORITIES, size=n, p=PRIORITY_SHARES),
        "user": rng.integers(0, 2_000, n),
        "sampling_off": sampling_off,
        "final": rng.choice([FINISH, KILL, FAIL], size=n, p=END_SHARES),
    }


def _tasks(rng: np.random.Generator, jobs: dict[str, np.ndarray], scale: float) -> Tasks:
    job = np.repeat(np.arange(jobs["id"].size), jobs["tasks"])
    first = np.cumsum(jobs["tasks"]) - jobs["tasks"]
    index = np.arange(job.size) - first[job]
    kind = jobs["kind"][job]
    batch = kind == BATCH
    wait = rng.integers(0, 60 * US, job.size)
    start = np.where(batch, jobs["submit"][job] + wait, 0)
    seconds = np.exp(rng.normal(math.log(TASK_SECONDS_MEDIAN), TASK_SECONDS_SPREAD, job.size))
    end = np.where(batch, start + (np.minimum(seconds, DAYS * DAY_S) * US).astype(np.int64), jobs["end"][job])
    ends = (kind != LONG_RUNNING) & (end < END_US)
    end = np.minimum(end, END_US)
    service = ~batch
    return Tasks(
        job=job,
        index=index,
        start_us=start,
        end_us=end,
        ends=ends,
        machine=rng.integers(0, max(1, round(MACHINES * scale)), job.size),
        cpu_request=rng.lognormal(math.log(0.03), 0.8, job.size),
        memory_request=rng.lognormal(math.log(0.025), 0.9, job.size),
        level=np.where(service, rng.uniform(0.02, 0.2, job.size), rng.gamma(2.0, 0.03 / 4, job.size) * 2),
        daily=np.where(service, rng.uniform(0.0, 0.5, job.size), 0.0),
        daily_phase=rng.uniform(-np.pi, np.pi, job.size),
        weekly=np.where(service, rng.uniform(0.0, 0.3, job.size), 0.0),
        weekly_phase=rng.uniform(-np.pi, np.pi, job.size),
    )


def _machine_events(rng: np.random.Generator, machine_ids: np.ndarray) -> pa.Table:
    n = machine_ids.size
    return _table(
        "machine_events",
        time=np.zeros(n, dtype=np.int64),
        machine_id=machine_ids,
        event_type=np.zeros(n, dtype=np.int64),
        platform_id=np.full(n, "HofLGzk1Or/8Ildj2+Lqv0UGGvY82NLoni8+J/Yy0RU="),
        cpus=rng.choice([0.25, 0.5, 1.0], n, p=[0.1, 0.6, 0.3]),
        memory=rng.choice([0.25, 0.5, 0.75, 1.0], n),
    )


def _job_events(rng: np.random.Generator, jobs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """(time, job, event) of every job event: submit, schedule and, for jobs that end in the trace, the end."""
    n = jobs["id"].size
    ids = np.arange(n)
    schedule = np.where(jobs["submit"] > 0, jobs["submit"] + rng.integers(0, 60 * US, n), 0)
    ending = jobs["kind"] != LONG_RUNNING
    batch_end = np.minimum(schedule + (rng.lognormal(math.log(176.0), 1.9, n) * US).astype(np.int64), END_US)
    end = np.where(jobs["kind"] == BATCH, batch_end, jobs["end"])
    ending &= end < END_US
    time = np.concatenate([jobs["submit"], schedule, end[ending]])
    job = np.concatenate([ids, ids, ids[ending]])
    event = np.concatenate([np.full(n, SUBMIT), np.full(n, SCHEDULE), jobs["final"][ending]])
    return {"time": time, "job": job, "event": event, "task": np.full(time.size, -1)}


def _task_events(rng: np.random.Generator, tasks: Tasks, jobs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """(time, task, event) of every task event: submit, schedule, evictions (evict, submit, schedule
    at a time within the task's life) and the end."""
    n = tasks.job.size
    ids = np.arange(n)
    submit = np.maximum(tasks.start_us - rng.integers(0, 60 * US, n), 0)
    submit = np.where(tasks.start_us == 0, 0, submit)
    evictions = rng.poisson(EVICTIONS_PER_TASK, n)
    evicted = np.repeat(ids, evictions)
    span = np.maximum(tasks.end_us[evicted] - tasks.start_us[evicted], 1)
    at = tasks.start_us[evicted] + (rng.random(evicted.size) * span).astype(np.int64)
    at = np.maximum(at, TRACE_START_US)
    ended = ids[tasks.ends]
    time = np.concatenate([submit, tasks.start_us, at, at, at + 1, tasks.end_us[ended]])
    task = np.concatenate([ids, ids, evicted, evicted, evicted, ended])
    event = np.concatenate(
        [
            np.full(n, SUBMIT),
            np.full(n, SCHEDULE),
            np.full(evicted.size, EVICT),
            np.full(evicted.size, SUBMIT),
            np.full(evicted.size, SCHEDULE),
            jobs["final"][tasks.job[ended]],
        ]
    )
    return {"time": time, "task": task, "event": event, "job": tasks.job[task]}


def _events_by_part(
    writer: LakeParts, table: str, events: dict[str, np.ndarray], jobs: dict[str, np.ndarray], tasks: Tasks, parts: int
) -> int:
    """Write the events in time order, split by time into `parts` parts (the trace's layout)."""
    order = np.lexsort((events["event"], events["time"]))
    bounds = np.searchsorted(events["time"][order], _part_starts(parts)[1:-1])
    for part, rows in enumerate(np.split(order, bounds)):
        job, time, event = events["job"][rows], events["time"][rows], events["event"][rows]
        columns: dict[str, object] = {
            "time": time,
            "missing_info": pa.nulls(rows.size, pa.int64()),
            "job_id": jobs["id"][job],
        }
        if table == "task_events":
            task = events["task"][rows]
            columns |= {
                "task_index": tasks.index[task],
                "machine_id": np.where(event == SUBMIT, -1, tasks.machine[task] * 1000 + 1007),
                "event_type": event,
                "user": _users(jobs["user"][job]),
                "scheduling_class": jobs["class"][job],
                "priority": jobs["priority"][job],
                "cpu_request": tasks.cpu_request[task],
                "memory_request": tasks.memory_request[task],
                "disk_space_request": np.full(rows.size, 0.0003),
                "different_machines_restriction": np.zeros(rows.size, dtype=np.int64),
            }
            columns["machine_id"] = pa.array(columns["machine_id"], mask=event == SUBMIT)
        else:
            columns |= {
                "event_type": event,
                "user": _users(jobs["user"][job]),
                "scheduling_class": jobs["class"][job],
                "job_name": _users(job, "name"),
                "logical_job_name": _users(job % 5_000, "logical"),
            }
        writer.write(table, part, parts, _table(table, **columns))
    return int(events["time"].size)


def _usage_by_part(
    writer: LakeParts,
    rng: np.random.Generator,
    jobs: dict[str, np.ndarray],
    tasks: Tasks,
    machine_ids: np.ndarray,
    parts: int,
) -> tuple[int, int]:
    """The usage windows of every task, one time part at a time (the windows of the tasks alive in it):
    memory holds one part's rows."""
    first_window = (np.maximum(tasks.start_us, TRACE_START_US) - TRACE_START_US) // WINDOW_US
    last_window = (np.maximum(tasks.end_us - 1, TRACE_START_US) - TRACE_START_US) // WINDOW_US  # inclusive
    starts = (_part_starts(parts) - TRACE_START_US) // WINDOW_US
    total = measured = 0
    service = jobs["kind"][tasks.job] != BATCH
    off = jobs["sampling_off"][tasks.job]
    for part in range(parts):
        low, high = starts[part], starts[part + 1]
        alive = np.flatnonzero((first_window < high) & (last_window >= low))
        begin = np.maximum(first_window[alive], low)
        count = np.minimum(last_window[alive], high - 1) - begin + 1
        task = np.repeat(alive, count)
        window = np.repeat(begin - np.cumsum(count) + count, count) + np.arange(task.size)
        keep = ~service[task] | (rng.random(task.size) >= MISSING_WINDOW_SHARE)
        task, window = task[keep], window[keep]
        order = np.argsort(window, kind="stable")
        task, window = task[order], window[order]
        t = window * (WINDOW_US / US)
        cycles = tasks.daily[task] * np.sin(2 * np.pi * t / DAY_S + tasks.daily_phase[task])
        cycles += tasks.weekly[task] * np.sin(2 * np.pi * t / WEEK_S + tasks.weekly_phase[task])
        noise = rng.normal(0.0, 1.0, task.size) * np.where(service[task], 0.1, 0.5)
        mean = np.clip(tasks.level[task] * (1 + cycles + noise), 0, None)
        sample = mean * rng.lognormal(0.0, 0.5, task.size)
        sample[rng.random(task.size) < ZERO_SAMPLE_SHARE] = 0.0
        sample[window == first_window[task]] = np.maximum(mean, 1e-4)[window == first_window[task]]
        sample[off[task]] = 0.0
        start = TRACE_START_US + window * WINDOW_US
        columns: dict[str, object] = {
            "start_time": start,
            "end_time": start + WINDOW_US,
            "job_id": jobs["id"][tasks.job[task]],
            "task_index": tasks.index[task],
            "machine_id": machine_ids[tasks.machine[task]],
            "cpu_rate": mean,
            "maximum_cpu_rate": mean * 1.5,
            "sample_portion": np.ones(task.size),
            "aggregation_type": np.zeros(task.size, dtype=np.int64),
            "sampled_cpu_usage": sample,
        }
        writer.write("task_usage", part, parts, _table("task_usage", **columns))
        total += task.size
        measured += int((~off[task]).sum())
    return total, measured


def _part_starts(parts: int) -> np.ndarray:
    """The bounds of the parts in trace time (parts + 1 of them): parts cover equal spans of windows,
    the first also the times before the trace window, the last the trace's end."""
    starts = TRACE_START_US + np.linspace(0, WINDOWS, parts + 1).astype(np.int64) * WINDOW_US
    starts[0], starts[-1] = 0, END_US + 1
    return starts


def _users(codes: np.ndarray, prefix: str = "user") -> pa.Array:
    """Names `prefix` + code (user names, job names) for integer codes."""
    return _names(prefix, int(codes.max(initial=0)) + 1).take(pa.array(codes))


@functools.cache
def _names(prefix: str, count: int) -> pa.Array:
    return pa.array([f"{prefix}{c}" for c in range(count)])


def _table(table: str, **columns: object) -> pa.Table:
    """The published columns of a table in order, zero (or NULL for strings) where not given."""
    arrays = []
    n = len(next(iter(columns.values())))  # type: ignore[arg-type]
    for column in tables()[table]:
        value = columns.get(column.name)
        if value is None:
            value = pa.nulls(n, pa.string()) if column.format.startswith("STRING") else np.zeros(n)
        arrays.append(pa.array(value) if not isinstance(value, pa.Array) else value)
    return pa.table(arrays, names=[c.name for c in tables()[table]])
