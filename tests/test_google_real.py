"""The real Google trace files in ../shared/data/google ingest exactly (counts from PROVENANCE.md)."""

from __future__ import annotations

import gzip
import json

import pytest
from typer.testing import CliRunner

from lakehouse.base.lake import Lake
from lakehouse.cli import app
from lakehouse.ingest.google import ingest_google

from conftest import SHARED, shared_or_skip, stored_files

GOOGLE = SHARED / "google"


@pytest.fixture(scope="module")
def google_lake(tmp_path_factory: pytest.TempPathFactory) -> tuple[Lake, list, list]:
    shared_or_skip(GOOGLE)
    lake = Lake(tmp_path_factory.mktemp("google") / "lake")
    results, warnings = ingest_google(lake, GOOGLE)
    return lake, results, warnings


@pytest.mark.slow
def test_every_part_ingests_without_quarantine(google_lake):
    lake, results, warnings = google_lake
    assert {r.status for r in results} == {"ok"}
    assert len(results) == 500 + 11 + 1 + 1
    assert lake.query("SELECT count(*) AS n FROM google.quarantine")["n"][0] == 0
    # The sample holds 11 of 500 task_events parts and 1 of 500 task_usage parts: reported, not failed.
    assert warnings == ["task_events: 489 part(s) missing, 00011-00499", "task_usage: 499 part(s) missing, 00001-00499"]


@pytest.mark.slow
def test_row_counts_match_the_provenance_notes(google_lake):
    lake, _, _ = google_lake
    counts = lake.query(
        "SELECT (SELECT count(*) FROM google.job_events) AS job_events, "
        "(SELECT count(DISTINCT job_id) FROM google.job_events) AS jobs, "
        "(SELECT count(*) FROM google.task_events) AS task_events, "
        "(SELECT count(*) FROM google.machine_events) AS machine_events, "
        "(SELECT count(*) FROM google.task_usage) AS task_usage"
    ).row(0, named=True)
    assert counts == {
        "job_events": 2_012_242,
        "jobs": 672_074,
        "task_events": 2_048_560,
        "machine_events": 37_780,
        "task_usage": 10_000,
    }


@pytest.mark.slow
def test_documented_facts_of_the_trace(google_lake):
    lake, _, _ = google_lake
    # PROVENANCE.md: job 6253771429 is the only job submitted twice (672,075 SUBMIT events); 12,583
    # machines, 12,477 machine events at time 0 (before the trace window); no time 2^63-1 here.
    twice = lake.query(
        "SELECT job_id FROM google.job_events WHERE event = 'SUBMIT' GROUP BY job_id HAVING count(*) > 1"
    )
    assert twice["job_id"].to_list() == [6253771429]
    # Its audit: found before filtering, resolved by google.job_instances (one SUBMIT per instance).
    assert lake.query("SELECT * FROM google.audit_reused_job_ids").rows() == [(6253771429, 2, 0)]
    machines = lake.query(
        "SELECT count(DISTINCT machine_id) AS machines, count(*) FILTER (before_trace) AS at_zero, "
        "count(*) FILTER (after_trace) AS after FROM google.machine_events"
    ).row(0, named=True)
    assert machines == {"machines": 12_583, "at_zero": 12_477, "after": 0}
    # ClusterData2011_2.md: the trace starts at 19:00 EDT on Sunday 1 May 2011 (trace time 600 s), 29 days.
    span = lake.query("SELECT min(time_at) AS first, max(time_at) AS last FROM google.job_events").row(0)
    assert span[0].isoformat().startswith("2011-05-01T23:00:0") and span[1].isoformat().startswith("2011-05-30T2")
    # The task_usage sample: all rows start at 600 s, the first window of the trace.
    windows = lake.query("SELECT min(start_s) AS lo, max(start_s) AS hi, count(*) AS n FROM google.task_usage")
    assert windows.row(0) == (600.0, 600.0, 10_000)


