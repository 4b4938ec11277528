"""`make bench`, nightly section: `lakehouse nightly` as a user's scheduler starts it.

An inbox holds the shared SWF logs (19), one of them (KTH-SP2) without its last tenth of jobs.  The
first night runs on an empty lake (everything is ingested, replayed with EASY, EASY-SJBF and EASY++ and
predicted); then the KTH-SP2 log receives its last tenth and the second night runs.  The second run is
timed against the first, measured in the same bench (target: <= 10 %).
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHANGED = "KTH-SP2-1996-2.1-cln.swf.gz"
#: The logs whose header lacks MaxProcs (their largest job, as the archive's notes give it).
CONFIG = """workers = 2
[machine_size]
"RICC-*" = 8192
"METACENTRUM-*" = 60
"""


def _truncated(source: Path, target: Path, share: float) -> None:
    lines = gzip.decompress(source.read_bytes()).decode().splitlines(keepends=True)
    jobs = [i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith(";")]
    target.write_bytes(gzip.compress("".join(lines[: jobs[int(len(jobs) * share)]]).encode(), mtime=0))


def _night(inbox: Path, lake: Path, config: Path) -> tuple[float, int, str]:
    command = [sys.executable, "-m", "lakehouse.cli", "nightly", "--inbox", str(inbox), "--lake", str(lake)]
    started = time.perf_counter()
    done = subprocess.run([*command, "--config", str(config)], capture_output=True, text=True)
    return time.perf_counter() - started, done.returncode, done.stderr


def bench_nightly(folder: Path) -> bool:
    logs = sorted(folder.glob("*.swf.gz"))
    with tempfile.TemporaryDirectory(prefix="lakehouse-bench-nightly-") as scratch:
        root = Path(scratch)
        inbox = root / "inbox"
        inbox.mkdir()
        for log in logs:
            if log.name == CHANGED:
                _truncated(log, inbox / log.name, 0.9)
            else:
                shutil.copyfile(log, inbox / log.name)
        config = root / "nightly.toml"
        config.write_text(CONFIG)
        first, code1, err1 = _night(inbox, root / "lake", config)
        shutil.copyfile(folder / CHANGED, inbox / CHANGED)
        later = time.time_ns()
        os.utime(inbox / CHANGED, ns=(later, later))
        second, code2, err2 = _night(inbox, root / "lake", config)
        third, code3, _ = _night(inbox, root / "lake", config)
    ratio = second / first
    ok = ratio <= 0.10 and code2 == 0
    print(f"nightly: {len(logs)} SWF logs from an empty lake in {first:.1f} s (exit {code1})")
    if code1:
        print("  " + " ".join(err1.split())[-600:])
    print(f"  after one log changed ({CHANGED}, +10 % of its jobs): {second:.1f} s (exit {code2}); "
          f"second / first = {ratio:.3f} (target <= 0.10): {'PASS' if ok else 'FAIL'}")  # fmt: skip
    if code2:
        print("  " + " ".join(err2.split())[-600:])
    print(f"  nothing new: {third:.1f} s (exit {code3})")
    return ok


if __name__ == "__main__":
    from benchmarks.bench import shared_swf_dir

    sys.exit(0 if bench_nightly(shared_swf_dir()) else 1)
