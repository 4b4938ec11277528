"""`make bench`, the Google ingest: throughput, the whole command, Parquet size, memory in the parts.

Generated task_usage parts (`write_usage_part`: the trace's 20 columns, measurements to four
significant digits as the trace prints them), each measurement next to a baseline of the same run:

- Throughput: >= 5 GB of CSV ($LAKEHOUSE_BENCH_GOOGLE_GB) ingested in this process, against a bare
  DuckDB COPY (read_csv of the same files -> Parquet, DuckDB's default snappy and zstd).  Targets:
  >= 0.9x the bare default's throughput, peak memory <= 4 GB; google.task_usage_stats over the result
  at >= 20 M usage rows/s.  The MB/s are information: an absolute target of 120 MB/s was set when the
  generated measurements had six decimals, which parse faster than the trace's four significant digits
  (the bare COPY went from ~115 to ~75 MB/s on the same machine); the ratio to the bare COPY is the
  target that holds across machines and data.
- The whole command on ~570 MB of CSV (4 parts): `lakehouse ingest google` against a bare DuckDB COPY
  as a whole command (`python -c`, importing only duckdb), best of 3 each, alternating.  Target:
  >= 0.9x the bare command's speed.
- Parquet size against DuckDB's own zstd output of the same rows: the generated parts above, and
  every part of the real sample in $LAKEHOUSE_SHARED_DATA/google when it is there.  Target <= 1.1x.
- Peak memory of `lakehouse ingest google` (whole command) on 10, 40 and 160 parts of 100,000 rows:
  target, the peak at 160 parts <= 1.25x the peak at 10.
"""

from __future__ import annotations

import math
import multiprocessing
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import duckdb

from benchmarks.measure import command, timed, verdict
from lakehouse.base.catalog import sql_literal
from lakehouse.base.google_format import tables
from lakehouse.base.lake import Lake

ROWS_PER_PART = 1_000_000  # about 170 MB of CSV
COMMAND_PARTS, COMMAND_ROWS = 4, 850_000  # about 570 MB
MEMORY_PARTS, MEMORY_ROWS = (10, 40, 160), 100_000


def _usage_part(args: tuple[Path, int, int, int]) -> int:
    from lakehouse.synth.google_trace import write_usage_part

    folder, part, parts, rows = args
    return write_usage_part(folder / f"part-{part:05d}-of-{parts:05d}.csv.gz", part, rows)


def _generate(folder: Path, parts: int, rows: int) -> int:
    """`parts` task_usage parts of `rows` rows under folder/task_usage; returns the CSV bytes."""
    usage = folder / "task_usage"
    usage.mkdir(parents=True, exist_ok=True)
    # spawn, not fork: a forked child inherits Polars' and DuckDB's thread pools half-locked.
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as pool:
        return sum(pool.map(_usage_part, [(usage, p, parts, rows) for p in range(parts)]))


def _columns(table: str) -> str:
    return "{" + ", ".join(f"{sql_literal(c.name)}: {sql_literal(c.duckdb_type)}" for c in tables()[table]) + "}"


def _bare_copy_sql(sources: str, table: str, target: Path, options: str) -> str:
    return (
        f"COPY (SELECT * FROM read_csv({sources}, columns = {_columns(table)}, header = false, "
        f"auto_detect = false)) TO {sql_literal(str(target))} ({options})"
    )


