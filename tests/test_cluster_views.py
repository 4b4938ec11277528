"""The common views cluster.* read every trace in one shape: one lake holding an SWF log (the embedded
KTH-SP2 sample), a generated Google 2011 trace, a generated cell of the 2019 trace and a few real Alibaba 2018
rows.  Each trace's rows in cluster.* are its own views' rows (counts and sums compared with them), a
column a trace lacks is NULL, and the Alibaba rows are checked by hand.  Also: views in a topic folder
(sql/cluster/) are made after the views they read, whatever their files' names."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakehouse.base import catalog
from lakehouse.base.errors import SqlFileError
from lakehouse.base.lake import Lake
from lakehouse.data import sample_swf_paths

from conftest import cli, unboxed

# Real rows of the trace's files (the heads of batch_task and machine_meta; a batch_instance row of the
# published schema's shape): a job of two tasks, one a DAG task after the other, and one unended task.
ALIBABA = {
    "machine_meta.csv": "m_1,0,219,17,96,100,USING\nm_2,0,219,17,96,100,USING\nm_1,148984,219,17,96,100,USING\n",
    "batch_task.csv": (
        "M1,1,j_2,1,Terminated,87076,87083,50,0.2\nR2_1,1,j_2,1,Terminated,87076,87086,50,0.2\n"
        "M1,3,j_5,1,Running,90000,0,100,0.4\n"
    ),
    "batch_instance.csv": "ins_1,M1,j_2,1,Terminated,87076,87083,m_1,1,1,43.0,61.0,0.52,0.55\n",
}


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("traces")
    lake = root / "lake"
    cli("ingest", "swf", sample_swf_paths()[0], "--lake", lake)
    cli("generate", "google", root / "gen2011", "--days", "1", "--machines", "6", "--services", "3")
    cli("ingest", "google", root / "gen2011" / "trace", "--lake", lake)
    cli("generate", "google-2019", root / "gen", "--cell", "b", "--hours", "2", "--jobs", "5", "--machines", "6")
    cli("ingest", "google-2019", root / "gen" / "cell_b", "--lake", lake)
    (root / "alibaba").mkdir()
    for name, text in ALIBABA.items():
        (root / "alibaba" / name).write_text(text)
    cli("ingest", "alibaba-2018", root / "alibaba", "--lake", lake)
    return lake


def _counts(lake: Path, sql: str) -> dict[str, tuple]:
    return {row[0]: row[1:] for row in Lake(lake).rows(sql)}


def test_each_traces_rows_are_its_own_views_rows(lake: Path) -> None:
    jobs = _counts(lake, "SELECT trace, count(*) FROM cluster.jobs GROUP BY ALL")
    assert jobs["swf"] == Lake(lake).rows("SELECT count(*) FROM swf.jobs")[0]
    assert jobs["google-2011"] == Lake(lake).rows("SELECT count(DISTINCT job_id) FROM google.job_events")[0]
    assert (
        jobs["google-2019"]
        == Lake(lake).rows("SELECT count(*) FROM google2019.collections WHERE collection = 'JOB'")[0]
    )
    assert jobs["alibaba-2018"] == (2,)
    tasks = _counts(lake, "SELECT trace, count(*), sum(cpu_request) FROM cluster.tasks GROUP BY ALL")
    assert tasks["google-2011"] == pytest.approx(
        Lake(lake).rows("SELECT count(*), sum(cpu_request) FROM google.tasks")[0]
    )
    assert tasks["google-2019"] == pytest.approx(
        Lake(lake).rows("SELECT count(*), sum(cpu_request) FROM google2019.instances WHERE collection = 'JOB'")[0]
    )
    assert "swf" not in tasks
    usage = _counts(lake, "SELECT trace, count(*), sum(cpu_mean) FROM cluster.usage GROUP BY ALL")
    assert usage["google-2011"] == pytest.approx(
        Lake(lake).rows("SELECT count(*), sum(cpu_rate) FROM google.task_usage")[0]
    )
    assert usage["google-2019"] == pytest.approx(
        Lake(lake).rows("SELECT count(*), sum(average_usage_cpus) FROM google2019.instance_usage")[0]
    )
    # summed where counted once, the 2019 windows give google2019.usage's total (the double count removed)
    once = Lake(lake).rows("SELECT sum(cpu_mean) FROM cluster.usage WHERE trace = 'google-2019' AND counted_once")[0]
    assert once == pytest.approx(Lake(lake).rows("SELECT sum(average_usage_cpus) FROM google2019.usage")[0])
    machines = _counts(lake, "SELECT trace, count(*) FROM cluster.machines GROUP BY ALL")
    assert machines["google-2011"] == Lake(lake).rows("SELECT count(*) FROM google.machine_events")[0]
    assert machines["google-2019"] == Lake(lake).rows("SELECT count(*) FROM google2019.machine_events")[0]
    assert machines["alibaba-2018"] == (3,)


def test_a_column_a_trace_lacks_is_null_and_the_traces_row_says_so(lake: Path) -> None:
    lacking = _counts(
        lake,
        'SELECT trace, count(submit_s), count("user"), count(priority), count(tasks) FROM cluster.jobs GROUP BY ALL',
    )
    assert lacking["alibaba-2018"] == (0, 0, 0, 2)  # no submit time, no user, no priority
    assert lacking["swf"][2:] == (0, 0)  # no priority, no tasks
    traces = {r[0]: r[1:] for r in Lake(lake).rows("SELECT trace, has_machines, usage, jobs FROM cluster.traces")}
    assert traces["swf"][:2] == (False, None)
    assert all(traces[t][0] for t in ("google-2011", "google-2019", "alibaba-2018"))
    assert traces["alibaba-2018"][2] == 2


def test_alibaba_rows_by_hand(lake: Path) -> None:
    rows = Lake(lake).rows(
        "SELECT task_id, start_s, end_s, cpu_request, memory_request, instances FROM cluster.tasks "
        "WHERE trace = 'alibaba-2018' ORDER BY job_id, task_id"
    )
    assert rows == [
        ("M1", 87076.0, 87083.0, 0.5, 0.2, 1),  # plan_cpu 50 = half a core
        ("R2_1", 87076.0, 87086.0, 0.5, 0.2, 1),
        ("M1", 90000.0, None, 1.0, 0.4, 3),  # end_time 0: not ended
    ]
    jobs = Lake(lake).rows(
        "SELECT job_id, start_s, end_s, tasks FROM cluster.jobs WHERE trace = 'alibaba-2018' ORDER BY 1"
    )
    assert jobs == [("j_2", 87076.0, 87086.0, 2), ("j_5", 90000.0, None, 1)]
    usage = Lake(lake).rows(
        "SELECT machine_id, cpu_mean, cpu_max, memory_mean FROM cluster.usage WHERE trace = 'alibaba-2018'"
    )
    assert usage == [("m_1", 0.43, 0.61, 0.52)]


def test_views_in_a_topic_folder_are_made_after_what_they_read(monkeypatch: pytest.MonkeyPatch) -> None:
    order = [v.name for v in catalog.view_files()]
    assert order.index("cluster.tasks") < order.index("cluster.jobs")  # jobs.sql sorts before tasks.sql
    header = "-- name: {}\n-- grain: a test\n-- description: two views that read each other, which cannot be made.\n"
    files = [("a/one.sql", header.format("cluster.one") + "SELECT * FROM cluster.two"),
             ("a/two.sql", header.format("cluster.two") + "SELECT * FROM cluster.one")]  # fmt: skip
    monkeypatch.setattr(catalog, "_sql_files", lambda: files)
    with pytest.raises(SqlFileError, match="read each other round a cycle: cluster.one -> cluster.two -> cluster.one"):
        catalog.view_files()


def _compared(lake: Path, plots: Path | None = None) -> dict[tuple[str, str | None], dict]:
    import json

    extra = ["--plots", plots] if plots else []
    rows = json.loads(cli("report", "compare-traces", "--lake", lake, "-f", "json", *extra).stdout)
    return {(row["trace"], row["cell"]): row for row in rows}


def test_compare_traces_gives_each_trace_its_own_numbers(lake: Path, tmp_path: Path) -> None:
    """Each row's numbers from each trace's own views (numpy over their rows), the Alibaba row by hand."""
    import numpy as np

    rows = _compared(lake, tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["compare-traces.png"]
    db = Lake(lake)
    (log,) = db.log_names()
    swf = db.query_numpy(f"SELECT procs, run_time, wait_time FROM swf.jobs WHERE log = '{log}'")
    kth = rows[("swf", log)]
    assert kth["jobs"] == len(swf["procs"]) and kth["tasks"] is None and kth["machines"] is None
    assert kth["median_job_size"] == pytest.approx(np.ma.median(np.ma.masked_invalid(swf["procs"].astype(float))))
    run = np.ma.masked_invalid(np.ma.filled(swf["run_time"].astype(float), np.nan))
    assert kth["median_duration_h"] == pytest.approx(np.ma.median(run) / 3600)
    wait = np.ma.masked_invalid(np.ma.filled(swf["wait_time"].astype(float), np.nan))
    assert kth["median_wait_s"] == pytest.approx(np.ma.median(wait))
    google = rows[("google-2011", None)]
    assert google["jobs"] == db.rows("SELECT count(DISTINCT job_id) FROM google.job_events")[0][0]
    assert google["tasks"] == db.rows("SELECT count(*) FROM google.tasks")[0][0]
    assert google["machines"] == db.rows("SELECT count(DISTINCT machine_id) FROM google.machine_events")[0][0]
    usage = db.query_numpy("SELECT start_s, end_s, cpu_rate FROM google.task_usage")
    capacity = sum(cpus for (cpus,) in db.rows("SELECT max(cpus) FROM google.machine_events GROUP BY machine_id"))
    span = usage["end_s"].max() - usage["start_s"].min()
    used = float(np.sum(usage["cpu_rate"] * (usage["end_s"] - usage["start_s"])))
    assert google["cpu_utilisation"] == pytest.approx(used / (capacity * span))
    cell = rows[("google-2019", "b")]
    assert cell["jobs"] == db.rows("SELECT count(*) FROM google2019.collections WHERE collection = 'JOB'")[0][0]
    assert cell["tasks"] == db.rows("SELECT count(*) FROM google2019.instances WHERE collection = 'JOB'")[0][0]
    # Alibaba, by hand: jobs j_2 (2 tasks, 87076 to 87086) and j_5 (1 task, unended); two machines of 96
    # cores; one batch instance of 0.43 cores for 7 s: 0.43 * 7 / (192 * 7).
    alibaba = rows[("alibaba-2018", None)]
    assert (alibaba["jobs"], alibaba["tasks"], alibaba["machines"]) == (2, 3, 2)
    assert alibaba["median_job_size"] == 1.5 and alibaba["median_duration_h"] == pytest.approx(10 / 3600)
    assert alibaba["days"] == pytest.approx(10 / 86400)
    assert alibaba["cpu_utilisation"] == pytest.approx(0.43 / 192)
    # The volatility and the daily cycles are the reports' own numbers, once they ran on the trace.
    assert google["volatility_mean_abs_d"] is None
    cli("report", "volatility", "--lake", lake)
    mean_abs_d = db.rows("SELECT \"all\" FROM analysis.volatility_summary WHERE metric = 'mean_abs_d'")[0][0]
    assert _compared(lake)[("google-2011", None)]["volatility_mean_abs_d"] == pytest.approx(mean_abs_d)
    stored = db.rows("SELECT count(*) FROM analysis.trace_comparison")[0][0]
    assert stored == len(rows)


def test_the_figures_count_every_job_with_a_duration_once(lake: Path) -> None:
    import polars as pl

    from lakehouse.models.compare_traces.model import compare

    result = compare(Lake(lake))
    binned = dict(Lake(lake).rows("SELECT trace, count(*) FROM cluster.jobs WHERE end_s >= start_s GROUP BY trace"))
    durations = result.distributions.filter(measure="duration_s").group_by("trace").agg(jobs=pl.col("jobs").sum())
    assert dict(durations.iter_rows()) == binned


@pytest.mark.parametrize(
    ("args", "report", "topic"),
    [
        (["report", "volatility", "--trace", "alibaba-2018"], "volatility", "volatility"),
        (["report", "periodicity", "--trace", "alibaba-2018"], "periodicity", "periodicity"),
        (["pack", "--trace", "alibaba-2018"], "pack", "packing"),
    ],
)
def test_a_report_alibaba_cannot_feed_says_why_in_one_line(lake: Path, args: list[str], report: str, topic: str):
    """With the reason its topic declares (CANNOT_FEED)."""
    import importlib

    reason = importlib.import_module(f"lakehouse.models.{topic}").CANNOT_FEED["alibaba-2018"]
    refused = cli(*args, "--lake", lake, code=1)
    assert f"alibaba-2018 cannot feed {report}: {reason}" in " ".join(refused.stderr.split())
    assert "Traceback" not in refused.stderr


# predict.google_targets as it was before the predictions read the cloud traces through cluster.*: the
# reference the common view must give row for row on the 2011 trace.
GOOGLE_2011_TARGETS = """
WITH usage AS (
    SELECT
        job_id,
        task_index,
        avg(cpu_rate) AS cpu,
        max(maximum_cpu_rate) AS cpu_peak,
        avg(canonical_memory_usage) AS memory,
        max(maximum_memory_usage) AS memory_peak
    FROM google.task_usage
    GROUP BY job_id, task_index
),
jobs AS (
    SELECT job_id, arg_max(user, time) AS user_key, arg_max(logical_job_name, time) AS wf_name
    FROM google.job_events
    GROUP BY job_id
),
tasks AS (
    SELECT
        'google' AS source,
        t.job_id * 100000 + t.task_index AS job,
        j.user_key,
        t.submit_s AS submit,
        t.end_s AS done,
        t.lifetime_s AS walltime,
        t.cpu_request,
        t.memory_request,
        u.*,
        t.job_id::VARCHAR AS wf_job,
        j.user_key AS wf_user,
        j.wf_name,
        t.cpu_request || '/' || t.memory_request AS wf_signature
    FROM google.tasks AS t
    JOIN usage AS u USING (job_id, task_index)
    JOIN jobs AS j USING (job_id)
    WHERE t.submit_s IS NOT NULL AND t.end_s IS NOT NULL AND t.lifetime_s > 0
)
SELECT
    source, job, user_key, submit, done, walltime, r.resource, r.used, r.requested, walltime AS freed_weight,
    wf_job, wf_user, wf_name, wf_signature
