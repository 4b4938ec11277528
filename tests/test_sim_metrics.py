"""The summary's distribution metrics, by hand."""

from __future__ import annotations

import math

import polars as pl
import pytest

from lakehouse.models.campaigns import DISTRIBUTION_METRICS
from lakehouse.sim.metrics import summary


def test_geometric_mean_and_percentiles_by_hand():
    waits = [0, 10, 20, 30, 100]
    jobs = pl.DataFrame(
        {
            "submit_time": [0] * 5,
            "start_time": waits,
            "end_time": [w + 10 for w in waits],
            "procs": [1] * 5,
            "wait": waits,
            "bounded_slowdown": [1.0, 2.0, 3.0, 4.0, 11.0],
        }
    )
    row = summary(jobs, 4)
    # Waits below 10 s count as 10 s: (10 * 10 * 20 * 30 * 100) ** (1/5).
    assert row["geomean_wait"] == pytest.approx((10 * 10 * 20 * 30 * 100) ** 0.2)
    # Linear interpolation between order statistics: p90 sits 60 % of the way from 30 to 100.
    assert row["p50_wait"] == 20 and row["p90_wait"] == pytest.approx(72.0) and row["p99_wait"] == pytest.approx(97.2)
    assert row["p90_bounded_slowdown"] == pytest.approx(4 + 0.6 * 7)
    assert math.isclose(row["mean_wait"], 32.0)


def test_an_empty_replay_has_every_metric_empty():
    row = summary(pl.DataFrame(schema={"submit_time": pl.Int64, "start_time": pl.Int64, "end_time": pl.Int64}), 4)
    assert row["jobs"] == 0 and all(row[k] is None for k in DISTRIBUTION_METRICS)


def small_replay(**options):
    from lakehouse.sim import simulate

    from sim_workloads import jobs

    # Machine of 10: A (1 proc) and B (2) start at once, C (all 10) when B ends at 200 and runs
    # 4,000 s; D (1 proc, submitted at 300) waits for C: 3,900 s.  Waits 0, 0, 0, 3,900.
    frame = jobs((1, 0, 10, 10, 1), (2, 100, 100, 100, 2), (3, 200, 4000, 4000, 10), (4, 300, 30, 30, 1))
    return simulate(frame, 10, **options)


def test_warmup_and_cooldown_leave_jobs_out_of_the_summary_only():
    assert small_replay().summary["mean_wait"] == 975  # 3,900 / 4
    trimmed = small_replay(warmup=50, cooldown=50)  # drops A (submitted at 0) and D (at 300)
    assert trimmed.summary["jobs"] == 2 and trimmed.summary["mean_wait"] == 0
    assert trimmed.jobs.height == 4  # every job was simulated
    assert small_replay(warmup=150).summary["mean_wait"] == 1950  # C and D


def test_the_breakdown_by_class_by_hand():
    result = small_replay()
    by_size = result.summary_by("size")
    assert by_size["size"].to_list() == ["1 processor", "<= 50 %", "> 50 %"]  # no job of 2-10 % here
    assert by_size["jobs"].to_list() == [2, 1, 1] and by_size["mean_wait"].to_list() == [1950, 0, 0]
    by_length = result.summary_by("length")
    assert by_length["length"].to_list() == ["< 1 min", "< 1 h", "< 10 h"]
    assert by_length["jobs"].to_list() == [2, 1, 1] and by_length["mean_wait"].to_list() == [1950, 0, 0]
    assert small_replay(warmup=50).summary_by("user")["jobs"].to_list() == [3]  # the same window


@pytest.mark.parametrize("options", [{"warmup": -1}, {"cooldown": float("inf")}, {"warmup": float("nan")}])
def test_a_window_must_be_finite_and_not_negative(options):
    from lakehouse.base.errors import SimulationInputError

    with pytest.raises(SimulationInputError, match="finite number of seconds >= 0"):
        small_replay(**options)


def test_submit_offset_counts_from_the_logs_first_job(kth_lake):
    from lakehouse.base.job_views import log_jobs

    log = kth_lake.log_names()[0]
    every = log_jobs(kth_lake, log, "jobs_strong")
    first_day = log_jobs(kth_lake, log, "jobs_strong", where="submit_offset < 86400")
    expected = every.filter(pl.col("submit_time") < every["submit_time"].min() + 86400)
    assert first_day["job_id"].to_list() == expected["job_id"].to_list() and 0 < first_day.height < every.height


def test_wider_jobs_are_refused_or_dropped_and_counted(kth_lake):
    from lakehouse.base.errors import SimulationInputError
    from lakehouse.base.job_views import log_jobs
    from lakehouse.sim import simulate

    jobs = log_jobs(kth_lake, kth_lake.log_names()[0], "jobs_strong")
    wider = jobs.filter(pl.col("procs") > 64).height
    with pytest.raises(SimulationInputError, match=f"wider than the machine.*{wider} jobs"):
        simulate(jobs, 64)
    result = simulate(jobs, 64, drop_wider=True)
    assert result.summary["jobs"] == jobs.height - wider
    assert result.warnings[0].startswith(f"dropped {wider:,} jobs wider than the machine (64 processors)")
