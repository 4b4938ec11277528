"""The DuckLake catalog a shared lake will keep its tables in (lakehouse.base.ducklake), on real
servers: a SQLite file, a PostgreSQL server started here (tests/postgres_server.py) and, for the data,
an S3-compatible server (tests/s3_server.py, built by `make s3-server`).  Two writer
processes commit at once and every commit lands, a reader sees whole commits only, a snapshot is read
as it was, and the extensions come from the installed wheels."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from postgres_server import Server, postgres_server
from s3_server import s3_server

from lakehouse.base import extensions
from lakehouse.base.ducklake import Catalog, DuckLake
from lakehouse.base.errors import CatalogError, SettingsError

WRITER = Path(__file__).with_name("ducklake_writer.py")
COMMITS = 4  # per writer


def test_every_extension_loads_from_its_wheel_and_nothing_is_downloaded() -> None:
    con = duckdb.connect()
    extensions.load(con, *extensions.EXTENSIONS)
    loaded = dict(con.execute("SELECT extension_name, loaded FROM duckdb_extensions()").fetchall())
    assert all(loaded[name] for name in extensions.EXTENSIONS)
    settings = dict(
        con.execute(
            "SELECT name, value FROM duckdb_settings() WHERE name IN "
            "('autoinstall_known_extensions', 'autoload_known_extensions')"
        ).fetchall()
    )
    assert settings == {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}
    assert f"v{duckdb.__version__}" in str(extensions.extension_file("ducklake"))


def test_a_missing_extension_says_which_wheel_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extensions.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(
        extensions.ExtensionError, match=f"pip install 'duckdb-extension-ducklake=={duckdb.__version__}'"
    ):
        extensions.extension_file("ducklake")


def test_catalog_names() -> None:
    pg = Catalog.parse("postgresql://ana@db.example:6543/traces")
    assert (pg.kind, pg.where) == ("postgresql", "dbname=traces host=db.example port=6543 user=ana")
    assert str(pg) == "postgresql://ana@db.example:6543/traces"
    assert Catalog.parse("sqlite:lake/catalog.sqlite").kind == Catalog.parse("x/catalog.sqlite").kind == "sqlite"
    with pytest.raises(SettingsError, match="must not carry a password"):
        Catalog.parse("postgresql://ana:hunter2@db.example/traces")
    with pytest.raises(SettingsError, match="cannot be read while it is written"):
        Catalog.parse("lake/catalog.duckdb")


def _create(lake: DuckLake) -> None:
    lake.write("create t", lambda con: con.execute("CREATE TABLE lake.t (tag VARCHAR, i INTEGER, x BIGINT)"))


def _writers_and_a_reader(lake: DuckLake, catalog: str, env: dict[str, str], create: bool = True) -> None:
    """Two writer processes and a reader at once: every commit lands, no read sees half of one."""
    if create:
        _create(lake)
    run = [sys.executable, str(WRITER)]
    procs = [subprocess.Popen([*run, "write", catalog, lake.data, tag, str(COMMITS)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for tag in ("A", "B")]  # fmt: skip
    reader = subprocess.run(
        [*run, "read", catalog, lake.data, "10"], env=env, capture_output=True, text=True, timeout=300
    )
    outputs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    assert reader.returncode == 0 and reader.stdout.strip() == "partial reads 0", reader.stderr
    with lake.connection(read_only=True) as con:
        counts = dict(con.execute("SELECT tag, count(DISTINCT i) FROM lake.t GROUP BY tag").fetchall())
    assert counts == {"A": COMMITS, "B": COMMITS}
    messages = [message for _, _, _, message in lake.snapshots()]
    assert sorted(m for m in messages if m and m[0] in "AB") == sorted(f"{t} {i}" for t in "AB" for i in range(COMMITS))


def test_two_writers_on_a_sqlite_catalog_both_commit(tmp_path: Path) -> None:
    catalog = f"sqlite:{tmp_path / 'catalog.sqlite'}"
    _writers_and_a_reader(DuckLake(Catalog.parse(catalog), str(tmp_path / "data")), catalog, dict(os.environ))


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with postgres_server() as running:
        yield running


def test_two_writers_on_a_postgresql_catalog_both_commit(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGPASSWORD", server.password)
    lake = DuckLake(Catalog.parse(server.url()), str(tmp_path / "data"))
    _writers_and_a_reader(lake, server.url(), dict(os.environ))


def test_a_snapshot_reads_as_it_was_and_a_missing_one_names_the_oldest(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGPASSWORD", server.password)
    server.create_database("asof")  # a catalog of its own, so the snapshots are this test's
    url = server.url("asof")
    lake = DuckLake(Catalog.parse(url), str(tmp_path / "data"))
    _create(lake)
    lake.write("first", lambda con: con.execute("INSERT INTO lake.t VALUES ('a', 1, 1)"))
    first = lake.snapshots()[-1][0]
    lake.write("second", lambda con: con.execute("INSERT INTO lake.t VALUES ('a', 2, 2), ('a', 3, 3)"))
    with lake.connection(read_only=True, snapshot=first) as con:
        assert con.execute("SELECT count(*) FROM lake.t").fetchone() == (1,)
    with lake.connection(read_only=True) as con:
        assert con.execute("SELECT count(*) FROM lake.t").fetchone() == (3,)
    with pytest.raises(CatalogError, match=f"no snapshot 999 in the lake's catalog {url}: the oldest kept is 0"):
        lake.connect(read_only=True, snapshot=999)


def test_an_unreachable_catalog_is_one_line_naming_it_without_the_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGPASSWORD", "not-to-be-seen")
    monkeypatch.setenv("PGCONNECT_TIMEOUT", "3")
    url = "postgresql://ana@127.0.0.1:1/traces"  # a port nothing listens on
    with pytest.raises(CatalogError) as caught:
        DuckLake(Catalog.parse(url), str(tmp_path / "data")).connect()
    message = str(caught.value)
    assert message.startswith(f"cannot open the lake's catalog {url}") and "\n" not in message
    assert "not-to-be-seen" not in message


@pytest.mark.faults
@pytest.mark.thorough  # the two-writer check again, the data on object storage: make faults, which builds the server
def test_two_writers_on_postgresql_and_an_object_store_both_commit(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The team's set-up: the catalog on PostgreSQL, the Parquet files in a bucket; credentials from the
    environment only.  (make faults, which builds the server.)"""
    with s3_server(tmp_path / "objects") as store:
        monkeypatch.setenv("PGPASSWORD", server.password)
        for name, value in store.environment().items():
            monkeypatch.setenv(name, value)
        server.create_database("shared")
        data = f"s3://{store.bucket}/traces/"
        lake = DuckLake(Catalog.parse(server.url("shared")), data)
        _create(lake)
        # more rows than DuckLake keeps in the catalog itself (10): the writes are Parquet files in the bucket
        _writers_and_a_reader(lake, server.url("shared"), dict(os.environ), create=False)
        files = list((tmp_path / "objects" / store.bucket / "traces").rglob("*.parquet"))
        assert len(files) >= 2 * COMMITS
        with lake.connection(read_only=True) as con:
            listed = con.execute("SELECT count(*) FROM glob($p)", {"p": f"{data}**/*.parquet"}).fetchone()
        assert listed == (len(files),)


def test_an_object_store_without_keys_says_which_to_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(CatalogError, match="set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"):
        DuckLake(Catalog.parse(f"sqlite:{tmp_path / 'c.sqlite'}"), "s3://bucket/lake/").connect()
