"""The 19 shared PWA logs: exact job counts, no quarantine, and the published strong-filter counts."""

from __future__ import annotations

import subprocess
import sys

import duckdb
import pytest

from lakehouse.base.lake import Lake

from conftest import provenance_job_counts


def test_every_shared_log_ingests_with_its_published_job_count(pwa_lake):
    lake, results = pwa_lake
    expected = provenance_job_counts()
    assert len(expected) == 19
    got = {r.source.split("/")[-1]: r for r in results}
    assert set(got) == set(expected)
    for file_name, count in expected.items():
        r = got[file_name]
        assert r.status == "ok", r.error
        assert (r.job_lines, r.jobs, r.quarantined) == (count, count, 0), file_name
    in_views = dict(lake.query("SELECT log, count(*) FROM swf.jobs GROUP BY log").iter_rows())
    assert sum(in_views.values()) == sum(expected.values())
    assert lake.query("SELECT count(*) AS n FROM swf.quarantine")["n"][0] == 0


def test_strong_filter_keeps_the_published_counts(pwa_lake):
    lake, _ = pwa_lake
    kept = dict(lake.query("SELECT log, count(*) FROM swf.jobs_strong GROUP BY log").iter_rows())
    # Figures of the SC'15 reference README (predictsim-sc15/README.md).
    assert kept["CTC-SP2-1996-3.1-cln"] == 77_199
    assert kept["CEA-Curie-2011-2.1-cln"] == 295_540


def test_clean_report_counts_add_up(pwa_lake):
    lake, _ = pwa_lake
    check = lake.query(
        """
        WITH drops AS (
            SELECT log, filter, any_value(jobs_in) AS jobs_in,
                   sum(jobs) FILTER (action = 'drop') AS dropped
            FROM swf.clean_report GROUP BY ALL),
        kept AS (
            SELECT log, 'clean' AS filter, count(*) AS kept FROM swf.jobs_clean GROUP BY ALL
            UNION ALL SELECT log, 'strong', count(*) FROM swf.jobs_strong GROUP BY ALL)
        SELECT d.log, d.filter, d.jobs_in, d.dropped, coalesce(k.kept, 0) AS kept
        FROM drops d LEFT JOIN kept k USING (log, filter)
        """
    )
    assert check.height == 38
    for log, filt, jobs_in, dropped, kept in check.iter_rows():
        assert jobs_in - dropped == kept, (log, filt)
    # CTC-SP2: 17 zero-runtime and 6 unknown-request jobs are the 23 the reference drops.
    ctc = lake.query("SELECT rule, jobs FROM swf.clean_report WHERE log = 'CTC-SP2-1996-3.1-cln' AND filter = 'strong'")
    rules = dict(ctc.iter_rows())
    assert rules["run_time_not_positive"] + rules["req_time_not_positive"] == 23


def test_headerless_logs_have_no_machine_size(pwa_lake):
    lake, _ = pwa_lake
    sizes = dict(lake.query("SELECT log, machine_size FROM swf.logs").iter_rows())
    assert sizes["METACENTRUM-2009-2-noheader"] is None
    assert sizes["RICC-2010-2-noheader"] is None
    assert sizes["CTC-SP2-1996-3.1-cln"] == 338  # "338" parsed from the leading integer of MaxProcs
    assert sizes["SDSC-DS-2004-2.1-cln"] == 1664  # "1664 (72, 1368, 224)"


def test_header_keys_and_text_values(pwa_lake):
    lake, _ = pwa_lake
    row = lake.query(
        "SELECT header['MaxNodes'] AS nodes, header_numeric['MaxNodes'] AS n, max_nodes, time_zone_string "
        "FROM swf.logs WHERE log = 'CTC-SP2-1996-3.1-cln'"
    ).row(0)
    assert row[0].startswith("338 (batch partition")
    assert row[1] == 338 and row[2] == 338
    assert row[3] == "US/Eastern"  # as written in the header


