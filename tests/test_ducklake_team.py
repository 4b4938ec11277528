"""A team's lake (`lakehouse init --catalog postgresql://... --data DIR|s3://...`), on real servers: a
PostgreSQL server started here from the machine's installation (tests/postgres_server.py) and, for the
data, a shared folder or an S3-compatible server (tests/s3_server.py, built by `make s3-server`; the
object-store cases run in `make faults`, which builds it).  Each member's lake folder holds only a lake
file naming the catalog and the data; two machines are two such folders."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from postgres_server import Server, postgres_server
from s3_server import s3_server

from lakehouse.base.ducklake import LAKE_FILE, Catalog, DuckLake, data_path
from lakehouse.base.ducklake_lake import DuckLakeWriter
from lakehouse.base.errors import LakehouseError
from lakehouse.base.extensions import database
from lakehouse.base.lake import Lake
from lakehouse.base.testing import small_log, write_swf
from lakehouse.data import sample_swf_paths

from conftest import SWF_DIR, cli, provenance_job_counts, shared_or_skip

#: Logs an ingest that is killed mid-way writes (one commit every 2 s: it is killed between two).
LOGS_KILLED = 40
#: The two smallest logs of the archive (by bytes), ingested by two machines at once.
TWO_LOGS = ("NASA-iPSC-1993-3.1-cln.swf.gz", "KTH-SP2-1996-2.1-cln.swf.gz")


@pytest.fixture(scope="module")
def catalog_server() -> Iterator[Server]:
    with postgres_server() as server:
        yield server


@dataclass(frozen=True)
class Team:
    """A new lake's catalog (a database of its own on the module's server) and data path, and the
    environment its members' commands run in (the password and keys as a user gives them)."""

    catalog: str
    data: str
    environment: dict[str, str]
    password: str
    #: The folder that holds the data path's files (the shared folder, or the one the S3 server serves).
    backing: Path

    def run(self, *args: object, check: bool = True) -> subprocess.CompletedProcess[str]:
        """`lakehouse ARGS` in a process of its own, as a member on another machine runs it."""
        line = [sys.executable, "-m", "lakehouse.cli", *(str(a) for a in args)]
        done = subprocess.run(line, env=self.environment, capture_output=True, text=True, timeout=300)
        if check:
            assert done.returncode == 0, done.stderr[-3000:]
        return done

    def start(self, *args: object) -> subprocess.Popen[str]:
        line = [sys.executable, "-m", "lakehouse.cli", *(str(a) for a in args)]
        return subprocess.Popen(line, env=self.environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture(params=["folder", pytest.param("s3", marks=pytest.mark.thorough)])
def team(
    request: pytest.FixtureRequest, catalog_server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Team]:
    database_name = f"lake_{secrets.token_hex(4)}"
    catalog_server.create_database(database_name)
    monkeypatch.setenv("PGPASSWORD", catalog_server.password)  # (this process reads the lake too)
    environment = {**os.environ, "PGPASSWORD": catalog_server.password}
    catalog = catalog_server.url(database_name)
    if request.param == "folder":
        yield Team(catalog, str(tmp_path / "shared"), environment, catalog_server.password, tmp_path / "shared")
        return
    with s3_server(tmp_path / "s3") as store:
        for name, value in store.environment().items():
            monkeypatch.setenv(name, value)
        data, backing = f"s3://{store.bucket}/team", tmp_path / "s3" / store.bucket / "team"
        yield Team(catalog, data, {**environment, **store.environment()}, store.secret, backing)


def _jobs(root: Path) -> dict[str, int]:
    return dict(Lake(root).rows("SELECT log, count(*) FROM swf.jobs GROUP BY log"))


def test_two_machines_ingest_at_once_and_both_commit(team: Team, tmp_path: Path) -> None:
    logs = [shared_or_skip(SWF_DIR / name) for name in TWO_LOGS]
    first, second, third = (tmp_path / name for name in ("ana", "bo", "cy"))
    cli("init", "--lake", first, "--catalog", team.catalog, "--data", team.data)
    cli("init", "--lake", second, "--catalog", team.catalog)  # joins: the catalog names the data
    both = [team.start("ingest", "swf", log, "--lake", root) for log, root in zip(logs, (first, second), strict=True)]
    outcomes = [process.communicate(timeout=300) for process in both]
    assert [process.returncode for process in both] == [0, 0], outcomes
    # A third member, who joined later, reads both logs: every job line the archive publishes for each.
    cli("init", "--lake", third, "--catalog", team.catalog)
    published = provenance_job_counts()
    assert _jobs(third) == {log.name.removesuffix(".swf.gz"): published[log.name] for log in logs}
    # The duckdb shell reads it too (the password and keys from its environment, not its command line).
    shell = team.run("shell", "--lake", third, "--", "-csv", "-c", "SELECT count(*) AS jobs FROM swf.jobs").stdout
    assert shell.split() == ["jobs", str(sum(published[log.name] for log in logs))]
    listed = cli("snapshots", "--lake", third, "--format", "csv").stdout
    for log in logs:
        assert sum(f"ingest swf {log}" in line for line in listed.splitlines()) == 1, listed
    # No credential is written anywhere a member or a log would show it.
    shown = [listed, (first / LAKE_FILE).read_text(), *(text for pair in outcomes for text in pair)]
    assert not [text for text in shown if team.password in text]
    assert DuckLake.found_in(second) == DuckLake.found_in(third)


def test_one_log_from_two_machines_at_once_is_kept_once(
    team: Team, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "shared-log.swf"
    write_swf(log, *small_log(7))
    first, second = tmp_path / "ana", tmp_path / "bo"
    cli("init", "--lake", first, "--catalog", team.catalog, "--data", team.data)
    cli("init", "--lake", second, "--catalog", team.catalog)
    # The second machine has read the lake and written the log's files when the first commits the same log:
    # both would keep its rows.  Its commit is refused and nothing of it kept.
    commit = DuckLakeWriter.commit

    def first_commits_meanwhile(writer: DuckLakeWriter) -> None:
        if writer._written:
            team.run("ingest", "swf", log, "--lake", first)
        commit(writer)

    monkeypatch.setattr(DuckLakeWriter, "commit", first_commits_meanwhile)
    refused = cli("ingest", "swf", log, "--lake", second, code=1)
    assert "another writer committed swf shared-log" in " ".join(refused.output.split())
    monkeypatch.setattr(DuckLakeWriter, "commit", commit)
    assert _jobs(first) == {"shared-log": 7}
    assert Lake(first).rows("SELECT count(*) FROM meta.manifest WHERE name = 'shared-log'") == [(1,)]
    again = cli("ingest", "swf", log, "--lake", second)  # the re-run finds it in the lake
    assert "1 unchanged" in again.output
    assert _jobs(second) == {"shared-log": 7}


@pytest.mark.thorough  # (make faults: 15-20 s; make test meets a killed writer's files in test_ducklake_lake)
def test_a_writer_killed_mid_ingest_leaves_the_catalog_whole_and_its_files_are_removed(
    team: Team, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for number in range(LOGS_KILLED):
        write_swf(logs / f"log{number:02}.swf", *small_log(200 + number))
    root = tmp_path / "ana"
    cli("init", "--lake", root, "--catalog", team.catalog, "--data", team.data)
    victim = team.start("ingest", "swf", logs, "--lake", root)
    deadline = time.monotonic() + 120
    while not _jobs(root) and victim.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)  # (killed once it has committed: between two of its commits)
    time.sleep(0.5)
    victim.send_signal(signal.SIGKILL)
    victim.communicate()
    held = _jobs(root)  # whole logs only, as the last commit left them
    assert all(jobs == 200 + int(log.removeprefix("log")) for log, jobs in held.items()), held
    table = team.backing / "stored" / "swf_jobs"
    with Lake(root).ducklake.connection(read_only=True) as con:  # type: ignore[union-attr]
        files = con.execute("SELECT data_file FROM ducklake_list_files('lake', 'swf_jobs', schema => 'stored')")
        named = {Path(row[0]).name for row in files.fetchall()}
    # Files the killed writer put in place and never committed: none are read, and the next writer removes
    # them once they are older than a writer could still be holding one (here, aged by hand: two hours).
    # One more, planted (the kill may have landed just after a commit); and one just written, as another
    # member's writer leaves it a moment before its commit: that one stays.
    some_file = table / sorted(named)[0]
    shutil.copy(some_file, table / "log99.0123456789ab.parquet")
    orphans = {path for path in table.iterdir() if path.name not in named}
    long_ago = time.time() - 7200
    for path in orphans:
        os.utime(path, (long_ago, long_ago))
    in_flight = table / "log98.0123456789ab.parquet"
    shutil.copy(some_file, in_flight)
    team.run("ingest", "swf", logs, "--lake", root)
    assert not [path for path in orphans if path.exists()]
    assert in_flight.exists()
    assert _jobs(root) == {f"log{number:02}": 200 + number for number in range(LOGS_KILLED)}


def test_a_catalog_that_cannot_serve_is_named_in_one_line_and_nothing_is_made(
    team: Team, catalog_server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ana"

    def refused(*args: object) -> str:
        said = " ".join(cli("init", "--lake", root, *args, code=1).output.split())
        assert "Traceback" not in said and not (root / LAKE_FILE).exists()
        return said

    nobody = catalog_server.url().replace(f":{catalog_server.port}/", ":9/")  # (port 9: discard, closed)
    assert "cannot open the catalog" in refused("--catalog", nobody, "--data", team.data)
    monkeypatch.setenv("PGPASSWORD", "not-the-password")
    assert "password authentication failed" in refused("--catalog", team.catalog, "--data", team.data)
    monkeypatch.setenv("PGPASSWORD", catalog_server.password)
    assert "must not carry a password" in refused("--catalog", "postgresql://ana:secret@db.example/traces")
    assert "give its --catalog too" in refused("--data", team.data)
    assert "holds no lake yet: give --data" in refused("--catalog", team.catalog)
    # A database of other tables, and DuckLake's catalog of another program: refused, left as they were.
    people, theirs = (f"{what}_{secrets.token_hex(4)}" for what in ("people", "theirs"))
    catalog_server.create_database(people)
    people_catalog = Catalog.parse(catalog_server.url(people))
    with database("postgres_scanner") as con:
        people_catalog.attach_database(con, "people", read_only=False)
        con.execute("CREATE TABLE people.staff (name VARCHAR)")
    assert "holds other tables" in refused("--catalog", catalog_server.url(people), "--data", team.data)
    with database("postgres_scanner") as con:
        people_catalog.attach_database(con, "people")
        tables = con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = 'people' AND schema_name = 'public'"
        ).fetchall()
    assert tables == [("staff",)]
    catalog_server.create_database(theirs)
    with DuckLake(Catalog.parse(catalog_server.url(theirs)), data_path(str(tmp_path / "theirs"))).connection() as con:
        con.execute("CREATE TABLE lake.orders (id INTEGER)")
    assert "not a lakehouse lake's" in refused("--catalog", catalog_server.url(theirs), "--data", team.data)
    # Joining a lake with another data path than the one its catalog keeps.
    cli("init", "--lake", tmp_path / "bo", "--catalog", team.catalog, "--data", team.data)
    assert "keeps its data at" in refused("--catalog", team.catalog, "--data", tmp_path / "elsewhere")
    # A folder that is a lake of its own already keeps it.
    cli("init", "--lake", tmp_path / "own")
    kept = " ".join(cli("init", "--lake", tmp_path / "own", "--catalog", team.catalog, code=1).output.split())
    assert "is a lake already" in kept and not (tmp_path / "own" / LAKE_FILE).exists()
    if team.data.startswith("s3://"):  # an object store that cannot be reached, or that refuses the keys
        cli("init", "--lake", root, "--catalog", team.catalog)
        log = write_swf(tmp_path / "log.swf", *small_log(3))
        for name, value in (
            ("AWS_SECRET_ACCESS_KEY", "not-the-key"),
            ("AWS_ENDPOINT_URL", nobody.replace("postgresql", "http")),
        ):
            with monkeypatch.context() as patched:
                patched.setenv(name, value)
                said = " ".join(cli("ingest", "swf", log, "--lake", root, code=1).output.split())
                assert f"cannot reach the lake's data at {team.data}" in said and "Traceback" not in said


def test_lakehouse_sql_writes_neither_the_catalog_nor_the_data(team: Team, tmp_path: Path) -> None:
    root = tmp_path / "ana"
    cli("init", "--lake", root, "--catalog", team.catalog, "--data", team.data)
    log = write_swf(tmp_path / "log.swf", *small_log(5))
    cli("ingest", "swf", log, "--lake", root)
    lake = Lake(root)
    kept = len(lake.ducklake.snapshots())  # type: ignore[union-attr]
    catalog = Catalog.parse(team.catalog)
    attempts = [
        f"COPY (SELECT 1 AS a) TO '{team.data}stored/swf_jobs/x.parquet'",
        "DELETE FROM stored.swf_jobs",
        "INSERT INTO stored.swf_jobs SELECT * FROM stored.swf_jobs",
        "DROP VIEW swf.jobs",
        "CALL ducklake_expire_snapshots('lake', older_than => now())",
        f"ATTACH '{catalog.uri()}' AS again (DATA_PATH '{team.data}')",
        f"ATTACH '{catalog.where}' AS catalog_itself (TYPE postgres)",
    ]
    for sql in attempts:
        with pytest.raises(LakehouseError):
            lake.user_sql(sql)
    assert _jobs(root) == {"log": 5}
    assert len(lake.ducklake.snapshots()) == kept  # type: ignore[union-attr]


def test_a_report_that_stores_a_file_of_its_own_plots_it_from_the_lake(team: Team, tmp_path: Path) -> None:
    # report predictions stores its per-job table as a file and plots from it; on an object store that file
    # is not on this machine once stored, and the plots read it from the lake.
    if not team.data.startswith("s3://"):
        pytest.skip("on a data folder the file stays on this machine (test_predict_lake)")
    root = tmp_path / "ana"
    cli("init", "--lake", root, "--catalog", team.catalog, "--data", team.data)
    cli("ingest", "swf", *sample_swf_paths(), "--lake", root)
    plots = tmp_path / "plots"
    cli("report", "predictions", "KTH-SP2-1996-2.1-cln", "--lake", root, "--plots", plots)
    assert list(plots.glob("*.png"))
    stored = Lake(root).rows("SELECT count(*) FROM analysis.predictions_jobs")
    assert stored[0][0] > 20_000
