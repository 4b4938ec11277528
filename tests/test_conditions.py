"""A user's filter is one condition and a user's pack query one SELECT: text that closes the filter and
adds statements, reads another table or a file through a subquery, or writes, is refused before
anything runs; text written into a file's header (a --where with line breaks) cannot forge job lines."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lakehouse.base.conditions import one_condition
from lakehouse.base.errors import LakehouseError
from lakehouse.base.job_views import log_jobs
from lakehouse.base.lake import Lake
from lakehouse.base.testing import small_log, write_swf
from lakehouse.ingest.swf import ingest_swf

from conftest import left_unchanged

INJECTIONS = [
    "1=1) ; COPY (SELECT 1) TO '{tmp}/x.csv'; SELECT (1",
    "1=1); COPY (SELECT 1) TO '{tmp}/x.csv' --",
    "procs > 0) UNION ALL SELECT * FROM swf.jobs WHERE (1=1",
    "(SELECT count(*) FROM read_csv('{tmp}/secret.csv')) > 0",
    "job_id IN (SELECT job_id FROM swf.jobs)",
    "EXISTS (SELECT 1)",
    "SELECT 1",
    "procs >",
]


@pytest.fixture(scope="module")
def mini_lake(tmp_path_factory: pytest.TempPathFactory) -> Lake:
    """A lake of one six-job log, made once for the module (each test made its own: 1.3 s each)."""
    folder = tmp_path_factory.mktemp("mini")
    jobs, header = small_log(6)
    write_swf(folder / "mini.swf", jobs, header)
    lake = Lake(folder / "lake")
    ingest_swf(lake, [str(folder / "mini.swf")])
    return lake


@pytest.fixture
def mini(mini_lake: Lake, tmp_path: Path) -> Iterator[Lake]:
    """The module's lake, its ingested data checked unchanged by the test; a file to steal in the test's
    own folder, where the injections also aim their writes."""
    (tmp_path / "secret.csv").write_text("a\n1\n")
    with left_unchanged(mini_lake.root):
        yield mini_lake


@pytest.mark.parametrize("where", INJECTIONS)
def test_a_filter_is_one_condition(mini, tmp_path, where):
    with pytest.raises(LakehouseError, match="--where"):
        log_jobs(mini, "mini", where=where.format(tmp=tmp_path.as_posix()))
    assert not (tmp_path / "x.csv").exists()


def test_conditions_users_write_still_work(mini):
    assert one_condition("submit_offset < 30*86400") == "submit_offset < 30 * 86400"
    assert log_jobs(mini, "mini", where="procs > 1 AND user_id IN (1, 2)").height == 5
    assert log_jobs(mini, "mini", where="submit_offset < 20").height == 2
    assert log_jobs(mini, "mini", where="req_time::BIGINT >= 200 AND run_time BETWEEN 100 AND 102").height == 3


@pytest.mark.parametrize(
    "query",
    [
        "SELECT 1 AS job; COPY (SELECT 1) TO '{tmp}/x.csv'",
        "COPY (SELECT 1) TO '{tmp}/x.csv'",
        "EXPLAIN ANALYZE COPY (SELECT 1) TO '{tmp}/x.csv'",
        "SELECT * FROM enable_logging(storage='file', storage_path='{tmp}/logs')",
    ],
)
def test_a_pack_query_is_one_select_that_only_reads(mini, tmp_path, query):
    from lakehouse.models.packing.model import pack_lake

    with pytest.raises(LakehouseError):
        pack_lake(mini, query.format(tmp=tmp_path.as_posix()), capacity=10)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["secret.csv"]


def test_a_where_with_line_breaks_cannot_forge_job_lines(mini, tmp_path):
    from lakehouse.sim import simulate
    from lakehouse.sim.schedule_io import write_schedule

    where = "log <> 'x\n1 0 0 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1\n'"  # one condition, line breaks inside
    result = simulate(log_jobs(mini, "mini", where=where), 8)
    out = tmp_path / "schedule.swf"
    write_schedule(result, out, log="mini", view="jobs_clean", where=where)
    data_lines = [line for line in out.read_text().splitlines() if not line.startswith(";")]
    assert len(data_lines) == 6  # the six jobs, and no line the filter's text made
    again = Lake(tmp_path / "again")
    (result_again,) = ingest_swf(again, [str(out)])
    assert result_again.jobs == 6
