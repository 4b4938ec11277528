"""`make bench`, the whole Google trace: the reports that read it at the real trace's shape, at four sizes.

Lakes of the real trace's shape (`lakehouse.synth.google_shape`) at scales 0.0275, 0.055, 0.11 and 0.22
of clusterdata-2011-2, doubling (the largest: 5.6 M tasks and 278 M usage rows), written straight to
Parquet.  On each, `lakehouse report volatility`, `lakehouse report periodicity` and `lakehouse report
predictions google` run as whole commands in fresh processes with `--memory-limit 3GB`: wall time and
peak memory (the child's VmHWM).
Then the time's growth exponent in the usage rows (least squares over the sizes), each report's time
on the whole trace (1.23 G rows) by that fit and, more cautiously, linearly from the largest size, and
at the largest size the reports again with a limit of 12 GB (the stored results must be the same) and of
1 GB (to show that the peak follows the limit, not the data).

Targets: peak memory within the --memory-limit at every size, for each report, and within the 1 GB
limit at the largest size (the option is the command's whole memory, as its help says); growth
exponent <= 1.1, for each; volatility and periodicity on the whole trace <= 15 minutes together (the larger of the two
extrapolations; predictions' own is printed); results equal to the larger limit's (to 1e-9 relative:
float sums are added in another order when the shares differ).

`$LAKEHOUSE_BENCH_SCALES` (comma-separated) replaces the four scales.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import polars as pl
from polars.testing import assert_frame_equal

from benchmarks.measure import command, timed, verdict
from lakehouse.base.lake import Lake
from lakehouse.synth.google_shape import USAGE_ROWS

SCALES = (0.0275, 0.055, 0.11, 0.22)
LIMIT, LARGER_LIMIT, SMALLER_LIMIT = "3GB", "12GB", "1GB"
EXPONENT_TARGET, FULL_TRACE_TARGET_S = 1.1, 15 * 60


def _mib(limit: str) -> float:
    """A limit in MiB, the unit the peaks are read in (/proc's VmHWM)."""
    from lakehouse.base.budget import parse_memory

    return parse_memory(limit) / 2**20


#: Each report, with its arguments.
REPORTS = {"volatility": (), "periodicity": (), "predictions": ("google",)}
#: The reports whose time on the whole trace is held to FULL_TRACE_TARGET_S together.
TIMED_TOGETHER = ("volatility", "periodicity")
#: The stored results compared between the two limits, with the columns that order their rows.
STORED = {
    "analysis.volatility_summary": "metric",
    "analysis.volatility_d_histogram": "d_bin, high_slo, long_running",
    "analysis.volatility_rate_histogram": "has_request, mu5m_bin, mu1s_bin, high_slo, long_running",
    "analysis.task_volatility": "job_id, task_index",
    "analysis.job_sinusoids": "job_id",
    "analysis.predictions_scores": "source, scenario, resource",
    "analysis.predictions_jobs": "source, resource, submit, job",
}


def _generate(root: Path, scale: float) -> dict[str, object]:
    from lakehouse.synth.google_shape import Shape, generate_shape_lake

    return generate_shape_lake(root, Shape(scale=scale, seed=1))


def _run_reports(root: Path, limit: str) -> dict[str, tuple[float, float]]:
    """Seconds and peak MB of each report as a whole command (NaN for one that failed: it is said, and
    the `all ran` target fails)."""
    runs = {}
    for report, arguments in REPORTS.items():
        args = command("report", report, *arguments, "--lake", str(root), "--memory-limit", limit, "--format", "csv")
        try:
            runs[report] = timed(args)
        except RuntimeError as exc:
            print(f"  {report} FAILED under --memory-limit {limit}: {' '.join(str(exc).split())[-300:]}", flush=True)
            FAILED.append(f"{report} ({limit})")
            runs[report] = (float("nan"), float("nan"))
    return runs


#: The reports that failed, with their limit.
FAILED: list[str] = []


def _stored(root: Path) -> dict[str, pl.DataFrame]:
    lake = Lake(root)
    return {view: lake.query(f"SELECT * FROM {view} ORDER BY {order}") for view, order in STORED.items()}


def _same(a: dict[str, pl.DataFrame], b: dict[str, pl.DataFrame]) -> list[str]:
    """The stored tables that differ between two runs (beyond 1e-9 relative)."""
    different = []
    for view in STORED:
        try:
            assert_frame_equal(a[view], b[view], check_exact=False, rel_tol=1e-9, abs_tol=1e-12)
        except AssertionError as exc:
            different.append(f"{view}: {str(exc).splitlines()[0]}")
    return different


def bench_scale() -> bool:
    scales = [float(s) for s in os.environ.get("LAKEHOUSE_BENCH_SCALES", ",".join(map(str, SCALES))).split(",")]
    rows, seconds, peaks = [], {r: [] for r in REPORTS}, {r: [] for r in REPORTS}
    print(f"the whole Google trace: {', '.join(REPORTS)} at the real shape, --memory-limit {LIMIT}")
    different: list[str] = []
    smaller_peak = 0.0
    for scale in scales:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "lake"
            spawn = multiprocessing.get_context("spawn")  # a fresh interpreter: nothing held from before
            with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
                counts = pool.submit(_generate, root, scale).result()
            runs = _run_reports(root, LIMIT)
            rows.append(int(counts["usage_rows"]))
            line = f"  scale {scale:g}: {counts['usage_rows']:,} usage rows, {counts['tasks']:,} tasks, "
            line += f"{counts['jobs']:,} jobs"
            for report, (elapsed, peak) in runs.items():
                seconds[report].append(elapsed)
                peaks[report].append(peak)
                line += f"; {report} {elapsed:.1f} s, peak {peak:,.0f} MB"
            print(line, flush=True)
            if scale == max(scales):
                first = _stored(root)
                larger = _run_reports(root, LARGER_LIMIT)
                different = _same(first, _stored(root))
                print(
                    f"  again with --memory-limit {LARGER_LIMIT}: "
                    + "; ".join(f"{r} {s:.1f} s, peak {p:,.0f} MB" for r, (s, p) in larger.items())
                    + f"; stored results {'the same' if not different else 'DIFFERENT: ' + ', '.join(different)}"
                )
                smaller = _run_reports(root, SMALLER_LIMIT)
                smaller_peak = max(p for _, p in smaller.values())
                print(
                    f"  again with --memory-limit {SMALLER_LIMIT}: "
                    + "; ".join(f"{r} {s:.1f} s, peak {p:,.0f} MB" for r, (s, p) in smaller.items())
                )
    exponents, full = {}, {}
    for report in REPORTS:
        slope, intercept = np.polyfit(np.log(rows), np.log(seconds[report]), 1)
        exponents[report] = float(slope)
        by_fit = float(np.exp(intercept) * USAGE_ROWS**slope)
        linear = seconds[report][-1] * USAGE_ROWS / rows[-1]
        full[report] = max(by_fit, linear)
        print(
            f"  {report}: time grows as rows^{slope:.2f}; on the whole trace ({USAGE_ROWS:,} rows) "
            f"{by_fit / 60:.1f} min by the fit, {linear / 60:.1f} min linearly from the largest size"
        )
    total = sum(full[r] for r in TIMED_TOGETHER)
    print(f"  {' and '.join(TIMED_TOGETHER)} on the whole trace: {total / 60:.1f} min")
    summary = {"rows": rows, "seconds": seconds, "peak_mb": peaks, "exponents": exponents, "full_trace_s": full}
    print("  " + json.dumps(summary))
    return verdict(
        {
            f"peak <= {LIMIT}": max(max(p) for p in peaks.values()) <= _mib(LIMIT),
            f"peak <= {SMALLER_LIMIT} under --memory-limit {SMALLER_LIMIT}": smaller_peak <= _mib(SMALLER_LIMIT),
            f"exponent <= {EXPONENT_TARGET}": max(exponents.values()) <= EXPONENT_TARGET,
            f"{' + '.join(TIMED_TOGETHER)} on the whole trace <= 15 min": total <= FULL_TRACE_TARGET_S,
            f"same results as {LARGER_LIMIT}": not different,
            "every report ran": not FAILED,
        }
    )


if __name__ == "__main__":
    raise SystemExit(0 if bench_scale() else 1)
