"""Helpers for tests of lakehouse and of code built on it: tiny synthetic SWF logs.

Like ``polars.testing``, these are part of the package so that users' own tests can use them.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Mapping
from pathlib import Path

from lakehouse.ingest.swf_format import FIELDS

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
