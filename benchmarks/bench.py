"""`make bench`: speed targets, each printed next to a baseline measured in the same run.

Simulator: EASY-FCFS replays (canonical semantics, requested times) of five logs after the strong
filter, CEA-Curie at 80 640 processors as in the published runs.  Engine time is the compiled call
alone, best of 3, in a child process that holds only numpy and the engine, so its peak memory is the
engine's.  Baseline: the in-repo Python EASY (`lakehouse.sim.reference`) on the same jobs.
Targets: CEA-Curie <= 1 s and <= 300 MB; the same starts as the Python implementation.  The speed-up
over it is information (its former 100x target is retired).  EASY++ (AVE2, SJBF, incremental
corrections) on the same jobs is timed too, without a target.

Google ingest: see `benchmarks.bench_google_ingest` (throughput on >= 5 GB, the whole command on
~570 MB, Parquet size, memory in the number of parts).

Packing: the synthetic campaign's full table (8 families x 10 seeds x both task orders) and MM with
its guarded search on 22,600 tasks of 89 jobs into about 2,100 machines; target < 2 s.

Predictions: the full scenario table of `report predictions` for HPC2N (about 203 k jobs, walltime,
memory and processors), best of 3 (the first run in a process warms DuckDB up), next to one windowed
pass over the same targets; target < 10 s.

The whole Google trace (the reports that read it, at its shape, four sizes): `benchmarks.bench_scale`.
Google's 2019 trace: `benchmarks.bench_google2019` (small generated cells, then cells of 0.05 and 0.1 of
a real cell).

DuckLake (the shared lake's catalog) against today's format, whole commands: `benchmarks.bench_ducklake`.

`make bench ONLY=google-2019-cell,nightly` runs only the sections named (their names: `bench.main`).

Campaigns and whole `simulate` commands: see `benchmarks.bench_campaign`; the research models (locality,
the workload HMM): `benchmarks.bench_research`.

SWF ingest: all logs of $LAKEHOUSE_SHARED_DATA/swf (`make bench DATA=...`) from scratch into a fresh
lake, including Parquet and the catalog.
Target: < 10 s for the 19 logs of the data folder (about 2.4 M jobs), i.e. >= 200 k jobs/s on 2 cores.
Baseline: DuckDB reading the same gzip files as raw lines and writing them to Parquet, the least any
DuckDB pipeline must do (no splitting, no typing, no checks).
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np

from benchmarks.bench_campaign import bench_campaigns
from benchmarks.bench_ducklake import bench_ducklake
from benchmarks.bench_google2019 import bench_google2019, bench_google2019_cell
from benchmarks.bench_google_ingest import bench_google_ingest
from benchmarks.bench_nightly import bench_nightly
from benchmarks.bench_research import bench_research, one_log_lake
from benchmarks.bench_scale import bench_scale
from benchmarks.bench_scale_out import bench_scale_out
from lakehouse.base.catalog import sql_literal
from lakehouse.base.job_views import View, log_jobs, log_machine_size
from lakehouse.base.lake import Lake
from lakehouse.ingest.swf import discover, ingest_swf
from lakehouse.sim.workload import workload_from


def shared_swf_dir() -> Path:
    """The folder of SWF logs to measure on: $LAKEHOUSE_SHARED_DATA/swf (`make bench DATA=...` sets it)."""
    data = os.environ.get("LAKEHOUSE_SHARED_DATA")
    if not data:
        raise SystemExit("set LAKEHOUSE_SHARED_DATA to a folder holding swf/ (the Parallel Workloads Archive logs)")
    return Path(data) / "swf"


def bare_duckdb_lines(files: list[Path], out: Path) -> float:
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    started = time.perf_counter()
    for i, path in enumerate(files):
        source, target = sql_literal(str(path)), sql_literal(str(out / f"{i}.parquet"))
        con.execute(
            f"COPY (SELECT * FROM read_csv({source}, columns = {{'line': 'VARCHAR'}}, delim = chr(1), "
            f"quote = '', escape = '', header = false, auto_detect = false)) "
            f"TO {target} (FORMAT parquet, COMPRESSION zstd)"
        )
    return time.perf_counter() - started


def bench_swf_ingest(folder: Path) -> bool:
    files = discover([str(folder)])
    with tempfile.TemporaryDirectory() as tmp:
        baseline = bare_duckdb_lines(files, Path(tmp))
        started = time.perf_counter()
        results = ingest_swf(Lake(Path(tmp) / "lake"), [str(folder)])
        elapsed = time.perf_counter() - started
    jobs = sum(r.jobs for r in results)
    ok = elapsed < 10.0
    print(f"swf ingest: {len(files)} logs, {jobs:,} jobs in {elapsed:.2f} s = {jobs / elapsed:,.0f} jobs/s")
    print(f"  baseline (bare DuckDB lines -> Parquet): {baseline:.2f} s; ingest / baseline = {elapsed / baseline:.2f}")
    print(f"  target < 10 s (>= 200 k jobs/s): {'PASS' if ok else 'FAIL'}")
    return ok


SIM_LOGS = {  # log -> machine size of the published runs (None: the header's MaxProcs)
    "KTH-SP2-1996-2.1-cln": None,
    "CTC-SP2-1996-3.1-cln": None,
    "SDSC-SP2-1998-4.2-cln": None,
    "SDSC-BLUE-2000-4.2-cln": None,
    "CEA-Curie-2011-2.1-cln": 80_640,
}
COLUMNS = ("id", "submit", "run", "requested", "procs", "user")

EASY_FCFS = {"backfill": "queue", "predictor": "requested", "correction": "requested"}
EASY_PLUS_PLUS = {"backfill": "sjbf", "predictor": "ave2", "correction": "incremental"}

# The child process: load int64 columns, replay three times, report the best time and peak memory.
ENGINE_CHILD = """
import json, sys, time
import numpy as np
from lakehouse import _native
from lakehouse.sim.settings import ReplaySettings  # (loads neither Polars nor Arrow)
folder, machine_size, settings, starts = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
columns = [np.load(f"{folder}/{name}.npy") for name in COLUMN_NAMES]
replay = ReplaySettings.of(machine_size, algorithm="easy", policy="fcfs", **settings)
best = float("inf")
for _ in range(3):
    started = time.perf_counter()
    out = _native.simulate(*columns, None, replay)
    best = min(best, time.perf_counter() - started)