@pytest.mark.slow
def test_task_usage_stats_equal_a_direct_numpy_computation(google_lake):
    import gzip

    import numpy as np

    lake, _, _ = google_lake
    # Independent computation from the raw CSV text: columns 3, 4 (ids), 6 (CPU rate), 20 (sampled CPU).
    groups: dict[tuple[int, int], list[tuple[float, float]]] = {}
    with gzip.open(GOOGLE / "task_usage" / "part-00000-of-00500.csv.gz", "rt") as lines:
        for line in lines:
            f = line.rstrip("\n").split(",")
            groups.setdefault((int(f[2]), int(f[3])), []).append((float(f[5] or "nan"), float(f[19] or "nan")))
    stats = lake.query("SELECT * FROM google.task_usage_stats").sort("job_id", "task_index")
    assert stats.height == len(groups)
    by_task = {(r["job_id"], r["task_index"]): r for r in stats.iter_rows(named=True)}
    for key, samples in groups.items():
        row = by_task[key]
        rate, sampled = np.array(samples).T
        assert row["windows"] == len(samples)
        assert row["mean_cpu_rate"] == pytest.approx(rate.mean(), rel=1e-12, abs=1e-15)
        assert row["mean_sampled_cpu"] == pytest.approx(sampled.mean(), rel=1e-12, abs=1e-15)
        assert row["nonzero_samples"] == int((sampled > 0).sum())
        if len(samples) > 1:
            assert row["sd_cpu_rate"] == pytest.approx(rate.std(ddof=1), rel=1e-9, abs=1e-15)
        else:
            assert row["sd_cpu_rate"] is None


@pytest.mark.slow
def test_job_sampling_splits_measured_and_unmeasured_jobs(google_lake):
    lake, _, _ = google_lake
    jobs = lake.query("SELECT * FROM google.job_sampling")
    # Independent of the view: jobs with at least one positive sampled CPU in the raw usage rows.
    sampled = lake.query("SELECT DISTINCT job_id FROM google.task_usage WHERE sampled_cpu_usage > 0")
    assert set(jobs.filter(jobs["measured"])["job_id"]) == set(sampled["job_id"])
    assert jobs.height == lake.query("SELECT count(DISTINCT job_id) AS n FROM google.task_usage")["n"][0]


def test_both_reports_run_on_the_real_sample(google_lake):
    # The task_usage sample is one 5-minute instant: volatility has numbers (no CV: one window per task),
    # periodicity has no job with a day of windows: one line says so and what to ingest, no empty table.
    lake, _, _ = google_lake
    runner = CliRunner()
    run = runner.invoke(app, ["report", "volatility", "--lake", str(lake.root), "--format", "json"])
    assert run.exit_code == 0, run.output
    summary = {row["metric"]: row["all"] for row in json.loads(run.stdout)}
    measured = lake.query("SELECT count(*) AS n FROM google.job_sampling WHERE measured")["n"][0]
    tasks = lake.query(
        "SELECT count(*) AS n FROM google.task_usage_stats s SEMI JOIN google.measured_jobs USING (job_id)"
    )["n"][0]
    assert measured > 0 and summary["tasks"] == tasks
    assert summary["median_samples_per_task"] == 1 and summary["median_cv_mu1s"] is None
    run = runner.invoke(app, ["report", "periodicity", "--lake", str(lake.root), "--format", "csv"])
    assert run.exit_code == 1 and run.stdout == ""
    message = " ".join(run.stderr.split())
    assert "a fit needs a day of 5-minute windows (ingest more task_usage parts)" in message, message
    assert lake.query("SELECT count(*) AS n FROM analysis.job_sinusoids")["n"][0] == 0


