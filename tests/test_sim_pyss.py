"""compat="pyss" reproduces the published SC'15 simulator job for job (SEMANTICS.md 4.1).

Golden data: the simulator's own outputs and the metrics listed beside them
(../shared/data/reference/predictsim-sc15/README.md), never our code.
"""

from __future__ import annotations

import math

import polars as pl
import pytest

from lakehouse.base.lake import Lake
from lakehouse.ingest.swf import ingest_swf
from lakehouse.sim import simulate

from conftest import SWF_DIR, shared_or_skip
from sim_reference_data import PYSS_DIR, expected_metrics, read_pyss_output

KTH_2006 = "KTH-SP2-2006conv.input"
EASY_PLUS_PLUS = {"predictor": "ave2", "backfill": "sjbf", "correction": "incremental"}
# The published E-Loss run: learned online (squared loss x 100 over, x 1 under, weight 5 + ln(q/p)),
# corrected to the request when exceeded, shortest prediction backfilled first.
ELOSS = {"predictor": "eloss", "backfill": "sjbf", "correction": "requested"}

# (output file, name in the README's metrics table, log, machine size, settings)
RUNS = [
    ("KTH-SP2.easy_fcfs.pyss.swf.gz", "KTH-SP2.easy_fcfs", KTH_2006, 100, {}),
    ("KTH-SP2.easy_sjbf.pyss-rerun.swf.gz", "KTH-SP2.easy_sjbf", KTH_2006, 100, {"backfill": "sjbf"}),
    ("KTH-SP2.easy_pp_ave2_tsafrir.pyss.swf.gz", "KTH-SP2.easy_pp_ave2_tsafrir", KTH_2006, 100, EASY_PLUS_PLUS),
    (
        "KTH-SP2.easy_sjbf_eloss_sq100_sq1_t0_w5logmr_reqtime.pyss.swf.gz",
        "KTH-SP2.easy_sjbf_eloss_...",
        KTH_2006,
        100,
        ELOSS,
    ),
    ("CTC-SP2.easy_fcfs.pyss.swf.gz", "CTC-SP2.easy_fcfs", "CTC-SP2-1996-3.1-cln", 338, {}),
    (
        "CEA-Curie.easy_fcfs_80640procs.pyss.swf.gz",
        "CEA-Curie.easy_fcfs_80640procs",
        "CEA-Curie-2011-2.1-cln",
        80640,
        {},
    ),
]
#: The largest published run (10 s) replays under make faults (marked thorough); KTH's and CTC's in make test.
RUN_PARAMS = [
    pytest.param(*run, id=run[1], marks=[pytest.mark.thorough] if run[2] == "CEA-Curie-2011-2.1-cln" else [])
    for run in RUNS
]


@pytest.fixture(scope="module")
def sc15_lake(tmp_path_factory: pytest.TempPathFactory) -> Lake:
    """The three inputs of the published runs: KTH (2006 conversion), CTC and CEA-Curie."""
    shared_or_skip(PYSS_DIR)
    lake = Lake(tmp_path_factory.mktemp("sc15") / "lake")
    inputs = [
        PYSS_DIR / f"{KTH_2006}.swf.gz",
        SWF_DIR / "CTC-SP2-1996-3.1-cln.swf.gz",
        SWF_DIR / "CEA-Curie-2011-2.1-cln.swf.gz",
    ]
    ingest_swf(lake, [str(p) for p in inputs])
    return lake


@pytest.mark.slow
@pytest.mark.parametrize(("output", "name", "log", "machine_size", "settings"), RUN_PARAMS)
def test_pyss_mode_matches_the_published_runs(sc15_lake, output, name, log, machine_size, settings):
    jobs = sc15_lake.query("SELECT * FROM swf.jobs_strong WHERE log = ? ORDER BY submit_time, line", [log])
    result = simulate(jobs, machine_size, compat="pyss", **settings)
    reference = read_pyss_output(PYSS_DIR / output)
    assert result.jobs.height == reference.height
    joined = result.jobs.join(reference, on="job_id", how="full", coalesce=True)
    assert joined.height == reference.height, "the same jobs on both sides"
    differing = joined.filter(
        (pl.col("submit_time") != pl.col("ref_submit"))
        | (pl.col("wait") != pl.col("ref_wait"))
        | (pl.col("end_time") - pl.col("start_time") != pl.col("ref_run"))
    )
    assert differing.is_empty(), f"{differing.height} jobs differ, first: {differing.sort('submit').head(3)}"
    assert joined.filter(pl.col("backfilled") != pl.col("ref_backfilled")).is_empty()
    if settings.get("correction") in ("incremental", "requested") and "predictor" in settings:
        assert joined.filter(pl.col("corrections") != pl.col("ref_underpredictions")).is_empty()
    if "predictor" in settings:
        wrong = joined.filter(pl.col("initial_prediction") != pl.col("ref_initial_prediction"))
        assert wrong.is_empty(), f"{wrong.height} initial predictions differ, first: {wrong.head(3)}"

    expected = expected_metrics()[name]
    assert result.summary["max_wait"] == expected["max_wait"]
    for metric in ("mean_wait", "mean_bounded_slowdown", "mean_response"):
        assert math.isclose(result.summary[metric], expected[metric], rel_tol=0, abs_tol=1e-9), metric


@pytest.mark.parametrize(
    ("name", "options"),
    [("KTH-SP2.easy_fcfs", []), ("KTH-SP2.easy_pp_ave2_tsafrir", ["--predictor", "ave2", "--backfill", "sjbf",
                                                               "--correction", "incremental"])],
)  # fmt: skip
def test_the_simulate_command_prints_the_published_metrics(sc15_lake, name, options):
    """The whole `lakehouse simulate` command, not only the engine, gives the metrics the published
    simulator's runs list (to the digits the command prints)."""
    from typer.testing import CliRunner

    from lakehouse.cli import app

    command = ["simulate", "KTH-SP2-2006", "--view", "jobs_strong", "--machine-size", "100", "--compat", "pyss"]
    done = CliRunner().invoke(app, [*command, *options, "--lake", str(sc15_lake.root), "--format", "csv"])
    assert done.exit_code == 0, done.output
    printed = pl.read_csv(done.stdout.encode()).row(0, named=True)
    expected = expected_metrics()[name]
    assert printed["max_wait"] == expected["max_wait"]
    for metric in ("mean_wait", "mean_bounded_slowdown", "mean_response"):
        assert math.isclose(printed[metric], expected[metric], rel_tol=1e-9), (metric, printed[metric])


def test_the_readme_lists_the_metrics_of_every_run():
    shared_or_skip(PYSS_DIR)
    assert {r[1] for r in RUNS} <= set(expected_metrics())


def test_zero_second_jobs_do_not_break_the_canonical_learner(sc15_lake):
    """The clean view keeps jobs that ran 0 s; their weight 1 + ln(q p) would be infinite and turn the
    model into NaN (every later prediction 1 s).  Their runtime counts as 1 s in the weight instead."""
    from lakehouse.base.job_views import View, log_jobs

    jobs = log_jobs(sc15_lake, "CTC-SP2-1996-3.1-cln", View.jobs_clean)
    assert (jobs["run_time"] == 0).sum() > 0
    predictions = simulate(jobs, 338, **{**ELOSS, "predictor": "eloss:weight=log-area"}).jobs["initial_prediction"]
    assert (predictions == 1).mean() < 0.5  # all but the first few when the weight could be infinite
