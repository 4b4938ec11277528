"""A report's work split into partitions (lakehouse.base.partitions): the same numbers with 1, 2 and 7
partitions, in this process and on a two-node Ray cluster the tests start; a worker killed midway is run
again and counted once.  The one-partition results are themselves checked against independent
computations (test_volatility: numpy; test_job_sinusoids: statsmodels and the planted cycles)."""

from __future__ import annotations

import functools
import gzip
import itertools
import os
import signal
import threading
import time
from pathlib import Path

import partition_work
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from typer.testing import CliRunner

from lakehouse.base.errors import LakehouseError
from lakehouse.base.lake import Lake
from lakehouse.base.partitions import Partitioning, run_partitions, split_by_hash
from lakehouse.cli import app
from lakehouse.data import sample_swf_paths
from lakehouse.ingest.google import ingest_google
from lakehouse.ingest.swf import ingest_swf
from lakehouse.models.packing.model import pack_all
from lakehouse.models.periodicity.cells_2019 import Periodicity2019
from lakehouse.models.periodicity.cells_2019 import periodicity_2019 as fit_periodicity_2019
from lakehouse.models.periodicity.job_sinusoids import Periodicity
from lakehouse.models.periodicity.job_sinusoids import periodicity as fit_periodicity
from lakehouse.models.predictions.model import Predictions, PredictionSettings
from lakehouse.models.predictions.model import report as predict
from lakehouse.models.volatility.cells_2019 import _windows_connection, split_windows, windows_sql
from lakehouse.models.volatility.cells_2019 import compare as compare_2019
from lakehouse.models.volatility.model import Volatility, compute_volatility
from lakehouse.synth.google_trace import Settings, generate

from conftest import cli

#: Floating sums taken in another order (DuckDB's threads add a task's windows in any order, whatever the
#: partitions) may differ in their last bits; counts, flags and bins may not (compared exactly).
SUMS = 1e-9


#: The predictions' log: the embedded KTH-SP2 log's first jobs (a real log's users and applications recur;
#: the generated Google trace's jobs do not, so none of its tasks has a workflow history to predict from).
PREDICTED_LOG, PREDICTED_JOBS = "KTH-first-jobs", 3000


@pytest.fixture(scope="module")
def google_lake(tmp_path_factory: pytest.TempPathFactory) -> Lake:
    """A generated Google 2011 trace, a generated cell of the 2019 trace, and the first jobs of a real SWF
    log for the predictions."""
    out = tmp_path_factory.mktemp("partitions")
    generate(out, Settings(machines=10, days=2, seed=8, batch_jobs_per_hour=8, services=9))
    lake = Lake(out / "lake")
    ingest_google(lake, out / "trace")
    with gzip.open(sample_swf_paths()[0], "rt") as log:
        lines = list(itertools.islice(log, 200 + PREDICTED_JOBS))
        header = [line for line in lines if line.startswith(";")]
        jobs = [line for line in lines if not line.startswith(";")]
    first = out / f"{PREDICTED_LOG}.swf"
    first.write_text("".join(header) + "".join(jobs[:PREDICTED_JOBS]))
    ingest_swf(lake, [str(first)])
    # (Two days, as the 2011 trace's: on one, a weekly fit is so ill-conditioned that its p-value moves
    # by 1e-8 when DuckDB adds a bucket's windows in another order.)
    cli("generate", "google-2019", out / "cells", "--cell", "b", "--hours", "48", "--jobs", "40", "--seed", "3")
    cli("ingest", "google-2019", out / "cells" / "cell_b", "--lake", lake.root)
    return lake


def volatility(lake: Lake, partitioning: Partitioning) -> tuple[Volatility, pl.DataFrame]:
    """The result and its per-task table (read, then its pending file removed: nothing is stored)."""
    result = compute_volatility(lake, partitioning)
    assert result.pending is not None
    try:
        return result, pl.read_parquet(result.pending)
    finally:
        result.pending.unlink()


def periodicity(lake: Lake, partitioning: Partitioning) -> Periodicity:
    return fit_periodicity(lake, noise_trials=20, overlays=True, partitioning=partitioning)


