"""`make bench`, the research models (issue 18).

Locality: the full grid of `report locality` (8 submit bins x 6 run-time ratios x 10 shuffles, time
variant) on SDSC-BLUE (about 233 k jobs), jobs already loaded; target <= 10 s.  Baseline, in the same
run: one plug-in mutual information of one cell computed the plain way (np.unique over the (S, R)
pairs); the grid is 48 x 11 = 528 of them.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from lakehouse.ingest.swf import ingest_swf
from lakehouse.lake import Lake


def _plain_mutual_information(s: np.ndarray, r: np.ndarray) -> float:
    n = s.size
    _, joint = np.unique(np.stack([s, r], axis=1), axis=0, return_counts=True)
    _, cs = np.unique(s, return_counts=True)
    _, cr = np.unique(r, return_counts=True)

    def h(c: np.ndarray) -> float:
        return float(np.log2(n) - np.sum(c * np.log2(c)) / n)

    return h(cs) + h(cr) - h(joint)


def bench_locality(folder: Path) -> bool:
    from lakehouse.models import locality

    log = "SDSC-BLUE-2000-4.2-cln"
    with tempfile.TemporaryDirectory() as tmp:
        lake = Lake(Path(tmp) / "lake")
        ingest_swf(lake, [str(folder / f"{log}.swf.gz")])
        jobs = locality.log_jobs(lake, log).jobs
    settings = locality.Settings(variants=[locality.Variant.time])
    started = time.perf_counter()
    frame = locality.grid(jobs, log, settings)
    elapsed = time.perf_counter() - started
    s = locality.submit_bins(jobs["submit_time"].to_numpy(), 3600)
    r = locality.runtime_bins(jobs["run_time"].to_numpy(), 1.2)
    started = time.perf_counter()
    plain = _plain_mutual_information(s, r)
    one = time.perf_counter() - started
    cells = frame.height * (settings.shuffles + 1)
    ok = elapsed <= 10
    best = frame.filter("best").row(0, named=True)
    print(
        f"locality grid: {log}, {jobs.height:,} jobs, {frame.height} cells x {settings.shuffles + 1} "
        f"(log + shuffles) in {elapsed:.2f} s (target <= 10 s): {'PASS' if ok else 'FAIL'}; "
        f"{elapsed / cells * 1000:.1f} ms per mutual information vs {one * 1000:.1f} ms the plain way "
        f"(ratio {one * cells / elapsed:.1f}x); best f {best['locality']:.3f} bits at t_s {best['t_s']:g} s, "
        f"t_r {best['t_r']} (plain I at 1 h / 1.2: {plain:.3f})"
    )
    return ok


def bench_research(folder: Path) -> bool:
    return bench_locality(folder)