def bench_throughput(gigabytes: float, tmp: Path) -> bool:
    from lakehouse.ingest.google import ingest_google

    parts = max(1, math.ceil(gigabytes * 1e9 / 168e6))
    trace = tmp / "trace"
    started = time.perf_counter()
    megabytes = _generate(trace, parts, ROWS_PER_PART) / 1e6
    generated = time.perf_counter() - started
    usage = trace / "task_usage"
    gz_bytes = sum(p.stat().st_size for p in usage.iterdir())
    print(
        f"google ingest: {parts} task_usage parts, {megabytes:,.0f} MB CSV ({gz_bytes / 1e6:,.0f} MB gzip), "
        f"{parts * ROWS_PER_PART:,} rows (generated in {generated:.0f} s)"
    )
    lake = Lake(tmp / "lake")
    started = time.perf_counter()
    results, _ = ingest_google(lake, trace)
    ours = time.perf_counter() - started
    # Measured before the baseline runs in this process (the generator ran in child processes).
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    bare, bare_mb = {}, {}  # the plain baseline (DuckDB's default Parquet settings) and DuckDB's zstd one
    ours_mb = sum(f.stat().st_size for f in (lake.root / "parquet" / "google" / "task_usage").glob("*.parquet")) / 1e6
    for name, options in (("default", "FORMAT parquet"), ("zstd", "FORMAT parquet, COMPRESSION zstd")):
        con = duckdb.connect()
        con.execute("SET enable_progress_bar = false")
        started = time.perf_counter()
        con.execute(_bare_copy_sql(sql_literal(str(usage / "*.csv.gz")), "task_usage", tmp / "bare.parquet", options))
        bare[name] = time.perf_counter() - started
        bare_mb[name] = (tmp / "bare.parquet").stat().st_size / 1e6
        con.close()
        (tmp / "bare.parquet").unlink()
    failed = [r for r in results if r.status != "ok"]
    started = time.perf_counter()
    tasks = lake.query("SELECT count(*) AS n FROM google.task_usage_stats")["n"][0]
    stats = time.perf_counter() - started
    rows = parts * ROWS_PER_PART
    print(
        f"  ingest {ours:.1f} s = {megabytes / ours:,.0f} MB/s (Parquet zstd); peak memory of the ingest "
        f"{peak_mb:,.0f} MB\n  bare DuckDB, default Parquet (snappy): {bare['default']:.1f} s = "
        f"{megabytes / bare['default']:,.0f} MB/s, ingest / bare = {bare['default'] / ours:.2f}; "
        f"bare DuckDB, zstd: {bare['zstd']:.1f} s = {megabytes / bare['zstd']:,.0f} MB/s, "
        f"ingest / bare = {bare['zstd'] / ours:.2f}\n  Parquet written: ours {ours_mb:,.0f} MB, bare default "
        f"{bare_mb['default']:,.0f} MB, bare zstd {bare_mb['zstd']:,.0f} MB (ours / zstd = "
        f"{ours_mb / bare_mb['zstd']:.2f})"
    )
    print(
        f"  google.task_usage_stats: {tasks:,} tasks from {rows:,} rows in {stats:.2f} s "
        f"= {rows / stats / 1e6:.1f} M rows/s"
    )
    return verdict(
        {
            ">= 0.9x bare DuckDB": bare["default"] / ours >= 0.9,
            "peak <= 4 GB": peak_mb <= 4096,
            "task_usage_stats >= 20 M rows/s": rows / stats >= 20e6,
            "every part ok": not failed,
            "Parquet <= 1.1x DuckDB zstd": ours_mb <= 1.1 * bare_mb["zstd"],
        }
    )


BARE_COMMAND = """
import sys, duckdb
duckdb.sql("SET enable_progress_bar = false")
duckdb.sql(sys.argv[1])
"""


def bench_whole_command(tmp: Path) -> bool:
    """`lakehouse ingest google` on ~570 MB as a user times it, against a bare DuckDB COPY command."""
    trace = tmp / "command"
    megabytes = _generate(trace, COMMAND_PARTS, COMMAND_ROWS) / 1e6
    usage = sql_literal(str(trace / "task_usage" / "*.csv.gz"))
    ours, bare = [], []
    for run in range(3):
        lake = tmp / f"command-lake-{run}"
        ours.append(timed(command("ingest", "google", str(trace), "--lake", str(lake)))[0])
        target = tmp / f"bare-{run}.parquet"
        bare.append(
            timed([sys.executable, "-c", BARE_COMMAND, _bare_copy_sql(usage, "task_usage", target, "FORMAT parquet")])[
                0
            ]
        )
        target.unlink()
        subprocess.run(["rm", "-rf", str(lake)], check=True)
    ratio = min(bare) / min(ours)
    print(
        f"  whole command on {megabytes:,.0f} MB of CSV ({COMMAND_PARTS} parts): lakehouse ingest google best of 3 "
        f"{min(ours):.2f} s ({', '.join(f'{s:.2f}' for s in ours)}), bare DuckDB COPY command {min(bare):.2f} s "
        f"({', '.join(f'{s:.2f}' for s in bare)}); speed ours / bare = {ratio:.2f}"
    )
    return verdict({">= 0.9x the bare command": ratio >= 0.9})