def predictions(lake: Lake, partitioning: Partitioning) -> tuple[Predictions, pl.DataFrame]:
    """The scores of the SWF log's predictions and its per-job table (read, then its pending file removed)."""
    result = predict(lake, "swf", PREDICTED_LOG, partitioning=partitioning)
    assert result.pending is not None
    try:
        return result, pl.read_parquet(result.pending)
    finally:
        result.pending.unlink()


def assert_same_volatility(got: tuple[Volatility, pl.DataFrame], expected: tuple[Volatility, pl.DataFrame]) -> None:
    (result, tasks), (truth, truth_tasks) = got, expected
    assert result.tasks == truth.tasks
    # (assert_frame_equal compares integer and boolean columns exactly, floats to the tolerance)
    assert_frame_equal(tasks, truth_tasks, rel_tol=SUMS, abs_tol=1e-12)
    assert_frame_equal(result.task_histograms, truth.task_histograms, check_exact=True)
    assert_frame_equal(result.task_means, truth.task_means, rel_tol=SUMS, abs_tol=1e-12)
    assert_frame_equal(result.summary, truth.summary, rel_tol=SUMS, abs_tol=1e-12)
    for histogram in ("d_histogram", "rate_histogram"):
        assert_frame_equal(getattr(result, histogram), getattr(truth, histogram), rel_tol=SUMS, abs_tol=1e-12)


def volatility_2019(lake: Lake, partitioning: Partitioning) -> pl.DataFrame:
    return compare_2019(lake, partitioning=partitioning)


def assert_same_volatility_2019(got: pl.DataFrame, expected: pl.DataFrame) -> None:
    assert_frame_equal(got, expected, rel_tol=SUMS, abs_tol=1e-12)
    medians = [c for c in got.columns if c.startswith("median_")]
    assert_frame_equal(got.select(medians), expected.select(medians), check_exact=True)  # values of the data


def test_the_2019_comparison_is_duckdbs_own_aggregates_over_its_windows(google_lake, whole):
    """Its sums and counted medians against DuckDB's avg, corr and exact median over the same windows."""
    expected = google_lake.query(
        f"""SELECT cell, coalesce(tier, 'all') AS tier, count(*) AS windows, avg(abs_d) AS mean_abs_d_2011,
            avg(mad) AS mean_mad_percentiles, corr(abs_d, mad) AS window_correlation,
            median(spread_p90_p10) AS median_spread_p90_p10, median(p99_over_mean) AS median_p99_over_mean,
            avg(sample_outside::INTEGER) AS share_sample_outside_range
        FROM ({windows_sql()}) GROUP BY GROUPING SETS ((cell, tier), (cell)) ORDER BY cell, tier IS NULL, tier"""
    )
    got = whole["volatility-2019"].select(expected.columns)
    assert expected.height >= 3  # the cell's tiers and 'all'
    assert_frame_equal(got, expected, rel_tol=1e-9, abs_tol=1e-12)
    medians = ["median_spread_p90_p10", "median_p99_over_mean"]
    assert_frame_equal(got.select(medians), expected.select(medians), check_exact=True)


def periodicity_2019(lake: Lake, partitioning: Partitioning) -> Periodicity2019:
    return fit_periodicity_2019(lake, partitioning=partitioning)


def assert_same_periodicity_2019(got: Periodicity2019, expected: Periodicity2019) -> None:
    assert_frame_equal(got.fits, expected.fits, rel_tol=SUMS, abs_tol=1e-12)
    assert_frame_equal(got.summary, expected.summary, rel_tol=SUMS, abs_tol=1e-12)


def assert_same_periodicity(got: Periodicity, expected: Periodicity) -> None:
    assert_frame_equal(got.fits, expected.fits, rel_tol=SUMS, abs_tol=1e-12)
    assert got.false_positive == expected.false_positive  # the same noise on the same jobs' grids
    assert [one.job_id for one in got.series] == [one.job_id for one in expected.series]
    # `pack` packs these fits whole (one packing of every task): the same fits, the same machines.
    assert_frame_equal(packed(got.fits), packed(expected.fits), rel_tol=SUMS, abs_tol=1e-12)