@pytest.mark.slow
@pytest.mark.parametrize("table", ["job_events", "task_events", "machine_events", "task_usage"])
def test_the_arrow_path_writes_what_duckdb_writes(table, tmp_path):
    # Clean parts are parsed by Arrow, the others by DuckDB: on the real files both must give the
    # same rows and types, NULLs included (a part of each table the sample holds).
    import duckdb
    import pyarrow.parquet as pq

    from lakehouse.ingest.google import TracePart, write_part

    shared_or_skip(GOOGLE)
    path = sorted((GOOGLE / table).glob("part-*.csv.gz"))[0]
    tables = {}
    for fast in (True, False):
        lake = Lake(tmp_path / str(fast))
        with lake.writer(create=True) as writer:
            result = write_part(lake, TracePart(table, path), fast=fast)
            writer.commit_outputs(result.renames)
        assert result.status == "ok" and result.quarantined == 0
        tables[fast] = stored_files(lake.root, f"google_{table}")[TracePart(table, path).part]
    # Each path was taken: the writers sign their files.
    assert "parquet-cpp-arrow" in pq.ParquetFile(tables[True]).metadata.created_by
    assert "DuckDB" in pq.ParquetFile(tables[False]).metadata.created_by
    con = duckdb.connect()
    arrow, duck = (f"read_parquet('{tables[fast]}')" for fast in (True, False))
    assert (
        con.execute(f"DESCRIBE SELECT * FROM {arrow}").fetchall()
        == con.execute(f"DESCRIBE SELECT * FROM {duck}").fetchall()
    )
    assert (
        con.execute(f"SELECT count(*) FROM {arrow}").fetchone()
        == con.execute(f"SELECT count(*) FROM {duck}").fetchone()
    )
    for a, b in ((arrow, duck), (duck, arrow)):
        assert con.execute(f"SELECT count(*) FROM (SELECT * FROM {a} EXCEPT ALL SELECT * FROM {b})").fetchone()[0] == 0


@pytest.mark.slow
def test_every_audit_passes_on_the_real_sample(google_lake):
    lake, _, _ = google_lake
    for audit in ("google.audit_reused_job_ids", "google.audit_unsampled_jobs"):
        rows = lake.query(f"SELECT * FROM {audit}")
        assert (rows["after_filtering"] == 0).all(), audit
    # The real finding of the reused-id audit is the documented job; the unsampled jobs are counted
    # again here from the CSV text: jobs with some CPU rate > 0 and no sampled CPU > 0 in any window.
    assert lake.query("SELECT job_id FROM google.audit_reused_job_ids")["job_id"].to_list() == [6253771429]
    used, sampled = set(), set()
    with gzip.open(GOOGLE / "task_usage" / "part-00000-of-00500.csv.gz", "rt") as lines:
        for fields in (line.rstrip("\n").split(",") for line in lines):
            if float(fields[5]) > 0:
                used.add(int(fields[2]))
            if fields[19] and float(fields[19]) > 0:
                sampled.add(int(fields[2]))
    found = set(lake.query("SELECT job_id FROM google.audit_unsampled_jobs")["job_id"])
    assert found == used - sampled and found


CALIBRATION = {
    "single-task jobs": "SELECT avg((n = 1)::INT) FROM (SELECT job_id, count(*) AS n FROM google.tasks GROUP BY ALL)",
    "tasks per job, p90": "SELECT quantile_cont(n, 0.9) FROM "
    "(SELECT job_id, count(*) AS n FROM google.tasks GROUP BY ALL)",
    "median CPU request": "SELECT median(cpu_request) FROM google.tasks",
    "median memory request": "SELECT median(memory_request) FROM google.tasks",
    "unmeasured jobs": "SELECT avg((NOT measured)::INT) FROM google.job_sampling",
    "windows of unmeasured jobs": "SELECT avg((job_id NOT IN (SELECT job_id FROM google.measured_jobs))::INT) "
    "FROM google.task_usage",
    "zero samples in measured jobs": "SELECT avg((mu1s = 0)::INT) FROM google.measured_usage",
}
CALIBRATION |= (
    {f"class {c} tasks": f"SELECT avg((scheduling_class = {c})::INT) FROM google.tasks" for c in range(4)}
    | {f"priority {p} tasks": f"SELECT avg((priority = {p})::INT) FROM google.tasks" for p in (0, 1, 2, 9)}
    | {
        f"{e} among ends": f"SELECT avg((event = '{e}')::INT) FILTER (event IN ('FINISH', 'KILL', 'FAIL')) "
        "FROM google.task_events"
        for e in ("FINISH", "KILL")
    }
)
# Absolute tolerance on shares, relative on sizes.
RELATIVE = {"tasks per job, p90": 0.5, "median CPU request": 0.25, "median memory request": 0.25}


