"""`make bench`: speed targets, each printed next to a baseline measured in the same run.

Simulator: EASY-FCFS replays (canonical semantics, requested times) of five logs after the strong
filter, CEA-Curie at 80 640 processors as in the published runs.  Engine time is the compiled call
alone, best of 3, in a child process that holds only numpy and the engine, so its peak memory is the
engine's.  Baseline: the in-repo Python EASY (`lakehouse.sim.reference`) on the same jobs.
Targets: CEA-Curie <= 1 s and <= 300 MB; >= 100x the Python implementation on every log.  EASY++
(AVE2, SJBF, incremental corrections) on the same jobs is timed too, without a target.

Google ingest: >= 5 GB of uncompressed task_usage CSV ($LAKEHOUSE_BENCH_GOOGLE_GB) generated as gzip
parts, then ingested; printed next to a bare DuckDB COPY (read_csv of the same files -> Parquet)
measured in the same run.  Targets: >= 0.9x the bare throughput and >= 120 MB/s uncompressed, peak
memory <= 4 GB; google.task_usage_stats over the result at >= 20 M usage rows/s.

Packing: the synthetic campaign's full table (8 families x 10 seeds x both task orders) and MM with
its guarded search on 22,600 tasks of 89 jobs into about 2,100 machines; target < 2 s.

Predictions: the full scenario table of `report predictions` for HPC2N (about 203 k jobs, walltime,
memory and processors), best of 3 (the first run in a process warms DuckDB up), next to one windowed
pass over the same targets; target < 10 s.

Google reports: `report volatility` and `report periodicity` (with its 200 pure-noise fits) on a
generated lake of >= 50 M usage rows (2,000 services over 29 days and batch jobs; written straight to
Parquet, the CSV path being the ingest's benchmark), each as seconds per 10 M usage rows and as a
multiple of one plain DuckDB pass over the same rows.  Target: both over the full trace (1.3 G rows)
in < 15 minutes by linear extrapolation.

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
from benchmarks.bench_nightly import bench_nightly
from benchmarks.bench_research import bench_research, one_log_lake
from lakehouse.catalog import sql_literal
from lakehouse.ingest.swf import discover, ingest_swf
from lakehouse.lake import Lake
from lakehouse.sim.source import View, log_jobs, log_machine_size
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
folder, machine_size, settings, starts = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
columns = [np.load(f"{folder}/{name}.npy") for name in COLUMN_NAMES]
best = float("inf")
for _ in range(3):
    started = time.perf_counter()
    out = _native.simulate(*columns, None, machine_size=machine_size, algorithm="easy", policy="fcfs",
        threshold=None, compat="canonical", record_reservations=False, **settings)
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
    from lakehouse.sim.reference import easy_fcfs_starts

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
            python_starts = easy_fcfs_starts(*(c.tolist() for c in workload.columns[1:5]), size)
            python = time.perf_counter() - started
            same = np.array_equal(engine["start"], np.array(python_starts))
            speedup = python / engine["seconds"]
            jobs = len(workload.id)
            checks = [speedup >= 100, same]
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
        "  targets: CEA-Curie <= 1 s and <= 300 MB; >= 100x the Python implementation on every log "
        "(EASY++ = AVE2 + SJBF + incremental corrections: no target, shown so that its cost stays in sight)"
    )
    return ok


def _usage_part(args: tuple[Path, int, int, int]) -> int:
    from lakehouse.synth.google_trace import write_usage_part

    folder, part, parts, rows = args
    return write_usage_part(folder / f"part-{part:05d}-of-{parts:05d}.csv.gz", part, rows)


def bench_google(gigabytes: float) -> bool:
    from concurrent.futures import ProcessPoolExecutor

    from lakehouse.ingest.google import ingest_google
    from lakehouse.ingest.google_format import tables

    rows_per_part = 1_000_000  # about 168 MB of CSV
    parts = max(1, math.ceil(gigabytes * 1e9 / 168e6))
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace"
        usage = trace / "task_usage"
        usage.mkdir(parents=True)
        started = time.perf_counter()
        # spawn, not fork: a forked child inherits Polars' and DuckDB's thread pools half-locked.
        with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as pool:
            raw_bytes = sum(pool.map(_usage_part, [(usage, p, parts, rows_per_part) for p in range(parts)]))
        generated = time.perf_counter() - started
        gz_bytes = sum(p.stat().st_size for p in usage.iterdir())
        megabytes = raw_bytes / 1e6
        print(
            f"google ingest: {parts} task_usage parts, {megabytes:,.0f} MB CSV ({gz_bytes / 1e6:,.0f} MB gzip), "
            f"{parts * rows_per_part:,} rows (generated in {generated:.0f} s)"
        )
        lake = Lake(Path(tmp) / "lake")
        started = time.perf_counter()
        results, _ = ingest_google(lake, trace)
        ours = time.perf_counter() - started
        # Measured before the baseline runs in this process (the generator ran in child processes).
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        columns = ", ".join(f"{sql_literal(c.name)}: {sql_literal(c.duckdb_type)}" for c in tables()["task_usage"])
        bare, bare_mb = {}, {}  # the plain baseline (DuckDB's default Parquet settings) and DuckDB's zstd one
        written = (lake.root / "parquet" / "google" / "task_usage").glob("*.parquet")
        ours_mb = sum(f.stat().st_size for f in written) / 1e6
        for name, options in (("default", "FORMAT parquet"), ("zstd", "FORMAT parquet, COMPRESSION zstd")):
            con = duckdb.connect()
            con.execute("SET enable_progress_bar = false")
            started = time.perf_counter()
            con.execute(
                f"COPY (SELECT * FROM read_csv({sql_literal(str(usage / '*.csv.gz'))}, columns = {{{columns}}}, "
                f"header = false, auto_detect = false)) TO {sql_literal(str(Path(tmp) / 'bare.parquet'))} "
                f"({options})"
            )
            bare[name] = time.perf_counter() - started
            bare_mb[name] = (Path(tmp) / "bare.parquet").stat().st_size / 1e6
            con.close()
            (Path(tmp) / "bare.parquet").unlink()
        failed = [r for r in results if r.status != "ok"]
        started = time.perf_counter()
        tasks = lake.query("SELECT count(*) AS n FROM google.task_usage_stats")["n"][0]
        stats = time.perf_counter() - started
    rows = parts * rows_per_part
    checks = {
        ">= 0.9x bare DuckDB": bare["default"] / ours >= 0.9,
        ">= 120 MB/s": megabytes / ours >= 120,
        "peak <= 4 GB": peak_mb <= 4096,
        "task_usage_stats >= 20 M rows/s": rows / stats >= 20e6,
        "every part ok": not failed,
    }
    print(
        f"  ingest {ours:.1f} s = {megabytes / ours:,.0f} MB/s (Parquet zstd); peak memory of the ingest "
        f"{peak_mb:,.0f} MB\n  bare DuckDB, default Parquet (snappy): {bare['default']:.1f} s = "
        f"{megabytes / bare['default']:,.0f} MB/s, ingest / bare = {bare['default'] / ours:.2f}; "
        f"bare DuckDB, zstd: {bare['zstd']:.1f} s = {megabytes / bare['zstd']:,.0f} MB/s, "
        f"ingest / bare = {bare['zstd'] / ours:.2f}\n  Parquet written: ours {ours_mb:,.0f} MB, bare default "
        f"{bare_mb['default']:,.0f} MB, bare zstd {bare_mb['zstd']:,.0f} MB"
    )
    speed = rows / stats / 1e6
    print(f"  google.task_usage_stats: {tasks:,} tasks from {rows:,} rows in {stats:.2f} s = {speed:.1f} M rows/s")
    print("  " + "; ".join(f"{name}: {'PASS' if ok else 'FAIL'}" for name, ok in checks.items()))
    return all(checks.values())


REPORT_ROWS_TARGET_PER_10M_S = 15 * 60 / 130  # both reports over 1.3 G rows in < 15 minutes


def _generate_report_lake(args: tuple[Path, int]) -> int:
    from lakehouse.synth.google_trace import Settings, generate_lake

    root, services = args
    Lake(root).init()
    settings = Settings(machines=500, days=29, seed=5, services=services, batch_jobs_per_hour=100, parts=20)
    return int(generate_lake(root, settings)["usage_rows"])


def _in_fresh_process(function, *args):
    """Run a measurement in a new interpreter (spawned), so what ran before in this one (memory held,
    allocator state, thread pools) does not weigh on it."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(function, *args).result()