def packed(fits: pl.DataFrame) -> pl.DataFrame:
    """Every heuristic's packing of the fitted jobs, on machines of twice the largest task's peak."""
    jobs = fits.select(pl.col("job_id").alias("job"), "tasks", "c", pl.col("rho").abs(), "phi")
    packing = pack_all(jobs, capacity=2 * float((jobs["c"] + jobs["rho"]).max()))
    assert packing["machines"].min() > 1
    return packing


def assert_same_predictions(got: tuple[Predictions, pl.DataFrame], expected: tuple[Predictions, pl.DataFrame]) -> None:
    (result, jobs), (truth, truth_jobs) = got, expected
    assert result.grouping == truth.grouping
    assert_frame_equal(result.table, truth.table, rel_tol=SUMS, abs_tol=1e-12)
    assert_frame_equal(jobs, truth_jobs, rel_tol=SUMS, abs_tol=1e-12)  # the windows chosen: exactly


#: Each partitioned report: what it computes with a partitioning, and how two results are compared.
REPORTS = {
    "volatility": (volatility, assert_same_volatility),
    "periodicity": (periodicity, assert_same_periodicity),
    "periodicity-2019": (periodicity_2019, assert_same_periodicity_2019),
    "volatility-2019": (volatility_2019, assert_same_volatility_2019),
    "predictions": (predictions, assert_same_predictions),
}


@pytest.fixture(scope="module")
def whole(google_lake: Lake) -> dict[str, object]:
    """Each report's result in one partition, in this process."""
    results = {name: compute(google_lake, Partitioning(1)) for name, (compute, _) in REPORTS.items()}
    assert results["volatility"][0].tasks > 100 and results["periodicity"].fits.height >= 7
    assert results["periodicity-2019"].fits.height >= 7 and results["volatility-2019"]["windows"].min() > 100
    scored, jobs = results["predictions"]
    # Enough to split: workflows with history in every partition, and users whose window is chosen.
    assert jobs.height > 1000 and jobs["layer"].eq("workflow").sum() > 100 and jobs["window_jobs"].n_unique() > 1
    return results


def test_the_volatility_through_cluster_views_is_the_former_google_views_own(google_lake, whole):
    """The per-task table of the 2011 trace, read through cluster.usage and cluster.tasks, is
    google.task_volatility's (the trace's own view, over google.measured_usage and google.tasks: the
    report's former input), row for row (floats to 1e-9: DuckDB adds a task's windows in any order)."""
    _, per_task = whole["volatility"]
    former = google_lake.query("SELECT * FROM google.task_volatility ORDER BY job_id, task_index")
    assert former.height > 100 and former["high_slo"].any() and former["long_running"].any()
    assert_frame_equal(per_task.sort("job_id", "task_index"), former, rel_tol=SUMS, abs_tol=1e-12)


#: The periodicity's series as they were read before they went through cluster.*: the 2011 trace's
#: long-running jobs from google.tasks_long_running and their demand from google.job_demand_5min (on the
#: trace-start origin), a 2019 cell's from google2019.instances and google2019.usage (from local midnight).
FORMER_SERIES_2011 = """
    WITH running AS (SELECT job_id, count(*) AS long_running FROM google.tasks_long_running GROUP BY job_id)
    SELECT job_id, r.long_running AS tasks, d.bucket_s - 600 AS t, d.cpu_rate / d.tasks AS per_task
    FROM google.job_demand_5min AS d JOIN running AS r USING (job_id)
    ORDER BY job_id, t"""
