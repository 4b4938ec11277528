"""Campaigns: the grid, the runner (resume, failures, executors) and what `campaign show` reports."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime

import polars as pl
import pytest
from typer.testing import CliRunner

from lakehouse import _native
from lakehouse.base.comma_lists import split_list
from lakehouse.base.errors import LakehouseError, SettingsError
from lakehouse.base.job_views import log_jobs, log_machine_size
from lakehouse.base.lake import Lake
from lakehouse.base.log_names import LogNameError, select_logs
from lakehouse.base.machine import parse_machine_sizes
from lakehouse.base.testing import small_log, write_swf
from lakehouse.campaigns import executors
from lakehouse.campaigns.executors import ExecutorKind, local_executor, make_executor, pool_pays
from lakehouse.campaigns.grid import (
    Grid,
    GridError,
    RunSettings,
    grid_from_toml,
    parse_values,
)
from lakehouse.campaigns.report import Metric, campaign_table, relative_matrix
from lakehouse.campaigns.runner import run_campaign, store_rows, stored_runs
from lakehouse.cli import app
from lakehouse.data import sample_swf_paths
from lakehouse.ingest.swf import ingest_swf
from lakehouse.sim import simulate
from lakehouse.sim.options import Policy

from conftest import rewrite_stored_runs

KTH = "KTH-SP2-1996-2.1-cln"
POLICIES = tuple(Policy)
runner = CliRunner()
#: Columns that differ between two replays of the same run (when and how fast it ran).
TIMING = ["engine_seconds", "finished_at"]


def cli(*args: object, code: int = 0):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result


@pytest.fixture(scope="module")
def two_logs(tmp_path_factory) -> Lake:
    """The embedded KTH log and a tiny hand-made one."""
    folder = tmp_path_factory.mktemp("campaign")
    jobs, header = small_log(6)
    write_swf(folder / "mini.swf", jobs, header)
    lake = Lake(folder / "lake")
    ingest_swf(lake, [str(p) for p in sample_swf_paths()] + [str(folder / "mini.swf")])
    return lake


# -- the grid --------------------------------------------------------------------------------------


def test_the_grid_is_the_product_of_the_lists_without_repeats():
    values = {
        "policy": parse_values("policy", ["fcfs,spf", "spf"]),
        "backfill": parse_values("backfill", ["queue", "sjbf"]),
        "threshold": parse_values("threshold", ["none,3600"]),
    }
    grid = Grid("g", ("KTH",), values=values)
    settings = grid.settings()
    assert len(settings) == 2 * 2 * 2
    assert settings[0] == RunSettings(policy="fcfs", backfill="queue", threshold=None)
    assert settings[-1] == RunSettings(policy="spf", backfill="sjbf", threshold=3600)
    assert {s.algorithm for s in settings} == {"easy"}  # defaults fill what is not given
    assert Grid("g", ("KTH",)).settings() == [RunSettings()]
    assert RunSettings(policy="spf", backfill="sjbf", threshold=60).label() == "easy-spf-sjbf-thr=60"


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("policy", "fifo", "unknown policy 'fifo'; expected one of: fcfs, lcfs"),
        ("algorithm", "easy,", "empty value"),
        ("predictor", "column:", "column:NAME"),
        ("threshold", "soon", "not a whole number"),
        ("threshold", "-5", "must be from 0 to"),
        ("threshold", "99999999999999999999", "must be from 0 to"),
        ("queue", "fcfs", "unknown setting 'queue'; expected one of: algorithm"),
    ],
)
def test_bad_grid_values_name_the_item_and_the_choices(key, value, message):
    with pytest.raises(GridError, match=message):
        parse_values(key, [value])


def test_bad_grids_fail_before_anything_runs():
    with pytest.raises(GridError, match="campaign name"):
        Grid("../escape", ("KTH",))
    with pytest.raises(GridError, match="at least one log"):
        Grid("g", ())
    with pytest.raises(GridError, match="unknown view 'jobs'"):
        Grid("g", ("KTH",), view="jobs")


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('logs = ["KTH"]\npolicies = ["fcfs"]\n', "unknown key.*policies; expected: name, logs"),
        ('logs = ["KTH"]\n[grid]\npolicy = ["fcfs", "lifo"]\n', "unknown policy 'lifo'"),
        ('logs = ["KTH"]\n[grid]\nbackfil = ["sjbf"]\n', "grid.backfil"),
        ("logs = [KTH", "not valid TOML"),
        # Values of the wrong type: each named, never a traceback.
        ('logs = ["KTH"]\ntau = "abc"\n', "tau must be a number of seconds"),
        ('logs = ["KTH"]\ntau = true\n', "tau must be a number of seconds"),
        ("logs = 5\n", "logs must be a list of log names"),
        ('logs = ["KTH", 5]\n', "logs must be a list of log names"),
        ('name = 3\nlogs = ["KTH"]\n', "name must be a string"),
        ('logs = ["KTH"]\nview = ["jobs_clean"]\n', "view must be a string"),
        ('logs = ["KTH"]\n[grid]\npredictor = [5]\n', 'unknown predictor "5"'),
        ('logs = ["KTH"]\n[grid]\npolicy = [true]\n', "grid.policy must be a value or a list of values"),
        ('logs = ["KTH"]\n[grid]\npolicy = [["fcfs"]]\n', "grid.policy must be a value or a list of values"),
        ('logs = ["KTH"]\nmachine_size = "big"\n', "machine size"),
    ],
)
def test_bad_toml_grids_name_the_key_or_value(tmp_path, toml, message):
    spec = tmp_path / "spec.toml"
    spec.write_text(toml)
    with pytest.raises(GridError, match=message):
        grid_from_toml(spec)


def test_a_toml_grid(tmp_path):
    spec = tmp_path / "policies.toml"
    spec.write_text(
        'logs = ["KTH", "SDSC-*"]\nview = "jobs_strong"\nmachine_size = 64\n'
        '[grid]\nalgorithm = ["easy", "conservative"]\npolicy = ["fcfs", "spf", "lexp"]\n'
    )
    grid = grid_from_toml(spec)
    assert (grid.name, grid.logs, grid.view, grid.machine_size) == ("policies", ("KTH", "SDSC-*"), "jobs_strong", 64)
    assert len(grid.settings()) == 6


def test_machine_sizes_for_every_log_or_per_log(tmp_path):
    known = ["CEA-Curie-2011-2.1-cln", "KTH-SP2-1996-2.1-cln", "SDSC-SP2-1998-4.2-cln"]
    every, per_log = parse_machine_sizes(["128", "CEA=80640", "SDSC-*=64"])
    grid = Grid("g", ("CEA", "KTH", "SDSC-*"), machine_size=every, machine_sizes=per_log)
    assert [grid.size_of(log, known) for log in known] == [80640, 128, 64]
    assert Grid("g", ("KTH",), machine_sizes=per_log).size_of(known[1], known) is None  # the view's size
    for bad, message in (("=4", "the log before '=' is missing"), ("KTH=many", "expected a number")):
        with pytest.raises(SettingsError, match=message):
            parse_machine_sizes([bad])
    with pytest.raises(GridError, match="machine size must be from 1"):
        Grid("g", ("KTH",), machine_sizes=(("KTH", 0),))
    spec = tmp_path / "sizes.toml"
    spec.write_text('logs = ["CEA", "KTH"]\nmachine_size = { CEA = 80640 }\n')
    assert grid_from_toml(spec).size_of(known[0], known) == 80640
    with pytest.raises(GridError, match="no log matches 'LANL'"):
        Grid("g", ("KTH",), machine_sizes=(("LANL", 8),)).size_of(known[1], known)


def test_a_grid_keeps_a_campaigns_runs_on_its_own_machines():
    """A campaign may hold a log's runs on several machines; the grid's study reads those on the size it
    gives the log, and every run of a log it leaves at the view's size."""
    known = ["CEA-Curie-2011-2.1-cln", "KTH-SP2-1996-2.1-cln"]
    rows = pl.DataFrame(
        {"log": [known[0], known[0], known[1], known[1]], "machine_size": [93312, 80640, 100, 50], "run": [1, 2, 3, 4]}
    )
    grid = Grid("g", ("CEA", "KTH"), machine_sizes=(("CEA", 80640),))
    assert grid.on_its_machines(rows, known)["run"].to_list() == [2, 3, 4]
    assert Grid("g", ("CEA", "KTH")).on_its_machines(rows, known).equals(rows)


