"""Online policy selection: the Python API and CLI, week resampling, and the study's tables.

The engine's own hand-computed cases and its property test over 500 random workloads are in
sim/src/engine/selection_tests.rs (cargo test); here the same three-period workload checks that the
Python layer passes everything through and names the policies.
"""

from __future__ import annotations

import math
import shutil
from datetime import UTC, datetime

import hypothesis.strategies as st
import polars as pl
import pytest
from hypothesis import given, settings

from lakehouse.base.errors import LakehouseError, SimulationInputError
from lakehouse.base.lake import Lake
from lakehouse.campaigns.grid import RunSettings
from lakehouse.campaigns.resample import resample_weeks, week_count
from lakehouse.campaigns.runner import stored_runs
from lakehouse.data import sample_swf_paths
from lakehouse.ingest.swf import ingest_swf
from lakehouse.sim import simulate
from lakehouse.sim.options import WEEK, Policy, Selector
from lakehouse.studies.selection import PAPER_POLICIES, selection_curves, selection_settings, selection_table

from conftest import cli, examples

KTH = "KTH-SP2-1996-2.1-cln"


def frame(rows: list[tuple[int, int, int, int]]) -> pl.DataFrame:
    """(submit, run, requested, procs) per job; ids 1..n, one user."""
    return pl.DataFrame(
        {
            "job_id": range(1, len(rows) + 1),
            "submit_time": [r[0] for r in rows],
            "run_time": [r[1] for r in rows],
            "req_time": [r[2] for r in rows],
            "procs": [r[3] for r in rows],
            "user_id": [1] * len(rows),
        }
    )


#: One processor, periods of 100 s (hand computation in selection_tests.rs): replayed alone, period 1
#: waits 137 s under FCFS and 102 s under LCFS; period 2 127 s and 157 s.
THREE_PERIODS = frame([(0, 50, 50, 1), (1, 40, 40, 1), (2, 5, 5, 1), (100, 60, 60, 1), (101, 10, 10, 1),
                       (102, 40, 40, 1), (250, 1, 1, 1)])  # fmt: skip


def test_the_full_selector_through_the_python_api():
    result = simulate(THREE_PERIODS, 1, selector="full", policies=["fcfs", "lcfs"], period=100)
    assert result.periods is not None
    assert result.periods["policy"].to_list() == ["fcfs", "lcfs", "lcfs"]
    assert result.periods["start"].to_list() == [0, 100, 200]
    assert result.jobs["start_time"].to_list() == [0, 50, 90, 100, 200, 160, 250]
    assert result.jobs["policy"].to_list() == ["fcfs"] * 3 + ["lcfs"] * 4
    shares = result.policy_shares()
    assert shares.rows() == [("fcfs", 1, 1 / 3), ("lcfs", 2, 2 / 3)]
    # Decay 0: period 3 sees period 2 alone, where FCFS wins.
    decayed = simulate(THREE_PERIODS, 1, selector="full", policies=["fcfs", "lcfs"], period=100, decay=0)
    assert decayed.periods["policy"].to_list() == ["fcfs", "lcfs", "fcfs"]


def test_a_bandit_charges_the_jobs_finished_or_started_in_each_period():
    # Hand computation (as in selection_tests.rs): A (0 s, runs 95) and B (1 s, 10) start under FCFS at
    # 0 and 95, B finishing at 105 under LCFS, whose period also starts C (150 s) at once.  Jobs
    # finished: FCFS 0 / 1, LCFS 94 / 2, so FCFS; jobs started: FCFS 94 / 2, LCFS 0 / 1, so LCFS.
    jobs = frame([(0, 95, 95, 1), (1, 10, 10, 1), (150, 10, 10, 1), (250, 1, 1, 1)])
    for selector, third in (("egreedy", "fcfs"), ("egreedy-started", "lcfs")):
        result = simulate(jobs, 1, selector=selector, policies=["fcfs", "lcfs"], period=100, epsilon=0)
        assert result.periods is not None
        assert result.periods["policy"].to_list() == ["fcfs", "lcfs", third], selector


