"""`make bench ONLY=scale-out`: `lakehouse report volatility` in partitions, what one worker needs as the
partitions grow, a projection for the whole 2011 trace on N workers, and the engine choice; then the
2019 reports in partitions and a projection for one and eight real cells.

On lakes of the real trace's shape (`lakehouse generate google-lake`) at two scales, the windows are
split into 1, 2, 4 and 8 partitions (as the report splits them), and one partition runs alone in a fresh
process, as a worker runs it (`benchmarks.one_partition`): its wall time and peak memory (VmHWM), with
the peak of a process that only opens the lake beside it (the worker's fixed cost).

The model printed, so that a reader can redo it: a worker's peak = base + bytes per window x windows
of its partition; a partition's time = seconds per window x its windows (the worker's start apart);
the windows of the whole trace = the larger lake's / its scale.  From these: the partitions a worker
of a given memory needs on the whole trace, and the hours on N such workers (the split, which reads
every window once, measured too and scaled linearly).

The engine: on the smaller lake, the same partitions run in this process, as plain Ray tasks
(`lakehouse.base.partitions`, the choice), as a Ray Data map over the partition numbers, and -- what an
engine that partitions the rows itself does -- as Ray Data's group-by of the windows per task with a
per-task function (one statistic only, so a lower bound of its cost), on a local Ray instance of this
machine's cores.

The 2019 reports (volatility's comparison, periodicity, predictions) run as whole commands on generated
cells of SCALES_2019 of a real cell, in 1 and 4 partitions in one process; the model is a fixed time
plus a time per usage row (from the two sizes), spread over N workers for one and eight real cells.

Targets: a worker's peak at 4 partitions <= 0.6 x at 1 partition, at the larger size; each partition's
result equal to the one-process run (checked by the tests, here the row counts); the 2019 reports'
peak in 4 partitions no more than a tenth above their peak in one.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.measure import command, timed, verdict
from lakehouse.base.lake import Lake
from lakehouse.base.partitions import Partitioning, joined, run_partitions

SCALES = (0.008, 0.032)
PARTITIONS = (1, 2, 4, 8)
WORKER_MEMORY_GB = (4, 16)  # the workers of the projection
WORKERS = (1, 8, 32)
PEAK_RATIO_TARGET = 0.6


def _split(lake: Lake, work: Path, partitions: int) -> tuple[float, int]:
    """Seconds to split the lake's measured windows into `partitions`, and how many windows there are."""
    from lakehouse.base.lake import count
    from lakehouse.models.volatility.model import _split as split

    with lake.connect() as con:
        started = time.perf_counter()
        split(con, lake, work, Partitioning(partitions))
        elapsed = time.perf_counter() - started
        windows = count(con, f"SELECT count(*) FROM read_parquet('{work.as_posix()}/windows/*/*.parquet')")
    return elapsed, windows


def _worker(lake: Lake, work: Path, number: int) -> tuple[float, float]:
    return timed([sys.executable, "-m", "benchmarks.one_partition", str(lake.root), str(work), str(number)])