def test_logs_by_name_prefix_or_glob():
    known = ["CTC-SP2-1996-3.1-cln", "KTH-SP2-1996-2.1-cln", "SDSC-BLUE-2000-4.2-cln", "SDSC-SP2-1998-4.2-cln"]
    assert select_logs(["KTH", "SDSC-*", "KTH-SP2-1996-2.1-cln"], known) == [known[1], known[2], known[3]]
    with pytest.raises(LogNameError, match="'SDSC' names 2 logs"):
        select_logs(["SDSC"], known)
    with pytest.raises(LogNameError, match="no log matches 'LANL'; the lake has: CTC-SP2"):
        select_logs(["LANL"], known)


# -- running ---------------------------------------------------------------------------------------


def small_grid(name: str, **extra) -> Grid:
    values = {"policy": ("fcfs", "spf", "lexp"), "backfill": ("queue", "sjbf")}
    return Grid(name, (KTH, "mini"), values=values, **extra)


def comparable(rows: pl.DataFrame) -> pl.DataFrame:
    return rows.drop(*TIMING, "campaign").sort("log", "variant")


def test_a_campaign_stores_one_row_per_run_equal_to_a_direct_replay(two_logs, tmp_path):
    outcome = run_campaign(
        two_logs, small_grid("direct"), local_executor(1, "direct", "jobs_clean", 10.0), scratch=tmp_path
    )
    assert (outcome.ok, outcome.failed, outcome.skipped) == (12, 0, 0)
    rows = two_logs.query("SELECT * FROM analysis.campaign_runs WHERE campaign = 'direct'")
    assert rows.height == 12 and rows["run_key"].n_unique() == 12
    row = rows.filter((pl.col("log") == KTH) & (pl.col("variant") == "easy-spf-sjbf")).row(0, named=True)
    jobs = log_jobs(two_logs, KTH)
    replay = simulate(jobs, log_machine_size(two_logs, KTH), policy="spf", backfill="sjbf")
    direct = replay.summary
    for metric in ("jobs", "mean_wait", "mean_bounded_slowdown", "max_wait", "utilization", "makespan"):
        assert row[metric] == pytest.approx(direct[metric], rel=1e-12), metric
    assert row["machine_size"] == 100 and row["status"] == "ok" and row["error"] is None
    # The requested times as predictions: never under, off by the mean of request - run.
    ran = replay.jobs["end_time"] - replay.jobs["start_time"]
    assert row["prediction_under_share"] == 0.0
    assert row["prediction_mae"] == pytest.approx((replay.jobs["req_time"] - ran).mean(), rel=1e-12)
    errors = two_logs.query("SELECT * FROM analysis.prediction_errors WHERE campaign = 'direct'")
    assert errors.height == 12 and errors["prediction_mean_eloss"].min() > 0
    # Running it again skips every run.
    again = run_campaign(
        two_logs, small_grid("direct"), local_executor(1, "direct", "jobs_clean", 10.0), scratch=tmp_path
    )
    assert (again.ok, again.skipped) == (0, 12)
    assert stored_runs(two_logs, "direct").height == 12


