"""`lakehouse sql` without --allow-writes writes no file, whatever the statement: a corpus of the ways
DuckDB writes (COPY and EXPORT at the top level, inside EXPLAIN ANALYZE or a prepared statement, behind
comments; ATTACH, INSTALL, logging, settings that name files) against the catalog itself, the lake's
data folders and a folder outside.  After each, nothing in the lake changed and it still answers."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from lakehouse.base.errors import LakehouseError, QueryError
from lakehouse.base.lake import Lake
from lakehouse.base.testing import swf_job, swf_text

from conftest import dataset_folder

CATALOG = "{catalog}"
DATA = "{data}/evil.parquet"
ANALYSIS = "{lake}/analysis/evil.parquet"
OUTSIDE = "{tmp}/outside.csv"

ATTEMPTS = [
    f"COPY (SELECT 1 AS a) TO '{CATALOG}' (FORMAT csv)",
    f"EXPLAIN ANALYZE COPY (SELECT 1 AS a) TO '{CATALOG}' (FORMAT csv)",
    f"explain   analyse copy (select 1 as a) to '{DATA}'",
    f"/* note */ EXPLAIN ANALYZE COPY (SELECT 1 AS a) TO '{ANALYSIS}' (FORMAT parquet, USE_TMP_FILE false)",
    f"-- a comment\nEXPLAIN (FORMAT json) COPY (SELECT 1 AS a) TO '{OUTSIDE}'",
    f"PREPARE p AS COPY (SELECT 1 AS a) TO '{DATA}'; EXECUTE p",
    f"SELECT 1 AS a; COPY (SELECT 1 AS a) TO '{OUTSIDE}'",
    "EXPORT DATABASE '{tmp}/dump'",
    "ATTACH '{tmp}/other.duckdb' AS other",
    "ATTACH '{lake}/analysis/other.duckdb' AS other",
    "INSTALL httpfs",
    "LOAD httpfs",
    "CALL enable_logging(storage='file', storage_path='{tmp}/logs')",
    "SELECT * FROM enable_logging(storage='file', storage_path='{tmp}/logs')",
    "SET log_query_path = '{tmp}/queries.log'",
    "PRAGMA profiling_output = '{tmp}/profile.json'",
    "SET enable_external_access = true",
    "SET allowed_directories = ['/']",
    "CHECKPOINT",
    "SELECT * FROM read_csv('{tmp}/secret.csv')",
    "CREATE TABLE t AS SELECT 1 AS a",
]


def fingerprint(folder: Path) -> dict[str, str]:
    """Every file of the folder, by its content; not the spill folder, nor the write-ahead log and its
    index that SQLite keeps beside a DuckLake catalog while a connection reads it."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".spill" not in p.parts and not p.name.endswith(("-wal", "-shm"))
    }


def _placed(attempt: str, lake: Lake, tmp: Path) -> str:
    """An attempt aimed at this lake: its catalog file, its folder of the jobs' files."""
    catalog = lake.root / ("lake.duckdb" if lake.ducklake is None else "catalog.sqlite")
    data = dataset_folder(lake.root, "swf_jobs")
    return attempt.format(
        lake=lake.root.as_posix(), tmp=tmp.as_posix(), catalog=catalog.as_posix(), data=data.as_posix()
    )


@pytest.fixture(scope="module")
def sealed(tmp_path_factory) -> tuple[Lake, Path]:
    from lakehouse.ingest.swf import ingest_swf

    tmp = tmp_path_factory.mktemp("sql")
    log = tmp / "mini.swf"
    log.write_text(swf_text([swf_job(i, 10 * i, 50, 2, 100) for i in range(1, 7)], {"MaxProcs": 8}))
    lake = Lake(tmp / "lake")
    ingest_swf(lake, [str(log)])
    (tmp / "secret.csv").write_text("a\n1\n")
    return lake, tmp


@pytest.mark.parametrize("attempt", ATTEMPTS)
def test_no_statement_writes_a_file(sealed, attempt):
    lake, tmp = sealed
    before_lake, before_tmp = fingerprint(lake.root), sorted(p.name for p in tmp.iterdir())
    sql = _placed(attempt, lake, tmp)
    with pytest.raises((LakehouseError, QueryError)):
        lake.user_sql(sql)
    assert fingerprint(lake.root) == before_lake
    assert sorted(p.name for p in tmp.iterdir()) == before_tmp
    assert lake.user_sql("SELECT count(*) AS n FROM swf.jobs")["n"].item() == 6  # still answers


def test_reading_still_works(sealed):
    lake, _ = sealed
    glob = (dataset_folder(lake.root, "swf_jobs") / "*.parquet").as_posix()
    assert lake.user_sql(f"SELECT count(*) AS n FROM read_parquet('{glob}')")["n"].item() == 6
    assert lake.user_sql("EXPLAIN ANALYZE SELECT count(*) FROM swf.jobs") is not None
    assert lake.user_sql("PREPARE q AS SELECT 41 + 1 AS a; EXECUTE q")["a"].item() == 42
    assert lake.user_sql("SET VARIABLE v = 3; SELECT getvariable('v') AS v")["v"].item() == 3
    assert lake.user_sql("SHOW TABLES") is not None


def test_a_pivot_runs_with_its_values_and_without_them_says_how(sealed):
    lake, _ = sealed
    pivoted = lake.user_sql("PIVOT (SELECT req_procs FROM swf.jobs) ON req_procs IN (2) USING count(*)")
    assert pivoted is not None and pivoted["2"].item() == 6
    with pytest.raises(LakehouseError, match=r"a PIVOT needs its values listed in lakehouse sql, .PIVOT t ON col IN"):
        lake.user_sql("PIVOT swf.jobs ON req_procs USING count(*)")  # (it said: refusing CREATE)


def test_allow_writes_is_the_one_way_out(sealed):
    lake, tmp = sealed
    target = tmp / "allowed.csv"
    lake.user_sql(f"COPY (SELECT count(*) AS n FROM swf.jobs) TO '{target.as_posix()}'", allow_writes=True)
    assert target.read_text() == "n\n6\n"


def test_sealing_leaves_the_process_other_connections_alone(sealed):
    """DuckDB shares one database instance among a process's connections to a file, settings included:
    a sealed query must not lock the catalog for the rest of the process (a report after it, a
    nightly run beside a Python reader)."""
    lake, tmp = sealed
    lake.user_sql("SELECT count(*) FROM swf.jobs")
    with lake.connect() as con:
        con.execute("SET memory_limit = '1GB'")
        assert con.execute(f"SELECT a FROM read_csv('{(tmp / 'secret.csv').as_posix()}')").fetchall() == [(1,)]