np.save(starts, out.start)
# VmHWM, not ru_maxrss: the latter keeps the high-water mark of the parent across fork and exec.
status = open("/proc/self/status").read()
peak_kb = int(status.split("VmHWM:")[1].split()[0])
print(json.dumps({"seconds": best, "peak_mb": peak_kb / 1024}))
""".replace("COLUMN_NAMES", repr(COLUMNS))


def dump_columns(log: str, prefix: str, folder: Path | None = None) -> int:
    """Write a strong-filtered log as PREFIX.<column>.bin (int64) for the crate's `replay` and
    `reference_port` examples; returns the machine size to pass them."""
    with tempfile.TemporaryDirectory() as tmp:
        lake = Lake(Path(tmp) / "lake")
        ingest_swf(lake, [str((folder or shared_swf_dir()) / f"{log}.swf.gz")])
        size = SIM_LOGS.get(log) or log_machine_size(lake, log, View.jobs_strong)
        workload, _ = workload_from(log_jobs(lake, log, View.jobs_strong), size, pyss=False, prediction_column=None)
    for name, column in zip(COLUMNS, workload.columns, strict=True):
        column.astype("<i8").tofile(f"{prefix}.{name}.bin")
    return size


def _engine_in_child(columns: Path, machine_size: int, settings: dict[str, str]) -> dict | None:
    """Best-of-3 engine time, peak memory and start times of one EASY replay, in a child holding only
    the engine."""
    starts = columns / f"start-{settings['backfill']}-{settings['predictor']}.npy"
    child = subprocess.run(
        [sys.executable, "-c", ENGINE_CHILD, str(columns), str(machine_size), json.dumps(settings), str(starts)],
        capture_output=True,
        text=True,
    )
    if child.returncode != 0:
        print(f"  {columns.name}: engine failed: {child.stderr.strip()[-500:]}")
        return None
    return {**json.loads(child.stdout), "start": np.load(starts)}


def bench_simulator(folder: Path) -> bool:
    from lakehouse.sim.reference import Jobs, easy_starts

    files = [folder / f"{log}.swf.gz" for log in SIM_LOGS]
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        lake = Lake(Path(tmp) / "lake")
        ingest_swf(lake, [str(f) for f in files if f.exists()])
        print("simulator, EASY-FCFS (strong filter), and EASY++ on the same jobs:")
        for log, forced_size in SIM_LOGS.items():
            if not (folder / f"{log}.swf.gz").exists():
                print(f"  {log}: missing, skipped")
                ok = False
                continue
            size = forced_size or log_machine_size(lake, log, View.jobs_strong)
            workload, _ = workload_from(log_jobs(lake, log, View.jobs_strong), size, pyss=False, prediction_column=None)
            columns = Path(tmp) / log
            columns.mkdir()
            for name, column in zip(COLUMNS, workload.columns, strict=True):
                np.save(columns / f"{name}.npy", column)
            engine, plus_plus = (_engine_in_child(columns, size, settings) for settings in (EASY_FCFS, EASY_PLUS_PLUS))
            if engine is None or plus_plus is None:
                ok = False
                continue
            started = time.perf_counter()
            python_starts = easy_starts(Jobs(*(c.tolist() for c in workload.columns[1:5])), size)
            python = time.perf_counter() - started
            same = np.array_equal(engine["start"], np.array(python_starts))
            speedup = python / engine["seconds"]
            jobs = len(workload.id)
            checks = [same]
            if log.startswith("CEA-Curie"):
                checks += [engine["seconds"] <= 1.0, engine["peak_mb"] <= 300]
            ok &= all(checks)
            print(
                f"  {log} ({jobs:,} jobs, {size:,} procs): engine {engine['seconds'] * 1e3:,.1f} ms "
                f"= {jobs / engine['seconds']:,.0f} jobs/s, peak {engine['peak_mb']:,.0f} MB; "
                f"Python {python:.2f} s; speed-up {speedup:,.0f}x; same starts: {same} "
                f"-> {'PASS' if all(checks) else 'FAIL'}; EASY++ {plus_plus['seconds'] * 1e3:,.1f} ms"
            )
    print(
        "  targets: CEA-Curie <= 1 s and <= 300 MB; the same starts as the Python implementation (the speed-up "
        "is information; EASY++ = AVE2 + SJBF + incremental corrections: no target, shown so that its cost "
        "stays in sight)"
    )
    return ok


def _in_fresh_process(function, *args):
    """Run a measurement in a new interpreter (spawned), so what ran before in this one (memory held,
    allocator state, thread pools) does not weigh on it."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(function, *args).result()


