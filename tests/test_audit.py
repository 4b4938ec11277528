"""`lakehouse audit`: the queries of sql/audits/ return no rows on a sound lake, and an audit that
finds something fails the command with the offending rows."""

from __future__ import annotations

from importlib import resources

import polars as pl
import pytest
from typer.testing import CliRunner

from lakehouse.base.audit import Audit, audit_files, run_audits
from lakehouse.base.lake import Lake
from lakehouse.cli import app
from lakehouse.data import sample_google_trace, sample_swf_paths
from lakehouse.ingest.google import ingest_google
from lakehouse.ingest.swf import ingest_swf


@pytest.fixture(scope="module")
def sound_lake(tmp_path_factory: pytest.TempPathFactory) -> Lake:
    """The embedded samples: the real KTH-SP2 log and the Google trace's first parts."""
    lake = Lake(tmp_path_factory.mktemp("audit") / "lake")
    ingest_swf(lake, [str(p) for p in sample_swf_paths()])
    ingest_google(lake, sample_google_trace())
    return lake


def test_every_file_of_sql_audits_is_an_audit():
    shipped = sorted(p.name for p in resources.files("lakehouse.sql").joinpath("audits").iterdir())
    assert [a.file_name for a in audit_files()] == shipped and len(shipped) >= 5


def test_every_audit_passes_on_the_real_samples(sound_lake):
    for result in run_audits(sound_lake):
        assert result.passed, (result.audit.name, result.offenders)
    # The samples are not empty where the audits look (an audit over nothing would pass vacuously).
    assert sound_lake.query("SELECT count(*) AS n FROM swf.jobs_clean")["n"][0] > 28_000
    assert sound_lake.query("SELECT count(*) AS n FROM google.job_sampling")["n"][0] > 0


def test_the_command_passes_and_lists_every_audit(sound_lake):
    result = CliRunner().invoke(app, ["audit", "--lake", str(sound_lake.root), "--format", "csv"])
    assert result.exit_code == 0, result.output
    table = pl.read_csv(result.stdout.encode())
    assert table["audit"].to_list() == [a.name for a in audit_files()] and set(table["status"]) == {"ok"}


def test_a_manifest_out_of_step_with_the_lake_fails_the_audit(tmp_path):
    lake = Lake(tmp_path / "lake")
    ingest_swf(lake, [str(p) for p in sample_swf_paths()])
    with lake.writer() as writer:  # as if a log's new content were recorded but never swapped in
        writer.con.execute("UPDATE meta.manifest SET content_hash = 'feed' WHERE dataset = 'swf'")
    result = CliRunner().invoke(app, ["audit", "--lake", str(lake.root)])
    assert result.exit_code == 1
    assert "swf.manifest_matches_logs: offending rows" in result.stderr and "feed" in result.stderr
    assert f"1 of {len(audit_files())} audits failed" in result.stderr  # (every audit ran)


def test_an_audit_returning_rows_fails(sound_lake):
    finds = Audit("x.sql", "always", "finds one row", "SELECT 1 AS offender")
    assert [r.passed for r in run_audits(sound_lake, [finds])] == [False]
