"""Inboxes for the nightly run's tests: small SWF logs whose later versions add jobs, and broken files."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from lakehouse.base.testing import swf_job, write_swf
from lakehouse.nightly.config import Config

#: Replays in the test process (a pool's start-up would dominate logs this small); no noise trials.
FAST = Config(workers=1, figures=False, options={"periodicity": {"noise_trials": 0}})
#: FAST with the figures drawn, for the tests of the page's figures.
DRAWN = Config(workers=1, options={"periodicity": {"noise_trials": 0}})
#: For the tests of the inbox alone (names, sources, failures): the cheapest report, not every one.
INBOX = Config(reports=("logs",), workers=1, figures=False, options={"periodicity": {"noise_trials": 0}})
#: For the tests of the replays' change between versions of a log: the replays alone.
REPLAYS = Config(reports=("replays",), workers=1, figures=False, options={"periodicity": {"noise_trials": 0}})
HEADER = {"Version": 2.2, "MaxProcs": 64, "UnixStartTime": 0, "TimeZoneString": "UTC"}


def jobs(n: int, seed: int = 0) -> list[dict]:
    """n jobs on a 64-processor machine, busy enough that backfilling matters; the first k jobs of
    jobs(n) are jobs(k) (a later version of a log only adds jobs)."""
    rng = np.random.default_rng(seed)
    made = []
    submit = 0
    for i in range(n):
        submit += int(rng.integers(0, 400))
        run = int(rng.integers(10, 4000))
        procs = int(rng.choice([1, 2, 4, 8, 16, 32, 64]))
        made.append(swf_job(i + 1, submit, run, procs, req_time=run + int(rng.integers(0, 4000)), user=1 + i % 7))
    return made


def put_log(inbox: Path, name: str, n: int, seed: int = 0) -> Path:
    """Write (or replace) `name`.swf.gz with the first n jobs; its time moves on, as a new copy's would."""
    path = write_swf(inbox / f"{name}.swf.gz", jobs(n, seed), HEADER)
    later = time.time_ns() + 1_000_000
    os.utime(path, ns=(later, later))
    return path


def put_broken(inbox: Path, name: str = "broken") -> Path:
    """A file named like a gzipped log that is not gzip: it fails alone."""
    path = inbox / f"{name}.swf.gz"
    path.write_bytes(b"this is not gzip\n" * 10)
    return path