def _measure(root: Path, scale: float) -> dict[int, tuple[float, float, float, int]]:
    """Per partition count: (split seconds, a partition's seconds, its worker's peak MB, windows)."""
    lake_root = root / f"lake-{scale}"
    subprocess.run(command("generate", "google-lake", str(lake_root), "--scale", str(scale)), check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    lake = Lake(lake_root)
    rows = {}
    for partitions in PARTITIONS:
        work = root / f"work-{scale}-{partitions}"
        work.mkdir()
        split_s, windows = _split(lake, work, partitions)
        seconds, peak = _worker(lake, work, 0)
        rows[partitions] = (split_s, seconds, peak, windows)
        shutil.rmtree(work)
    opening, base = _worker(lake, root, -1)
    print(
        f"  scale {scale}: {rows[1][3]:,} measured windows; a worker that only opens the lake: {opening:.2f} s, "
        f"{base:,.0f} MB"
    )
    for partitions, (split_s, seconds, peak, _) in rows.items():
        print(
            f"    {partitions} partition(s): split {split_s:.2f} s; "
            f"one partition {seconds:.2f} s, worker peak {peak:,.0f} MB"
        )
    rows[0] = (0.0, opening, base, 0)
    return rows


def _engines(root: Path, scale: float, partitions: int = 4) -> None:
    """The same partitions on each engine (wall seconds, this machine's cores)."""
    import ray

    from lakehouse.models.volatility.model import _partition, _partition_on_worker

    lake = Lake(root / f"lake-{scale}")
    work = root / "engines"
    work.mkdir()
    _split(lake, work, partitions)
    times = {}
    with lake.connect() as con:
        started = time.perf_counter()
        run_partitions(functools.partial(_partition, con, work), partitions)
        times["this process, one after the other"] = time.perf_counter() - started
    with joined(None, os.cpu_count()):
        logging.getLogger("ray.data").setLevel(logging.WARNING)  # its progress lines, every 5 s
        ray.data.DataContext.get_current().enable_progress_bars = False
        address = ray.get_runtime_context().gcs_address
        work_on_worker = functools.partial(_partition_on_worker, lake, work)
        run_partitions(work_on_worker, partitions, address)  # the workers start (and import) once
        started = time.perf_counter()
        run_partitions(work_on_worker, partitions, address)
        times["plain Ray tasks (lakehouse.base.partitions)"] = time.perf_counter() - started

        started = time.perf_counter()
        ray.data.range(partitions, override_num_blocks=partitions).map(
            lambda row: {"tasks": str(work_on_worker(int(row["id"]))[0])}
        ).materialize()
        times["Ray Data, a map over the partition numbers"] = time.perf_counter() - started

        def per_task(group):  # noqa: ANN001, ANN202 - one task's windows (pandas), as Ray Data hands them
            import pandas as pd

            return pd.DataFrame({"job_id": group["job_id"].iloc[:1], "task_index": group["task_index"].iloc[:1],
                                 "cv_mu1s": [group["mu1s"].std() / group["mu1s"].mean()]})  # fmt: skip

        started = time.perf_counter()
        windows = ray.data.read_parquet(str(work / "windows"), partitioning=None)
        tasks = windows.groupby(["job_id", "task_index"]).map_groups(per_task, batch_format="pandas").count()
        times[f"Ray Data group-by per task ({tasks:,} tasks, one statistic of seven)"] = time.perf_counter() - started
    base = times["this process, one after the other"]
    print(f"  engines, {partitions} partitions of the scale-{scale} lake on {os.cpu_count()} cores:")
    for name, seconds in times.items():
        print(f"    {name}: {seconds:.2f} s ({seconds / base:.2f}x this process)")


def bench_scale_out() -> bool:
    from lakehouse.synth.google_shape import USAGE_ROWS

    print("scale-out: lakehouse report volatility in partitions, one worker's time and memory")
    with tempfile.TemporaryDirectory(prefix="bench-scale-out-") as tmp:
        root = Path(tmp)
        small, large = (_measure(root, scale) for scale in SCALES)
        _engines(root, SCALES[0])
    ratio = large[4][2] / large[1][2]
    print(f"  worker peak at 4 partitions / at 1, scale {SCALES[1]}: {ratio:.2f}")

    # The model, from the larger size at one partition (the partition is the whole of its windows).
    windows, opening, base = large[1][3], large[0][1], large[0][2]
    bytes_per_window = (large[1][2] - base) * 2**20 / windows
    seconds_per_window = (large[1][1] - opening) / windows
    split_per_window = large[1][0] / windows
    whole = windows / SCALES[1]
    print(
        f"  model: worker peak = {base:,.0f} MB + {bytes_per_window:.0f} B x windows of its partition; a partition "
        f"takes {seconds_per_window * 1e6:.2f} us per window; the split {split_per_window * 1e6:.2f} us per window "
        f"of the whole; the whole 2011 trace ({USAGE_ROWS / 1e9:.2f} G usage rows) has {windows:,} / {SCALES[1]} = "
        f"{whole / 1e6:,.0f} M measured windows"
    )
    for memory_gb in WORKER_MEMORY_GB:
        per_partition = (memory_gb * 2**30 - base * 2**20) / bytes_per_window
        partitions = max(1, math.ceil(whole / per_partition))
        hours = [
            (whole * split_per_window + math.ceil(partitions / n) * (whole / partitions) * seconds_per_window) / 3600
            for n in WORKERS
        ]
        print(
            f"    workers of {memory_gb} GB: {partitions} partition(s) of the whole trace; "
            + ", ".join(f"{n} worker(s) {h:.2f} h" for n, h in zip(WORKERS, hours, strict=True))
        )
    checks = {f"worker peak at 4 partitions <= {PEAK_RATIO_TARGET} x at 1": ratio <= PEAK_RATIO_TARGET}
    return verdict(checks | _bench_2019())


#: The 2019 reports, whole commands on generated cells (`generate google-2019-shape`) at these shares of a
#: real cell, in 1 and 4 partitions, under the 2019 budget.
SCALES_2019 = (0.002, 0.008)
PARTITIONS_2019 = (1, 4)
MEMORY_2019 = "3GB"
REPORTS_2019 = {
    "volatility": ("report", "volatility", "--trace", "google-2019"),
    "periodicity": ("report", "periodicity", "--trace", "google-2019"),
    "predictions": ("report", "predictions", "google-2019"),
}


def _measure_2019(root: Path, scale: float) -> tuple[int, dict[tuple[str, int], tuple[float, float]]]:
    """A generated cell's usage rows, and per report and partition count its whole command's (s, MB)."""
    import json

    generated, lake = root / f"gen-{scale}", root / f"lake-2019-{scale}"
    subprocess.run(command("generate", "google-2019-shape", str(generated), "--scale", str(scale)), check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    rows = int(json.loads((generated / "truth.json").read_text())["usage_rows"])
    subprocess.run(command("ingest", "google-2019", str(generated / "cell_a"), "--lake", str(lake), "--memory-limit",
                           MEMORY_2019), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    shutil.rmtree(generated)
    found = {}
    for name, args in REPORTS_2019.items():
        for partitions in PARTITIONS_2019:
            where = ("--lake", str(lake), "--memory-limit", MEMORY_2019, "--partitions", str(partitions))
            found[(name, partitions)] = timed(command(*args, *where))
    return rows, found


def _bench_2019() -> dict[str, bool]:
    """The 2019 reports in partitions, and a projection for one and eight real cells on N workers."""
    from lakehouse.synth.google2019_shape import CELL_MACHINES, DAYS, INSTANCES_PER_MACHINE

    cell_rows = CELL_MACHINES * INSTANCES_PER_MACHINE * DAYS * 288  # a real cell's usage windows, at scale 1
    print(f"  google 2019: generated cells of {' and '.join(map(str, SCALES_2019))} of a real cell, whole commands, "
          f"--memory-limit {MEMORY_2019}, in this process")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-scale-out-2019-") as tmp:
        sizes = [_measure_2019(Path(tmp), scale) for scale in SCALES_2019]
    checks = {}
    (small_rows, small), (large_rows, large) = sizes
    for name in REPORTS_2019:
        for partitions in PARTITIONS_2019:
            (t1, p1), (t2, p2) = small[(name, partitions)], large[(name, partitions)]
            print(
                f"    {name}, {partitions} partition(s): {small_rows:,} rows {t1:.1f} s, peak {p1:,.0f} MB; "
                f"{large_rows:,} rows {t2:.1f} s, peak {p2:,.0f} MB; wall / partitions {t2 / partitions:.1f} s"
            )
        # The model: the growth from the smaller cell to the larger is the work that grows with the rows
        # (where the two sizes' times are too close to tell, the larger's time is taken as all of it).
        (t1, _), (t2, peak) = small[(name, 1)], large[(name, 1)]
        per_row = (t2 - t1) / (large_rows - small_rows)
        fixed = t1 - per_row * small_rows
        if per_row <= 0 or fixed < 0:
            per_row, fixed = t2 / large_rows, 0.0
        hours = [(fixed + per_row * cell_rows / n) / 3600 for n in WORKERS]
        print(
            f"    {name} model: {fixed:.1f} s + {per_row * 1e6:.3f} us x usage rows, split evenly over the workers; "
            f"a real cell has {cell_rows / 1e9:.2f} G rows: one cell on "
            + ", ".join(f"{n} worker(s) {h:.2f} h" for n, h in zip(WORKERS, hours, strict=True))
            + "; eight cells on "
            + ", ".join(f"{n} worker(s) {(fixed + 8 * per_row * cell_rows / n) / 3600:.2f} h" for n in WORKERS)
        )
        checks[f"2019 {name}: 4 partitions' peak <= 1 partition's + 10 %"] = large[(name, 4)][1] <= 1.1 * peak
    print("    (the split in one process: a worker's memory holds one partition; the cluster runs them side by side)")
    return checks