def test_submit_timestamps_use_unix_start_time_and_time_zone(pwa_lake):
    lake, _ = pwa_lake
    # KTH: UnixStartTime 843480031 is "Mon Sep 23 14:00:31 CEST 1996" (the header's StartTime).
    row = lake.query(
        "SELECT epoch(submit_at)::BIGINT - submit_time AS origin, "
        "strftime(timezone('Europe/Stockholm', to_timestamp(843480031)), '%Y-%m-%d %H:%M:%S') AS local0 "
        "FROM swf.jobs WHERE log = 'KTH-SP2-1996-2.1-cln' LIMIT 1"
    ).row(0)
    assert row == (843480031, "1996-09-23 14:00:31")


def test_fractional_field_6_is_kept(pwa_lake):
    lake, _ = pwa_lake
    frac = lake.query(
        "SELECT count(*) AS n FROM swf.jobs WHERE log = 'HPC2N-2002-2.2-cln' AND avg_cpu_time <> round(avg_cpu_time)"
    )["n"][0]
    assert frac > 0


def test_any_duckdb_client_reads_the_lake_from_another_directory(pwa_lake, tmp_path):
    """A DuckLake lake is read by any DuckDB that loads the DuckLake extension: its catalog attached under
    any name, from any folder, while another reader reads."""
    lake, _ = pwa_lake
    code = (
        "import duckdb, sys; from lakehouse.base.extensions import opening_statements; "
        "con = duckdb.connect(config={'allow_unsigned_extensions': 'true'}); "
        "[con.execute(s) for s in opening_statements('ducklake', 'sqlite_scanner')]; "
        "con.execute(f\"ATTACH 'ducklake:sqlite:{sys.argv[1]}' AS traces (READ_ONLY)\"); "
        "print(con.execute('SELECT count(*) FROM traces.swf.jobs_clean').fetchone()[0])"
    )
    catalog = str(lake.root / "catalog.sqlite")
    out = subprocess.run(
        [sys.executable, "-c", code, catalog], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert int(out.stdout) == lake.query("SELECT count(*) AS n FROM swf.jobs_clean")["n"][0]


def test_the_duckdb_shell_opens_the_lake_read_only(pwa_lake, tmp_path):
    """`lakehouse shell` opens the duckdb command line on the lake (words after -- go to it)."""
    lake, _ = pwa_lake
    query = "SELECT count(*) FROM swf.jobs_strong WHERE log = 'CTC-SP2-1996-3.1-cln'"
    command = [sys.executable, "-m", "lakehouse.cli", "shell", "--lake", str(lake.root), "--", "-csv", "-noheader"]
    out = subprocess.run(
        [*command, "-c", query], cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "77199"
    writing = subprocess.run(
        [*command, "-c", "DELETE FROM stored.swf_jobs"], stdin=subprocess.DEVNULL, capture_output=True, text=True
    )
    assert "read-only" in writing.stdout + writing.stderr or "read only" in writing.stdout + writing.stderr
    assert lake.query("SELECT count(*) AS n FROM swf.jobs_strong WHERE log = 'CTC-SP2-1996-3.1-cln'")["n"][0] == 77199


@pytest.mark.today_format
def test_a_lake_of_todays_format_opens_in_duckdb_read_only_from_another_directory(cli_lake, tmp_path, duckdb_shell):
    """A lake of the DuckDB catalog's format is its catalog file: the duckdb shell and any DuckDB client
    open it read-only, from any folder, two at once."""
    catalog = str(cli_lake / "lake.duckdb")
    code = (
        "import duckdb, sys; con = duckdb.connect(sys.argv[1], read_only=True); "
        "print(con.execute('SELECT count(*) FROM swf.jobs_clean').fetchone()[0])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, catalog], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    with duckdb.connect(catalog, read_only=True) as a, Lake(cli_lake).connect() as b:
        assert (
            a.execute("SELECT count(*) FROM swf.logs").fetchone()
            == b.execute("SELECT count(*) FROM swf.logs").fetchone()
        )
    shell = [duckdb_shell, "-readonly", "-csv", "-noheader", catalog, "-c", "SELECT count(*) FROM swf.jobs_strong"]
    assert (
        int(out.stdout) == 6
        and subprocess.run(shell, cwd=tmp_path, capture_output=True, text=True, check=True).stdout.strip() == "6"
    )
