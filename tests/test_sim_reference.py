"""The engine agrees start time for start time with an independent Python EASY on real logs."""

from __future__ import annotations

import pytest

from lakehouse.sim import simulate
from lakehouse.sim.reference import easy_fcfs_starts

LOGS = ["KTH-SP2-1996-2.1-cln", "SDSC-SP2-1998-4.2-cln"]


@pytest.mark.slow
@pytest.mark.parametrize("log", LOGS)
@pytest.mark.parametrize("predictor", ["requested", "clairvoyant"])
def test_engine_matches_the_python_reference(pwa_lake, log, predictor):
    lake, _ = pwa_lake
    sizes = lake.query("SELECT coalesce(machine_size, max_procs) AS m FROM swf.logs WHERE log = ?", [log])
    machine_size = sizes["m"][0]
    jobs = lake.query("SELECT * FROM swf.jobs_clean WHERE log = ? ORDER BY submit_time, job_id", [log])
    assert jobs.height > 25_000
    engine = simulate(jobs, machine_size, predictor=predictor).jobs["start"].to_list()
    python = easy_fcfs_starts(
        jobs["submit_time"].to_list(),
        jobs["run_time"].to_list(),
        jobs["req_time"].to_list(),
        jobs["procs"].to_list(),
        machine_size,
        clairvoyant=predictor == "clairvoyant",
    )
    differing = [i for i, (a, b) in enumerate(zip(engine, python, strict=True)) if a != b]
    assert not differing, f"{len(differing)} jobs differ, first job id {jobs['job_id'][differing[0]]}"
