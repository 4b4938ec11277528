"""`make bench`, Google's 2019 trace: the ingest and the two reports at two sizes of a generated cell.

Each command is measured whole, as a user runs it (`benchmarks.measure.timed`: wall time and the child's
peak memory), at two sizes of one generated cell (`lakehouse generate google-2019`; the larger holds
four times the usage rows of the smaller, in four times the shards: a shard keeps its size, as the
trace's do):

- `lakehouse ingest google-2019` of the JSON export, against a baseline measured in the same run: a bare
  DuckDB read of the same shards into Parquet (`read_json` of every field, typed as the proto says, no
  checks, no quarantine, no manifest), as a whole command too.  Printed: rows/s and the ratio.
- `lakehouse report volatility --trace google-2019`, `report periodicity --trace google-2019`, `report
  predictions google-2019` and `pack --trace google-2019` on the ingested lake; every command with
  `--memory-limit 1GB`.
- Targets: time grows at most as rows^1.1 between the sizes (each command); the peak memory of each
  whole command (the Python process included) stays within its --memory-limit at both sizes, and does
  not grow from the smaller size to the larger by more than a quarter or GROWTH_SLACK_MB, whichever is
  more (DuckDB's pool varies by tens of MB from run to run with its threads' scheduling: `report
  volatility` peaked at 281 MB on 0.37 M rows and 263 MB on 1.45 M).

At a real cell's size (`bench_google2019_cell`): `lakehouse generate google-2019-shape` writes cells of
SHAPE_SCALES of a real cell (cell a's 10,001 machines over 31 days: about 1.43 G usage rows at scale 1)
as the Parquet export, shard by shard.  The same commands run on them (the ingest of the Parquet
export, against a bare DuckDB copy of the same shards under the same memory limit), with the same
targets under CELL_MEMORY_LIMIT, and the time of one cell and of eight is extrapolated from the larger
size at the measured exponent.  The commands run an hour, over which this machine's speed drifts by more
than the target allows, so each is timed between two runs of a fixed DuckDB query
(`benchmarks.measure.reference_seconds`), and the targets compare the times at one speed: each divided by
the reference around it, the smaller size run before and after the larger and its two times averaged.
Both exponents are printed.  A report whose peak grows by more than the slack runs the larger size once
more with the smaller size's peak as its --memory-limit (`_within_smaller_peak`): DuckDB fills the pool
it is given, so a peak can grow with the rows where the need does not.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.measure import command, cpu_seconds_of_children, reference_seconds, timed, verdict

#: Jobs of the smaller cell; the larger has four times as many (each job's tasks run the whole day).
SMALL_JOBS = 150
HOURS = 24.0
MEMORY_LIMIT = "1GB"
PEAK_BUDGET_MB = 10**9 / 2**20  # the limit, 10^9 bytes, in MiB as the peaks are counted (benchmarks.measure)
GROWTH_SLACK_MB = 100


def _generate(folder: Path, jobs: int) -> int:
    """A cell of `jobs` jobs, JSON export, in folder/cell_a; returns its usage rows."""
    import json

    subprocess.run(
        command(
            "generate",
            "google-2019",
            str(folder),
            "--cell",
            "a",
            "--jobs",
            str(jobs),
            "--alloc-sets",
            str(max(1, jobs // 10)),
            "--hours",
            str(HOURS),
            "--shards",
            str(4 * jobs // SMALL_JOBS),
            "--workflows",
            str(jobs // 5),
        ),
        check=True,
        capture_output=True,
    )
    return int(json.loads((folder / "truth.json").read_text())["usage_rows"])


BARE = """
import duckdb, sys
from lakehouse.base.google2019_format import TABLES
cell, out = sys.argv[1], sys.argv[2]
for table in ("instance_usage", "instance_events", "collection_events", "machine_events"):
    columns = {}
    for f in TABLES[table]:
        top = f.path[0]
        columns[top] = "STRUCT(cpus DOUBLE, memory DOUBLE)" if len(f.path) > 1 else f.type
    spec = "{" + ", ".join(f"'{k}': '{v}'" for k, v in columns.items()) + "}"
    duckdb.sql(f"COPY (SELECT * FROM read_json('{cell}/{table}-*.json.gz', columns = {spec})) "
               f"TO '{out}/{table}.parquet' (FORMAT parquet, COMPRESSION zstd)")
