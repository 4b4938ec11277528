"""The generator of traces at the whole trace's shape: its statistics match their targets (the real
trace's published totals and the real sample's shares), at two scales; tests/test_google_real.py checks
its constants against the real sample."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakehouse.base.lake import Lake
from lakehouse.synth import google_shape as shape
from lakehouse.synth.google_shape import Shape, generate_shape_lake

SCALE = 0.002


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Lake, dict]:
    root = tmp_path_factory.mktemp("shape") / "lake"
    counts = generate_shape_lake(root, Shape(scale=SCALE, seed=3))
    return Lake(root), counts


def one(lake: Lake, sql: str) -> float:
    return lake.rows(sql)[0][0]


def test_the_lake_holds_what_the_generator_counted(generated):
    lake, counts = generated
    assert one(lake, "SELECT count(*) FROM google.job_instances WHERE instance > 0") == counts["jobs"]
    assert one(lake, "SELECT count(*) FROM google.tasks") == counts["tasks"]
    assert one(lake, "SELECT count(*) FROM google.task_usage") == counts["usage_rows"]
    assert one(lake, "SELECT count(*) FROM google.task_events") == counts["task_events"]
    assert one(lake, "SELECT count(*) FROM google.measured_usage") == counts["measured_usage_rows"]
    assert one(lake, "SELECT count(*) FROM google.machine_events") == counts["machines"] == round(12_583 * SCALE)


def test_counts_scale_with_the_factor(generated):
    _, counts = generated
    assert counts["jobs"] == round(shape.JOBS * SCALE)
    assert counts["tasks"] == pytest.approx(shape.TASKS * SCALE, rel=0.1)
    assert counts["usage_rows"] == pytest.approx(shape.USAGE_ROWS * SCALE, rel=0.25)
    assert counts["task_events"] == pytest.approx(shape.TASK_EVENTS * SCALE, rel=0.1)
    assert Shape(scale=0.2).parts == 100 and Shape(scale=1).parts == 500  # 2.5 M usage rows a part, as published


def test_jobs_present_at_the_start(generated):
    lake, _ = generated
    long_running = one(lake, "SELECT count(DISTINCT job_id) FROM google.tasks_long_running")
    assert long_running == round(shape.LONG_RUNNING_JOBS * SCALE)
    # Every long-running task runs through the whole trace: its windows cover 29 days, bar the missing ones.
    windows = one(
        lake,
        "SELECT avg(n) FROM (SELECT count(*) AS n FROM google.task_usage SEMI JOIN google.tasks_long_running "
        "USING (job_id, task_index) GROUP BY job_id, task_index)",
    )
    assert windows == pytest.approx(shape.WINDOWS * (1 - shape.MISSING_WINDOW_SHARE), rel=0.01)


def test_shares_match_the_real_sample(generated):
    lake, _ = generated
    per_job = "(SELECT job_id, count(*) AS n, min(submit_s) AS submit FROM google.tasks GROUP BY job_id)"
    single = one(lake, f"SELECT avg((n = 1)::INT) FROM {per_job} WHERE submit > 0")
    assert single == pytest.approx(shape.BATCH_TASKS.single, abs=0.03)
    unmeasured = one(lake, "SELECT avg((NOT measured)::INT) FROM google.job_sampling")
    assert unmeasured == pytest.approx(shape.SAMPLING_OFF_SHARE, abs=0.05)
    measured_windows = one(
        lake, "SELECT (SELECT count(*) FROM google.measured_usage) / count(*) FROM google.task_usage"
    )
    # About 27 % in the real sample; at this scale a few large long-running jobs hold most windows.
    assert 0.05 <= measured_windows <= 0.6
    classes = lake.rows(
        "SELECT scheduling_class, count(*) / sum(count(*)) OVER () FROM (SELECT DISTINCT job_id, scheduling_class "
        "FROM google.job_events) GROUP BY ALL ORDER BY 1"
    )
    for (klass, share), want in zip(classes, shape.JOB_CLASS_SHARES, strict=True):
        assert share == pytest.approx(want, abs=0.03), klass
    median_seconds = one(
        lake, "SELECT median(end_s - first_schedule_s) FROM google.tasks WHERE first_schedule_s > 0 AND ended"
    )
    assert median_seconds == pytest.approx(shape.TASK_SECONDS_MEDIAN, rel=0.1)


def test_parts_split_the_trace_by_time(tmp_path: Path):
    counts = generate_shape_lake(tmp_path / "lake", Shape(scale=0.004, seed=1))
    lake = Lake(tmp_path / "lake")
    assert counts["parts"] == 2
    spans = lake.rows(
        "SELECT part, min(start_time), max(start_time) FROM google.task_usage GROUP BY part ORDER BY part"
    )
    assert [p for p, _, _ in spans] == ["part-00000-of-00002", "part-00001-of-00002"]
    assert spans[0][2] < spans[1][1]  # the second part starts after the first ends
