"""Measuring whole commands as a user runs them: wall time and peak memory of a child process."""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def command(*args: str) -> list[str]:
    """The `lakehouse` script next to this interpreter (as a user runs it), else `python -m`."""
    script = Path(sys.executable).parent / "lakehouse"
    return [str(script), *args] if script.exists() else [sys.executable, "-m", "lakehouse.cli", *args]


def _peak_mb(pid: int) -> float | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    return int(status.split("VmHWM:")[1].split()[0]) / 1024 if "VmHWM:" in status else None


def timed(args: list[str]) -> tuple[float, float]:
    """Wall seconds and peak memory (MB) of one child process.  The peak is the child's own VmHWM,
    read every 5 ms while it runs: the rusage of a child keeps the parent's high-water mark across
    fork and exec, and this process holds a whole lake's ingest."""
    # The child's messages go to a file: a pipe read only at the end would stop an hour-long ingest whose
    # progress lines fill its 64 KB.
    with tempfile.TemporaryFile() as messages:
        started = time.perf_counter()
        child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=messages)
        peak = 0.0
        while child.poll() is None:
            peak = max(peak, _peak_mb(child.pid) or 0.0)
            time.sleep(0.005)
        elapsed = time.perf_counter() - started
        if child.returncode != 0:
            messages.seek(0)
            raise RuntimeError(f"{' '.join(args)} failed: {messages.read().decode(errors='replace')[-400:]}")
    return elapsed, peak


#: A fixed piece of DuckDB work on every core (a hash of 300 M integers, summed): some 3 s on this
#: project's 2-core machine.  Its time is the machine's speed at that moment.
REFERENCE_WORK = (
    "import duckdb; con = duckdb.connect(); con.execute('SET enable_progress_bar = false'); "
    "con.execute('SELECT sum(hash(i)) FROM range(300000000) AS t(i)').fetchall()"
)


def reference_seconds(runs: int = 3) -> float:
    """Wall seconds of REFERENCE_WORK, the median of `runs` in processes of their own: the machine's speed
    now.  A shared machine's drifts by 10-30 % within an hour, which no comparison of two commands run
    minutes apart survives; one run of the reference varies by some 10 % from the next (2.9-3.6 s)."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", REFERENCE_WORK], check=True)
        times.append(time.perf_counter() - started)
    return sorted(times)[len(times) // 2]


def cpu_seconds_of_children() -> float:
    """User and system CPU seconds of this process's children that have ended (their difference around a
    command is the command's own)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def best(args: list[str], repeats: int = 3) -> tuple[float, float]:
    runs = [timed(args) for _ in range(repeats)]
    return min(r[0] for r in runs), max(r[1] for r in runs)


def verdict(checks: dict[str, bool]) -> bool:
    """Print each target with PASS or FAIL; True if all pass."""
    print("  targets: " + ", ".join(f"{k} {'PASS' if v else 'FAIL'}" for k, v in checks.items()))
    return all(checks.values())
