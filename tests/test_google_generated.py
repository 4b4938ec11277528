"""The Google views recover the truth planted in a generated trace."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from lakehouse.base.lake import Lake
from lakehouse.ingest.google import ingest_google
from lakehouse.synth.google_trace import Settings, generate

from google_raw import raw_usage


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Lake, list]:
    out = tmp_path_factory.mktemp("generated")
    generate(out, Settings(machines=15, days=1.5, seed=7, batch_jobs_per_hour=12, services=5))
    lake = Lake(out / "lake")
    results, _ = ingest_google(lake, out / "trace")
    return out, lake, results


def test_a_generated_trace_ingests_cleanly(generated):
    out, lake, results = generated
    assert {r.status for r in results} == {"ok"}
    assert sum(r.quarantined for r in results) == 0
    jobs = pl.read_parquet(out / "truth" / "jobs.parquet")
    assert lake.query("SELECT count(DISTINCT job_id) AS n FROM google.job_events")["n"][0] == jobs.height
    assert lake.query("SELECT count(*) AS n FROM google.tasks")["n"][0] == jobs["tasks"].sum()


def test_measured_jobs_are_exactly_the_planted_ones(generated):
    out, lake, _ = generated
    truth = pl.read_parquet(out / "truth" / "jobs.parquet")
    sampling = lake.query("SELECT * FROM google.job_sampling")
    found = set(sampling.filter(pl.col("measured"))["job_id"])
    planted = set(truth.filter(pl.col("measured"))["job_id"])
    assert found == planted and 0 < len(planted) < truth.height
    assert sampling["consistent"].all()  # the generator honours the trace's all-or-none property


def test_services_are_the_long_running_tasks(generated):
    out, lake, _ = generated
    truth = pl.read_parquet(out / "truth" / "jobs.parquet")
    services = truth.filter(pl.col("service"))
    long_running = lake.query("SELECT job_id, count(*) AS tasks FROM google.tasks_long_running GROUP BY job_id")
    assert dict(long_running.rows()) == dict(services.select("job_id", "tasks").rows())


def test_task_usage_stats_equal_numpy_on_the_generated_rows(generated):
    out, lake, _ = generated
    key, rate, sampled = raw_usage(out)
    stats = lake.query("SELECT * FROM google.task_usage_stats")
    assert stats.height == len({tuple(k) for k in key})
    for row in stats.sample(50, seed=1).iter_rows(named=True):
        mine = (key[:, 0] == row["job_id"]) & (key[:, 1] == row["task_index"])
        assert row["windows"] == mine.sum()
        assert row["mean_cpu_rate"] == pytest.approx(rate[mine].mean(), rel=1e-12)
        assert row["mean_sampled_cpu"] == pytest.approx(sampled[mine].mean(), rel=1e-12, abs=1e-300)
        assert row["nonzero_samples"] == (sampled[mine] > 0).sum()
        if mine.sum() > 1:
            assert row["sd_cpu_rate"] == pytest.approx(rate[mine].std(ddof=1), rel=1e-9)


def test_the_reused_job_id_audit_finds_the_planted_one_and_the_filter_resolves_it(generated):
    out, lake, _ = generated
    truth = pl.read_parquet(out / "truth" / "jobs.parquet")
    audit = lake.query("SELECT job_id, submits, after_filtering FROM google.audit_reused_job_ids")
    assert audit.rows() == [(truth.filter(pl.col("reused_id"))["job_id"][0], 2, 0)]
    instances = lake.query("SELECT instance, count(*) AS n FROM google.job_instances GROUP BY instance ORDER BY 1")
    assert instances.rows() == [(1, truth.height), (2, 1)]


def test_the_sampling_audit_finds_the_planted_unsampled_jobs_and_nothing_survives(generated):
    # Planted: jobs with 1-second sampling switched off.  Those that used CPU are the audit's finding;
    # none of their windows may reach the volatility views.
    out, lake, _ = generated
    truth = pl.read_parquet(out / "truth" / "jobs.parquet")
    audit = lake.query("SELECT * FROM google.audit_unsampled_jobs")
    used = set(lake.query("SELECT job_id FROM google.job_sampling WHERE tasks_used > 0")["job_id"])
    planted = set(truth.filter(pl.col("sampling_off"))["job_id"]) & used
    assert set(audit["job_id"]) == planted and planted
    assert (audit["after_filtering"] == 0).all()
