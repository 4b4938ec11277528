"""The real Google trace files in ../shared/data/google ingest exactly (counts from PROVENANCE.md)."""

from __future__ import annotations

import pytest

from lakehouse.ingest.google import ingest_google
from lakehouse.lake import Lake

from conftest import SHARED, shared_or_skip

GOOGLE = SHARED / "google"


@pytest.fixture(scope="module")
def google_lake(tmp_path_factory: pytest.TempPathFactory) -> tuple[Lake, list, list]:
    shared_or_skip(GOOGLE)
    lake = Lake(tmp_path_factory.mktemp("google") / "lake")
    results, warnings = ingest_google(lake, GOOGLE)
    return lake, results, warnings


@pytest.mark.slow
def test_every_part_ingests_without_quarantine(google_lake):
    lake, results, warnings = google_lake
    assert {r.status for r in results} == {"ok"}
    assert len(results) == 500 + 11 + 1 + 1
    assert lake.query("SELECT count(*) AS n FROM google.quarantine")["n"][0] == 0
    # The sample holds 11 of 500 task_events parts and 1 of 500 task_usage parts: reported, not failed.
    assert warnings == ["task_events: 489 part(s) missing, 00011-00499", "task_usage: 499 part(s) missing, 00001-00499"]


@pytest.mark.slow
def test_row_counts_match_the_provenance_notes(google_lake):
    lake, _, _ = google_lake
    counts = lake.query(
        "SELECT (SELECT count(*) FROM google.job_events) AS job_events, "
        "(SELECT count(DISTINCT job_id) FROM google.job_events) AS jobs, "
        "(SELECT count(*) FROM google.task_events) AS task_events, "
        "(SELECT count(*) FROM google.machine_events) AS machine_events, "
        "(SELECT count(*) FROM google.task_usage) AS task_usage"
    ).row(0, named=True)
    assert counts == {
        "job_events": 2_012_242,
        "jobs": 672_074,
        "task_events": 2_048_560,
        "machine_events": 37_780,
        "task_usage": 10_000,
    }


@pytest.mark.slow
def test_documented_facts_of_the_trace(google_lake):
    lake, _, _ = google_lake
    # PROVENANCE.md: job 6253771429 is the only job submitted twice (672,075 SUBMIT events); 12,583
    # machines, 12,477 machine events at time 0 (before the trace window); no time 2^63-1 here.
    twice = lake.query(
        "SELECT job_id FROM google.job_events WHERE event = 'SUBMIT' GROUP BY job_id HAVING count(*) > 1"
    )
    assert twice["job_id"].to_list() == [6253771429]
    machines = lake.query(
        "SELECT count(DISTINCT machine_id) AS machines, count(*) FILTER (before_trace) AS at_zero, "
        "count(*) FILTER (after_trace) AS after FROM google.machine_events"
    ).row(0, named=True)
    assert machines == {"machines": 12_583, "at_zero": 12_477, "after": 0}
    # The task_usage sample: all rows start at 600 s, the first window of the trace.
    windows = lake.query("SELECT min(start_s) AS lo, max(start_s) AS hi, count(*) AS n FROM google.task_usage")
    assert windows.row(0) == (600.0, 600.0, 10_000)
