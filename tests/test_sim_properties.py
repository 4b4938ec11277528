"""Invariants of every schedule, on random workloads (hypothesis)."""

from __future__ import annotations

import polars as pl
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from lakehouse.sim import simulate
from lakehouse.sim.options import Backfill, Correction, Policy

from conftest import examples
from sim_workloads import peak_use

MACHINE = 8
EXAMPLES = settings(max_examples=examples(500), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def workloads(draw, max_jobs: int = 25) -> pl.DataFrame:
    n = draw(st.integers(1, max_jobs))
    gaps = draw(st.lists(st.integers(0, 30), min_size=n, max_size=n))
    submit = [sum(gaps[: i + 1]) for i in range(n)]
    run = draw(st.lists(st.integers(0, 120), min_size=n, max_size=n))
    # Requests are sometimes shorter than the run: the job is then killed at its request.
    slack = draw(st.lists(st.integers(-20, 200), min_size=n, max_size=n))
    requested = [max(1, r + d) for r, d in zip(run, slack, strict=True)]
    procs = draw(st.lists(st.integers(1, MACHINE), min_size=n, max_size=n))
    users = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    guess = draw(st.lists(st.integers(0, 150), min_size=n, max_size=n))
    return pl.DataFrame(
        {
            "job_id": list(range(1, n + 1)),
            "submit_time": submit,
            "run_time": run,
            "req_time": requested,
            "procs": procs,
            "user_id": users,
            "guess": guess,
        }
    )


any_settings = st.fixed_dictionaries(
    {
        "algorithm": st.sampled_from(["easy", "conservative"]),
        "policy": st.sampled_from(list(Policy)),
        "backfill": st.sampled_from(list(Backfill)),
        "predictor": st.sampled_from(["requested", "clairvoyant", "ave2", "column:guess"]),
        "correction": st.sampled_from(list(Correction)),
        "threshold": st.one_of(st.none(), st.integers(0, 100)),
        "compat": st.sampled_from(["canonical", "pyss"]),
    }
)


def valid(config: dict) -> bool:
    """Conservative backfilling refuses predictions that may be exceeded without a correction."""
    underpredicts = config["predictor"] in ("ave2", "column:guess")
    return not (config["algorithm"] == "conservative" and config["correction"] == "none" and underpredicts)


@EXAMPLES
@given(workloads(), any_settings)
def test_capacity_is_never_exceeded(workload, config):
    assume(valid(config))
    result = simulate(workload, MACHINE, **config).jobs
    assert peak_use(result) <= MACHINE


@EXAMPLES
@given(workloads(), any_settings)
def test_no_job_starts_before_its_submission(workload, config):
    assume(valid(config))
    result = simulate(workload, MACHINE, **config).jobs
    assert (result["start_time"] >= result["submit_time"]).all()


@EXAMPLES
@given(workloads(), any_settings)
def test_every_job_runs_once_for_min_of_runtime_and_request(workload, config):
    assume(valid(config))
    result = simulate(workload, MACHINE, **config).jobs.sort("job_id")
    assert result["job_id"].to_list() == workload["job_id"].to_list()
    expected = [min(r, q) for r, q in zip(workload["run_time"], workload["req_time"], strict=True)]
    if config["compat"] == "pyss":
        expected = [max(e, 1) for e in expected]  # pyss keeps zero-length jobs as 1 s jobs
    assert (result["end_time"] - result["start_time"]).to_list() == expected


@EXAMPLES
@given(workloads(), st.sampled_from(list(Backfill)), st.sampled_from(["canonical", "pyss"]))
def test_easy_with_exact_predictions_never_starts_the_head_after_its_reservation(workload, backfill, compat):
    # FCFS keeps the head at the head, so its first reservation is a promise.
    result = simulate(
        workload, MACHINE, predictor="clairvoyant", backfill=backfill, compat=compat, record_reservations=True
    ).jobs
    reserved = result.filter(pl.col("reservation").is_not_null())
    assert (reserved["start_time"] <= reserved["reservation"]).all()


@EXAMPLES
@given(workloads(), st.sampled_from(list(Policy)), st.sampled_from(["requested", "clairvoyant"]))
def test_conservative_never_delays_a_reserved_job(workload, policy, predictor):
    # Predictions that are never exceeded: every job starts no later than its first reservation.
    result = simulate(
        workload, MACHINE, algorithm="conservative", policy=policy, predictor=predictor, record_reservations=True
    ).jobs
    assert result["reservation"].is_not_null().all()
    assert (result["start_time"] <= result["reservation"]).all()


def test_conservative_pyss_starts_every_job_of_the_workload_hypothesis_found():
    # Found by hypothesis: job 18 (5 procs, predicted 0 s by AVE2, runs 32 s) is corrected at 83, the
    # plan is rebuilt at 115 holding it until 116, and its termination at 115 used to give back only
    # up to start + planned length (115): the second [115, 116) stayed blocked, job 19 was reserved at
    # 116, an instant no event visits, and never started.  By hand: 14 holds 1 processor until 115 and
    # 18 holds 5 over [83, 115), so 19 (5 of 8) starts at 115.
    zero = [(i, 0, 0, 1, 1) for i in range(1, 14)]
    rows = [*zero, (14, 0, 115, 115, 1), (15, 22, 0, 1, 1), (16, 52, 0, 1, 1), (17, 82, 0, 1, 3),
            (18, 82, 32, 32, 5), (19, 82, 0, 1, 5)]  # fmt: skip
    frame = pl.DataFrame(rows, schema=["job_id", "submit_time", "run_time", "req_time", "procs"], orient="row")
    result = simulate(frame.with_columns(user_id=pl.lit(1)), MACHINE, algorithm="conservative", predictor="ave2",
                      compat="pyss").jobs  # fmt: skip
    assert (result["start_time"] >= result["submit_time"]).all()
    assert result.filter(pl.col("job_id") == 19)["start_time"][0] == 115