def test_a_fixed_selector_is_the_plain_policy_run():
    jobs = frame([(10 * i, 30 + 7 * (i % 5), 60, 1 + i % 3) for i in range(40)])
    for policy in ("spf", "lexp", "laf"):
        fixed = simulate(jobs, 4, selector=f"fixed:{policy}", threshold=100)
        plain = simulate(jobs, 4, policy=policy, threshold=100)
        assert fixed.jobs.drop("policy").equals(plain.jobs)
        assert set(fixed.jobs["policy"]) == {policy}
        assert fixed.periods is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"selector": "greedy"}, "unknown selector 'greedy'"),
        ({"selector": "fixed:fifo"}, "unknown policy 'fifo'"),
        ({"selector": "full", "policies": ["fcfs", "nope"]}, "unknown policy 'nope'"),
        ({"selector": "full", "policies": []}, "at least one candidate"),
        ({"selector": "full", "policies": ["spf", "spf"]}, "listed twice"),
        ({"selector": "full", "period": 0}, "period must be positive"),
        ({"selector": "full", "period": "fortnight"}, "day, week or a number"),
        ({"selector": "full", "period": 10**11 + 1}, "period must be at most"),
        ({"selector": "full", "period": 10**20}, "period must be at most 100000000000 s, got 10"),
        ({"selector": "noisy", "seed": -1}, "seed must be from 0"),
        ({"selector": "egreedy", "epsilon": 1.5}, "epsilon must be in"),
        ({"selector": "egreedy-started", "epsilon": -0.5}, "epsilon must be in"),
        ({"selector": "full", "decay": -0.1}, "decay must be in"),
        ({"selector": "full", "algorithm": "conservative"}, "EASY backfilling in canonical"),
        ({"selector": "full", "compat": "pyss"}, "EASY backfilling in canonical"),
    ],
)
def test_bad_selections_are_refused_before_the_replay(options, message):
    with pytest.raises(SimulationInputError, match=message):
        simulate(THREE_PERIODS, 1, **options)


# -- resampling ------------------------------------------------------------------------------------


