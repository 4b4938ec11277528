"""`lakehouse export`: a view back to SWF (re-ingested: the same rows), and the Google lake's jobs as
SWF checked against the generated trace's planted truth."""

from __future__ import annotations

import polars as pl
import pytest
from typer.testing import CliRunner

from lakehouse.base.export import google_jobs
from lakehouse.base.lake import Lake
from lakehouse.base.swf_format import FIELDS
from lakehouse.cli import app
from lakehouse.ingest.google import ingest_google
from lakehouse.ingest.swf import ingest_swf
from lakehouse.synth.google_trace import TRACE_START_US, Settings, generate

COLUMNS = ", ".join(f.name for f in FIELDS)


def cli(*args: object, code: int = 0):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == code, (result.stdout, result.stderr)
    return result


@pytest.mark.parametrize("view", ["jobs", "jobs_clean", "jobs_strong"])
def test_export_then_ingest_gives_the_same_rows(kth_lake, tmp_path, view):
    out = tmp_path / f"kth-{view}.swf.gz"
    cli("export", "swf", "KTH", "--view", view, "-o", out, "--lake", kth_lake.root)
    copy = Lake(tmp_path / "lake")
    [result] = ingest_swf(copy, [str(out)], name="copy")
    assert result.quarantined == 0 and result.error is None
    original = kth_lake.query(f"SELECT {COLUMNS} FROM swf.{view} WHERE log = 'KTH-SP2-1996-2.1-cln' "
                              "ORDER BY submit_time, line")  # fmt: skip
    again = copy.query(f"SELECT {COLUMNS} FROM swf.jobs WHERE log = 'copy' ORDER BY line")
    assert original.height > 28_000 and again.equals(original)
    header = copy.query("SELECT max_procs, max_jobs, computer, raw_header FROM swf.logs").row(0, named=True)
    assert header["max_procs"] == 100 and header["max_jobs"] == original.height and header["computer"] == "IBM SP2"
    assert f"view swf.{view}" in header["raw_header"]


def test_fractional_cpu_times_survive_the_round_trip(tmp_path):
    from lakehouse.base.testing import swf_job, write_swf

    jobs = [swf_job(i, 10 * i, 100, 2, 200, avg_cpu_time=v) for i, v in enumerate([12.5, 0.1, 7, 1e-7, 3.25], 1)]
    write_swf(tmp_path / "frac.swf", jobs, {"MaxProcs": 8})
    lake = Lake(tmp_path / "lake")
    ingest_swf(lake, [str(tmp_path / "frac.swf")])
    cli("export", "swf", "frac", "--view", "jobs", "-o", tmp_path / "out.swf", "--lake", lake.root)
    ingest_swf(lake, [str(tmp_path / "out.swf")], name="again")
    values = lake.query("SELECT log, list(avg_cpu_time ORDER BY job_id) AS v FROM swf.jobs GROUP BY log ORDER BY log")
    assert values["v"].to_list() == [[12.5, 0.1, 7.0, 1e-7, 3.25]] * 2


def test_unknown_log_and_missing_folder_are_clear_errors(kth_lake, tmp_path):
    result = cli("export", "swf", "NOPE", "-o", tmp_path / "x.swf", "--lake", kth_lake.root, code=1)
    assert "no log matches 'NOPE'" in result.stderr
    cli("export", "swf", "KTH", "-o", tmp_path / "missing" / "x.swf", "--lake", kth_lake.root, code=2)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    root = tmp_path_factory.mktemp("google-swf")
    generate(root, Settings(machines=6, days=2, seed=7, services=3, batch_jobs_per_hour=3))
    lake = Lake(root / "lake")
    ingest_google(lake, root / "trace")
    return lake, pl.read_parquet(root / "truth" / "jobs.parquet")


def test_google_jobs_match_the_planted_truth(generated, tmp_path):
    lake, truth = generated
    jobs = google_jobs(lake)
    # One SWF job per Google job (a reused id stays one job), with its tasks and first submission.
    assert jobs.height == truth.height
    expected = truth.select(
        pl.col("job_id").alias("google_job_id"),
        pl.col("tasks").alias("req_procs"),
        # Seconds from the trace's start; a submission before the trace counts as its start.
        ((pl.col("submit_us").clip(lower_bound=TRACE_START_US) - TRACE_START_US) / 1e6).round().cast(pl.Int64)
        .alias("submit_time"),
    ).sort("google_job_id")  # fmt: skip
    got = jobs.select("google_job_id", "req_procs", "submit_time").sort("google_job_id")
    assert got.equals(expected)
    assert jobs["job_id"].to_list() == list(range(1, jobs.height + 1))  # numbered in submit order
    assert jobs["submit_time"].is_sorted()
    services = truth.filter("service")["job_id"].to_list()
    ran = jobs.filter(~pl.col("google_job_id").is_in(services))
    assert (ran["run_time"] > 0).mean() > 0.9  # batch jobs that ended have a run time
    assert (jobs.filter(pl.col("google_job_id").is_in(services))["run_time"] == -1).all()  # still running


def test_google_swf_file_ingests_and_replays(generated, tmp_path):
    lake, truth = generated
    out = tmp_path / "google.swf"
    cli("export", "google-swf", "--lake", lake.root, "-o", out, "--cores-per-machine", "4", "--processors", "cpu")
    swf = Lake(tmp_path / "swf-lake")
    [result] = ingest_swf(swf, [str(out)])
    assert result.quarantined == 0 and result.jobs == truth.height
    assert swf.query("SELECT max_procs FROM swf.logs")["max_procs"][0] == 6 * 4
    cli("simulate", "google", "--lake", swf.root)


def test_the_common_views_export_of_google_2011_agrees_with_google_swf(generated, tmp_path):
    """`export swf --trace google-2011` reads cluster.*, `export google-swf` the trace's own events: for
    the jobs submitted inside the trace, every field they both give is the same (the services, there
    before the trace, are left out by the first and start at 0 in the second), but for a job id used
    twice: cluster.jobs ends it at its last end event, google-swf at its tasks' last end."""
    lake, truth = generated
    out = tmp_path / "cluster.swf"
    cli("export", "swf", "--trace", "google-2011", "--lake", lake.root, "-o", out)
    ours = [tuple(int(f) for f in line.split()[1:5]) for line in out.read_text().splitlines() if line[0] != ";"]
    theirs = google_jobs(lake).filter(pl.col("submit_time") > 0)
    reused = set(lake.query("SELECT job_id FROM google.audit_reused_job_ids")["job_id"].to_list())
    fields = ("submit_time", "wait_time", "run_time", "req_procs")
    differ = {j for j, *row in theirs.select("google_job_id", *fields).rows() if tuple(row) not in set(ours)}
    assert len(ours) == theirs.height == truth.filter(~pl.col("service")).height
    assert differ <= reused and len(reused) >= 1
    swf = Lake(tmp_path / "swf-lake")
    [result] = ingest_swf(swf, [str(out)])
    assert result.quarantined == 0
    cli("simulate", "cluster", "--lake", swf.root)
