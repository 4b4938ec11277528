"""`make bench`: speed targets, each printed next to a baseline measured in the same run.

SWF ingest: all logs of a folder (default: the shared PWA logs beside the repository, or
$LAKEHOUSE_SHARED_DATA/swf) from scratch into a fresh lake, including Parquet and the catalog.
Target: < 10 s for the 19 shared logs (about 2.4 M jobs), i.e. >= 200 k jobs/s on 2 cores.
Baseline: DuckDB reading the same gzip files as raw lines and writing them to Parquet, the least any
DuckDB pipeline must do (no splitting, no typing, no checks).
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from lakehouse.catalog import sql_literal
from lakehouse.ingest.swf import discover, ingest_swf
from lakehouse.lake import Lake

REPO = Path(__file__).resolve().parents[1]


def shared_swf_dir() -> Path:
    return Path(os.environ.get("LAKEHOUSE_SHARED_DATA", REPO.parent / "shared" / "data")) / "swf"


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


def main() -> int:
    folder = shared_swf_dir()
    if not folder.exists():
        print(f"no SWF folder at {folder}: set LAKEHOUSE_SHARED_DATA", file=sys.stderr)
        return 1
    ok = bench_swf_ingest(folder)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory (this process): {peak_mb:,.0f} MB")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
