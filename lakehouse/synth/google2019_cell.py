"""A synthetic cell of Google's 2019 trace, in the published export format, with planted ground truth.

What is planted (written to `OUT/truth.json`, read back by the tests):

- **Each window's CPU distribution.**  Every instance runs for the whole trace.  Within each 300-s
  window, its CPU usage is 300 one-second values.  Each value is the instance's level times a daily
  cycle in the cell's *local* time (peak at 14:00) times a Gamma factor of mean 1 and coefficient of
  variation `noise` (0.1, 0.3 or 0.6, by instance).  A usage row holds what the trace holds: the mean,
  the maximum, one second drawn at random, the 0th, 10th, ..., 100th percentiles and the 91st, ...,
  99th.  The truth keeps each window's exact mean absolute deviation over its mean.  The 2011 method
  estimates this number from the random second; the percentiles give it directly.
- **The double count.**  Some jobs run inside alloc sets.  An alloc instance's row holds the usage of
  the tasks inside it, second by second (as Borg reports it), so summing every row counts those tasks
  twice.  The truth keeps the cell's top-level CPU-seconds and the rows inside alloc sets.
- **The tiers.**  Priorities are drawn from each tier's band, with known counts per tier.
- **The machines.**  Every machine has an ADD at time 0, and `machines_without_capacity` of them have
  no capacity, as 459 ADD rows of cell a have none.
- **Recurring batch workflows.**  Besides the jobs above (which run through the whole trace and never
  end), `workflows` workflows each run `runs` one-task jobs one after another, under one logical name
  and one user per workflow.  Every second of a run uses exactly the workflow's level of CPU and
  memory, and each job requests twice that: a sliding window over the workflow's last run predicts
  every later run exactly, and the requests over-estimate by the level (the truth keeps each run).

The export's habits are kept: integers quoted in the JSON, fields of value 0 left out (type SUBMIT,
collection_type JOB, alloc ids 0), the shards named `<table>-NNNNNNNNNNNN.json.gz`, or the Parquet
export `….parquet.gz`.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from lakehouse.base.google2019_format import (
    CELL_TIME_ZONES,
    CPU_PERCENTILES,
    TAIL_CPU_PERCENTILES,
    parquet_export_schema,
)

US = 1_000_000
WINDOW_US = 300 * US
TRACE_START_US = 600 * US  # the clock's zero is 600 s before the trace's start
START_UTC_HOUR = 7  # 1 May 2019 00:00 PDT = 07:00 UTC
#: Priorities planted per tier (inside each tier's band of google2019.tier).
TIER_PRIORITIES = {"free": 25, "best-effort batch": 110, "mid": 117, "production": 200, "monitoring": 400}
NOISE_LEVELS = (0.1, 0.3, 0.6)
ALLOC_IDS, JOB_IDS = 1_000_000, 2_000_000  # collection ids: alloc sets, then jobs
BATCH_IDS = 3_000_000  # the recurring workflows' jobs: BATCH_IDS + 1000 x workflow + run
BATCH_TIER = "best-effort batch"  # the recurring workflows' tier
PEAK_LOCAL_HOUR = 14.0
DAILY_AMPLITUDE = 0.3


@dataclass(frozen=True)
class CellSettings:
    cell: str = "a"
    jobs: int = 30
    alloc_sets: int = 3
    machines: int = 40
    machines_without_capacity: int = 3
    hours: float = 24.0
    shards: int = 2  # per table that has many (instance_events, instance_usage)
    format: str = "json"
    seed: int = 0
    workflows: int = 4
    runs: int = 6  # per workflow (fewer where the trace is too short for them)


@dataclass(frozen=True)
class BatchRun:
    """One run of a recurring workflow: a one-task job from `first` to `first + windows` (windows of the
    trace), using `cpu` and `memory` every second and requesting twice that."""

    workflow: int
    run: int
    first: int
    windows: int
    cpu: float
    memory: float

    @property
    def collection_id(self) -> int:
        return BATCH_IDS + 1000 * self.workflow + self.run


def batch_runs(settings: CellSettings, windows: int) -> list[BatchRun]:
    """The recurring workflows' runs: workflow k lasts 1 + k mod 3 windows per run, with one window
    between a run's end and the next one's submission (so each run sees the one before it completed)."""
    runs = []
    for k in range(settings.workflows):
        length = 1 + k % 3
        fitting = min(settings.runs, max(0, (windows - 1) // (length + 1)))
        for r in range(fitting):
            runs.append(BatchRun(k, r, 1 + r * (length + 1), length, 0.004 * (k + 1), 0.002 * (k + 1)))
    return runs


def _utc_offset_hours(cell: str) -> float:
    """The cell's offset from UTC on 1 May 2019 (no zone changes its clock during May)."""
    from datetime import datetime

    return ZoneInfo(CELL_TIME_ZONES[cell]).utcoffset(datetime(2019, 5, 1, 12)).total_seconds() / 3600  # type: ignore[union-attr]