@settings(max_examples=examples(200), deadline=None)
@given(
    offsets=st.lists(st.integers(0, 6 * WEEK), min_size=2, max_size=60),
    index=st.integers(0, 50),
    seed=st.integers(0, 3),
)
def test_a_resample_keeps_every_job_once_and_its_offset_within_its_week(offsets, index, seed):
    offsets = [*offsets, 0, WEEK + 5]  # at least two weeks
    jobs = pl.DataFrame({"job_id": range(len(offsets)), "submit_time": [1000 + o for o in offsets]})
    out = resample_weeks(jobs, index, seed)
    assert sorted(out["job_id"]) == sorted(jobs["job_id"])
    assert out["submit_time"].is_sorted()
    before = dict(zip(jobs["job_id"], jobs["submit_time"], strict=True))
    weeks = week_count(jobs)
    moved_to = {}
    for job, submit in out.select("job_id", "submit_time").iter_rows():
        original = before[job] - 1000
        new = submit - 1000
        assert new % WEEK == original % WEEK  # the same offset within the week
        assert 0 <= new // WEEK < weeks
        # All jobs of one original week move together to one new week, and no two weeks collide.
        assert moved_to.setdefault(original // WEEK, new // WEEK) == new // WEEK
    assert len(set(moved_to.values())) == len(moved_to)


def test_resamples_differ_and_repeat_with_their_seed():
    jobs = pl.DataFrame({"job_id": range(40), "submit_time": [k * WEEK // 2 for k in range(40)]})
    first = resample_weeks(jobs, 0, seed=1)
    assert resample_weeks(jobs, 0, seed=1).equals(first)
    assert not resample_weeks(jobs, 1, seed=1).equals(first)


def test_resampling_needs_two_weeks():
    with pytest.raises(LakehouseError, match="at least 2 weeks"):
        resample_weeks(pl.DataFrame({"job_id": [1, 2], "submit_time": [0, WEEK - 1]}), 0)


# -- the study's tables ----------------------------------------------------------------------------


def _row(strategy: str, resample: int, mean_wait: float, weekly: list[float]) -> dict:
    return {
        "campaign": "s",
        "log": "L",
        "machine_size": 100,
        "variant": f"{strategy}-r{resample}",
        "tau": 10.0,
        "status": "ok",
        "resample": resample,
        "mean_wait": mean_wait,
        "weekly_wait": weekly,
        "period_policies": None,
        "finished_at": datetime(2026, 1, 1, tzinfo=UTC),
    }


def test_ratios_to_fcfs_on_the_same_resample_by_hand():
    # Resample 0: FCFS waits 100 on average, SPF 50 (ratio 0.5); resample 1: 200 and 300 (1.5).
    rows = pl.DataFrame(
        [
            _row("easy-fcfs", 0, 100.0, [10.0, 30.0]),
            _row("easy-spf", 0, 50.0, [20.0, 0.0]),
            _row("easy-fcfs", 1, 200.0, [0.0, 40.0]),
            _row("easy-spf", 1, 300.0, [0.0, 60.0]),
        ]
    )
    table = selection_table(rows)
    spf = table.filter(pl.col("strategy") == "easy-spf").row(0, named=True)
    assert spf["resamples"] == 2
    assert spf["mean_ratio"] == pytest.approx(1.0)
    assert spf["p10_ratio"] == pytest.approx(0.5 + 0.1 * 1.0)  # linear interpolation between 0.5 and 1.5
    assert spf["p90_ratio"] == pytest.approx(0.5 + 0.9 * 1.0)
    assert spf["mean_wait"] == pytest.approx((50 + 300) / 2)
    curves = selection_curves(rows).filter(pl.col("strategy") == "easy-spf")
    # Week 1: resample 0 gives 20/10 = 2; resample 1 has no FCFS wait yet (no ratio).  Week 2: 20/40
    # and 60/40.
    assert curves["mean_ratio"].to_list() == pytest.approx([2.0, 1.0])
    assert table.filter(pl.col("strategy") == "easy-fcfs")["mean_ratio"][0] == 1.0


def test_a_log_replayed_on_two_machines_counts_on_the_newest():
    # The same resample on 100 processors (older) and on 80 (newest): the ratios are the 80's alone.
    older = [_row("easy-fcfs", 0, 100.0, [1.0]), _row("easy-spf", 0, 50.0, [1.0])]
    newer = [{**r, "machine_size": 80, "finished_at": datetime(2026, 2, 1, tzinfo=UTC)} for r in older]
    newer[1]["mean_wait"] = 25.0
    table = selection_table(pl.DataFrame(older + newer))
    spf = table.filter(pl.col("strategy") == "easy-spf").row(0, named=True)
    assert (spf["resamples"], spf["mean_ratio"]) == (1, pytest.approx(0.25))


def test_the_study_runs_each_fixed_policy_and_each_selector_per_resample():
    runs = selection_settings(3, seed=5, policies=["fcfs", "spf"], periods=[WEEK])
    assert len(runs) == 3 * (2 + 3)
    assert runs[0] == RunSettings(policy="fcfs", seed=5, resample=0)
    assert {s.label() for s in runs if s.resample == 2} == {
        "easy-fcfs-r2", "easy-spf-r2", "easy-full-week-r2", "easy-noisy-week-r2", "easy-egreedy-week-eps=0.3-r2",
    }  # fmt: skip
    with pytest.raises(LakehouseError, match="keep fcfs"):
        selection_settings(1, policies=["spf"])


def test_the_sweeps_add_a_bandit_per_epsilon_and_a_threshold_to_all_but_the_baseline():
    runs = selection_settings(1, policies=["fcfs", "spf"], periods=[WEEK], epsilons=[0.1, 0.5], threshold=3600)
    assert sorted(s.label() for s in runs) == [
        "easy-egreedy-week-eps=0.1-thr=3600-r0", "easy-egreedy-week-eps=0.5-thr=3600-r0", "easy-fcfs-r0",
        "easy-full-week-thr=3600-r0", "easy-noisy-week-thr=3600-r0", "easy-spf-thr=3600-r0",
    ]  # fmt: skip
    with pytest.raises(LakehouseError, match="epsilon must be in"):
        selection_settings(1, epsilons=[1.5])
    started = selection_settings(
        1, policies=["fcfs"], periods=[WEEK], epsilons=[0.1], selectors=[Selector.egreedy_started]
    )
    assert [s.label() for s in started] == ["easy-fcfs-r0", "easy-egreedy-started-week-eps=0.1-r0"]


# -- the commands ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kth(tmp_path_factory) -> Lake:
    lake = Lake(tmp_path_factory.mktemp("selection") / "lake")
    ingest_swf(lake, [str(p) for p in sample_swf_paths()])
    return lake


def test_simulate_prints_the_share_of_periods_per_policy(kth):
    out = cli("simulate", "KTH", "--lake", kth.root, "--selector", "full", "--policies", "fcfs,spf", "--period", "day")
    assert "periods per policy" in out.stdout
    assert "spf" in out.stdout
    bad = cli("simulate", "KTH", "--lake", kth.root, "--selector", "full", "--decay", "2", code=1)
    assert "decay must be in [0, 1]" in bad.stderr


def test_report_selection_stores_resumes_and_plots(kth, tmp_path):
    args = ["report", "selection", "KTH", "--lake", kth.root, "--resamples", "2", "--policies", "fcfs,spf",
            "--periods", "week", "--name", "sel", "--format", "csv"]  # fmt: skip
    first = cli(*args, "--plots", tmp_path)
    table = pl.read_csv(first.stdout.encode())
    assert set(table["strategy"]) == {"easy-fcfs", "easy-spf", "easy-full-week", "easy-noisy-week",
                                      "easy-egreedy-week-eps=0.3"}  # fmt: skip
    assert (table["resamples"] == 2).all()
    fcfs = table.filter(pl.col("strategy") == "easy-fcfs")
    assert fcfs["mean_ratio"][0] == 1.0
    # The published finding holds on KTH: SPF beats FCFS on average wait.
    assert table.filter(pl.col("strategy") == "easy-spf")["mean_ratio"][0] < 1.0
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"sel_improvement_{KTH}.png", f"sel_policies_{KTH}.png"]
    runs = stored_runs(kth, "sel")
    assert runs.height == 2 * 5
    assert runs.filter(pl.col("selector") == "full")["period_policies"].list.len().min() > 10
    again = cli(*args)
    assert "10 runs already stored" in again.stderr
    assert stored_runs(kth, "sel").height == 10
    stored = kth.query("SELECT * FROM analysis.selection_runs WHERE campaign = 'sel'")
    assert stored.height == 5
    curves = kth.query("SELECT max(week) AS weeks FROM analysis.selection_curves WHERE campaign = 'sel'")
    assert curves["weeks"][0] == math.ceil((stored_span(kth) + 1) / WEEK)


def stored_span(lake: Lake) -> int:
    span = lake.query(f"SELECT max(submit_time) - min(submit_time) AS s FROM swf.jobs_clean WHERE log = '{KTH}'")
    return span["s"][0]


def test_report_selection_refuses_what_cannot_run(kth):
    # A value an option cannot take is a usage error (exit 2), found before the lake is read.
    bad = cli("report", "selection", "KTH", "--lake", kth.root, "--policies", "fcfs,zzz", code=2)
    assert "unknown policy 'zzz'" in bad.stderr
    bad = cli("report", "selection", "nope", "--lake", kth.root, code=1)
    assert "no log matches 'nope'" in bad.stderr
    bad = cli("report", "selection", "KTH", "--lake", kth.root, "--resamples", "0", code=2)  # click's range
    assert "expected a whole number from 1 to 1,000" in bad.stderr
    # (A period of 0 reads as a number: the engine's own check refuses it, with its words, once it runs.)
    bad = cli("report", "selection", "KTH", "--lake", kth.root, "--periods", "0", code=1)
    assert "period must be positive" in bad.stderr
    bad = cli("report", "selection", "KTH", "--lake", kth.root, "--selectors", "full,greedy", code=2)
    assert "unknown selector 'greedy'" in bad.stderr and "egreedy-started" in bad.stderr


def test_the_study_selects_among_the_papers_ten_policies_unless_told_all(kth):
    # The paper's list, (1) FCFS ... (10) SRF, typed from it: its "search space of 10 reordering policies".
    papers = {"fcfs", "lcfs", "spf", "lpf", "lqf", "sqf", "lexp", "sexp", "lrf", "srf"}
    assert {str(p) for p in PAPER_POLICIES} == papers
    assert selection_settings(1)[-1].policies == tuple(str(p) for p in PAPER_POLICIES)
    base = ["report", "selection", "KTH", "--lake", kth.root, "--resamples", "1", "--periods", "week", "-f", "csv"]
    ten = pl.read_csv(cli(*base, "--name", "ten").stdout.encode())
    assert len(ten) == 10 + 3 and "easy-saf" not in set(ten["strategy"])
    twelve = pl.read_csv(cli(*base, "--name", "twelve", "--policies", "all").stdout.encode())
    assert len(twelve) == 12 + 3 and {"easy-laf", "easy-saf"} <= set(twelve["strategy"])
    # The selectors asked for, beside what the campaign already holds (the fixed runs are shared).
    started = pl.read_csv(cli(*base, "--name", "ten", "--selectors", "egreedy-started").stdout.encode())
    assert len(started) == 10 + 4 and "easy-egreedy-started-week-eps=0.3" in set(started["strategy"])
    candidates = stored_runs(kth, "twelve").filter(pl.col("selector") == "full")["policies"][0]
    assert set(candidates.split(",")) == {str(p) for p in Policy}


def test_the_study_replays_cea_curie_on_its_80640_processors_unless_told():
    from lakehouse.studies.selection import study_machine_sizes

    assert study_machine_sizes(["KTH-SP2-1996-2.1-cln"], ()) == ()
    assert study_machine_sizes(["CEA-Curie-2011-2.1-cln"], ()) == (("CEA-Curie", 80_640),)
    # A size the user gives for the log comes first, so it wins (Grid.size_of takes the first match).
    assert study_machine_sizes(["CEA-Curie-2011-2.1-cln"], (("CEA*", 93_312),))[0] == ("CEA*", 93_312)


def test_report_selection_replays_a_cea_curie_log_on_the_studys_machine(tmp_path):

    # The embedded KTH-SP2 sample under CEA-Curie's archive name: only the name decides the machine.
    (sample,) = sample_swf_paths()
    shutil.copy(sample, tmp_path / "CEA-Curie-2011-2.1-cln.swf.gz")
    lake = Lake(tmp_path / "lake")
    ingest_swf(lake, [str(tmp_path / "CEA-Curie-2011-2.1-cln.swf.gz")])
    base = ["report", "selection", "CEA", "--lake", lake.root, "--resamples", "1", "--periods", "week",
            "--policies", "fcfs,spf", "-f", "csv"]  # fmt: skip
    cli(*base, "--name", "study")
    assert set(stored_runs(lake, "study")["machine_size"]) == {80_640}
    cli(*base, "--name", "told", "--machine-size", "CEA=200")
    assert set(stored_runs(lake, "told")["machine_size"]) == {200}


def test_a_fixed_selectors_formula_reads_the_views_columns_as_the_policy_does(kth_lake):
    from lakehouse.sim import simulate_log

    fixed = simulate_log(kth_lake, KTH, selector="fixed:min:group_id")
    policy = simulate_log(kth_lake, KTH, policy="min:group_id")
    assert fixed.jobs["start_time"].equals(policy.jobs["start_time"])
