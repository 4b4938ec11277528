"""`campaign show --ci` and `campaign compare`: block-bootstrap intervals over a log's weeks, checked
against a bootstrap written here independently (plain Python resampling of the weeks' jobs)."""

from __future__ import annotations

import json
import random

import numpy as np
import polars as pl
import pytest

from lakehouse.sim import simulate_log

from conftest import cli

KTH = "KTH-SP2-1996-2.1-cln"
WEEK = 604_800


def weeks_of(schedule: pl.DataFrame, value: pl.Expr) -> list[list[float]]:
    """The jobs' values grouped by week of submission from the first job (empty weeks left out)."""
    frame = schedule.select(week=(pl.col("submit_time") - pl.col("submit_time").min()) // WEEK, value=value)
    return [group["value"].to_list() for _, group in frame.group_by("week", maintain_order=True)]


def independent_interval(weeks: list[list[float]], statistic, replicates: int, seed: int) -> tuple[float, float]:
    """Draw len(weeks) weeks with replacement, `statistic` over their jobs written out; the central 95 %."""
    draw = random.Random(seed)
    values = []
    for _ in range(replicates):
        jobs = [job for week in draw.choices(weeks, k=len(weeks)) for job in week]
        values.append(statistic(jobs))
    values.sort()
    return values[int(0.025 * replicates)], values[int(0.975 * replicates) - 1]


WAIT = pl.col("start_time") - pl.col("submit_time")


@pytest.fixture(scope="module")
def campaign(kth_lake_session):
    lake = kth_lake_session
    cli("campaign", "run", "--name", "ci", "--log", KTH, "--policy", "fcfs,spf", "--lake", lake.root)
    return lake


@pytest.mark.parametrize(
    ("metric", "statistic", "replicates"),
    [("mean_wait", lambda jobs: sum(jobs) / len(jobs), 1000), ("p90_wait", lambda jobs: np.percentile(jobs, 90), 300)],
)
def test_the_interval_agrees_with_an_independent_block_bootstrap(campaign, metric, statistic, replicates):
    args = ("campaign", "show", "ci", "--lake", campaign.root, "--ci", "--metric", metric, "-f", "json")
    rows = json.loads(cli(*args, "--replicates", replicates).stdout)
    row = next(r for r in rows if r["variant"] == "easy-fcfs")
    schedule = simulate_log(campaign, KTH).jobs
    weeks = weeks_of(schedule, WAIT.cast(pl.Float64))
    assert row["blocks"] == len(weeks)
    low, high = independent_interval(weeks, statistic, replicates, seed=7)
    width = high - low
    assert row[f"{metric}_low"] < row[metric] < row[f"{metric}_high"]
    # Two bootstraps of `replicates` draws: each end's Monte Carlo error is a few % of the width.
    assert row[f"{metric}_low"] == pytest.approx(low, abs=0.12 * width)
    assert row[f"{metric}_high"] == pytest.approx(high, abs=0.12 * width)


def test_a_paired_comparison_agrees_with_an_independent_one_and_is_significant_where_it_should_be(campaign):
    result = cli("campaign", "compare", "ci", "easy-fcfs", "easy-spf", "--lake", campaign.root, "--metric", "mean_wait",
                 "--replicates", 1000, "-f", "json")  # fmt: skip
    (row,) = json.loads(result.stdout)
    fcfs, spf = simulate_log(campaign, KTH).jobs, simulate_log(campaign, KTH, policy="spf").jobs
    joined = fcfs.select("job_id", "submit_time", a=WAIT).join(spf.select("job_id", b=WAIT), on="job_id")
    assert row["difference"] == pytest.approx(joined["b"].mean() - joined["a"].mean(), rel=1e-12)
    pairs = weeks_of(joined, pl.concat_list(pl.col("a").cast(pl.Float64), pl.col("b").cast(pl.Float64)))

    def difference(jobs):
        return sum(b for _, b in jobs) / len(jobs) - sum(a for a, _ in jobs) / len(jobs)

    low, high = independent_interval(pairs, difference, 1000, seed=3)
    assert row["low"] == pytest.approx(low, abs=0.12 * (high - low))
    assert row["high"] == pytest.approx(high, abs=0.12 * (high - low))
    # SPF's lower mean wait on KTH-SP2: the whole interval below zero, the p-value at its floor.
    assert row["high"] < 0 and row["p_value"] <= 0.01
    # A variant compared with itself: a difference of zero, p = 1.
    (same,) = json.loads(cli("campaign", "compare", "ci", "easy-fcfs", "easy-fcfs", "--lake", campaign.root,
                             "-f", "json").stdout)  # fmt: skip
    assert (same["difference"], same["low"], same["high"], same["p_value"]) == (0, 0, 0, 1)


def test_intervals_need_a_metric_of_the_jobs_and_a_known_variant(campaign):
    bad = cli("campaign", "show", "ci", "--lake", campaign.root, "--ci", "--metric", "utilization", code=1)
    assert "utilization is not a metric of the jobs alone" in " ".join(bad.stderr.split())
    unknown = cli("campaign", "compare", "ci", "easy-fcfs", "easy-sjf", "--lake", campaign.root, code=1)
    assert "the campaign has no variant 'easy-sjf'; it has: easy-fcfs, easy-spf" in " ".join(unknown.stderr.split())


def test_a_run_whose_jobs_changed_is_not_bootstrapped_from_a_replay_of_other_jobs(campaign, tmp_path):
    jobs = campaign.query(f"select log, job_id, run_time from swf.jobs_clean where log = '{KTH}'")
    path = tmp_path / "t.csv"
    jobs.select("log", "job_id", predicted=pl.col("run_time")).write_csv(path)
    cli("import", "predictions", path, "--name", "ci-table", "--lake", campaign.root)
    cli("campaign", "run", "--name", "ci-table", "--log", KTH, "--predictor", "table:ci-table", "--lake", campaign.root)
    jobs.select("log", "job_id", predicted=pl.col("run_time") * 3).write_csv(path)
    cli("import", "predictions", path, "--name", "ci-table", "--lake", campaign.root)
    result = cli("campaign", "show", "ci-table", "--lake", campaign.root, "--ci", code=1)
    assert "the lake no longer gives this run's jobs" in " ".join(result.stderr.split())