def _time_reports(root: Path) -> dict[str, float]:
    from lakehouse.models.job_sinusoids import periodicity
    from lakehouse.models.volatility import write_volatility

    lake = Lake(root)
    with lake.writer():
        pass  # the catalog
    started = time.perf_counter()
    lake.query(
        "SELECT job_id, task_index, count(*), avg(cpu_rate), avg(sampled_cpu_usage) FROM google.task_usage GROUP BY ALL"
    )
    baseline = time.perf_counter() - started
    started = time.perf_counter()
    with lake.writer():
        volatility = write_volatility(lake)
    volatility_s = time.perf_counter() - started
    started = time.perf_counter()
    fits = periodicity(lake).fits
    periodicity_s = time.perf_counter() - started
    return {
        "baseline": baseline,
        "volatility": volatility_s,
        "periodicity": periodicity_s,
        "tasks": volatility.tasks.height,
        "jobs": fits.height,
    }


def bench_reports(services: int) -> bool:
    """Both Google reports on a generated lake of >= 50 M usage rows, written straight to Parquet."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "lake"
        started = time.perf_counter()
        rows = _in_fresh_process(_generate_report_lake, (root, services))
        print(f"google reports: generated lake of {rows:,} usage rows in {time.perf_counter() - started:.0f} s")
        timed = _in_fresh_process(_time_reports, root)
    baseline, volatility_s, periodicity_s = timed["baseline"], timed["volatility"], timed["periodicity"]
    per_10m = {name: t * 1e7 / rows for name, t in (("volatility", volatility_s), ("periodicity", periodicity_s))}
    full_trace_min = sum(per_10m.values()) * 130 / 60
    ok = rows >= 50e6 and sum(per_10m.values()) <= REPORT_ROWS_TARGET_PER_10M_S
    print(
        f"  baseline (one DuckDB pass: count and means per task): {baseline:.1f} s\n"
        f"  report volatility: {volatility_s:.1f} s ({timed['tasks']:,} tasks) = "
        f"{per_10m['volatility']:.2f} s per 10 M rows, {volatility_s / baseline:.1f}x the baseline\n"
        f"  report periodicity: {periodicity_s:.1f} s ({timed['jobs']:,} jobs, 200 noise fits) = "
        f"{per_10m['periodicity']:.2f} s per 10 M rows, {periodicity_s / baseline:.1f}x the baseline\n"
        f"  both over the full trace (1.3 G rows) by linear extrapolation: {full_trace_min:.1f} min "
        f"(target < 15, lake >= 50 M rows): {'PASS' if ok else 'FAIL'}"
    )
    return ok


def _time_predictions(root: Path, log: str) -> dict[str, object]:
    from lakehouse.models.predict import report

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

    from lakehouse.models.packing import check_jobs, expand, ffd, lower_bound, smallest_mm
    from lakehouse.models.packing_campaign import campaign

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
    machines, _ = smallest_mm(tasks, 20.0, math.ceil(bound), int(ffd(tasks, 20.0).max()) + 1)
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
    ok = bench_simulator(folder)
    ok &= bench_campaigns(folder)
    ok &= bench_swf_ingest(folder)
    ok &= bench_packing()
    ok &= bench_google(float(os.environ.get("LAKEHOUSE_BENCH_GOOGLE_GB", "5")))
    ok &= bench_reports(int(os.environ.get("LAKEHOUSE_BENCH_SERVICES", "2000")))
    ok &= bench_predictions(folder)
    ok &= bench_research(folder)
    ok &= bench_nightly(folder)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory (this process): {peak_mb:,.0f} MB")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