FORMER_SERIES_2019 = """
    WITH running AS (
        SELECT collection_id, count(*) AS tasks FROM google2019.instances
        WHERE cell = 'b' AND long_running AND collection = 'JOB' GROUP BY collection_id)
    SELECT collection_id AS job_id, any_value(tasks) AS tasks,
           (start_time - 600000000) // 300000000 * 300 + hour(google2019.local_time(600000000, 'b')) * 3600 AS t,
           sum(average_usage_cpus * (end_time - start_time)) / sum(end_time - start_time) AS per_task
    FROM google2019.usage JOIN running USING (collection_id)
    WHERE cell = 'b' AND average_usage_cpus IS NOT NULL AND NOT google2019.special_time(start_time)
    GROUP BY collection_id, t ORDER BY job_id, t"""


def _former_fits(lake: Lake, sql: str) -> pl.DataFrame:
    from lakehouse.models.periodicity.job_sinusoids import MIN_WINDOWS, DemandSeries, fit_long_running_jobs

    rows = lake.query(sql)
    series = [
        DemandSeries(job, group["tasks"][0], group["t"].to_numpy().astype(float), group["per_task"].to_numpy())
        for (job,), group in rows.group_by("job_id", maintain_order=True)
        if group.height >= MIN_WINDOWS
    ]
    return fit_long_running_jobs(lake, series).sort("job_id")


def test_the_periodicity_through_cluster_views_fits_what_the_former_google_views_gave(google_lake, whole):
    """The same jobs, windows and fits (to 1e-9: the windows' lengths are now seconds, not microseconds)
    on the 2011 trace and on a 2019 cell, so that the reports' numbers are today's."""
    former_2011 = _former_fits(google_lake, FORMER_SERIES_2011)
    assert former_2011.height >= 7
    assert_frame_equal(whole["periodicity"].fits, former_2011, rel_tol=SUMS, abs_tol=1e-12)
    former_2019 = _former_fits(google_lake, FORMER_SERIES_2019)
    ours_2019 = whole["periodicity-2019"].fits.filter(pl.col("cell") == "b").select(former_2019.columns)
    assert former_2019.height >= 7
    assert_frame_equal(ours_2019, former_2019, rel_tol=SUMS, abs_tol=1e-12)


@pytest.mark.parametrize("report", list(REPORTS))
@pytest.mark.parametrize("partitions", [2, 7])
def test_partitions_in_this_process_give_the_whole_result(google_lake, whole, report, partitions):
    compute, assert_same = REPORTS[report]
    assert_same(compute(google_lake, Partitioning(partitions)), whole[report])


#: The report `make test` runs on Ray: the 2019 volatility, whose workers read the windows split into the
#: lake's spill folder (the 2011 volatility runs there too, by its command, below); `make faults` runs
#: every report.  The predictions' split by workflow is checked in this process at 2 and 7 partitions.
ON_RAY_IN_MAKE_TEST = ("volatility-2019",)


@pytest.mark.slow
@pytest.mark.parametrize(
    "report", [r if r in ON_RAY_IN_MAKE_TEST else pytest.param(r, marks=pytest.mark.thorough) for r in REPORTS]
)
# (Each run joins the cluster and starts its workers' connections, 3-5 s: `make test` runs the split in
# most partitions; `make faults` the one and two partitions of every report too.)
@pytest.mark.parametrize(
    "partitions", [pytest.param(1, marks=pytest.mark.thorough), pytest.param(2, marks=pytest.mark.thorough), 7]
)
def test_partitions_on_a_two_node_ray_cluster_give_the_whole_result(
    google_lake, whole, two_node_ray, report, partitions
):
    compute, assert_same = REPORTS[report]
    assert_same(compute(google_lake, Partitioning(partitions, two_node_ray)), whole[report])


def test_each_2019_partition_reads_its_own_windows_only(google_lake):
    """The windows are written once by partition; a partition's query names its own files and not the
    lake's windows (a scan of all of them per partition made the time grow as rows x partitions), and
    every window is in exactly one partition."""
    count = 3
    with split_windows(google_lake, None, count) as windows:
        assert windows.split is not None
        queries = [windows.sql(number) for number in range(count)]
        for number, query in enumerate(queries):
            assert "google2019.instance_usage" not in query and "google2019.collection_events" not in query
            others = [other for other in range(count) if other != number]
            assert f"partition={number}" in query and not any(f"partition={other}/" in query for other in others)
        split = [google_lake.query(f"SELECT count(*) AS n FROM ({query})")["n"][0] for query in queries]
    assert min(split) > 0 and sum(split) == google_lake.query(f"SELECT count(*) AS n FROM ({windows_sql()})")["n"][0]


