"""Ctrl-C stops a replay promptly: the engine runs without the GIL and looks for signals now and then."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

# Conservative backfilling of 60,000 jobs arriving once a second on 64 processors: the queue grows
# into the tens of thousands, a replay of minutes.
LONG_REPLAY = """
import sys, time
import numpy as np, polars as pl
from lakehouse.sim import simulate
rng = np.random.default_rng(0)
n = 60_000
jobs = pl.DataFrame({"job_id": np.arange(n), "submit_time": np.arange(n), "run_time": rng.integers(1, 5000, n),
                     "req_time": np.full(n, 5000), "procs": rng.integers(1, 65, n), "user_id": np.zeros(n, dtype=int)})
print("replaying", flush=True)
try:
    simulate(jobs, 64, algorithm="conservative")
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
print("finished", flush=True)
"""


@pytest.mark.slow
def test_ctrl_c_stops_a_long_replay_within_a_second():
    child = subprocess.Popen([sys.executable, "-c", LONG_REPLAY], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "replaying"
        time.sleep(1.0)  # well inside the replay
        child.send_signal(signal.SIGINT)
        sent = time.monotonic()
        out, _ = child.communicate(timeout=30)
        assert child.returncode == 130 and out.strip() == "interrupted"
        # The engine looks for a signal every 50 ms; the bound leaves room for a loaded 2-core machine.
        assert time.monotonic() - sent < 5.0
    finally:
        child.kill()
