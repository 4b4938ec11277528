"""A synthetic Google trace in exactly the clusterdata-2011-2 format, with planted ground truth.

The structure is calibrated on the real slice of the Google trace kept with the test data (the constants
below; tests/test_google_real.py::test_the_generator_is_calibrated_on_the_real_sample compares the two):
74 % of jobs have one task and the rest a long tail of tasks; scheduling classes 0-3 in shares
69/15/11/6 % of tasks; the real priorities; CPU and memory requests log-normal around 0.03 and 0.025
(normalized units); a third of the jobs, mostly the large ones, with their 1-second samples never
recorded (about 70 % of the usage windows), and in the others a sample of 0 is rare. Not modelled:
evictions and resubmissions (8 % of the real task events are EVICT). Two kinds of jobs:

- batch jobs: submitted during the trace, scheduled after a short wait, FINISH (or sometimes KILL or
  FAIL) after a log-normal runtime; usage windows while they run;
- services ("long-running"): submitted and scheduled before the trace window (time 0), never end;
  their CPU demand per task follows C + rho_d sin(2 pi t / 1 day + phi_d) + rho_w sin(2 pi t / 7 days +
  phi_w) + noise, with some windows missing.

The trace goes to ``OUTDIR/trace/`` (one folder per table, as published) and the planted truth to
``OUTDIR/truth/``: which jobs have 1-second sampling switched off (their sampled CPU is always 0),
each service's level, amplitudes (as ratios to the level), phases and noise, and the documented
anomaly planted: one job id reused for a second submission after its first instance ended (as job
6253771429 in the real trace).  Times are microseconds of the trace clock (600 s = trace start).
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import polars as pl
from isal import igzip

from lakehouse.base.google_format import tables
from lakehouse.synth.lake_parts import LakeParts

US = 1_000_000
WINDOW_US = 300 * US
TRACE_START_US = 600 * US
DAY_S, WEEK_S = 86_400, 7 * 86_400
SUBMIT, SCHEDULE, FAIL, FINISH, KILL = 0, 1, 3, 4, 5
USAGE_KEYS = ("start_time", "job_id", "task_index", "machine_id")
USAGE_MEASURES = ("cpu_rate", "sampled_cpu_usage")
SERVICES_TRUTH_SCHEMA = {
    "job_id": pl.Int64,
    "level": pl.Float64,
    "daily_ratio": pl.Float64,
    "daily_phase": pl.Float64,
    "weekly_ratio": pl.Float64,
    "weekly_phase": pl.Float64,
    "noise_ratio": pl.Float64,
}


@dataclass(frozen=True)
class Settings:
    machines: int = 20
    days: float = 2.0
    seed: int = 0
    batch_jobs_per_hour: float = 20.0
    services: int = 6
    parts: int = 4
    sampling_off_share: float = 0.33  # jobs whose 1-second samples are never recorded (real: a third)
    missing_window_share: float = 0.1  # service usage windows dropped
    noise_share: float = 0.1  # service noise, as a ratio to the level
    acyclic_service_share: float = 0.0  # services with no cycle (level + noise): the periodicity test's nulls


# Measured on the real sample (the Google trace slice of the test data; tests/test_google_real.py checks the generator
# against it): 74 % of jobs have one task, the 90th percentile is 20 tasks; task priorities.
SINGLE_TASK_SHARE = 0.74
PRIORITIES, PRIORITY_SHARES = (0, 1, 2, 8, 9, 10, 11), (0.2, 0.099, 0.57, 0.014, 0.103, 0.002, 0.012)
# How tasks end within the trace: FINISH, KILL, FAIL in the real shares of end events (0.127 / 0.07 / 0.007).
END_SHARES = (0.62, 0.34, 0.04)
# Jobs whose 1-second samples were never recorded are the large ones: a third of the jobs but about 70 %
# of the usage windows in the real sample.  A multi-task job is this much likelier to be one.
MULTI_TASK_SAMPLING_OFF_WEIGHT = 3.5
ZERO_SAMPLE_SHARE = 0.002


def _tasks_per_job(rng: np.random.Generator, n: int) -> np.ndarray:
    single = rng.random(n) < SINGLE_TASK_SHARE
    return np.where(single, 1, np.minimum(1 + rng.geometric(0.05, n), 200))


def _sampling_off(rng: np.random.Generator, tasks: np.ndarray, share: float) -> np.ndarray:
    """share of the jobs, the multi-task ones MULTI_TASK_SAMPLING_OFF_WEIGHT times likelier."""
    weight = np.where(tasks > 1, MULTI_TASK_SAMPLING_OFF_WEIGHT, 1.0)
    return rng.random(tasks.size) < np.minimum(share * weight / weight.mean(), 1.0)


def _classes(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.choice(4, size=n, p=[0.69, 0.15, 0.10, 0.06])


@dataclass
class Trace:
    """A generated trace in memory: the small tables whole, task_usage in its six informative columns
    (expanded to the published 20 one part at a time, which keeps memory at ~50 bytes per usage row)."""

    end_us: int
    tables: dict[str, pl.DataFrame]
    usage: pl.DataFrame
    jobs_truth: pl.DataFrame
    services_truth: pl.DataFrame


def generate(out: Path, settings: Settings = Settings()) -> dict[str, object]:
    """Write a trace to `out/trace` (one folder per table) and its truth to `out/truth`; returns a summary."""
    trace = build(settings)
    for table, frame in trace.tables.items():
        parts = 1 if table == "machine_events" else settings.parts
        for part, chunk in _time_parts(frame, "time", parts, trace.end_us):
            _write_csv_part(out / "trace" / table, part, parts, chunk)
    for part, chunk in _time_parts(trace.usage, "start_time", settings.parts, trace.end_us):
        _write_csv_part(out / "trace" / "task_usage", part, settings.parts, _usage_columns(chunk))
    return _write_truth(out / "truth", trace, settings)


def generate_lake(root: Path, settings: Settings = Settings()) -> dict[str, object]:
    """The same trace written straight into a lake's Parquet datasets (`lake_parts`), with its truth in
    `root/truth`."""
    trace = build(settings)
    writer = LakeParts(root)
    frames = [(table, frame, "time") for table, frame in trace.tables.items()]
    for table, frame, time_column in [*frames, ("task_usage", trace.usage, "start_time")]:
        parts = 1 if table == "machine_events" else settings.parts
        for part, chunk in _time_parts(frame, time_column, parts, trace.end_us):
            writer.write(table, part, parts, (_usage_columns(chunk) if table == "task_usage" else chunk).to_arrow())
    writer.commit()
    return _write_truth(root / "truth", trace, settings)


def build(settings: Settings) -> Trace:
    """Draw the whole trace (deterministic in `settings.seed`)."""
    rng = np.random.default_rng(settings.seed)
    end_us = TRACE_START_US + int(settings.days * DAY_S * US)
    names = {table: [c.name for c in columns] for table, columns in tables().items()}

    # Machines: all added before the trace window.
    machines = np.arange(1, settings.machines + 1) * 1000 + 7
    machine_events = pl.DataFrame(
        {
            "time": np.zeros(settings.machines, dtype=np.int64),
            "machine_id": machines,
            "event_type": np.zeros(settings.machines, dtype=np.int64),
            "platform_id": ["HofLGzk1Or/8Ildj2+Lqv0UGGvY82NLoni8+J/Yy0RU="] * settings.machines,
            "cpus": rng.choice([0.25, 0.5, 1.0], settings.machines, p=[0.1, 0.6, 0.3]),
            "memory": rng.choice([0.25, 0.5, 0.75, 1.0], settings.machines),
        }
    )

    # Jobs: services first (ids from 6_000_000_000), then batch jobs.
    n_batch = rng.poisson(settings.batch_jobs_per_hour * settings.days * 24)
    n_jobs = settings.services + n_batch
    job_ids = 6_000_000_000 + np.arange(n_jobs) * 13
    service = np.arange(n_jobs) < settings.services
    submit = np.where(service, 0, rng.integers(TRACE_START_US, end_us, n_jobs))
    tasks = _tasks_per_job(rng, n_jobs)
    tasks[service] = rng.integers(2, 6, settings.services)
    klass = _classes(rng, n_jobs)
    klass[service] = rng.choice([2, 3], settings.services)
    sampling_off = _sampling_off(rng, tasks, settings.sampling_off_share)
    priority = rng.choice(PRIORITIES, size=n_jobs, p=PRIORITY_SHARES)
    runtime_s = np.where(service, np.inf, np.clip(rng.lognormal(np.log(1800), 1.2, n_jobs), 60, 3 * DAY_S))
    users = [f"user{u}" for u in rng.integers(0, 20, n_jobs)]
    acyclic = rng.random(n_jobs) < settings.acyclic_service_share

    job_rows, task_rows, usage_chunks, truth_services = [], [], [], []
    window_starts = np.arange(TRACE_START_US, end_us, WINDOW_US, dtype=np.int64)
    for j in range(n_jobs):
        job, user, cls = int(job_ids[j]), users[j], int(klass[j])
        start = int(submit[j]) if service[j] else int(submit[j]) + int(rng.integers(0, 60)) * US
        end = end_us if service[j] else min(start + int(runtime_s[j] * US), end_us)
        final = None if service[j] or end >= end_us else int(rng.choice([FINISH, KILL, FAIL], p=END_SHARES))
        # (time, event) of the job and of each of its tasks: submit, schedule, and the end if in the window.
        events = [(int(submit[j]), SUBMIT), (start, SCHEDULE)] + ([(end, final)] if final is not None else [])
        job_rows += [(time, None, job, event, user, cls, f"name{j}", f"logical{j % 50}") for time, event in events]
        level = rng.uniform(0.02, 0.2)
        daily, weekly = rng.uniform(0.0, 0.5), rng.uniform(0.0, 0.3)
        if service[j] and acyclic[j]:
            daily = weekly = 0.0
        daily_phase, weekly_phase = rng.uniform(-np.pi, np.pi), rng.uniform(-np.pi, np.pi)
        if service[j]:
            truth_services.append(
                {
                    "job_id": job,
                    "level": level,
                    "daily_ratio": daily,
                    "daily_phase": daily_phase,
                    "weekly_ratio": weekly,
                    "weekly_phase": weekly_phase,
                    "noise_ratio": settings.noise_share,
                }
            )
        for task in range(int(tasks[j])):
            machine = int(rng.choice(machines))
            cpu, memory = float(rng.lognormal(np.log(0.03), 0.8)), float(rng.lognormal(np.log(0.025), 0.9))
            task_rows += [
                (time, None, job, task, machine, event, user, cls, int(priority[j]), cpu, memory, 0.0003, 0)
                for time, event in events
            ]
            # Windows of the trace grid that overlap the task's run.
            windows = window_starts[(window_starts + WINDOW_US > start) & (window_starts < end)]
            if windows.size == 0:
                continue
            t = (windows - TRACE_START_US) / US
            if service[j]:
                keep = rng.random(windows.size) >= settings.missing_window_share
                windows, t = windows[keep], t[keep]
                cycles = daily * np.sin(2 * np.pi * t / DAY_S + daily_phase)
                cycles += weekly * np.sin(2 * np.pi * t / WEEK_S + weekly_phase)
                mean = level * (1 + cycles) + rng.normal(0, settings.noise_share * level, t.size)
            else:
                mean = rng.gamma(2.0, cpu / 4, t.size)
            mean = np.clip(mean, 0, None)
            if sampling_off[j]:
                sample = np.zeros(t.size)
            else:
                sample = mean * rng.lognormal(0, 0.5, t.size)
                # In a measured job the 1-second sample is rarely 0 (0.2 % of the real sample's windows),
                # and every task has at least one non-zero sample (its first window).
                sample[rng.random(t.size) < ZERO_SAMPLE_SHARE] = 0.0
                sample[0] = max(sample[0], mean[0], 1e-4)
            usage_chunks.append((windows, job, task, machine, mean, sample))

    # Plant the documented anomaly "a job id is reused after a restart": the first batch job that
    # ended early enough is submitted again, 10 minutes after its end, and finishes.
    reused = np.zeros(n_jobs, dtype=bool)
    ended = {row[2]: row for row in job_rows if row[3] in (FINISH, KILL, FAIL) and row[0] < end_us - 3_600 * US}
    if ended:
        first = min(ended, key=lambda job: int(np.flatnonzero(job_ids == job)[0]))
        time, _, job, _, user, cls, name, logical = ended[first]
        again = time + 600 * US
        for k, event in enumerate((SUBMIT, SCHEDULE, FINISH)):
            job_rows.append((again + k * US, None, job, event, user, cls, name, logical))
        reused[np.flatnonzero(job_ids == first)] = True
    job_events = pl.DataFrame(job_rows, schema=names["job_events"], orient="row")
    task_events = pl.DataFrame(task_rows, schema=names["task_events"], orient="row")
    usage = _usage_compact(usage_chunks)
    with_usage = np.isin(job_ids, usage["job_id"].unique().to_numpy())
    jobs_truth = pl.DataFrame(
        {
            "job_id": job_ids,
            "service": service,
            "sampling_off": sampling_off,
            "measured": ~sampling_off & with_usage,  # what google.job_sampling must find
            "reused_id": reused,  # what google.audit_reused_job_ids must find
            "tasks": tasks,
            "scheduling_class": klass,
            "submit_us": submit,  # on the trace clock (0: before the trace), the first submission
        }
    )
    services_truth = pl.DataFrame(truth_services, schema=SERVICES_TRUTH_SCHEMA)
    small = {"machine_events": machine_events, "job_events": job_events, "task_events": task_events}
    return Trace(end_us, small, usage, jobs_truth, services_truth)


def _write_truth(folder: Path, trace: Trace, settings: Settings) -> dict[str, object]:
    folder.mkdir(parents=True, exist_ok=True)
    trace.jobs_truth.write_parquet(folder / "jobs.parquet")
    trace.services_truth.write_parquet(folder / "services.parquet")
    summary = {
        "settings": asdict(settings),
        "jobs": trace.jobs_truth.height,
        "tasks": int(trace.jobs_truth["tasks"].sum()),
        "usage_rows": trace.usage.height,
        "measured_jobs_planted": int((~trace.jobs_truth["sampling_off"]).sum()),
    }
    (folder / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def _time_parts(rows: pl.DataFrame, time_column: str, parts: int, end_us: int) -> Iterator[tuple[int, pl.DataFrame]]:
    """Split by time into `parts` consecutive ranges, as the published parts are; sorted within."""
    span = max(end_us, 1)
    part_of = (pl.col(time_column).clip(0, span - 1) * parts // span).clip(0, parts - 1)
    rows = rows.with_columns(_part=part_of).sort("_part", time_column, maintain_order=True)
    for part in range(parts):
        yield part, rows.filter(pl.col("_part") == part).drop("_part")


def _write_csv_part(folder: Path, part: int, parts: int, rows: pl.DataFrame) -> None:
    """Headerless gzip CSV, empty strings for nulls (ISA-L gzip: ~10x faster than zlib's level 9)."""
    folder.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    rows.write_csv(buffer, include_header=False, null_value="", float_precision=None)
    (folder / f"part-{part:05d}-of-{parts:05d}.csv.gz").write_bytes(igzip.compress(buffer.getvalue(), mtime=0))


def _usage_compact(chunks: list) -> pl.DataFrame:
    """The informative usage columns of every task's windows, in one frame."""
    if not chunks:
        return pl.DataFrame(schema=dict.fromkeys(USAGE_KEYS, pl.Int64) | dict.fromkeys(USAGE_MEASURES, pl.Float64))
    sizes = [len(c[0]) for c in chunks]
    repeat = lambda i: np.repeat(np.array([c[i] for c in chunks], dtype=np.int64), sizes)  # noqa: E731
    return pl.DataFrame(
        {
            "start_time": np.concatenate([c[0] for c in chunks]),
            "job_id": repeat(1),
            "task_index": repeat(2),
            "machine_id": repeat(3),
            "cpu_rate": np.concatenate([c[4] for c in chunks]),
            "sampled_cpu_usage": np.concatenate([c[5] for c in chunks]),
        }
    )


def _usage_columns(compact: pl.DataFrame) -> pl.DataFrame:
    """The published 20 task_usage columns: the other resource measures 0, maximum CPU 1.5x the mean."""
    special = {
        "end_time": pl.col("start_time") + WINDOW_US,
        "maximum_cpu_rate": pl.col("cpu_rate") * 1.5,
        "sample_portion": pl.lit(1.0),
        "aggregation_type": pl.lit(0, dtype=pl.Int64),
    }
    columns = [c.name for c in tables()["task_usage"]]
    return compact.select(
        pl.col(name) if name in compact.columns else special.get(name, pl.lit(0.0)).alias(name) for name in columns
    )


def _four_digits(values: np.ndarray) -> np.ndarray:
    """Positive values to four significant digits, as the trace prints its measurements (0.001562):
    m / 10^k with an integer m is the double nearest the decimal, which prints back as written."""
    k = 3 - np.floor(np.log10(values)).astype(np.int64)
    return np.round(values * 10.0**k) / 10.0**k


def write_usage_part(path: Path, part: int, rows: int, level: int = 1) -> int:
    """One bulk task_usage part for benchmarks (`part` seeds it and places it in time): `rows` rows in
    the trace's format with plausible values, no planted truth.  Returns the uncompressed bytes.
    `level` is the gzip level (1 keeps generation fast; it hardly changes the cost of reading)."""
    rng = np.random.default_rng(part)
    names = [c.name for c in tables()["task_usage"]]
    start = TRACE_START_US + (part * rows + np.arange(rows)) // 40 * WINDOW_US // 100
    # About 100 windows per task, as in the real trace (~1.3 G rows for ~25 M tasks is ~50).
    key = rng.integers(0, max(rows // 100, 1), rows)
    frame = {
        "start_time": start,
        "end_time": start + WINDOW_US,
        "job_id": 6_000_000_000 + part * 1_000_000 + key // 20,
        "task_index": key % 20,
        "machine_id": rng.integers(1, 12_500, rows) * 1000 + 7,
    }
    for name in names[5:18]:
        frame[name] = _four_digits(rng.gamma(1.5, 0.02, rows))
    frame["aggregation_type"] = rng.integers(0, 2, rows)
    frame["sampled_cpu_usage"] = np.where(rng.random(rows) < 0.7, 0.0, _four_digits(rng.gamma(1.5, 0.02, rows)))
    buffer = io.BytesIO()
    pl.DataFrame(frame).select(names).write_csv(buffer, include_header=False)
    data = buffer.getvalue()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(data, compresslevel=level, mtime=0))
    return len(data)
