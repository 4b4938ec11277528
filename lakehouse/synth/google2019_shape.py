"""A cell of Google's 2019 trace at a share of a real cell's size, written shard by shard.

`lakehouse.synth.google2019_cell` plants exact truths in small cells and holds a cell in memory; this
one is for measuring the ingest and the reports at the size of a real cell.  It writes the Parquet
export (`<table>-NNNNNNNNNNNN.parquet.gz`, as the buckets hold it), one shard at a time, so its memory
is that of one shard whatever the scale.

The size of a cell, at scale 1: cell a's 10,001 machines (its machine_events, kept with the tests) over
the trace's 31 days (8,928 five-minute windows), each machine running INSTANCES_PER_MACHINE instances
at a time: about 1.43 billion instance_usage rows.  No row count per cell is published; this estimate
is the low end of what the bucket's size suggests (about 350 GiB a cell, most of it instance_usage, at
about 1 KB a JSON row before compression: some 1.4 to 2.6 billion rows).

Each machine has INSTANCES_PER_MACHINE slots.  A quarter of the slots run a service task for the whole
trace (production tier, jobs of SERVICE_TASKS tasks on as many machines), its CPU a level times a daily
cycle peaking at 14:00 local time; the others run one-task batch jobs back to back (best-effort batch
tier, durations log-normal around two hours), each at a constant level; a slot's batch jobs are runs of
one recurring workflow (its name and user).
Within each window the CPU seconds follow a Gamma law of mean 1 and a coefficient of variation of 0.1,
0.3 or 0.6 by instance: the row's percentiles are that law's quantiles times the window's mean, its
random second one draw of it.  The counts written go to OUT/truth.json.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from scipy.stats import gamma

from lakehouse.base.google2019_format import CPU_PERCENTILES, TAIL_CPU_PERCENTILES, parquet_export_schema
from lakehouse.synth.google2019_cell import (
    NOISE_LEVELS,
    PEAK_LOCAL_HOUR,
    TIER_PRIORITIES,
    TRACE_START_US,
    WINDOW_US,
    daily_cycle,
)

CELL_MACHINES = 10_001  # cell a's machine_events
DAYS = 31
INSTANCES_PER_MACHINE = 16
#: Machines per shard: 7 x 16 x 8,928 = 999,936 usage rows (a real JSON usage shard holds about a million).
SHARD_MACHINES = 7
SERVICE_SHARE = 0.25
SERVICE_TASKS = 8
BATCH_MEDIAN_WINDOWS, BATCH_SIGMA = 24.0, 1.0
WORKFLOW_NAMES = 4096
SERVICE_IDS, BATCH_IDS = 10**9, 2 * 10**9
SUBMIT, SCHEDULE, FINISH = 0, 3, 6
SAMPLES_PER_WINDOW = 300  # the percentiles' extremes are those of 300 one-second samples


@dataclass(frozen=True)
class Shape2019:
    scale: float  # the share of a real cell's machines (and so of its rows)
    cell: str = "a"
    seed: int = 0
    days: float = DAYS

    @property
    def machines(self) -> int:
        return max(1, round(self.scale * CELL_MACHINES))

    @property
    def windows(self) -> int:
        return max(1, int(self.days * 288))


@cache
def _quantiles(noise: float) -> tuple[np.ndarray, np.ndarray]:
    """The 11 percentiles and the 9 tail percentiles of a window whose seconds follow Gamma(mean 1, CV
    noise); the 0th and 100th are the expected extremes of 300 seconds."""
    shape = 1 / noise**2
    edge = 1 / (2 * SAMPLES_PER_WINDOW)
    probabilities = np.clip(np.array(CPU_PERCENTILES) / 100, edge, 1 - edge)
    main = gamma.ppf(probabilities, shape, scale=1 / shape)
    tails = gamma.ppf(np.array(TAIL_CPU_PERCENTILES) / 100, shape, scale=1 / shape)
    return main, tails


def generate_shape_cell(
    out: Path, shape: Shape2019, on_shard: Callable[[int, int], None] | None = None
) -> dict[str, object]:
    """Write the cell's shards under OUT/cell_<c>/ and the counts to OUT/truth.json."""
    folder = out / f"cell_{shape.cell}"
    folder.mkdir(parents=True, exist_ok=True)
    windows = shape.windows
    seconds = np.arange(windows, dtype=np.float64) * 300 + 150
    cycle = daily_cycle(seconds, shape.cell)
    shards = -(-shape.machines // SHARD_MACHINES)
    counts = {"usage_rows": 0, "instance_events": 0, "collection_events": 0, "instances": 0, "cpu_sum": 0.0}
    for number in range(shards):
        first = number * SHARD_MACHINES
        machines = range(first, min(shape.machines, first + SHARD_MACHINES))
        tables, instances, cpu = _shard(np.random.default_rng([shape.seed, number]), machines, windows, cycle, number)
        for table, rows in tables.items():
            pq.write_table(rows, folder / f"{table}-{number:012d}.parquet.gz", compression="zstd")
        counts["usage_rows"] += tables["instance_usage"].num_rows
        counts["instance_events"] += tables["instance_events"].num_rows
        counts["collection_events"] += tables["collection_events"].num_rows
        counts["instances"] += instances
        counts["cpu_sum"] += cpu
        if on_shard:
            on_shard(number + 1, shards)
    machine_rows = pa.table(
        {
            "time": np.zeros(shape.machines, dtype=np.int64),
            "machine_id": np.arange(1, shape.machines + 1, dtype=np.int64),
            "type": np.ones(shape.machines, dtype=np.int64),  # ADD
            "capacity": pa.StructArray.from_arrays(
                [np.full(shape.machines, 0.5), np.full(shape.machines, 0.5)], ["cpus", "memory"]
            ),
        }
    )
    pq.write_table(_with_schema(machine_rows, "machine_events"), folder / "machine_events-000000000000.parquet.gz")
    truth: dict[str, object] = {
        "shape": asdict(shape),
        "machines": shape.machines,
        "windows": windows,
        "shards": shards,
        **counts,
        "peak_local_hour": PEAK_LOCAL_HOUR,
    }
    (out / "truth.json").write_text(json.dumps(truth))
    return truth


def _with_schema(table: pa.Table, name: str) -> pa.Table:
    """The table with every column of the export's schema, NULL where this generator has none."""
    schema = parquet_export_schema(name)
    columns = [
        table[f.name].cast(f.type) if f.name in table.column_names else pa.nulls(table.num_rows, f.type) for f in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def _zero_as_null(values: np.ndarray) -> pa.Array:
    """An integer column as the export writes it: a field of value 0 is left out (NULL)."""
    return pa.array(values, type=pa.int64(), mask=values == 0)


def _lists(values: np.ndarray) -> pa.Array:
    """Rows of a 2-D array as a list column."""
    rows, width = values.shape
    return pa.ListArray.from_arrays(pa.array(np.arange(rows + 1, dtype=np.int32) * width), pa.array(values.ravel()))


def _is_service(global_slot: int) -> bool:
    """Whether a machine's slot runs a service: a fixed share of the slots, spread evenly (a
    multiplicative hash of the slot's number)."""
    return (global_slot * 2654435761) % 1000 < SERVICE_SHARE * 1000


def _first_service_slot(global_slot: int) -> int:
    """The first service slot of the service job the slot's task belongs to (SERVICE_TASKS slots each)."""
    group = global_slot - global_slot % SERVICE_TASKS
    return next(g for g in range(group, group + SERVICE_TASKS) if _is_service(g))


def _shard(
    rng: np.random.Generator, machines: range, windows: int, cycle: np.ndarray, number: int
) -> tuple[dict[str, pa.Table], int, float]:
    """One shard: the usage rows and events of the instances on `machines`; their number and CPU sum."""
    # Instances: (collection, index, machine, first window, windows, level, memory, noise class, service?)
    collection, index, machine, first, length, service, workflows = [], [], [], [], [], [], []
    first_task: list[bool] = []  # the instance whose shard writes its job's collection events
    batch_counter = 0
    for m in machines:
        for slot in range(INSTANCES_PER_MACHINE):
            global_slot = m * INSTANCES_PER_MACHINE + slot
            if _is_service(global_slot):
                collection.append(SERVICE_IDS + global_slot // SERVICE_TASKS)
                index.append(global_slot % SERVICE_TASKS)
                machine.append(m + 1)
                first.append(0)
                length.append(windows)
                service.append(True)
                workflows.append(0)
                first_task.append(_first_service_slot(global_slot) == global_slot)
                continue
            draws = np.maximum(1, np.rint(rng.lognormal(np.log(BATCH_MEDIAN_WINDOWS), BATCH_SIGMA, 64 + windows // 8)))
            ends = np.cumsum(draws)
            starts = ends - draws
            keep = starts < windows
            for s, d in zip(starts[keep], draws[keep], strict=True):
                collection.append(BATCH_IDS + number * 10**6 + batch_counter)
                batch_counter += 1
                index.append(0)
                machine.append(m + 1)
                first.append(int(s))
                length.append(int(min(d, windows - s)))
                service.append(False)
                workflows.append(global_slot % WORKFLOW_NAMES)
                first_task.append(True)  # a batch slot runs one workflow again and again
    n = len(collection)
    coll, idx, mach = np.array(collection, np.int64), np.array(index, np.int64), np.array(machine, np.int64)
    start, dur, is_service = np.array(first, np.int64), np.array(length, np.int64), np.array(service)
    level = np.exp(rng.normal(np.log(0.02), 0.5, n))
    memory = np.round(np.exp(rng.normal(np.log(0.01), 0.5, n)), 6)
    noise_class = rng.integers(len(NOISE_LEVELS), size=n)

    # Usage: a row per instance and window it runs in.
    instance = np.repeat(np.arange(n), dur)
    window = start[instance] + (np.arange(instance.size) - np.repeat(np.cumsum(dur) - dur, dur))
    mean = np.round(level[instance] * np.where(is_service[instance], cycle[window], 1.0), 6)
    main = np.empty((instance.size, len(CPU_PERCENTILES)))
    tails = np.empty((instance.size, len(TAIL_CPU_PERCENTILES)))
    sampled = np.empty(instance.size)
    for k, noise in enumerate(NOISE_LEVELS):
        rows = noise_class[instance] == k
        q, t = _quantiles(noise)
        main[rows] = np.round(mean[rows, None] * q, 6)
        tails[rows] = np.round(mean[rows, None] * t, 6)
        shape = 1 / noise**2
        sampled[rows] = np.round(mean[rows] * rng.gamma(shape, 1 / shape, int(rows.sum())), 6)
    begin = TRACE_START_US + window * WINDOW_US
    usage = pa.table(
        {
            "start_time": begin,
            "end_time": begin + WINDOW_US,
            "collection_id": coll[instance],
            "instance_index": _zero_as_null(idx[instance]),
            "machine_id": mach[instance],
            "average_usage": pa.StructArray.from_arrays([mean, memory[instance]], ["cpus", "memory"]),
            "maximum_usage": pa.StructArray.from_arrays([main[:, -1], memory[instance]], ["cpus", "memory"]),
            "random_sample_usage": pa.StructArray.from_arrays([sampled], ["cpus"]),
            "sample_rate": np.ones(instance.size),
            "cpu_usage_distribution": _lists(main),
            "tail_cpu_usage_distribution": _lists(tails),
        }
    )

    # Events: SUBMIT and SCHEDULE at the first window (a service: at time 0, before the trace), FINISH
    # at the end of a batch job that ends inside the trace.
    submitted = np.where(is_service, 0, TRACE_START_US + start * WINDOW_US)
    ends = TRACE_START_US + (start + dur) * WINDOW_US
    finished = ~is_service & (start + dur < windows)
    event_instance = np.concatenate([np.arange(n), np.arange(n), np.flatnonzero(finished)])
    event_type = np.concatenate([np.full(n, SUBMIT), np.full(n, SCHEDULE), np.full(int(finished.sum()), FINISH)])
    event_time = np.concatenate([submitted, submitted, ends[finished]])
    priority = np.where(is_service, TIER_PRIORITIES["production"], TIER_PRIORITIES["best-effort batch"])
    on = np.where(event_type == SUBMIT, 0, mach[event_instance])
    instance_events = pa.table(
        {
            "time": event_time,
            "type": _zero_as_null(event_type),
            "collection_id": coll[event_instance],
            "priority": priority[event_instance],
            "instance_index": _zero_as_null(idx[event_instance]),
            "machine_id": _zero_as_null(on),
            "alloc_instance_index": np.full(event_instance.size, -1),
            "resource_request": pa.StructArray.from_arrays(
                [np.round(2 * level[event_instance], 6), np.round(2 * memory[event_instance], 6)], ["cpus", "memory"]
            ),
        }
    )
    # Collections: a batch job per batch instance; a service job once, with its first service task.
    owner = np.array(first_task)
    job_events = (event_instance, event_type, event_time)
    chosen = owner[job_events[0]]
    job_instance = job_events[0][chosen]
    workflow = np.array(workflows, np.int64)[job_instance]  # a workflow's runs: one name, one user
    user = np.where(is_service[job_instance], coll[job_instance], workflow) % 97
    collection_events = pa.table(
        {
            "time": job_events[2][chosen],
            "type": _zero_as_null(job_events[1][chosen]),
            "collection_id": coll[job_instance],
            "priority": priority[job_instance],
            "user": pa.array([f"user{u}" for u in user]),
            "collection_name": pa.array([f"job{c}" for c in coll[job_instance]]),
            "collection_logical_name": pa.array(
                [
                    f"service{c}" if s else f"workflow{w}"
                    for c, s, w in zip(coll[job_instance], is_service[job_instance], workflow, strict=True)
                ]
            ),
        }
    )
    tables = {
        "instance_usage": _with_schema(usage, "instance_usage"),
        "instance_events": _with_schema(instance_events, "instance_events"),
        "collection_events": _with_schema(collection_events, "collection_events"),
    }
    return tables, n, float(mean.sum())