def test_the_windows_stream_past_their_tiers_whatever_the_estimates(google_lake):
    """The windows' join of their tiers holds its right side (the tiers, one row a job) in memory, as
    written, even where DuckDB estimates the left side smaller: it swapped the sides by its estimates (a
    RIGHT join holding the windows, 2.2 GB at 0.02 of a cell) until both optimizers that choose were off."""
    few_left_many_right = "SELECT * FROM range(10) AS a(i) LEFT JOIN range(1000000) AS b(i) USING (i)"
    with _windows_connection(google_lake) as con:
        plan = con.execute(f"EXPLAIN {few_left_many_right}").fetchall()[0][1]
        assert "LEFT" in plan and "RIGHT" not in plan
        con.execute("RESET disabled_optimizers")  # (the test can fail: DuckDB's own choice is the swap)
        assert "RIGHT" in con.execute(f"EXPLAIN {few_left_many_right}").fetchall()[0][1]
    with _windows_connection(google_lake) as con:
        plan = con.execute(f"EXPLAIN SELECT * FROM ({windows_sql()})").fetchall()[0][1]
    assert "LEFT" in plan and "RIGHT" not in plan


def test_volatility_takes_as_many_partitions_as_asked(google_lake):
    assert volatility(google_lake, Partitioning(7))[0].partitions == 7


@pytest.mark.slow
def test_a_partition_whose_worker_is_killed_is_run_again_once(two_node_ray, tmp_path: Path):
    marker = tmp_path / "killed"
    work = functools.partial(partition_work.square_unless_first_try, str(marker), 3)
    results = run_partitions(work, 8, two_node_ray)
    assert marker.exists(), "the worker of partition 3 was not killed"
    assert [value for value, _ in results] == [n**2 for n in range(8)]
    assert len({node for _, node in results}) == 2, "the partitions ran on one node of two"


def _kill_the_first_partition_worker(killed: list[int], stop: threading.Event) -> None:
    """SIGKILL, once, the first Ray worker seen running a partition (Ray titles it `ray::_partition`)."""
    while not stop.is_set() and not killed:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                title = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if title.startswith(b"ray::_partition"):
                os.kill(int(pid), signal.SIGKILL)
                killed.append(int(pid))
                return
        time.sleep(0.002)


@pytest.mark.slow
def test_a_volatility_worker_killed_mid_partition_changes_nothing(google_lake, whole, two_node_ray):
    """A worker killed from outside while it computes a partition of the report: Ray runs the partition
    again, and the result is the one-process result (nothing half-written is read, nothing counted twice)."""
    for _ in range(3):  # (a partition can end before the watcher sees it: then the run is tried again)
        killed: list[int] = []
        stop = threading.Event()
        watcher = threading.Thread(target=_kill_the_first_partition_worker, args=(killed, stop))
        watcher.start()
        try:
            got = volatility(google_lake, Partitioning(7, two_node_ray))
        finally:
            stop.set()
            watcher.join()
        if killed:
            break
    assert killed, "no partition's worker was seen running in three runs"
    assert_same_volatility(got, whole["volatility"])


@pytest.mark.slow
def test_the_command_on_ray_stores_what_it_stores_here(google_lake, two_node_ray):
    tables = ("analysis.task_volatility ORDER BY job_id, task_index", "analysis.volatility_summary ORDER BY metric")
    runs = {}
    for where in ([], ["--partitions", "7", "--ray", two_node_ray]):
        run = CliRunner().invoke(app, ["report", "volatility", "--lake", str(google_lake.root), *where])
        assert run.exit_code == 0, run.output
        runs[bool(where)] = [google_lake.query(f"SELECT * FROM {table}") for table in tables]
    assert_frame_equal(runs[True][0], runs[False][0], rel_tol=SUMS, abs_tol=1e-12)
    assert_frame_equal(runs[True][1], runs[False][1], rel_tol=SUMS, abs_tol=1e-12)


