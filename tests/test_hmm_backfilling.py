"""EASY backfilling with run-time distributions: the online HMM predictor
keeps every schedule invariant, one event at each request is exactly EASY, a workload whose run times
follow a planted regime is scheduled better, and what the engine cannot replay is refused."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lakehouse.base.errors import SimulationInputError
from lakehouse.base.job_views import log_jobs, log_machine_size
from lakehouse.sim import simulate
from lakehouse.sim.options import Backfill, Policy

from conftest import examples
from sim_workloads import peak_use

MACHINE = 8
EXAMPLES = settings(max_examples=examples(500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Minute bins and updates every 5 minutes, so that the model trains within a hypothesis workload.
FAST_HMM = "hmm:states=2,bin=60,update=300,window=7200,rounds=3"
# The thesis' settings on the same scale: Static-IV, terminated jobs only, a warm-up, rounds to
# convergence, the probability rule for every candidate.
FAST_THESIS = FAST_HMM + ",band=2,running=0,warmup=600,converge=200,every=1"


@st.composite
def workloads(draw, max_jobs: int = 40) -> pl.DataFrame:
    n = draw(st.integers(1, max_jobs))
    gaps = draw(st.lists(st.integers(0, 240), min_size=n, max_size=n))
    submit = np.cumsum(gaps).tolist()
    run = draw(st.lists(st.integers(0, 900), min_size=n, max_size=n))
    slack = draw(st.lists(st.integers(-60, 1800), min_size=n, max_size=n))
    return pl.DataFrame(
        {
            "job_id": list(range(1, n + 1)),
            "submit_time": submit,
            "run_time": run,
            "req_time": [max(1, r + d) for r, d in zip(run, slack, strict=True)],
            "procs": draw(st.lists(st.integers(1, MACHINE), min_size=n, max_size=n)),
            "user_id": [1] * n,
        }
    )


distribution_settings = st.fixed_dictionaries(
    {
        "policy": st.sampled_from(list(Policy)),
        "backfill": st.sampled_from(list(Backfill)),
        "backfill_confidence": st.sampled_from([0.01, 0.05, 0.3, 0.9]),
    }
)


@EXAMPLES
@given(workloads(), distribution_settings, st.sampled_from([FAST_HMM, FAST_THESIS]))
def test_hmm_schedules_keep_every_invariant(workload, config, predictor):
    result = simulate(workload, MACHINE, predictor=predictor, **config).jobs.sort("job_id")
    assert result["job_id"].to_list() == workload["job_id"].to_list()  # each job once
    assert (result["start_time"] >= result["submit_time"]).all()
    assert peak_use(result) <= MACHINE
    expected = [min(r, q) for r, q in zip(workload["run_time"], workload["req_time"], strict=True)]
    assert (result["end_time"] - result["start_time"]).to_list() == expected


@EXAMPLES
@given(workloads(), distribution_settings)
def test_one_event_at_each_request_schedules_exactly_as_easy(workload, config):
    confidence = config.pop("backfill_confidence")
    easy = simulate(workload, MACHINE, **config).jobs
    laws = simulate(workload, MACHINE, predictor="requested-law", backfill_confidence=confidence, **config).jobs
    assert laws["start_time"].to_list() == easy["start_time"].to_list()
    assert laws["backfilled"].to_list() == easy["backfilled"].to_list()


def test_one_event_at_each_request_is_easy_on_a_real_log(kth_lake):
    lake = kth_lake
    log = lake.log_names()[0]
    jobs = log_jobs(lake, log, "jobs_strong")
    size = log_machine_size(lake, log, "jobs_strong")
    easy = simulate(jobs, size).jobs
    laws = simulate(jobs, size, predictor="requested-law").jobs
    assert laws["start_time"].to_list() == easy["start_time"].to_list()
    assert easy["backfilled"].sum() > 10_000


def regime_workload(seed: int = 3, days: int = 30) -> pl.DataFrame:
    """Days alternate between short jobs (30-300 s) and long ones (1-4 h), all requesting 6 h: the
    requests say nothing, the submit time everything."""
    rng = np.random.default_rng(seed)
    rows, t = [], 0
    while t < days * 86400:
        t += int(rng.exponential(900))
        short = (t // 86400) % 2 == 0
        run = int(rng.uniform(30, 300)) if short else int(rng.uniform(3600, 4 * 3600))
        rows.append((len(rows) + 1, t, run, 6 * 3600, int(rng.choice([1, 2, 4, 8, 16, 32])), 1))
    return pl.DataFrame(
        rows, schema=["job_id", "submit_time", "run_time", "req_time", "procs", "user_id"], orient="row"
    )


def test_a_planted_regime_is_learnt_and_shortens_the_waits():
    jobs = regime_workload()
    easy = simulate(jobs, 64).summary["mean_wait"]
    hmm = simulate(jobs, 64, predictor="hmm").summary["mean_wait"]
    # Measured: EASY 30,924 s, EASY+HMM 21,117 s (tau 0.05); looser confidence backfills more.
    assert hmm < 0.9 * easy
    looser = simulate(jobs, 64, predictor="hmm", backfill_confidence=0.2).jobs["backfilled"].sum()
    assert looser > simulate(jobs, 64, predictor="hmm").jobs["backfilled"].sum()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"backfill_confidence": 0.0}, "in (0, 1)"),
        ({"backfill_confidence": 1.0}, "in (0, 1)"),
        ({"backfill_confidence": float("nan")}, "in (0, 1)"),
        ({"algorithm": "conservative"}, "EASY backfilling in canonical semantics only"),
        ({"compat": "pyss"}, "EASY backfilling in canonical semantics only"),
        ({"predictor": "hmm:states=0"}, "whole number >= 1"),
        ({"predictor": "hmm:ratio=1"}, "above 1"),
        ({"predictor": "hmm:colour=red"}, "unknown hmm parameter"),
        ({"predictor": "hmm:running=yes"}, "must be 0 or 1"),
        ({"predictor": "hmm:warmup=-5"}, "warmup must be a whole number of seconds >= 0"),
    ],
)
def test_what_the_engine_cannot_replay_is_refused(options, message):
    jobs = regime_workload(days=1)
    settings_ = {"predictor": "hmm", **options}
    with pytest.raises(SimulationInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        simulate(jobs, 64, **settings_)


def test_the_study_command_stores_a_campaign_and_compares_with_the_published_figures(kth_lake, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import lakehouse.studies.hmm_backfilling as study
    from lakehouse.cli import app

    lake = kth_lake
    grids = []  # the grids the command makes: one, for its campaign, which its table then reads
    monkeypatch.setattr(study, "study_grid", lambda *a, _made=study.study_grid: grids.append(_made(*a)) or grids[-1])
    # A campaign of its own: the shared lake may already hold the study's default campaign, with the
    # thesis' model beside ours (`reproduce hmm-backfilling` in another test), which the table would show.
    args = ["report", "hmm-backfilling", "--lake", str(lake.root), "--name", "hmm-backfilling-test"]
    args += ["--plots", str(tmp_path / "fig"), "-f", "csv"]
    run = CliRunner().invoke(app, args)
    assert run.exit_code == 0, run.output
    table = pl.read_csv(run.stdout.encode())
    assert table["variant"].to_list() == ["easy-fcfs", "easy-fcfs-hmm-conf=0.05"]
    easy = table.row(0, named=True)
    # The published EASY on KTH-SP2 (strong filter): 114 min mean wait, 181 s geometric mean.
    assert easy["published mean (min)"] == 114 and easy["mean wait (min)"] == pytest.approx(114, abs=1)
    assert easy["geo. mean wait (s)"] == pytest.approx(181, rel=0.03)
    assert len(list((tmp_path / "fig").glob("*.png"))) == 1
    assert len(grids) == 1
    again = CliRunner().invoke(app, args)  # the runs are stored: nothing is replayed again
    assert again.exit_code == 0 and "2 already stored" in again.stderr