"""


def _cell(root: Path) -> Path:
    """The generated cell's shards under a size's folder."""
    return root / "gen" / "cell_a"


def _measure(root: Path, jobs: int) -> dict[str, tuple[float, float]] | None:
    rows = _generate(root / "gen", jobs)
    cell, lake = _cell(root), root / "lake"
    (root / "bare").mkdir()
    found = {"rows": (float(rows), 0.0)}
    found["bare read"] = timed([sys.executable, "-c", BARE, str(cell), str(root / "bare")])
    found["ingest"] = timed(
        command("ingest", "google-2019", str(cell), "--lake", str(lake), "--memory-limit", MEMORY_LIMIT)
    )
    limit = ("--lake", str(lake), "--memory-limit", MEMORY_LIMIT)
    for report in ("volatility", "periodicity"):
        found[f"report {report}"] = timed(command("report", report, "--trace", "google-2019", *limit))
    found["report predictions"] = timed(command("report", "predictions", "google-2019", *limit))
    found["pack"] = timed(command("pack", "--trace", "google-2019", *limit))  # the periodicity report's fits
    return found


#: Shares of a real cell for the bench at a real cell's size (about 143 and 286 million usage rows), and
#: the budget the issue of the 2019 trace sets there.  (Under 1 GB the predictions spill their window
#: tables: 14.5 s and 116 s at 0.01 and 0.04 of a cell, rows^1.5, against 14.0 s and 56.8 s under 3 GB.)
SHAPE_SCALES = (0.1, 0.2)
CELL_MEMORY_LIMIT = "3GB"
CELL_PEAK_BUDGET_MB = 3 * 10**9 / 2**20
BARE_PARQUET = """
import duckdb, sys
cell, out, limit = sys.argv[1], sys.argv[2], sys.argv[3]
duckdb.sql(f"SET memory_limit = '{limit}'")
for table in ("instance_usage", "instance_events", "collection_events", "machine_events"):
    duckdb.sql(f"COPY (SELECT * FROM read_parquet('{cell}/{table}-*.parquet.gz')) "
               f"TO '{out}/{table}.parquet' (FORMAT parquet, COMPRESSION zstd)")
"""
REPORTS = {
    "report volatility": ("report", "volatility", "--trace", "google-2019"),
    "report periodicity": ("report", "periodicity", "--trace", "google-2019"),
    "report predictions": ("report", "predictions", "google-2019"),
    "pack": ("pack", "--trace", "google-2019"),  # reads the periodicity report's fits
}


#: A command's wall seconds, its peak (MB), the machine's reference seconds around it, and its CPU seconds.
Timed = tuple[float, float, float, float]


def _at_speed(args: list[str]) -> Timed:
    """`timed(args)`, with the mean of reference_seconds() just before and just after it (the machine's
    speed while the command ran) and the command's CPU seconds (user and system)."""
    before = reference_seconds()
    cpu = cpu_seconds_of_children()
    seconds, peak = timed(args)
    cpu = cpu_seconds_of_children() - cpu
    return seconds, peak, (before + reference_seconds()) / 2, cpu


def _generate_shape(root: Path, scale: float) -> tuple[float, Timed]:
    """Generate a cell of `scale` of a real one under `root`: its usage rows, and the generation timed."""
    import json

    root.mkdir()
    generate = _at_speed(command("generate", "google-2019-shape", str(root / "gen"), "--scale", str(scale)))
    return float(json.loads((root / "gen" / "truth.json").read_text())["usage_rows"]), generate


def _bare_copy(root: Path) -> Timed:
    (root / "bare").mkdir()
    try:
        return _at_speed([sys.executable, "-c", BARE_PARQUET, str(_cell(root)), str(root / "bare"), CELL_MEMORY_LIMIT])
    finally:
        shutil.rmtree(root / "bare")


def _ingest(root: Path, lake: str = "lake") -> Timed:
    return _at_speed(
        command(
            "ingest", "google-2019", str(_cell(root)), "--lake", str(root / lake), "--memory-limit", CELL_MEMORY_LIMIT
        )
    )


def _report(args: tuple[str, ...], root: Path, memory_limit: str = CELL_MEMORY_LIMIT) -> Timed:
    return _at_speed(command(*args, "--lake", str(root / "lake"), "--memory-limit", memory_limit))


def _grows(smaller_peak: float, larger_peak: float) -> bool:
    """Whether a peak grew from the smaller size to the larger by more than a quarter or GROWTH_SLACK_MB."""
    return larger_peak > max(1.25 * smaller_peak, smaller_peak + GROWTH_SLACK_MB)