class Interrupting:
    """An executor that raises KeyboardInterrupt (as Ctrl-C would) after `after` finished tasks."""

    def __init__(self, after: int):
        self.after = after
        self.inner = local_executor(1, "resume", "jobs_clean", 10.0)

    def __call__(self, tasks, finished):
        count = 0

        def counting(results):
            nonlocal count
            finished(results)
            count += 1
            if count == self.after:
                raise KeyboardInterrupt

        self.inner(tasks, counting)


def test_an_interrupted_campaign_resumes_without_duplicates(two_logs, tmp_path):
    grid = small_grid("resume")
    with pytest.raises(KeyboardInterrupt) as stopped:
        run_campaign(two_logs, grid, Interrupting(after=5), scratch=tmp_path)
    assert stopped.value.outcome.ok == 5  # type: ignore[attr-defined]
    assert stored_runs(two_logs, "resume").height == 5  # kept, though the flush interval had not passed
    outcome = run_campaign(two_logs, grid, local_executor(1, "resume", "jobs_clean", 10.0), scratch=tmp_path)
    assert (outcome.ok, outcome.skipped) == (7, 5)
    resumed = stored_runs(two_logs, "resume")
    assert resumed.height == 12 and resumed["run_key"].n_unique() == 12
    whole = run_campaign(
        two_logs, small_grid("whole"), local_executor(1, "whole", "jobs_clean", 10.0), scratch=tmp_path
    )
    assert whole.ok == 12
    assert comparable(resumed).equals(comparable(stored_runs(two_logs, "whole")))


def test_runs_stored_by_another_build_of_the_engine_are_replayed_and_shown_once(two_logs, tmp_path):
    grid = Grid("upgrade", (KTH, "mini"), values={"policy": ("fcfs", "spf")})
    run_campaign(two_logs, grid, local_executor(1, "upgrade", "jobs_clean", 10.0), scratch=tmp_path)
    # Make the stored rows an older build's, with a result the current engine would not give.
    rewrite_stored_runs(two_logs, "upgrade.*.parquet", engine_version="0.0.9+0123456789abcdef", mean_wait=-1.0)
    kept = run_campaign(
        two_logs, grid, local_executor(1, "upgrade", "jobs_clean", 10.0), scratch=tmp_path, any_engine=True
    )
    assert (kept.ok, kept.skipped, kept.outdated) == (0, 4, 0)
    replayed = run_campaign(two_logs, grid, local_executor(1, "upgrade", "jobs_clean", 10.0), scratch=tmp_path)
    assert (replayed.ok, replayed.skipped, replayed.outdated) == (4, 0, 4)
    # The view and the runner's reader show each run once, with the newer build's result.
    for rows in (
        stored_runs(two_logs, "upgrade"),
        two_logs.query("SELECT * FROM analysis.campaign_runs WHERE campaign = 'upgrade'"),
    ):
        assert rows.height == 4 and rows["run_key"].n_unique() == 4
        assert rows["engine_version"].unique().to_list() == [_native.ENGINE_BUILD]
        assert rows["mean_wait"].min() >= 0
    # The older rows are still in the stored table, for whoever wants to compare builds.
    every_row = two_logs.query("SELECT * FROM stored.analysis_campaign_runs WHERE campaign = 'upgrade'")
    assert every_row.height == 8
    again = run_campaign(two_logs, grid, local_executor(1, "upgrade", "jobs_clean", 10.0), scratch=tmp_path)
    assert (again.ok, again.skipped, again.outdated) == (0, 4, 0)