def _time_predictions(root: Path, log: str) -> dict[str, object]:
    from lakehouse.models.predictions.model import report

    lake = Lake(root)
    started = time.perf_counter()
    rows = lake.query(f"SELECT count(*) AS n FROM predict.swf_targets WHERE source = {sql_literal(log)}")["n"][0]
    # Baseline: one windowed pass (each user's running maximum) over the same targets.
    lake.query(
        "SELECT max(used) OVER (PARTITION BY resource, user_key ORDER BY done, job ROWS UNBOUNDED PRECEDING) "
        f"FROM predict.swf_targets WHERE source = {sql_literal(log)}"
    )
    baseline = time.perf_counter() - started
    timings = []
    for _ in range(3):
        started = time.perf_counter()
        result = report(lake, "swf", log)
        timings.append(time.perf_counter() - started)
    return {
        "rows": rows,
        "baseline": baseline,
        "best": min(timings),
        "table": result.table.height,
        "grouping": result.grouping,
    }


def bench_predictions(folder: Path) -> bool:
    """The full scenario table of `report predictions` for HPC2N (about 203 k jobs), in a fresh process."""
    log = "HPC2N-2002-2.2-cln"
    with one_log_lake(folder, log) as lake:
        timed = _in_fresh_process(_time_predictions, lake.root, log)
    best, baseline = timed["best"], timed["baseline"]
    ok = best < 10
    print(
        f"predictions: {log}, {timed['rows']:,} job-resource rows, {timed['table']} table rows "
        f"(sliding windows over {timed['grouping']!r}): best of 3 {best:.1f} s (target < 10 s), "
        f"{best / baseline:.1f}x one windowed pass ({baseline:.2f} s): {'PASS' if ok else 'FAIL'}"
    )
    return ok