def _within_smaller_peak(args: tuple[str, ...], root: Path, smaller_peak: float) -> Timed:
    """The report on the larger size again, its --memory-limit the smaller size's peak.  A grown peak may be
    DuckDB filling the pool it is given, not memory the command needs: `report periodicity` peaked at
    1,780 and 2,385 MB at 0.1 and 0.2 of a cell under 3 GB, and at 0.2 under 1,800 MB at 1,531 MB in the
    same time (19.5 s and 20.0 s): its series of every job, grouped, fill the pool when they may and
    spill when they must.  The larger size needs no more memory than the smaller if it runs within that
    limit, its time at one speed still within rows^1.1 of the smaller's."""
    return _report(args, root, f"{math.floor(smaller_peak)}MiB")


def _per_speed(runs: list[Timed]) -> float:
    """Seconds at one speed (each run's seconds over the reference around it), the mean over the runs."""
    return sum(seconds / reference for seconds, _, reference, _ in runs) / len(runs)


def bench_google2019_cell() -> bool:
    """The commands on generated cells of SHAPE_SCALES of a real cell (about 85 minutes on 2 cores)."""
    print(
        f"google 2019 at a real cell's size: generated cells of {' and '.join(map(str, SHAPE_SCALES))} of cell a, "
        f"--memory-limit {CELL_MEMORY_LIMIT}; each command on the smaller, the larger, then the smaller again"
    )
    with tempfile.TemporaryDirectory(prefix="bench-2019-cell-") as tmp:
        small_root, large_root = (Path(tmp) / f"size-{number}" for number in range(len(SHAPE_SCALES)))
        # Each name's runs in order: the smaller size, the larger, the smaller again.
        runs: dict[str, list[Timed]] = {}
        rows = []
        for root, scale in ((small_root, SHAPE_SCALES[0]), (large_root, SHAPE_SCALES[1])):
            usage_rows, generated = _generate_shape(root, scale)
            runs.setdefault("generate", []).append(generated)
            rows.append(usage_rows)
        # Each command on the sizes one after the other, the smaller once more at the end: the machine's
        # speed drifts by 10-20 % within an hour, and a size measured half an hour after the other made a
        # report's exponent 1.32 where runs in turn gave 0.99 (generate, the same work a row at any size,
        # came out as rows^0.62).  In turn was not enough: the next run gave the ingest 1.29 (386 s, 942 s)
        # and generate 1.12, though each shard's ingest took the same time from the first shard to the
        # last (0.04 of a cell: 2.5 s a shard in either half).  Times read at the machine's speed
        # (reference_seconds) were not enough either: the next run passed the ingest (0.98) and the
        # predictions (1.07) and gave the volatility 1.10 where the run before gave 0.88 (its raw time
        # 1.07 and its CPU seconds 1.06).  With two sizes twice apart, 7 % of noise in one time moves the
        # exponent by 0.1; the smaller size measured before and after the larger cancels a drift over the
        # pair and halves the noise of its side.  (So the disk holds both sizes' shards.)
        order = (small_root, large_root, small_root)
        for root in order:
            runs.setdefault("bare read", []).append(_bare_copy(root))
        for root, lake in zip(order, ("lake", "lake", "lake-again"), strict=True):
            runs.setdefault("ingest", []).append(_ingest(root, lake))
        shutil.rmtree(small_root / "lake-again")
        for root in (small_root, large_root):
            shutil.rmtree(_cell(root))
        for name, args in REPORTS.items():
            runs[name] = [_report(args, root) for root in order]
        within_smaller = {}
        for name, args in REPORTS.items():
            smaller_peak = max(runs[name][0][1], runs[name][2][1])
            if _grows(smaller_peak, runs[name][1][1]):
                within_smaller[name] = _within_smaller_peak(args, large_root, smaller_peak)
    n1, n2 = rows
    first_speed = runs["generate"][0][2]
    checks: dict[str, bool] = {}
    for name in ("generate", "bare read", "ingest", *REPORTS):
        small, large = [runs[name][0], *runs[name][2:]], runs[name][1]
        (t1, p1, r1, c1), (t2, p2, r2, c2) = small[0], large
        again = "".join(f", again {t:,.0f} s (reference {r:.2f} s)" for t, _, r, _ in small[1:])
        exponent = math.log(t2 / t1) / math.log(n2 / n1)
        # The same times at one speed: each divided by the reference around it; the smaller size's runs
        # averaged (before and after the larger).
        at_speed = math.log(_per_speed([large]) / _per_speed(small)) / math.log(n2 / n1)
        cpu_exponent = math.log(c2 / c1) / math.log(n2 / n1)
        p1 = max(p for _, p, _, _ in small)
        one_cell = t2 * first_speed / r2 * (1 / SHAPE_SCALES[1]) ** max(1.0, at_speed)
        print(
            f"  {name}: {n1:,.0f} rows {t1:,.0f} s (reference {r1:.2f} s){again}, peak {p1:,.0f} MB; "
            f"{n2:,.0f} rows {t2:,.0f} s (reference {r2:.2f} s), peak {p2:,.0f} MB; "
            f"time ~ rows^{exponent:.2f} (first runs), at one speed rows^{at_speed:.2f}; CPU {c1:,.0f} s, "
            f"{c2:,.0f} s ~ rows^{cpu_exponent:.2f}; one cell ~{one_cell / 3600:,.1f} h, eight "
            f"~{8 * one_cell / 3600:,.1f} h"
        )
        if name in ("generate", "bare read"):
            continue
        checks[f"{name} time at one speed <= rows^1.1"] = at_speed <= 1.1
        checks[f"{name} peak <= {CELL_PEAK_BUDGET_MB:,.0f} MB"] = max(p1, p2) <= CELL_PEAK_BUDGET_MB
        growth = f"{name} peak grows <= 1.25x or {GROWTH_SLACK_MB} MB"
        if name not in within_smaller:
            checks[growth] = not _grows(p1, p2)
            continue
        (t3, p3, r3, _), limit = within_smaller[name], math.floor(p1)
        within = math.log(_per_speed([within_smaller[name]]) / _per_speed(small)) / math.log(n2 / n1)
        print(
            f"    {name}, the larger size again under --memory-limit {limit:,}MiB (the smaller's peak): "
            f"{t3:,.0f} s (reference {r3:.2f} s), peak {p3:,.0f} MB; at one speed rows^{within:.2f}"
        )
        checks[f"{growth}, or the larger size runs within the smaller's peak"] = p3 <= limit and within <= 1.1
    (_, generate_small, _, _), (_, generate_large, _, _) = runs["generate"]
    checks["generate's peak does not grow"] = not _grows(generate_small, generate_large)
    ingest, bare = runs["ingest"][1], runs["bare read"][1]
    print(
        "  ingest / bare DuckDB copy of the same shards (larger size, at one speed): "
        f"{(ingest[0] / ingest[2]) / (bare[0] / bare[2]):.2f}"
    )
    print(
        "  (reference: seconds of a fixed DuckDB query on every core, the median of three, averaged over just "
        "before and just after the command; at one speed: the times over their references, the smaller "
        "size's two runs averaged; time and CPU exponents: the first run of each size; CPU: the command's "
        "user and system seconds; one cell and eight: the larger size's time at the first command's speed, "
        "scaled by the exponent at one speed, at least linearly)"
    )
    return verdict(checks)


