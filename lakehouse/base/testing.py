"""Helpers for tests of lakehouse and of code built on it: tiny synthetic SWF logs, and workloads
with a planted ground truth.

Like ``polars.testing``, these are part of the package so that users' own tests can use them.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import numpy as np
import polars as pl

from lakehouse.base.swf_format import FIELDS

FIELD_NAMES = tuple(f.name for f in FIELDS)


def swf_job(job_id: int, submit: int, run: int, procs: int, req_time: int, user: int = 1, **fields: float) -> dict:
    """One job as a field-name -> value mapping; unspecified fields are -1 (unknown)."""
    job: dict[str, float] = dict.fromkeys(FIELD_NAMES, -1)
    job.update(
        job_id=job_id,
        submit_time=submit,
        wait_time=0,
        run_time=run,
        alloc_procs=procs,
        req_procs=procs,
        req_time=req_time,
        status=1,
        user_id=user,
        group_id=user,
    )
    unknown = set(fields) - set(FIELD_NAMES)
    if unknown:
        raise KeyError(f"not SWF fields: {sorted(unknown)}")
    job.update(fields)
    return job


def swf_text(jobs: Iterable[Mapping[str, float]], header: Mapping[str, object] | None = None) -> str:
    """An SWF log: `; Key: value` header lines, then one line of 18 fields per job."""
    lines = [f"; {key}: {value}" for key, value in (header or {}).items()]
    for job in jobs:
        lines.append(" ".join(str(job[name]) for name in FIELD_NAMES))
    return "\n".join(lines) + "\n"


def write_swf(path: Path, jobs: Iterable[Mapping[str, float]], header: Mapping[str, object] | None = None) -> Path:
    """Write a log, gzipped if the name ends with .gz."""
    text = swf_text(jobs, header).encode()
    path.write_bytes(gzip.compress(text, mtime=0) if path.name.endswith(".gz") else text)
    return path


def small_log(n: int = 5, max_procs: int = 8) -> tuple[list[dict], dict[str, object]]:
    """n simple valid jobs and a header for a machine of max_procs processors."""
    jobs = [swf_job(i + 1, submit=10 * i, run=100 + i, procs=1 + i % max_procs, req_time=200) for i in range(n)]
    header = {"Version": 2.2, "MaxProcs": max_procs, "UnixStartTime": 0, "TimeZoneString": "UTC"}
    return jobs, header


def planted_regimes(
    stay: Callable[[np.random.Generator], int], bins: int = 6000
) -> tuple[np.ndarray, np.ndarray, pl.DataFrame]:
    """A workload with a known hidden state: two regimes, of 1-minute jobs (regime 0) and of 3-hour
    jobs (1), eight jobs per 1.5-hour bin on average, each stay `stay(rng)` bins long.  Returns the
    jobs' submit and run times, and the planted stays (state = regime, bins)."""
    rng = np.random.default_rng(0)
    submit, runtime, planted, bin_, regime = [], [], [], 0, 0
    while bin_ < bins:
        length = stay(rng)
        n = rng.poisson(8 * length)
        submit.append(5400 * (bin_ + rng.uniform(0, length, n)))
        runtime.append((60.0 if regime == 0 else 10800.0) * np.exp(rng.normal(0, 0.2, n)))
        planted.append((regime, length))
        bin_ += length
        regime = 1 - regime
    stays = pl.DataFrame(planted, schema=["state", "bins"], orient="row")
    return np.concatenate(submit), np.round(np.concatenate(runtime)), stays