def test_the_engine_build_is_the_crate_version_and_a_digest_of_its_sources():
    version, digest = _native.ENGINE_BUILD.split("+")
    assert version == _native.__version__
    assert len(digest) == 16 and int(digest, 16) >= 0


def test_a_pool_starts_only_when_the_rest_of_the_runs_repays_its_start():
    # The first task took 1 s for 10,000 jobs: 40,000 more take 4 s here, 2 s on two workers, which
    # saves 2 s > the 1 s start; 10,000 more save 0.5 s; one worker saves nothing.
    assert executors.POOL_START_SECONDS == 1.0
    assert pool_pays(1.0, 10_000, 40_000, workers=2)
    assert not pool_pays(1.0, 10_000, 10_000, workers=2)
    assert pool_pays(1.0, 10_000, 15_000, workers=4)  # 1.5 s here, 0.375 s on four: 1.125 s saved
    assert not pool_pays(1.0, 10_000, 400_000, workers=1)


def test_a_small_campaign_with_workers_starts_no_process(two_logs, tmp_path, monkeypatch):
    """Twelve short runs of KTH and mini: a pool would take longer to start than they take here."""

    def no_pool(workers: int) -> None:
        raise AssertionError(f"a pool of {workers} started")

    monkeypatch.setattr(executors, "_spawn_pool", no_pool)
    outcome = run_campaign(two_logs, small_grid("small"), local_executor(2, "small", "jobs_clean", 10.0),
                           scratch=tmp_path)  # fmt: skip
    assert (outcome.ok, outcome.failed) == (12, 0)


def test_failed_runs_are_recorded_and_counted_in_the_exit_code(two_logs):
    result = cli("campaign", "run", "--lake", two_logs.root, "--name", "tiny", "--log", "mini", "--machine-size", 4,
                 "--policy", "fcfs,spf", "--workers", 1, "-f", "json", code=2)  # fmt: skip
    rows = json.loads(result.stdout)
    assert [r["status"] for r in rows] == ["failed", "failed"]
    assert "wider than the machine (4 processors): job id 5, 6" in rows[0]["error"]
    assert "2 run(s) failed" in result.stderr


def test_the_cli_runs_a_grid_with_a_process_pool_and_resumes(two_logs, tmp_path, monkeypatch):
    monkeypatch.setattr(executors, "POOL_START_SECONDS", 0.0)  # a pool even for runs this short
    args = ["campaign", "run", "--lake", two_logs.root, "--name", "pool", "--log", KTH, "--log", "mini",
            "--policy", "fcfs,spf,lexp", "--backfill", "queue,sjbf", "--workers", 2, "-f", "json"]  # fmt: skip
    rows = json.loads(cli(*args).stdout)
    assert len(rows) == 12 and {r["status"] for r in rows} == {"ok"}
    second = cli(*args)
    assert "12 runs already stored: skipped" in second.stderr
    in_process = run_campaign(two_logs, small_grid("pool-ref"), local_executor(1, "pool-ref", "jobs_clean", 10.0),
                              scratch=tmp_path)  # fmt: skip
    assert in_process.ok == 12
    assert comparable(stored_runs(two_logs, "pool")).equals(comparable(stored_runs(two_logs, "pool-ref")))
    listing = json.loads(cli("campaign", "list", "--lake", two_logs.root, "-f", "json").stdout)
    pool = {"campaign": "pool", "logs": 2, "variants": 6, "runs": 12, "failed": 0, "stored": 12,
            "engine": _native.ENGINE_BUILD}  # fmt: skip
    assert pool in [{k: v for k, v in row.items() if k != "last_run"} for row in listing]


def test_the_command_line_takes_the_place_of_a_toml_files_keys(two_logs, tmp_path):
    """A TOML file may leave the logs to the command line; a dimension given there replaces the file's,
    the others stay, and a name given there renames the campaign."""
    spec = tmp_path / "grid.toml"
    spec.write_text('name = "from-file"\ntau = 60\n[grid]\npolicy = ["fcfs", "spf"]\nbackfill = ["sjbf"]\n')
    args = ["campaign", "run", spec, "--lake", two_logs.root, "--log", "mini", "--policy", "lexp", "--workers", 1]
    rows = json.loads(cli(*args, "-f", "json").stdout)
    assert {(r["log"], r["variant"]) for r in rows} == {("mini", "easy-lexp-sjbf")}
    cli(*args, "--name", "renamed")
    query = (
        "SELECT DISTINCT campaign, tau FROM analysis.campaign_runs WHERE campaign IN ('from-file', 'renamed') "
        "ORDER BY 1"
    )
    stored = json.loads(cli("sql", query, "--lake", two_logs.root, "-f", "json").stdout)
    assert [(r["campaign"], r["tau"]) for r in stored] == [("from-file", 60.0), ("renamed", 60.0)]


