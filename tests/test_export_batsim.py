"""Exports for the simulators' ecosystem: a schedule as Batsim's jobs file (which evalys reads), with
each job's processors, and a log as a Batsim workload; both read back against the formats' documented
columns and fields (Batsim's documentation: the "Jobs" output file, "Workload" input, "Interval set")."""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import polars as pl
import pytest

from lakehouse import _native
from lakehouse.sim import simulate_log

from conftest import cli as run

KTH = "KTH-SP2-1996-2.1-cln"
WINDOW = "submit_offset < 20*86400"
#: The jobs file's columns, in Batsim's documented order.
DOCUMENTED_COLUMNS = [
    "job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources", "requested_time",
    "success", "final_state", "starting_time", "execution_time", "finish_time", "waiting_time",
    "turnaround_time", "stretch", "consumed_energy", "allocated_resources", "metadata",
]  # fmt: skip


def processors(interval_set: str) -> list[int]:
    """An interval set's text (`0-3 8`) read as its processors, by the documented grammar."""
    out = []
    for part in interval_set.split(" "):
        first, _, last = part.partition("-")
        out += range(int(first), int(last or first) + 1)
    return out


def test_a_schedule_as_batsims_jobs_file_holds_each_job_on_processors_no_other_job_holds_then(kth_lake, tmp_path):
    path = tmp_path / "out.batsim.csv"
    run("simulate", "KTH", "--lake", kth_lake.root, "--where", WINDOW, "--backfill", "sjbf", "--jobs-out", path)
    jobs = pl.read_csv(path, infer_schema_length=None)
    assert jobs.columns == DOCUMENTED_COLUMNS
    replay = simulate_log(kth_lake, KTH, where=WINDOW, backfill="sjbf").jobs
    assert jobs.height == replay.height and jobs["workload_name"].unique().to_list() == [KTH]
    assert jobs["starting_time"].to_list() == replay["start_time"].to_list()
    assert (jobs["waiting_time"] == jobs["starting_time"] - jobs["submission_time"]).all()
    assert (jobs["execution_time"] == jobs["finish_time"] - jobs["starting_time"]).all()
    assert (jobs["turnaround_time"] == jobs["finish_time"] - jobs["submission_time"]).all()
    held = defaultdict(list)
    for row in jobs.iter_rows(named=True):
        mine = processors(row["allocated_resources"])
        assert len(mine) == len(set(mine)) == row["requested_number_of_resources"]
        assert all(0 <= p < 100 for p in mine)  # KTH-SP2's 100 processors
        for p in mine:
            held[p].append((row["starting_time"], row["finish_time"]))
    for spans in held.values():  # no processor runs two jobs at once
        spans.sort()
        assert all(end <= next_start for (_, end), (next_start, _) in zip(spans, spans[1:], strict=False))
    # A job that ran to its request was killed at its walltime.
    killed = jobs.filter(pl.col("final_state") == "COMPLETED_WALLTIME_REACHED")
    assert (killed["execution_time"] == killed["requested_time"]).all() and (killed["success"] == 0).all()


def test_a_schedule_that_does_not_fit_its_machine_is_refused_naming_the_job():
    start, end, procs = (np.array(v, dtype=np.int64) for v in ([0, 0], [5, 5], [3, 2]))
    with pytest.raises(ValueError, match="job at row 1 needs 2 processors at 0 s, when 1 of 4 are free"):
        _native.processor_allocation(start, end, procs, 4)


@pytest.mark.parametrize("profile_type", ["delay", "DelayProfile"])
def test_a_log_as_a_batsim_workload_has_the_documented_fields(kth_lake, tmp_path, profile_type):
    path = tmp_path / "kth.json"
    run("export", "batsim", "KTH", "--lake", kth_lake.root, "--where", WINDOW, "-o", path,
        "--profile-type", profile_type)  # fmt: skip
    workload = json.loads(path.read_text())
    assert {"jobs", "profiles", "nb_res"} <= set(workload) and workload["nb_res"] == 100
    view = kth_lake.query(
        f"select job_id, submit_time, run_time, req_time, procs from swf.jobs_clean where log = '{KTH}' "
        f"and submit_time - (select min(submit_time) from swf.jobs_clean where log = '{KTH}') < 20*86400"
    )
    assert len(workload["jobs"]) == view.height
    by_id = {row["job_id"]: row for row in view.iter_rows(named=True)}
    for job in workload["jobs"]:
        assert isinstance(job["id"], str) and isinstance(job["res"], int) and job["res"] > 0
        assert isinstance(job["subtime"], float) and isinstance(job["walltime"], float)
        source = by_id[int(job["id"])]
        profile = workload["profiles"][job["profile"]]
        assert profile == {"type": profile_type, "delay": float(source["run_time"])}
        assert (job["subtime"], job["res"], job["walltime"]) == (
            source["submit_time"],
            source["procs"],
            source["req_time"],
        )