def bench_packing() -> bool:
    import polars as pl

    from lakehouse.models.packing.campaign import campaign
    from lakehouse.models.packing.model import check_jobs, expand, lower_bound, smallest_mm

    started = time.perf_counter()
    table = campaign(10)
    print(f"packing campaign: {table.height} rows in {time.perf_counter() - started:.1f} s")
    with pl.Config(tbl_rows=100, tbl_width_chars=160, fmt_str_lengths=60):
        print(table.filter(pl.col("order") == "c").drop("order"))
    rng = np.random.default_rng(0)
    tasks_per_job = rng.multinomial(22_600 - 89, np.ones(89) / 89) + 1
    c = rng.uniform(0, 3.35, 89)  # sum of levels ~ 2,100 machines of capacity 20
    jobs = pl.DataFrame(
        {
            "job": np.arange(89),
            "tasks": tasks_per_job,
            "c": c,
            "rho": rng.uniform(0, 1, 89) * c,
            "phi": rng.uniform(0, 2 * np.pi, 89),
        }  # fmt: skip
    )
    tasks = expand(check_jobs(jobs, 20.0))
    bound = lower_bound(jobs, 20.0)
    started = time.perf_counter()
    machines, _ = smallest_mm(tasks, 20.0, math.ceil(bound))
    elapsed = time.perf_counter() - started
    ok = elapsed < 2.0
    print(
        f"packing MM: {len(tasks.c):,} tasks of 89 jobs into {machines:,} machines (bound {bound:,.1f}) "
        f"in {elapsed:.2f} s (target < 2 s): {'PASS' if ok else 'FAIL'}"
    )
    return ok


def main() -> int:
    folder = shared_swf_dir()
    if not folder.exists():
        print(f"no SWF folder at {folder}: set LAKEHOUSE_SHARED_DATA", file=sys.stderr)
        return 1
    sections = {
        "simulator": lambda: bench_simulator(folder),
        "campaigns": lambda: bench_campaigns(folder),
        "swf-ingest": lambda: bench_swf_ingest(folder),
        "packing": bench_packing,
        "google-ingest": lambda: bench_google_ingest(
            float(os.environ.get("LAKEHOUSE_BENCH_GOOGLE_GB", "5")), folder.parent / "google"
        ),
        "google-scale": bench_scale,
        "google-2019": bench_google2019,
        "google-2019-cell": bench_google2019_cell,
        "predictions": lambda: bench_predictions(folder),
        "research": lambda: bench_research(folder),
        "nightly": lambda: bench_nightly(folder),
        "scale-out": bench_scale_out,
        "ducklake": lambda: bench_ducklake(folder),
    }
    chosen = [s.strip() for s in os.environ.get("LAKEHOUSE_BENCH_ONLY", "").split(",") if s.strip()] or list(sections)
    if unknown := [name for name in chosen if name not in sections]:
        print(f"LAKEHOUSE_BENCH_ONLY: unknown section {', '.join(unknown)}; the sections: {', '.join(sections)}")
        return 1
    ok = True
    for name in chosen:
        ok &= sections[name]()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory (this process): {peak_mb:,.0f} MB")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