@pytest.mark.slow
def test_the_generator_is_calibrated_on_the_real_sample(google_lake, tmp_path):
    # The same statistics on the real sample and on a generated trace of a day: shares within 0.08
    # (priorities, classes and end events are drawn per job, so a few large jobs move them; 0.15 for the
    # windows of unmeasured jobs, which they move most), sizes within the relative bounds above.
    from lakehouse.synth.google_trace import Settings, generate

    real, _, _ = google_lake
    generate(tmp_path, Settings(machines=60, days=1, seed=11, batch_jobs_per_hour=60, services=6))
    generated = Lake(tmp_path / "lake")
    ingest_google(generated, tmp_path / "trace")
    for name, sql in CALIBRATION.items():
        want, got = real.query(sql).item(), generated.query(sql).item()
        if name in RELATIVE:
            assert abs(got - want) <= RELATIVE[name] * want, (name, want, got)
        else:
            assert abs(got - want) <= (0.15 if name.startswith("windows") else 0.08), (name, want, got)


@pytest.mark.slow
def test_the_whole_trace_generator_is_calibrated_on_the_real_sample(google_lake):
    # The constants of lakehouse.synth.google_shape, measured again on the real files: the whole
    # job_events table and the first 11 task_events parts.
    from lakehouse.synth import google_shape as shape

    real, _, _ = google_lake
    at_start = (
        "(SELECT job_id, count(*) AS n, NOT bool_or(j.ended) AS never_ends FROM "
        "(SELECT DISTINCT job_id, task_index FROM google.task_events WHERE before_trace) "
        "JOIN (SELECT job_id, bool_or(event IN ('FINISH', 'FAIL', 'KILL', 'LOST')) AS ended FROM google.job_events "
        "GROUP BY job_id) AS j USING (job_id) GROUP BY job_id)"
    )
    rows = real.rows(
        f"SELECT never_ends, count(*), avg(n), avg((n = 1)::INT), median(n) FILTER (n > 1) FROM {at_start} GROUP BY 1"
    )
    found = {never_ends: rest for never_ends, *rest in rows}
    for never_ends, jobs, model in (
        (True, shape.LONG_RUNNING_JOBS, shape.LONG_RUNNING_TASKS),
        (False, shape.ENDING_EARLY_JOBS, shape.ENDING_EARLY_TASKS),
    ):
        count, mean, single, median = found[never_ends]
        assert count == jobs
        assert mean == pytest.approx(model.mean, abs=0.01)
        assert single == pytest.approx(model.single, abs=0.001)
        assert median == model.median
    # Jobs submitted in the first 11 parts (55,700 s; before 40,000 s, so that their tasks are seen).
    submitted = (
        "(SELECT job_id, count(DISTINCT task_index) AS n FROM google.task_events GROUP BY job_id "
        "HAVING min(time) > 0 AND min(time) < 40e9)"
    )
    single, median = real.rows(f"SELECT avg((n = 1)::INT), median(n) FILTER (n > 1) FROM {submitted}")[0]
    assert single == pytest.approx(shape.BATCH_TASKS.single, abs=0.005)
    assert median == shape.BATCH_TASKS.median
    ends = real.rows(
        "SELECT quantile_cont(end_s / 86400, $1) FROM (SELECT max(time_s) FILTER "
        "(event IN ('FINISH', 'FAIL', 'KILL', 'LOST')) AS end_s, bool_or(before_trace) AS at_start "
        "FROM google.job_events GROUP BY job_id) WHERE at_start AND end_s IS NOT NULL",
        [list(shape.EARLY_END_PROBABILITIES[1:-1])],
    )[0][0]
    assert ends == pytest.approx(shape.EARLY_END_DAYS[1:-1], abs=0.002)
    classes = real.rows(
        "SELECT scheduling_class, count(*) / sum(count(*)) OVER () FROM (SELECT job_id, arg_max(scheduling_class, "
        "time) AS scheduling_class FROM google.job_events GROUP BY job_id) GROUP BY 1 ORDER BY 1"
    )
    assert [share for _, share in classes] == pytest.approx(shape.JOB_CLASS_SHARES, abs=0.001)
    seconds = real.rows(
        "SELECT median(end_us - schedule_us) / 1e6 FROM (SELECT min(time) FILTER (event = 'SCHEDULE') AS "
        "schedule_us, max(time) FILTER (event IN ('EVICT', 'FAIL', 'FINISH', 'KILL', 'LOST')) AS end_us "
        "FROM google.task_events GROUP BY job_id, task_index) WHERE schedule_us > 0"
    )[0][0]
    assert seconds == pytest.approx(shape.TASK_SECONDS_MEDIAN, rel=0.001)
    assert real.rows("SELECT count(DISTINCT machine_id) FROM google.machine_events")[0][0] == shape.MACHINES


