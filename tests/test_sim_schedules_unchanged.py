"""Faster engine structures must not change a schedule.

`golden/schedule_digests.json` holds, for KTH-SP2, CTC-SP2 and SDSC-SP2 (strong filter), a SHA-256 of
every job's start time and backfilled flag under conservative backfilling (every policy, both backfill
orders, with predictions and corrections) and EASY with LEXP/SEXP and starvation thresholds, computed by
the engine before conservative backfilling stopped re-planning every waiting job at every pass (and
before any change to the orders that move with the clock).  Each replay must reproduce its digest.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from lakehouse.base.job_views import View, log_jobs
from lakehouse.sim import simulate

DIGESTS = json.loads((Path(__file__).parent / "golden" / "schedule_digests.json").read_text())


def schedule_digest(start: np.ndarray, backfilled: np.ndarray) -> str:
    data = np.ascontiguousarray(start, dtype="<i8").tobytes() + backfilled.astype("u1").tobytes()
    return hashlib.sha256(data).hexdigest()


#: Every recorded setting is replayed on KTH-SP2 in `make test` (8 s); SDSC-SP2 (7 s) and CTC-SP2 (18 s)
#: repeat them under `make faults` (marked thorough).
IN_MAKE_TEST = "KTH-SP2-1996-2.1-cln"


@pytest.mark.slow
@pytest.mark.parametrize(
    "log",
    [
        log if log == IN_MAKE_TEST else pytest.param(log, marks=pytest.mark.thorough)
        for log in sorted({d["log"] for d in DIGESTS})
    ],
)
def test_schedules_equal_the_recorded_ones(pwa_lake, log):
    lake, _ = pwa_lake
    jobs = log_jobs(lake, log, View.jobs_strong)
    cases = [d for d in DIGESTS if d["log"] == log]
    assert len(cases) == 39
    for case in cases:
        result = simulate(jobs, case["machine_size"], **case["settings"])
        got = schedule_digest(result.jobs["start_time"].to_numpy(), result.jobs["backfilled"].to_numpy())
        assert got == case["digest"], (log, case["settings"])
        assert result.summary["mean_wait"] == pytest.approx(case["mean_wait"], rel=1e-12)