def _local_hour(seconds_of_trace: np.ndarray, cell: str) -> np.ndarray:
    return (START_UTC_HOUR + _utc_offset_hours(cell) + seconds_of_trace / 3600) % 24


def daily_cycle(seconds_of_trace: np.ndarray, cell: str) -> np.ndarray:
    """The planted daily factor at each second of the trace: 1 + DAILY_AMPLITUDE x a cosine peaking at
    PEAK_LOCAL_HOUR in the cell's local time (both generators' services follow it)."""
    return 1 + DAILY_AMPLITUDE * np.cos(2 * np.pi * (_local_hour(seconds_of_trace, cell) - PEAK_LOCAL_HOUR) / 24)


def generate_cell(out: Path, settings: CellSettings) -> dict[str, object]:
    """Write the cell's shards under OUT/cell_<c>/ and the planted truth to OUT/truth.json."""
    rng = np.random.default_rng(settings.seed)
    folder = out / f"cell_{settings.cell}"
    folder.mkdir(parents=True, exist_ok=True)
    windows = max(1, int(settings.hours * 3600 // 300))
    tiers = list(TIER_PRIORITIES)

    # Collections: alloc sets first (ids from ALLOC_IDS), then jobs (from JOB_IDS); a job runs in an
    # alloc set with probability 1/3 when there are any, on the alloc instance's machine.
    collections: list[dict[str, Any]] = []
    instances: list[tuple[int, int, int, int, int]] = []  # (collection, index, alloc collection, alloc index, machine)
    alloc_machine: dict[int, int] = {}
    for a in range(settings.alloc_sets):
        alloc_machine[ALLOC_IDS + a] = int(rng.integers(settings.machines)) + 1
        collections.append({"id": ALLOC_IDS + a, "type": 1, "tier": tiers[a % len(tiers)], "alloc": 0})
        instances.append((ALLOC_IDS + a, 0, 0, -1, alloc_machine[ALLOC_IDS + a]))
    for j in range(settings.jobs):
        inside = bool(settings.alloc_sets) and rng.random() < 1 / 3
        alloc = ALLOC_IDS + int(rng.integers(settings.alloc_sets)) if inside else 0
        collections.append({"id": JOB_IDS + j, "type": 0, "tier": tiers[int(rng.integers(len(tiers)))], "alloc": alloc})
        for index in range(int(rng.integers(1, 4))):
            machine = alloc_machine[alloc] if alloc else int(rng.integers(settings.machines)) + 1
            instances.append((JOB_IDS + j, index, alloc, 0 if alloc else -1, machine))

    # Per second of each window: level x daily cycle (local time) x Gamma(mean 1, CV noise).
    seconds = np.arange(windows * 300, dtype=np.float64)
    cycle = daily_cycle(seconds, settings.cell)
    per_second: dict[tuple[int, int], np.ndarray] = {}
    planted: dict[tuple[int, int], tuple[float, float]] = {}
    for collection, index, _, _, _ in instances:
        if collection < JOB_IDS:
            continue
        level = float(np.exp(rng.normal(np.log(0.02), 0.5)))
        noise = NOISE_LEVELS[int(rng.integers(len(NOISE_LEVELS)))]
        shape = 1 / noise**2
        per_second[(collection, index)] = level * cycle * rng.gamma(shape, 1 / shape, seconds.size)
        planted[(collection, index)] = (level, noise)
    for alloc_id in alloc_machine:  # an alloc instance: the sum of its tasks, second by second
        tasks = [per_second[(c, i)] for c, i, a, _, _ in instances if a == alloc_id]
        per_second[(alloc_id, 0)] = np.sum(tasks, axis=0) if tasks else np.zeros(seconds.size)

    usage_rows: list[dict[str, Any]] = []
    truth_windows: list[tuple[int, int, int, float, float, bool]] = []
    for collection, index, alloc, alloc_index, machine in instances:
        values = per_second[(collection, index)].reshape(windows, 300)
        means = values.mean(axis=1)
        sampled = values[np.arange(windows), rng.integers(300, size=windows)]
        percentiles = np.percentile(values, CPU_PERCENTILES, axis=1).T
        tails = np.percentile(values, TAIL_CPU_PERCENTILES, axis=1).T
        mad = np.abs(values - means[:, None]).mean(axis=1)
        for w in range(windows):
            start = TRACE_START_US + w * WINDOW_US
            usage_rows.append(
                {
                    "start_time": start,
                    "end_time": start + WINDOW_US,
                    "collection_id": collection,
                    "instance_index": index,
                    "machine_id": machine,
                    "alloc_collection_id": alloc,
                    "alloc_instance_index": alloc_index if alloc else 0,
                    "collection_type": 1 if collection < JOB_IDS else 0,
                    "average_usage": {"cpus": float(means[w]), "memory": 0.01},
                    "maximum_usage": {"cpus": float(values[w].max()), "memory": 0.01},
                    "random_sample_usage": {"cpus": float(sampled[w])},
                    "sample_rate": 1.0,
                    "cpu_usage_distribution": [float(v) for v in percentiles[w]],
                    "tail_cpu_usage_distribution": [float(v) for v in tails[w]],
                }
            )
            exact = float(mad[w] / means[w]) if means[w] else 0.0
            truth_windows.append((collection, index, w, float(means[w]), exact, alloc == 0))

    runs = batch_runs(settings, windows)
    for run in runs:
        for w in range(run.first, run.first + run.windows):
            start = TRACE_START_US + w * WINDOW_US
            usage_rows.append(
                {
                    "start_time": start,
                    "end_time": start + WINDOW_US,
                    "collection_id": run.collection_id,
                    "instance_index": 0,
                    "machine_id": 1,
                    "alloc_collection_id": 0,
                    "alloc_instance_index": 0,
                    "collection_type": 0,
                    "average_usage": {"cpus": run.cpu, "memory": run.memory},
                    "maximum_usage": {"cpus": run.cpu, "memory": run.memory},
                    "random_sample_usage": {"cpus": run.cpu},
                    "sample_rate": 1.0,
                    "cpu_usage_distribution": [run.cpu] * len(CPU_PERCENTILES),
                    "tail_cpu_usage_distribution": [run.cpu] * len(TAIL_CPU_PERCENTILES),
                }
            )
            truth_windows.append((run.collection_id, 0, w, run.cpu, 0.0, True))

    collection_rows: list[dict[str, Any]] = []
    instance_rows: list[dict[str, Any]] = []
    for run in runs:  # SUBMIT and SCHEDULE at the run's first window, FINISH at its end
        submitted = TRACE_START_US + run.first * WINDOW_US
        for event, time, on in ((0, submitted, 0), (3, submitted, 1), (6, submitted + run.windows * WINDOW_US, 1)):
            common = {
                "time": time,
                "type": event,
                "collection_id": run.collection_id,
                "priority": TIER_PRIORITIES[BATCH_TIER],
            }
            collection_rows.append(
                {
                    **common,
                    "collection_type": 0,
                    "user": f"batch-user{run.workflow}",
                    "collection_name": f"run{run.collection_id}",
                    "collection_logical_name": f"batch-workflow{run.workflow}",
                    "scheduler": 0,
                }  # fmt: skip
            )
            instance_rows.append(
                {
                    **common,
                    "collection_type": 0,
                    "alloc_collection_id": 0,
                    "instance_index": 0,
                    "machine_id": on,
                    "alloc_instance_index": -1,
                    "resource_request": {"cpus": 2 * run.cpu, "memory": 2 * run.memory},
                }  # fmt: skip
            )
    for c in collections:
        priority = TIER_PRIORITIES[c["tier"]]
        for event in (0, 3):  # SUBMIT and SCHEDULE at time 0: running before the trace window
            collection_rows.append(
                {
                    "time": 0,
                    "type": event,
                    "collection_id": c["id"],
                    "collection_type": c["type"],
                    "priority": priority,
                    "alloc_collection_id": c["alloc"],
                    "user": f"user{c['id'] % 7}",
                    "collection_name": f"name{c['id']}",
                    "scheduler": 0,
                }  # fmt: skip
            )
    priority_of = {c["id"]: TIER_PRIORITIES[c["tier"]] for c in collections}
    for collection, index, alloc, alloc_index, machine in instances:
        for event, on in ((0, 0), (3, machine)):
            instance_rows.append(
                {
                    "time": 0,
                    "type": event,
                    "collection_id": collection,
                    "priority": priority_of[collection],
                    "collection_type": 1 if collection < JOB_IDS else 0,
                    "alloc_collection_id": alloc,
                    "instance_index": index,
                    "machine_id": on,
                    "alloc_instance_index": alloc_index if alloc else -1,
                    "resource_request": {"cpus": 0.05, "memory": 0.02},
                }  # fmt: skip
            )
    machine_rows: list[dict[str, Any]] = []
    for m in range(1, settings.machines + 1):
        row: dict[str, object] = {"time": 0, "machine_id": m, "type": 1, "switch_id": f"s{m % 5}", "platform_id": "p1"}
        if m > settings.machines_without_capacity:
            row["capacity"] = {"cpus": 0.5, "memory": 0.5}
        machine_rows.append(row)

    _write(folder, "collection_events", collection_rows, 1, settings.format)
    _write(folder, "instance_events", instance_rows, settings.shards, settings.format)
    _write(folder, "instance_usage", usage_rows, settings.shards, settings.format)
    _write(folder, "machine_events", machine_rows, 1, settings.format)

    top_level = [r for r in usage_rows if r["alloc_collection_id"] == 0]
    # Packing: the sum of each top-level instance's highest window mean, and the highest total of a window.
    peaks: dict[tuple[int, int], float] = {}
    totals = np.zeros(windows)
    for r in top_level:
        key, mean = (r["collection_id"], r["instance_index"]), r["average_usage"]["cpus"]
        peaks[key] = max(peaks.get(key, 0.0), mean)
        totals[(r["start_time"] - TRACE_START_US) // WINDOW_US] += mean
    sum_of_peaks, peak_of_sum = float(sum(peaks.values())), float(totals.max())
    truth: dict[str, object] = {
        "settings": asdict(settings),
        "usage_rows": len(usage_rows),
        "rows_inside_alloc_sets": len(usage_rows) - len(top_level),
        "top_level_cpu": sum(r["average_usage"]["cpus"] for r in top_level),
        "all_rows_cpu": sum(r["average_usage"]["cpus"] for r in usage_rows),
        "tiers": {
            t: sum(1 for c in collections if c["tier"] == t) + (len(runs) if t == BATCH_TIER else 0) for t in tiers
        },
        "buckets": windows,
        "long_running_instances": len(instances),
        "machines_without_capacity": settings.machines_without_capacity,
        "sum_of_peaks": sum_of_peaks,
        "peak_of_sum": peak_of_sum,
        "peak_local_hour": PEAK_LOCAL_HOUR,
        "daily_amplitude": DAILY_AMPLITUDE,
        # per task (not alloc instances): its level and within-window noise (CV of the seconds)
        "tasks": [[c, i, level, noise] for (c, i), (level, noise) in planted.items()],
        # per run of a recurring workflow: workflow, run, collection, windows, cpu, memory (each requested x2)
        "batch_runs": [[b.workflow, b.run, b.collection_id, b.windows, b.cpu, b.memory] for b in runs],
        # per window of every instance: collection, index, window, exact mean, exact MAD / mean, top-level
        "windows": truth_windows,
    }
    (out / "truth.json").write_text(json.dumps(truth))
    return truth


#: Fields the export writes even at 0 (cell a's machine_events has `"time":"0"` on 9,526 rows).
KEPT_AT_ZERO = {"time", "start_time", "end_time"}


def _left_out(key: str, value: object) -> bool:
    return key not in KEPT_AT_ZERO and isinstance(value, int) and not isinstance(value, bool) and value == 0


def _export_json(value: object) -> object:
    """A value as the JSON export writes it: integers quoted, integer fields of value 0 left out."""
    if isinstance(value, dict):
        return {k: _export_json(v) for k, v in value.items() if not _left_out(k, v)}
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return str(value)
    return value


def _write(folder: Path, table: str, rows: list[dict], shards: int, fmt: str) -> None:
    chunks = np.array_split(np.arange(len(rows)), max(1, min(shards, len(rows))))
    for number, chunk in enumerate(chunks):
        part = [rows[i] for i in chunk]
        path = folder / f"{table}-{number:012d}.{fmt}.gz"
        if fmt == "json":
            text = "".join(json.dumps(_export_json(r), separators=(",", ":")) + "\n" for r in part)
            path.write_bytes(gzip.compress(text.encode(), compresslevel=1))
        else:  # the Parquet export: typed columns, NULL where the JSON leaves a field out
            schema = parquet_export_schema(table)
            typed = [{k: None if _left_out(k, v) else v for k, v in r.items()} for r in part]
            pq.write_table(pa.Table.from_pylist(typed, schema=schema), path)