def test_unknown_logs_and_values_fail_before_anything_runs(two_logs):
    unknown = cli("campaign", "run", "--lake", two_logs.root, "--name", "x", "--log", "LANL", code=1)
    assert "no log matches 'LANL'; the lake has: KTH-SP2-1996-2.1-cln, mini" in unknown.stderr
    bad = cli(
        "campaign", "run", "--lake", two_logs.root, "--log", "mini", "--policy", "fcfs,fifo", code=2
    )  # (a queue order, as on simulate)
    assert "unknown policy 'fifo'" in bad.stderr
    assert "no campaign named 'nope'" in cli("campaign", "show", "nope", "--lake", two_logs.root, code=1).stderr
    assert stored_runs(two_logs, "x").is_empty()


def test_ray_is_optional_with_a_clear_message(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    with pytest.raises(LakehouseError, match=r"pip install 'lakehouse\[ray\]'"):
        make_executor(ExecutorKind.ray, workers=2, ray_address=None, campaign="c", view="jobs_clean", tau=10.0)


@pytest.mark.slow
def test_ray_gives_the_same_rows_as_the_local_pool(two_logs, tmp_path, capfd, monkeypatch):
    monkeypatch.setattr(executors, "POOL_START_SECONDS", 0.0)
    pytest.importorskip("ray", reason="Ray is optional: pip install 'lakehouse[ray]'")
    grid = small_grid("on-ray")
    ray_run = make_executor(ExecutorKind.ray, workers=2, ray_address=None, campaign="on-ray", view="jobs_clean", tau=10)
    outcome = run_campaign(two_logs, grid, ray_run, scratch=tmp_path)
    assert (outcome.ok, outcome.failed) == (12, 0)
    local = small_grid("on-pool")
    run_campaign(two_logs, local, local_executor(2, "on-pool", "jobs_clean", 10.0), scratch=tmp_path)
    assert comparable(stored_runs(two_logs, "on-ray")).equals(comparable(stored_runs(two_logs, "on-pool")))
    assert "Token authentication" not in capfd.readouterr().err  # Ray's notice is not the user's business


def campaign_under_way(lake: Lake, name: str, workers: int) -> tuple[list[str], subprocess.Popen]:
    """`lakehouse campaign run` of 24 conservative replays of KTH in a new process group, returned once
    its first finished run is stored (each run is committed as it finishes)."""
    args = [sys.executable, "-m", "lakehouse.cli", "campaign", "run", "--lake", str(lake.root), "--name", name,
            "--log", KTH, "--algorithm", "conservative", "--policy", ",".join(POLICIES), "--threshold", "none,86400",
            "--workers", str(workers), "-f", "csv"]  # fmt: skip
    every_run = {**os.environ, "LAKEHOUSE_CAMPAIGN_FLUSH_SECONDS": "0"}
    child = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, env=every_run
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None and stored_runs(lake, name).is_empty():
        time.sleep(0.05)
    return args, child


@pytest.mark.slow
def test_a_killed_campaign_process_resumes_to_the_same_results(two_logs, tmp_path):
    """kill -9 of the whole command midway (workers included), then the same command again."""
    args, child = campaign_under_way(two_logs, "killed", workers=1)
    os.killpg(child.pid, signal.SIGKILL)
    child.communicate()  # reaps it and closes its pipes
    partial = stored_runs(two_logs, "killed").height
    assert 0 < partial < 24, "the kill should land midway"
    spill = two_logs.root / ".spill"
    left = [p for p in spill.iterdir() if p.name.startswith(f"{child.pid}-")]
    assert left and list(left[0].rglob("*.parquet"))  # the killed command's copy of the jobs...
    subprocess.run(args, check=True, capture_output=True)
    assert not any(p.exists() for p in left)  # ...removed by the next command, as spill files are
    rows = stored_runs(two_logs, "killed")
    assert rows.height == 24 and rows["run_key"].n_unique() == 24
    clean = run_campaign(
        two_logs,
        Grid(
            "clean",
            (KTH,),
            values={
                "algorithm": ("conservative",),
                "policy": POLICIES,
                "threshold": parse_values("threshold", ["none", "86400"]),
            },
        ),
        local_executor(1, "clean", "jobs_clean", 10.0),
        scratch=tmp_path,
    )
    assert clean.ok == 24
    assert comparable(rows).equals(comparable(stored_runs(two_logs, "clean")))


# -- showing ---------------------------------------------------------------------------------------


def hand_rows() -> list[dict]:
    """Two logs, three variants; mean bounded slowdowns chosen so the ratios are easy by hand."""
    base = {"campaign": "hand", "view": "jobs_clean", "algorithm": "easy", "predictor": "requested",
            "correction": "requested", "threshold": None, "compat": "canonical", "tau": 10.0, "status": "ok",
            "error": None, "jobs": 10, "mean_wait": 1.0, "max_wait": 5.0, "mean_response": 2.0, "makespan": 100.0,
            "utilization": 0.5, "engine_seconds": 0.1, "engine_version": "test", "schema_version": 1,
            "jobs_fingerprint": "f", "finished_at": datetime(2026, 1, 1, tzinfo=UTC)}  # fmt: skip
    rows = []
    for log, size, slowdowns in (("A", 10, (4.0, 2.0, 6.0)), ("B", 20, (10.0, 15.0, 5.0))):
        for (policy, backfill, variant), bsld in zip(
            (("fcfs", "queue", "easy-fcfs"), ("spf", "queue", "easy-spf"), ("fcfs", "sjbf", "easy-fcfs-sjbf")),
            slowdowns,
            strict=True,
        ):
            rows.append({**base, "log": log, "machine_size": size, "policy": policy, "backfill": backfill,
                         "variant": variant, "run_key": f"{log}{variant}", "mean_bounded_slowdown": bsld})  # fmt: skip
    return rows


def test_campaign_show_on_hand_made_rows(tmp_path):
    lake = Lake(tmp_path / "lake").init()
    store_rows(lake, "hand", hand_rows())
    table = campaign_table(stored_runs(lake, "hand"))
    assert table.height == 6 and table["log"].to_list() == ["A"] * 3 + ["B"] * 3
    variants, logs, ratios = relative_matrix(stored_runs(lake, "hand"), Metric.mean_bounded_slowdown)
    assert variants == ["easy-fcfs", "easy-fcfs-sjbf", "easy-spf"] and logs == ["A", "B"]
    expected = [[1.0, 1.0], [6 / 4, 5 / 10], [2 / 4, 15 / 10]]
    assert all(math.isclose(ratios[i][j], expected[i][j]) for i in range(3) for j in range(2))
    result = cli("campaign", "show", "hand", "--lake", lake.root, "--plots", tmp_path / "plots", "-f", "json")
    assert [r["mean_bounded_slowdown"] for r in json.loads(result.stdout)] == [4.0, 6.0, 2.0, 10.0, 5.0, 15.0]
    pngs = sorted(p.name for p in (tmp_path / "plots").glob("*.png"))
    assert pngs == ["hand_mean_bounded_slowdown_A.png", "hand_mean_bounded_slowdown_B.png",
                    "hand_mean_bounded_slowdown_heatmap.png"]  # fmt: skip
    assert all((tmp_path / "plots" / p).stat().st_size > 5_000 for p in pngs)


def test_campaign_help_pages_have_examples():
    for command in (["campaign", "run"], ["campaign", "show"], ["campaign", "list"]):
        assert "Example" in cli(*command, "--help").stdout


def test_simulate_loads_only_what_the_replay_reads(two_logs):
    """The narrow load (six columns, the log name as a literal) replays exactly as the whole view."""
    narrow = log_jobs(two_logs, KTH, columns=["job_id", "submit_time", "run_time", "req_time", "procs", "user_id"])
    whole = log_jobs(two_logs, KTH)
    assert narrow.columns == ["job_id", "submit_time", "run_time", "req_time", "procs", "user_id"]
    assert narrow.equals(whole.select(narrow.columns))
    assert simulate(narrow, 100).jobs.equals(simulate(whole, 100).jobs)
    # A quote in a log name is data, not SQL.
    assert log_jobs(two_logs, "x' OR '1'='1").is_empty()
    # A unique prefix names a log.
    by_prefix = json.loads(cli("simulate", "KTH", "--lake", two_logs.root, "-f", "json").stdout)
    assert by_prefix[0]["log"] == KTH and by_prefix[0]["jobs"] == whole.height


def test_stored_rows_keep_their_schema(two_logs):
    """The public columns of analysis.campaign_runs, in order (add at the end, never rename)."""
    columns = two_logs.query("SELECT * FROM analysis.campaign_runs LIMIT 0").columns
    assert columns[:6] == ["campaign", "log", "view", "machine_size", "algorithm", "policy"]
    assert columns[-29:-25] == ["engine_seconds", "engine_version", "schema_version", "finished_at"]
    assert columns[-25:-22] == ["prediction_mae", "prediction_mean_eloss", "prediction_under_share"]  # version 2
    assert columns[-22:-12] == [  # version 3: policy selection and week resamples
        "selector", "policies", "period", "decay", "epsilon", "seed", "resample",
        "period_policies", "weekly_wait", "weekly_jobs",
    ]  # fmt: skip
    assert columns[-12:-11] == ["backfill_confidence"]  # version 4: distribution predictors
    assert columns[-11:-4] == [  # version 5: the waits' distribution
        "geomean_wait", "p50_wait", "p90_wait", "p99_wait",
        "p50_bounded_slowdown", "p90_bounded_slowdown", "p99_bounded_slowdown",
    ]  # fmt: skip
    assert columns[-4:] == ["where_condition", "warmup", "cooldown", "usage_half_life"]  # version 6


@pytest.mark.slow
def test_ctrl_c_stops_the_pool_keeps_finished_runs_and_exits_130(two_logs):
    _, child = campaign_under_way(two_logs, "ctrl-c", workers=2)
    os.killpg(child.pid, signal.SIGINT)  # what a terminal sends to the whole foreground group
    _, err = child.communicate(timeout=60)
    assert child.returncode == 130, err
    assert "interrupted" in err.decode() and "Traceback" not in err.decode()
    kept = stored_runs(two_logs, "ctrl-c")
    assert 0 < kept.height < 24 and kept["run_key"].n_unique() == kept.height


def test_jobs_out_keeps_each_runs_schedule(two_logs, tmp_path):
    grid = Grid("schedules", ("mini",), values={"policy": ("fcfs", "spf")})
    outcome = run_campaign(
        two_logs, grid, local_executor(1, "schedules", "jobs_clean", 10.0), scratch=tmp_path, keep_schedules=True
    )
    assert outcome.ok == 2
    keys = stored_runs(two_logs, "schedules")["run_key"].to_list()
    files = sorted((two_logs.root / "analysis" / "campaign_jobs" / "schedules").glob("*.parquet"))
    assert sorted(f.stem for f in files) == sorted(keys)
    schedule = pl.read_parquet(files[0])
    assert {"job_id", "submit_time", "start_time", "end_time", "wait", "bounded_slowdown"} <= set(schedule.columns)
    assert schedule.height == 6


def test_a_confidence_applies_to_distribution_predictors_only():
    grid = Grid(
        "conf",
        ("mini",),
        values={
            "predictor": parse_values("predictor", ["requested,hmm:states=4,requested-law"]),
            "backfill_confidence": parse_values("backfill_confidence", ["0.05,0.2"]),
        },
    )
    labels = [s.label() for s in grid.settings()]
    assert labels == [
        "easy-fcfs",
        "easy-fcfs-hmm:states=4,bin=900,ratio=1.8,rounds=5,update=86400,window=2592000-conf=0.05",
        "easy-fcfs-hmm:states=4,bin=900,ratio=1.8,rounds=5,update=86400,window=2592000-conf=0.2",
        "easy-fcfs-requested-law-conf=0.05",
        "easy-fcfs-requested-law-conf=0.2",
    ]
    with pytest.raises(GridError, match=r"in \(0, 1\)"):
        parse_values("backfill_confidence", ["1.5"])


def test_one_rule_turns_a_name_into_logs_everywhere():
    """Exact, else a unique prefix, or a glob: the CLI's one log, a grid's logs, a grid's per-log
    machine sizes and the nightly configuration's sizes all follow lakehouse.base.log_names."""
    from lakehouse.base.log_names import log_named
    from lakehouse.nightly.config import Config

    known = ["RICC-2010-2", "RICC-2010-2.1-cln", "KTH-SP2-1996-2.1-cln"]
    assert log_named("KTH", known) == known[2]
    assert log_named("RICC-2010-2", known) == known[0]  # exact beats a prefix of another log
    with pytest.raises(LogNameError, match="'RICC' names 2 logs"):
        log_named("RICC", known)
    assert select_logs(["RICC-*"], known) == known[:2]
    with pytest.raises(LogNameError, match="'RICC' names 2 logs"):
        select_logs(["RICC"], known)
    grid = Grid("g", ("RICC-*",), machine_sizes=(("RICC", 8192),))
    nightly = Config(machine_size={"RICC": 8192})
    with pytest.raises(GridError, match="'RICC' names 2 logs"):  # an ambiguous prefix is refused by both
        grid.size_of(known[0], known)
    with pytest.raises(LogNameError, match="'RICC' names 2 logs"):
        nightly.size_for(known[0], known)
    sizes = {"RICC-*": 8192, "KTH": 100, "LANL": 1024}  # the nightly config may name logs still to come
    assert [Config(machine_size=sizes).size_for(log, known) for log in known] == [8192, 8192, 100]


def test_a_glob_leaves_out_a_log_without_jobs_in_the_view_and_a_name_refuses_it(tmp_path):
    """`--log 'SDSC-*'` over a log whose jobs the view drops entirely warns and replays the others; the
    same log named on its own refuses the campaign."""
    jobs, header = small_log(6)
    write_swf(tmp_path / "SDSC-a.swf", jobs, header)
    write_swf(tmp_path / "SDSC-b.swf", [{**job, "run_time": -1} for job in jobs], header)  # none is clean
    lake = tmp_path / "lake"
    ingest_swf(Lake(lake), [str(tmp_path / "SDSC-a.swf"), str(tmp_path / "SDSC-b.swf")])
    done = cli("campaign", "run", "--name", "g", "--log", "SDSC-*", "--lake", lake, "--workers", 1)
    assert "SDSC-b has no jobs in swf.jobs_clean: left out" in done.stderr
    assert set(stored_runs(Lake(lake), "g")["log"].to_list()) == {"SDSC-a"}
    refused = cli("campaign", "run", "--name", "h", "--log", "SDSC-b", "--lake", lake, code=1)
    assert "SDSC-b has no jobs in swf.jobs_clean" in refused.stderr


def test_an_eloss_with_parameters_is_one_predictor_of_the_command_line(kth_lake):
    """`--predictor ave2,eloss:under=linear,weight=one` is two predictors, as docs/predictions.md says,
    whether the text reaches the grid whole or split at its commas (the command line splits it)."""
    text = "ave2,eloss:under=linear,weight=one"
    expected = ("ave2", "eloss:under=linear,weight=one")
    assert parse_values("predictor", [text]) == parse_values("predictor", split_list(text)) == expected
    run = CliRunner().invoke(
        app, ["campaign", "run", "--name", "two", "--log", "KTH", "--predictor", text, "--lake", str(kth_lake.root)]
    )
    assert run.exit_code == 0, run.output
    assert stored_runs(kth_lake, "two")["predictor"].sort().to_list() == sorted(expected)


def test_conservative_backfilling_has_no_backfill_order_so_its_sjbf_runs_once():
    grid = Grid("fold", ("mini",), values={"algorithm": ("conservative", "easy"), "backfill": ("queue", "sjbf")})
    assert (
        sorted(s.label() for s in grid.settings()) == sorted(["conservative-fcfs", "easy-fcfs", "easy-fcfs-sjbf"])
        and grid.repeats() == 1
    )


def test_a_grid_too_large_to_plan_is_refused_before_it_is_made():
    started = time.perf_counter()
    with pytest.raises(GridError, match="120,000 combinations of settings; a campaign takes at most 100,000"):
        Grid("huge", ("mini",), values={"policy": tuple(POLICIES), "threshold": tuple(range(1, 10_001))})
    assert time.perf_counter() - started < 1.0  # refused from the counts, not after making 120,000 settings


def test_a_campaign_over_the_run_budget_stops_before_its_first_replay_unless_yes(two_logs):
    from lakehouse.cli.campaign import RUN_BUDGET

    thresholds = ",".join(str(t) for t in range(1, RUN_BUDGET // 2 + 2))  # two logs: just over the budget
    args = ["campaign", "run", "--name", "big", "--log", "*", "--threshold", thresholds, "--lake", two_logs.root]
    result = CliRunner().invoke(app, [str(a) for a in args])
    message = " ".join(result.stderr.split())
    assert result.exit_code == 1 and f"would replay {RUN_BUDGET + 2:,} runs" in message and "--yes" in message
    assert stored_runs(two_logs, "big").is_empty()


def test_progress_lines_go_to_a_stderr_that_is_not_a_terminal(two_logs, tmp_path):
    """A campaign (and an ingest) run from cron or into a log file says how far it is, with rate and ETA."""
    every_line = {**os.environ, "LAKEHOUSE_PROGRESS_SECONDS": "0"}
    args = ["campaign", "run", "--name", "logged", "--log", "mini", "--policy", "fcfs,spf,sqf", "--lake", two_logs.root]
    done = subprocess.run([sys.executable, "-m", "lakehouse.cli", *map(str, args)], capture_output=True, text=True,
                          env=every_line, check=True)  # fmt: skip
    lines = [line for line in done.stderr.splitlines() if line.startswith("campaign logged: runs:")]
    assert len(lines) == 3 and "1 of 3 (33%)" in lines[0] and "left" in lines[0] and "3 of 3 (100%)" in lines[-1]
    ingest = [sys.executable, "-m", "lakehouse.cli", "ingest", "swf", *map(str, sample_swf_paths()), "--lake",
              str(tmp_path / "lake")]  # fmt: skip
    logged = subprocess.run(ingest, capture_output=True, text=True, env=every_line, check=True)
    assert " MB of " in logged.stderr and "(100%)" in logged.stderr


def test_a_campaign_table_too_long_for_a_terminal_is_summarized_per_variant(two_logs, monkeypatch):
    monkeypatch.setattr("lakehouse.cli.campaign.SHOWN_ROWS", 3)
    args = ["campaign", "run", "--name", "long", "--log", "*", "--policy", "fcfs,spf,sqf", "--lake", two_logs.root]
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.stderr
    assert "each variant over its logs" in result.stdout and result.stdout.count("easy-") == 3
    assert "lakehouse campaign show long" in " ".join(result.stderr.split())
    whole = CliRunner().invoke(app, ["campaign", "show", "long", "--lake", str(two_logs.root), "-f", "csv"])
    assert len(whole.stdout.strip().splitlines()) == 1 + 6  # two logs x three variants