def _parquet_sizes(trace: Path, tmp: Path) -> tuple[int, int]:
    """(our Parquet bytes, DuckDB zstd bytes) for every part of a trace folder."""
    from lakehouse.ingest.google import ingest_google

    lake = Lake(tmp / "sizes-lake")
    ingest_google(lake, trace)
    ours = sum(f.stat().st_size for f in (lake.root / "parquet" / "google").glob("*/part-*.parquet"))
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    theirs = 0
    for table in sorted(p.name for p in trace.iterdir() if p.is_dir()):
        for part in sorted((trace / table).glob("*.csv.gz")):
            target = tmp / "zstd.parquet"
            con.execute(_bare_copy_sql(sql_literal(str(part)), table, target, "FORMAT parquet, COMPRESSION zstd"))
            theirs += target.stat().st_size
            target.unlink()
    subprocess.run(["rm", "-rf", str(lake.root)], check=True)
    return ours, theirs


def bench_parquet_size(tmp: Path, real: Path) -> bool:
    ours, theirs = _parquet_sizes(tmp / "command", tmp)
    checks = {"generated <= 1.1x DuckDB zstd": ours <= 1.1 * theirs}
    line = f"  Parquet size, ours / DuckDB zstd: generated parts {ours / theirs:.2f} ({ours / 1e6:,.0f} MB)"
    if real.is_dir():
        ours, theirs = _parquet_sizes(real, tmp)
        checks["real sample <= 1.1x DuckDB zstd"] = ours <= 1.1 * theirs
        line += f", the real sample's {sum(1 for _ in real.glob('*/*.csv.gz'))} parts {ours / theirs:.2f}"
    print(line)
    return verdict(checks)


def bench_memory_in_parts(tmp: Path) -> bool:
    peaks = {}
    for parts in MEMORY_PARTS:
        trace = tmp / f"parts-{parts}"
        _generate(trace, parts, MEMORY_ROWS)
        lake = tmp / f"parts-lake-{parts}"
        seconds, peaks[parts] = timed(command("ingest", "google", str(trace), "--lake", str(lake)))
        subprocess.run(["rm", "-rf", str(lake), str(trace)], check=True)
        print(f"  {parts} parts of {MEMORY_ROWS:,} rows: {seconds:.1f} s, peak {peaks[parts]:,.0f} MB", flush=True)
    first, last = MEMORY_PARTS[0], MEMORY_PARTS[-1]
    return verdict({f"peak at {last} parts <= 1.25x at {first}": peaks[last] <= 1.25 * peaks[first]})


def bench_google_ingest(gigabytes: float, real: Path) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        ok = bench_throughput(gigabytes, Path(tmp))
    with tempfile.TemporaryDirectory() as tmp:
        ok &= bench_whole_command(Path(tmp))
        ok &= bench_parquet_size(Path(tmp), real)
        ok &= bench_memory_in_parts(Path(tmp))
    return ok


if __name__ == "__main__":
    import os

    data = Path(os.environ.get("LAKEHOUSE_SHARED_DATA", "../shared/data"))
    raise SystemExit(
        0 if bench_google_ingest(float(os.environ.get("LAKEHOUSE_BENCH_GOOGLE_GB", "5")), data / "google") else 1
    )