def bench_google2019() -> bool:
    print("google 2019: a generated cell at two sizes, whole commands")
    with tempfile.TemporaryDirectory(prefix="bench-2019-") as tmp:
        small_root, large_root = Path(tmp) / "small", Path(tmp) / "large"
        small_root.mkdir()
        large_root.mkdir()
        small, large = _measure(small_root, SMALL_JOBS), _measure(large_root, 4 * SMALL_JOBS)
    assert small is not None and large is not None
    n1, n2 = small["rows"][0], large["rows"][0]
    checks: dict[str, bool] = {}
    for name in ("bare read", "ingest", "report volatility", "report periodicity", "report predictions", "pack"):
        (t1, p1), (t2, p2) = small[name], large[name]
        exponent = math.log(t2 / t1) / math.log(n2 / n1)
        print(
            f"  {name}: {n1:,.0f} rows {t1:.1f} s ({n1 / t1:,.0f} rows/s), peak {p1:,.0f} MB; "
            f"{n2:,.0f} rows {t2:.1f} s ({n2 / t2:,.0f} rows/s), peak {p2:,.0f} MB; time ~ rows^{exponent:.2f}"
        )
        if name != "bare read":
            checks[f"{name} time <= rows^1.1"] = exponent <= 1.1
            checks[f"{name} peak <= {PEAK_BUDGET_MB:,.0f} MB"] = max(p1, p2) <= PEAK_BUDGET_MB
            checks[f"{name} peak grows <= 1.25x or {GROWTH_SLACK_MB} MB"] = not _grows(p1, p2)
    ratio = large["ingest"][0] / large["bare read"][0]
    speed = n2 / large["ingest"][0]
    print(f"  ingest / bare DuckDB read of the same shards (larger size): {ratio:.2f}")
    print(f"  at {speed:,.0f} usage rows/s, a billion usage rows take {1e9 / speed / 3600:,.1f} h on this machine")
    return verdict(checks)