def test_the_predictions_run_on_the_real_sample(google_lake):
    """(Here, not in test_predict_lake.py: on this file's lake, ingested once.)"""
    from lakehouse.models.predictions.model import report

    lake, _, _ = google_lake
    result = report(lake, "cluster", "google")
    assert {"cpu", "memory", "cpu_peak", "memory_peak"} <= set(result.table["resource"])
    assert result.jobs.height > 0


def test_the_samples_jobs_export_as_an_swf_log_that_ingests_and_replays(google_lake, tmp_path):
    """`export swf --trace google-2011` of the real sample (read through cluster.*): one job per job with
    tasks that was submitted inside the trace, or submitted before it and first scheduled inside it (its
    start is then its submission). Both counted by DuckDB from the CSV files themselves, not the lake.
    The log ingests whole and replays."""
    import duckdb

    from conftest import cli

    lake, _, _ = google_lake

    def files(table: str, names: str) -> str:  # every column as text but the time, job and event
        typed = {"time": "BIGINT", "job": "BIGINT", "event": "INTEGER"}
        columns = ", ".join(f"'{name}': '{typed.get(name, 'VARCHAR')}'" for name in names.split())
        return f"read_csv('{(GOOGLE / table).as_posix()}/*.csv.gz', header = false, columns = {{{columns}}})"

    job_events = files("job_events", "time missing job event user class name logical_name")
    task_events = files("task_events", "time missing job task machine event user class priority cpu ram disk other")
    task_jobs = f"SELECT DISTINCT job FROM {task_events}"
    with duckdb.connect() as con:
        inside, started_inside = con.execute(
            f"""WITH j AS (SELECT job, min(time) FILTER (event = 0 AND time > 0) AS submit,
                                  min(time) FILTER (event = 1 AND time > 0) AS start
                           FROM {job_events} GROUP BY job)
                SELECT count(*) FILTER (submit IS NOT NULL), count(*) FILTER (submit IS NULL AND start IS NOT NULL)
                FROM j WHERE job IN ({task_jobs})"""
        ).fetchone()
    assert (inside, started_inside) == (11_536, 2)
    out = tmp_path / "sample.swf"
    exported = cli("export", "swf", "--trace", "google-2011", "--lake", lake.root, "-o", out)
    assert f"{inside + started_inside:,} jobs" in exported.stderr
    replayed = Lake(tmp_path / "swf")
    cli("ingest", "swf", out, "--lake", replayed.root)
    assert replayed.rows("SELECT count(*), count(*) FILTER (submit_time < 0) FROM swf.jobs") == [(11_538, 0)]
    assert "jobs replayed" in cli("simulate", "sample", "--lake", replayed.root).stderr