def test_the_predictions_command_in_partitions_stores_what_it_stores_whole(google_lake):
    where = f"WHERE source = '{PREDICTED_LOG}'"
    tables = (f"analysis.predictions_jobs {where} ORDER BY resource, job", f"analysis.predictions_scores {where}")
    runs = {}
    for split in ([], ["--partitions", "3"]):
        run = CliRunner().invoke(app, ["report", "predictions", PREDICTED_LOG, "--lake", str(google_lake.root), *split])
        assert run.exit_code == 0, run.output
        runs[bool(split)] = [google_lake.query(f"SELECT * FROM {table}") for table in tables]
    assert runs[False][0].height > 1000
    for got, expected in zip(runs[True], runs[False], strict=True):
        assert_frame_equal(got, expected, rel_tol=SUMS, abs_tol=1e-12)


def test_the_predictions_split_as_their_memory_limit_asks_and_each_partition_reads_its_own_rows(
    google_lake, whole, monkeypatch
):
    """Without --partitions, the targets are split into as many partitions as keep one within the pool
    (here a row made to take a third of it: three), once, by the chosen grouping's workflow; each
    partition's steps read its own files alone (a shared table of every target, filtered, made the time
    grow faster than the rows at a 2019 cell's size); the result is one partition's."""
    import lakehouse.models.predictions.model as model

    targets = google_lake.query(f"SELECT count(*) AS n FROM predict.swf_targets WHERE source = '{PREDICTED_LOG}'")["n"][
        0
    ]
    pool = google_lake.budget.leaving(model.PREDICTIONS_OUTSIDE_POOL_SHARE).duckdb_memory
    monkeypatch.setattr(model, "POOL_BYTES_PER_TARGET", int(2.5 * pool / targets))
    assert model.partitions_for(targets, google_lake.budget.leaving(model.PREDICTIONS_OUTSIDE_POOL_SHARE)) == 3
    splits, reads = [], []
    monkeypatch.setattr(model, "split_by_hash", lambda *args: splits.append(args) or split_by_hash(*args))
    read_part = model._Rows.read_part
    monkeypatch.setattr(model._Rows, "read_part", lambda self, *args: reads.append(read_part(self, *args)) or reads[-1])
    got = predictions(google_lake, Partitioning())
    # The targets with their profiles, and the running maxima the windows reuse: each split once.
    assert sorted((name, count) for _, _, name, _, _, count in splits) == [("maxima", 3), ("parted", 3)]
    targets = [query for query in reads if "/parted/" in query]
    assert len(targets) == 6  # the windows' step and the predictions' step, in each partition
    for number, query in enumerate(targets):
        others = [other for other in range(3) if other != number % 3]
        assert f"partition={number % 3}/" in query and not any(f"partition={other}/" in query for other in others)
    assert_same_predictions(got, whole["predictions"])


def test_partitions_the_split_leaves_without_rows_change_nothing(google_lake):
    """More partitions than workflows (the jobs grouped by user): some partitions get no targets and no
    running maxima, read from files of no rows with the columns' types; the result is one partition's."""
    where = f"source = '{PREDICTED_LOG}'"
    users = google_lake.query(f"SELECT count(DISTINCT user_key) AS n FROM predict.swf_targets WHERE {where}")["n"][0]
    by_user = PredictionSettings(grouping="user")

    def split(partitions: int) -> tuple[Predictions, pl.DataFrame]:
        result = predict(google_lake, "swf", PREDICTED_LOG, by_user, Partitioning(partitions))
        assert result.pending is not None
        try:
            return result, pl.read_parquet(result.pending)
        finally:
            result.pending.unlink()

    assert users > 5
    assert_same_predictions(split(users + 3), split(1))  # at least three partitions without a user


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--partitions", "0"], "--partitions"),
        (["--partitions", "1000000"], "there are only"),
        (["--ray", "not an address"], "expected auto, HOST:PORT"),
        (["--ray", "127.0.0.1:1"], "nothing answers there"),
        (["--trace", "google-2019", "--partitions", "1000000"], "there are only"),
    ],
)
def test_bad_partitioning_is_one_line_before_any_result(google_lake, args, says):
    run = CliRunner().invoke(app, ["report", "volatility", "--lake", str(google_lake.root), *args])
    assert run.exit_code != 0
    assert says in run.output
    assert "Traceback" not in run.output
    assert not list(google_lake.root.glob("analysis/**/.*.tmp")), "a refused run left its pending file"