FROM (SELECT *, unnest(list_filter([
          {'resource': 'cpu', 'used': cpu, 'requested': cpu_request},
          {'resource': 'cpu_peak', 'used': cpu_peak, 'requested': cpu_request},
          {'resource': 'memory', 'used': memory, 'requested': memory_request},
          {'resource': 'memory_peak', 'used': memory_peak, 'requested': memory_request}
      ], r -> r.used > 0 AND r.requested > 0)) AS r
      FROM tasks)
"""


def test_the_predictions_targets_of_2011_through_cluster_views_are_the_2011_views_own(lake: Path) -> None:
    """Row for row (the means of a task's windows to 1e-12: DuckDB adds them in any order), so the
    predictions of the 2011 trace are today's."""
    from polars.testing import assert_frame_equal

    columns = "source, job, user_key, submit, done, walltime, resource, used, requested, freed_weight, wf_job"
    columns += ", wf_user, wf_name, wf_signature"
    ours = Lake(lake).query(f"SELECT {columns} FROM predict.cluster_targets WHERE trace = 'google-2011' ORDER BY ALL")
    reference = Lake(lake).query(f"SELECT {columns} FROM ({GOOGLE_2011_TARGETS}) ORDER BY ALL")
    assert reference.height > 100
    assert_frame_equal(ours.drop("used"), reference.drop("used"), check_exact=True)
    assert_frame_equal(ours.select("used"), reference.select("used"), rel_tol=1e-12, abs_tol=0)


def test_the_alibaba_targets_by_hand(lake: Path) -> None:
    """j_2's task M1 ended (87076 to 87083) and has an instance (CPU 43 and 61 of 100, memory 0.52 and 0.55);
    R2_1 has no instance, j_5's M1 did not end: one task, its four resources."""
    rows = (
        Lake(lake)
        .query(
            "SELECT source, submit, done, walltime, resource, used, requested, wf_job, wf_user, wf_name, wf_signature "
            "FROM predict.cluster_targets WHERE trace = 'alibaba-2018' ORDER BY resource"
        )
        .rows()
    )
    common = ("alibaba-2018", 87076.0, 87083.0, 7.0)
    keys = ("j_2", None, None, "0.5/0.2")
    assert rows == [
        (*common, "cpu", pytest.approx(0.43), 0.5, *keys),
        (*common, "cpu_peak", pytest.approx(0.61), 0.5, *keys),
        (*common, "memory", pytest.approx(0.52), pytest.approx(0.2), *keys),
        (*common, "memory_peak", pytest.approx(0.55), pytest.approx(0.2), *keys),
    ]


def test_the_predictions_run_on_alibaba(lake: Path) -> None:
    cli("report", "predictions", "alibaba-2018", "--lake", lake)
    scores = Lake(lake).query("SELECT * FROM analysis.predictions_scores WHERE source = 'alibaba-2018'")
    requests = scores.filter(scenario="users' requests", resource="cpu").row(0, named=True)
    # The one job is evaluated (a user's first 80 % of none): predicted 0.5 for 0.43 used, over by 0.07 for
    # 7 s at weight 0.5.
    assert requests["jobs"] == 1 and requests["loss"] == pytest.approx(0.5 * 0.07 * 7 / 3600)


def alibaba_without_targets(folder: Path) -> Path:
    """A lake of the Alibaba slice whose only measured instance is of the unended task: nothing to predict."""
    (folder / "alibaba").mkdir()
    unended = {**ALIBABA, "batch_instance.csv": ALIBABA["batch_instance.csv"].replace("M1,j_2", "M1,j_5")}
    for name, text in unended.items():
        (folder / "alibaba" / name).write_text(text)
    cli("ingest", "alibaba-2018", folder / "alibaba", "--lake", folder / "lake")
    return folder / "lake"


def test_unnamed_sources_come_from_the_manifest_and_one_without_targets_is_skipped_by_its_run(tmp_path: Path) -> None:
    # With no source named, the cloud sources come from the manifest too (listing those with targets
    # first read all their usage, which each run reads again): the one without targets is skipped by its
    # run, in one line, and the others are predicted and stored.
    lake = alibaba_without_targets(tmp_path)
    cli("ingest", "swf", sample_swf_paths()[0], "--lake", lake)
    result = cli("report", "predictions", "--lake", lake, "-f", "json")
    assert "skipped alibaba-2018: no job with both a positive request and usage of any resource" in unboxed(
        result.stderr
    )
    assert {source for (source,) in Lake(lake).rows("SELECT DISTINCT source FROM analysis.predictions_scores")} == {
        "KTH-SP2-1996-2.1-cln"
    }


def test_when_every_run_is_skipped_the_command_says_so_and_stores_nothing(tmp_path: Path) -> None:
    alibaba_without_targets(tmp_path)
    result = cli("report", "predictions", "--lake", tmp_path / "lake", code=1)
    assert "nothing to report: every run was skipped (alibaba-2018: no job with both" in unboxed(result.stderr)
    assert not Lake(tmp_path / "lake").rows("SELECT * FROM analysis.predictions_scores")


def test_a_named_cloud_source_without_targets_is_refused_in_one_line(tmp_path: Path) -> None:
    # A named cloud source is taken from the lake's manifest (listing the sources with targets scans all
    # usage); one whose only measured instance is of the unended task has nothing to predict, as its run says.
    alibaba_without_targets(tmp_path)
    result = cli("report", "predictions", "alibaba-2018", "--lake", tmp_path / "lake", code=1)
    assert "alibaba-2018: no job with both a positive request and usage of any resource" in unboxed(result.stderr)
    assert not Lake(tmp_path / "lake").rows("SELECT * FROM analysis.predictions_scores")
    result = cli("report", "predictions", "google", "--lake", tmp_path / "lake", code=1)
    assert "nothing to predict for google: the lake has alibaba-2018" in unboxed(result.stderr)