def test_more_partitions_than_jobs_to_predict_is_one_line(google_lake):
    lake = ["--lake", str(google_lake.root)]
    run = CliRunner().invoke(app, ["report", "predictions", PREDICTED_LOG, *lake, "--partitions", "1000000"])
    jobs = google_lake.query(
        f"SELECT count(DISTINCT job) AS n FROM predict.swf_targets WHERE source = '{PREDICTED_LOG}'"
    )
    assert run.exit_code != 0 and f"there are only {jobs['n'][0]:,} jobs to split" in run.output, run.output
    assert "Traceback" not in run.output
    assert not list(google_lake.root.glob("analysis/**/.*.tmp")), "a refused run left its pending file"


def test_a_partition_count_above_the_units_is_refused_when_asked_for_only():
    counted: list[int] = []

    def four() -> int:
        counted.append(4)
        return 4

    assert Partitioning().resolve(needed=9, units=four, unit="tasks") == 9 and not counted  # as the memory limit asks
    assert Partitioning(4).resolve(needed=1, units=four, unit="tasks") == 4
    with pytest.raises(LakehouseError, match="there are only 4 tasks"):
        Partitioning(5).resolve(needed=1, units=four, unit="tasks")


@pytest.mark.parametrize(
    ("table", "says"), [('ray = "nowhere"', "expected auto, HOST:PORT"), ("partitions = 0", "at least 1")]
)
def test_the_nightly_configuration_refuses_the_same_values(tmp_path: Path, table, says):
    from lakehouse.base.errors import SettingsError
    from lakehouse.nightly.config import load

    config = tmp_path / "nightly.toml"
    config.write_text(f"[volatility]\n{table}\n")
    with pytest.raises(SettingsError, match=says):
        load(config)


@pytest.mark.slow
def test_a_worker_that_cannot_read_the_lake_fails_its_partition_in_one_line(google_lake, two_node_ray, tmp_path):
    """What a worker without the lake's files meets (the lake not on a path it shares): the partition's
    own error, named, after no retry (an error of the work is not the worker dying)."""
    from lakehouse.base.partitions import PartitionError
    from lakehouse.models.volatility.model import _partition_on_worker

    elsewhere = Lake(tmp_path / "not-shared")
    with pytest.raises(PartitionError, match=r"^partition \d of 2: no lake at .*not-shared"):
        run_partitions(functools.partial(_partition_on_worker, elsewhere, tmp_path), 2, two_node_ray)


# (On Ray, 11 s: the worker's error crosses the cluster as every partition's error does, which the
# unreadable-lake test shows in `make test`; `make faults` runs this one there too.)
@pytest.mark.parametrize("where", ["here", pytest.param("ray", marks=pytest.mark.thorough)])
def test_a_partition_out_of_memory_is_one_line_naming_it_and_what_to_change(google_lake, where, request):
    """A worker whose budget cannot hold its partition (DuckDB out of memory even spilling): the partition
    named, with both ways out."""
    from lakehouse.base.partitions import PartitionError

    ray = request.getfixturevalue("two_node_ray") if where == "ray" else None
    with pytest.raises(PartitionError) as failed:
        run_partitions(functools.partial(partition_work.hungry_unless_first, str(google_lake.root)), 2, ray)
    message = str(failed.value)
    assert message.startswith("partition 0 of 2: the query needs more memory than the limit"), message
    assert "raise --memory-limit" in message and message.endswith("or give more partitions (--partitions)")
    assert "\n" not in message
