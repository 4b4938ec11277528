"""A DuckLake catalog: where a shared lake keeps its tables' metadata and snapshots.

DuckLake keeps a lake's metadata (tables, their Parquet data files, every snapshot) in an SQL database,
the catalog, and the data as plain Parquet files under a data path.  Two catalogs are offered, measured
on this project's machine (two writer processes committing 30 times each while a third reads):

- **SQLite, a file beside the lake** (the default for one machine): readers attach while a writer
  writes and see whole commits only (40 reads, none partial).  Two writers collide: 12 and 10 of their
  30 commits failed with SQLite's "database is locked", which DuckLake does not retry.  So writers take
  turns here (`writing` holds an exclusive lock on a file beside the catalog while it commits), and a
  commit that still meets the lock is tried again.
- **PostgreSQL** (for several machines): writers commit at once; DuckLake itself retries a commit that
  conflicts with another (`ducklake_max_retry_count`).

A DuckDB file as catalog was measured too and is refused: a second process cannot open the file while
one holds it, so readers failed while a writer wrote (24 of 40 reads).

The data path is a folder (local or shared) or an S3-compatible bucket, `s3://BUCKET/PREFIX/`.

A lake of one folder keeps its catalog and data inside (`DuckLake.of_folder`).  A team's lake keeps them
elsewhere, and each machine's lake folder holds a lake file, `lake.toml`, that names them
(`DuckLake.of_lake_file`; `lakehouse init --catalog ... --data ...` writes it).  On a PostgreSQL catalog,
writers on several machines work at once and take turns only to commit (`turn`: an advisory lock of the
catalog's database, which PostgreSQL releases if the holder dies).

Credentials never appear in a catalog's name, a command line or a log: a PostgreSQL password comes
from the environment (PGPASSWORD, or libpq's password file), and a URL that carries one is refused; an
object store's keys come from the environment's usual names (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
AWS_REGION, and AWS_ENDPOINT_URL for a server other than Amazon's), given to DuckDB as a temporary
secret of the connection.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json  # (a JSON string is a TOML basic string: the lake file's values)
import os
import random
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar
from urllib.parse import unquote, urlsplit

import duckdb

from lakehouse.base.errors import CatalogError, SettingsError
from lakehouse.base.extensions import database
from lakehouse.base.tables import STORED_SCHEMA
from lakehouse.base.tomlfile import read_toml

#: The alias a lake's DuckLake catalog is attached under on every connection.
ALIAS = "lake"
#: A lake folder's DuckLake: its catalog and its data folder (`DuckLake.of_folder`).
FOLDER_CATALOG = "catalog.sqlite"
FOLDER_DATA = "data"
#: A lake folder whose catalog and data are elsewhere (a team's): the file that names them.
LAKE_FILE = "lake.toml"
#: A file of the data path that no snapshot names is removed by the next writer; on a catalog writers
#: share, only once it is this old (another writer may be about to commit it).  The lake file may say
#: otherwise (`orphan_age_s`).
ORPHAN_AGE_S = 3600.0
#: The advisory lock of a PostgreSQL catalog's database that its writers take in turn to commit.
COMMIT_TURN_LOCK = zlib.crc32(b"lakehouse commit turn")
#: How long a SQLite writer waits for its turn, and how often a commit that met the lock is tried again.
TURN_TIMEOUT_S = 600.0
LOCKED_RETRIES = 20

T = TypeVar("T")


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@dataclass(frozen=True)
class Catalog:
    """A DuckLake catalog: a SQLite file (`kind` sqlite, `where` its path) or a PostgreSQL database
    (`kind` postgresql, `where` libpq's key=value words, without a password)."""

    kind: str
    where: str

    @classmethod
    def parse(cls, text: str) -> Catalog:
        """`postgresql://USER@HOST:PORT/DATABASE` (the password from PGPASSWORD), `sqlite:PATH`, or a path
        ending in .sqlite."""
        if text.startswith(("postgresql://", "postgres://")):
            url = urlsplit(text)
            if url.password is not None:
                raise SettingsError(
                    "a catalog URL must not carry a password (it would show in the process list and the "
                    "shell's history): give it in PGPASSWORD or libpq's password file"
                )
            database = unquote(url.path.lstrip("/"))
            if not url.hostname or not database:
                raise SettingsError(f"a PostgreSQL catalog is postgresql://USER@HOST:PORT/DATABASE, not {text!r}")
            words = {"dbname": database, "host": url.hostname, "port": str(url.port or 5432)}
            if url.username:
                words["user"] = unquote(url.username)
            return cls("postgresql", " ".join(f"{k}={v}" for k, v in words.items()))
        if text.startswith("sqlite:"):
            return cls("sqlite", str(Path(text.removeprefix("sqlite:")).absolute()))
        if text.endswith(".sqlite"):
            return cls("sqlite", str(Path(text).absolute()))
        raise SettingsError(
            f"cannot read {text!r} as a catalog: give postgresql://USER@HOST:PORT/DATABASE or a SQLite file "
            "(sqlite:PATH, or a path ending in .sqlite); a DuckDB file cannot be read while it is written"
        )

    def __str__(self) -> str:
        if self.kind == "sqlite":
            return f"sqlite:{self.where}"
        words = dict(word.split("=", 1) for word in self.where.split())
        user = f"{words['user']}@" if "user" in words else ""
        return f"postgresql://{user}{words['host']}:{words['port']}/{words['dbname']}"

    def uri(self) -> str:
        return f"ducklake:{'sqlite' if self.kind == 'sqlite' else 'postgres'}:{self.where}"

    @property
    def extension(self) -> str:
        return "sqlite_scanner" if self.kind == "sqlite" else "postgres_scanner"

    def attach_database(self, con: duckdb.DuckDBPyConnection, alias: str, read_only: bool = True) -> None:
        """Attach the catalog's database itself (not as DuckLake), as `alias`: its tables as they are."""
        kind = "sqlite" if self.kind == "sqlite" else "postgres"
        mode = ", READ_ONLY" if read_only else ""
        try:
            con.execute(f"ATTACH {_quoted(self.where)} AS {alias} (TYPE {kind}{mode})")
        except duckdb.Error as exc:
            raise CatalogError(f"cannot open the catalog {self}: {' '.join(str(exc).split())[:300]}") from None


def lake_data_path(catalog: Catalog) -> str | None:
    """The data path of the lakehouse lake `catalog` holds; None if its database is empty or absent.
    Anything else there is refused before it is touched: DuckLake's catalog of another program, or a
    database with other tables."""
    if catalog.kind == "sqlite" and not Path(catalog.where).exists():
        return None
    with database(catalog.extension) as con:
        catalog.attach_database(con, "probe")
        tables = {row[0] for row in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = 'probe' "
            "AND schema_name NOT IN ('information_schema', 'pg_catalog')"
        ).fetchall()}  # fmt: skip
        if not tables:
            return None
        if "ducklake_metadata" not in tables:
            raise CatalogError(f"{catalog} holds other tables than a DuckLake catalog's: left as it is")
        ours = con.execute(
            "SELECT count(*) FROM probe.ducklake_table t JOIN probe.ducklake_schema s USING (schema_id) "
            "WHERE s.schema_name = 'meta' AND t.table_name = 'catalog_version' AND t.end_snapshot IS NULL"
        ).fetchone()
        if not ours or not ours[0]:
            raise CatalogError(f"{catalog} is a DuckLake catalog, not a lakehouse lake's: left as it is")
        kept = con.execute("SELECT value FROM probe.ducklake_metadata WHERE key = 'data_path'").fetchone()
    return None if kept is None else data_path(str(kept[0]))


def data_path(text: str) -> str:
    """A data path as DuckLake takes it: `s3://BUCKET/PREFIX/`, or an absolute folder; ending in /."""
    if text.startswith("s3://"):
        if not urlsplit(text).netloc:
            raise SettingsError(f"an object store's data path is s3://BUCKET/PREFIX, not {text!r}")
        return text.rstrip("/") + "/"
    if "://" in text:
        raise SettingsError(f"the data path {text!r}: give a folder or s3://BUCKET/PREFIX")
    return Path(text).expanduser().absolute().as_posix().rstrip("/") + "/"


@dataclass(frozen=True)
class DuckLake:
    """A lake's DuckLake: its catalog and the data path its Parquet files go under.  `in_folder`: a
    lake of one folder (its catalog and data inside), whose data path is wherever the folder now is."""

    catalog: Catalog
    data: str
    in_folder: bool = False
    orphan_age_s: float = ORPHAN_AGE_S

    @classmethod
    def of_lake_file(cls, path: Path) -> DuckLake:
        """The DuckLake a lake file names (`catalog`, `data`; see `write_lake_file`)."""
        settings = read_toml(path, SettingsError)
        unknown = sorted(set(settings) - {"catalog", "data", "orphan_age_s"})
        if unknown or not isinstance(settings.get("catalog"), str) or not isinstance(settings.get("data"), str):
            raise SettingsError(
                f"{path}: a lake file names `catalog` and `data` (strings)"
                + (f"; it has {', '.join(unknown)} too" if unknown else "")
            )
        age = settings.get("orphan_age_s", ORPHAN_AGE_S)
        if not isinstance(age, int | float) or age < 0:
            raise SettingsError(f"{path}: orphan_age_s is a number of seconds, not {age!r}")
        return cls(Catalog.parse(settings["catalog"]), data_path(settings["data"]), orphan_age_s=float(age))

    @classmethod
    def found_in(cls, root: Path) -> DuckLake | None:
        """The DuckLake of a lake folder: the one its lake file names, else its own; None if neither."""
        if (root / LAKE_FILE).exists():
            return cls.of_lake_file(root / LAKE_FILE)
        if (root / FOLDER_CATALOG).exists():
            return cls.of_folder(root)
        return None

    def write_lake_file(self, root: Path) -> None:
        """The lake file of a lake folder that reads and writes this DuckLake (written whole, then renamed)."""
        text = (
            "# A lakehouse lake whose catalog and data are shared (`lakehouse init --catalog ... --data ...`).\n"
            "# No credentials here: PGPASSWORD or ~/.pgpass for the catalog, AWS_ACCESS_KEY_ID and\n"
            "# AWS_SECRET_ACCESS_KEY (and AWS_ENDPOINT_URL) for an object store.\n"
            f"catalog = {json.dumps(str(self.catalog))}\n"
            f"data = {json.dumps(self.data)}\n"
        )
        if self.orphan_age_s != ORPHAN_AGE_S:
            text += f"orphan_age_s = {self.orphan_age_s:g}\n"
        tmp = root / f".{LAKE_FILE}.tmp"
        tmp.write_text(text)
        os.replace(tmp, root / LAKE_FILE)

    @property
    def concurrent_writers(self) -> bool:
        """Whether writers of other lake folders (other machines) may commit to this catalog: a team's,
        which each member's lake file names; a lake of one folder has one writer at a time (its lock)."""
        return not self.in_folder

    def table_path(self, key: str) -> str:
        """Where DuckLake keeps the files of the table `stored.KEY`: a folder of the data path, named after
        the schema and the table."""
        return f"{self.data}{STORED_SCHEMA}/{key}/"

    def create_catalog_file(self) -> None:
        """Make a new SQLite catalog's file in WAL mode (kept by the file).  SQLite's default journal lets
        a reader holding the catalog make a writer's commit fail ("database is locked": an ingest failed so
        here while a report of the same process read the lake); in WAL mode readers and the one writer do
        not block each other.  (WAL needs the file on a local disk: a shared folder takes PostgreSQL.)"""
        if self.catalog.kind != "sqlite" or Path(self.catalog.where).exists():
            return
        import sqlite3

        Path(self.catalog.where).parent.mkdir(parents=True, exist_ok=True)
        with contextlib.closing(sqlite3.connect(self.catalog.where)) as con:
            con.execute("PRAGMA journal_mode=WAL")

    @classmethod
    def of_folder(cls, root: Path) -> DuckLake:
        """The DuckLake of a lake folder: FOLDER/catalog.sqlite and FOLDER/data/.  DuckLake names each
        data file relative to the data path, and the path it was made with is given again at each attach
        (OVERRIDE_DATA_PATH): so the folder can be moved or copied and read where it lands, with no
        rebuild."""
        return cls(Catalog("sqlite", str(root / FOLDER_CATALOG)), (root / FOLDER_DATA).as_posix() + "/", True)

    @property
    def catalog_file(self) -> str | None:
        """The file of a SQLite catalog (None for a PostgreSQL one)."""
        return self.catalog.where if self.catalog.kind == "sqlite" else None

    @property
    def on_object_store(self) -> bool:
        return self.data.startswith("s3://")

    @property
    def extensions(self) -> tuple[str, ...]:
        """The DuckDB extensions a connection to this lake loads."""
        return ("ducklake", self.catalog.extension, *(["httpfs"] if self.on_object_store else []))

    @contextmanager
    def reaching_data(self) -> Iterator[None]:
        """An object store that cannot be reached or refuses the keys: one line naming it (no traceback)."""
        try:
            yield
        except (duckdb.HTTPException, duckdb.IOException) as exc:
            if not self.on_object_store:
                raise
            endpoint = os.environ.get("AWS_ENDPOINT_URL") or "Amazon S3"
            reason = next((line for line in str(exc).splitlines() if line.strip()), "")
            raise CatalogError(
                f"cannot reach the lake's data at {self.data} (through {endpoint}): {reason[:300]}"
            ) from None

    @contextmanager
    def naming_a_full_disk(self) -> Iterator[None]:
        """A commit that a full disk stops is the OSError of a full disk (ENOSPC, naming the catalog), as a
        file's write would be: SQLite says only "database or disk is full"."""
        try:
            yield
        except duckdb.Error as exc:
            if self.catalog.kind != "sqlite" or "database or disk is full" not in str(exc):
                raise
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), self.catalog.where) from None

    def database(self) -> duckdb.DuckDBPyConnection:
        """A new in-memory database that can attach this lake: its extensions, the object store's keys."""
        con = database(*self.extensions)
        try:
            if self.on_object_store:
                object_store_secret(con)
        except BaseException:
            con.close()
            raise
        return con

    def connect(self, read_only: bool = False, snapshot: int | None = None) -> duckdb.DuckDBPyConnection:
        """A connection with the lake attached as `lake` (read only, or as of a snapshot)."""
        con = self.database()
        try:
            self.attach(con, read_only, snapshot)
        except BaseException:
            con.close()
            raise
        return con

    def attach_statement(self, read_only: bool = False, snapshot: int | None = None) -> str:
        """The ATTACH of this lake as `lake` (read only, or as of a snapshot)."""
        options = [f"DATA_PATH {_quoted(self.data)}"]
        if self.in_folder:
            options.append("OVERRIDE_DATA_PATH true")
        if read_only:
            options.append("READ_ONLY")
        if snapshot is not None:
            options.append(f"SNAPSHOT_VERSION {int(snapshot)}")
        return f"ATTACH {_quoted(self.catalog.uri())} AS {ALIAS} ({', '.join(options)})"

    def attach(self, con: duckdb.DuckDBPyConnection, read_only: bool = False, snapshot: int | None = None) -> None:
        try:
            con.execute(self.attach_statement(read_only, snapshot))
        except duckdb.OutOfMemoryException:
            raise  # (the caller's budget: it names the setting to raise)
        except duckdb.Error as exc:
            raise CatalogError(self._unreachable(exc, snapshot)) from None

    def _unreachable(self, exc: duckdb.Error, snapshot: int | None) -> str:
        reason = " ".join(str(exc).split())
        if snapshot is not None and "No snapshot found" in reason:
            oldest = self._oldest_snapshot()
            kept = f"the oldest kept is {oldest}" if oldest is not None else "the catalog has none"
            return f"no snapshot {snapshot} in the lake's catalog {self.catalog}: {kept}"
        return f"cannot open the lake's catalog {self.catalog} (data {self.data}): {reason[:300]}"

    def _oldest_snapshot(self) -> int | None:
        try:
            with self.connection(read_only=True) as con:
                row = con.execute(f"SELECT min(snapshot_id) FROM {ALIAS}.snapshots()").fetchone()
        except (CatalogError, duckdb.Error):
            return None
        return None if row is None else row[0]

    @contextmanager
    def connection(self, read_only: bool = False, snapshot: int | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        con = self.connect(read_only, snapshot)
        try:
            yield con
        finally:
            con.close()

    def write(self, message: str, work: Callable[[duckdb.DuckDBPyConnection], T], author: str = "lakehouse") -> T:
        """Run `work` in one transaction that commits one snapshot named by `message`; on a SQLite catalog,
        in turn with this machine's other writers.  `work` may run again if its commit met SQLite's lock:
        it must write only through the connection it is given (each try starts from the catalog as it
        then is), and its result is that of the try that committed."""
        with self.turn():
            for attempt in range(LOCKED_RETRIES + 1):
                with self.connection() as con:
                    try:
                        con.execute("BEGIN")
                        result = work(con)
                        con.execute(f"CALL {ALIAS}.set_commit_message({_quoted(author)}, {_quoted(message)})")
                        with self.naming_a_full_disk():
                            con.execute("COMMIT")
                        return result
                    except duckdb.Error as exc:
                        if "database is locked" not in str(exc) or attempt == LOCKED_RETRIES:
                            raise
                time.sleep(min(2.0, 0.05 * 1.5**attempt) * (0.5 + random.random()))
        raise AssertionError("unreachable: the last try returns or raises")

    @contextmanager
    def turn(self) -> Iterator[None]:
        """This writer's turn to commit: writers commit one at a time.  A SQLite catalog's take an
        exclusive lock on a file beside it (CATALOG.lock); a PostgreSQL catalog's, an advisory lock of its
        database, held by a transaction of a connection of their own (PostgreSQL ends it, and so frees the
        turn, when the holder's connection drops: a writer killed while it commits holds no one up)."""
        if self.catalog.kind != "sqlite":
            with database(self.catalog.extension) as con:
                self.catalog.attach_database(con, "turn", read_only=False)
                con.execute("BEGIN")
                con.execute(f"CALL postgres_execute('turn', 'SELECT pg_advisory_xact_lock({COMMIT_TURN_LOCK})')")
                try:
                    yield
                finally:
                    con.execute("ROLLBACK")
            return
        lock_path = Path(self.catalog.where).with_suffix(".lock")
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        with lock_path.open("a+b") as lock:
            deadline = time.monotonic() + TURN_TIMEOUT_S
            while True:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise CatalogError(
                            f"another writer has held the lake's catalog {self.catalog} for {TURN_TIMEOUT_S:.0f} s"
                        ) from None
                    time.sleep(0.05)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def snapshots(self) -> list[tuple[int, object, str | None, str | None]]:
        """(snapshot, time, author, message) of every snapshot kept, oldest first."""
        with self.connection(read_only=True) as con:
            rows = con.execute(
                f"SELECT snapshot_id, snapshot_time::VARCHAR, author, commit_message FROM {ALIAS}.snapshots() "
                "ORDER BY snapshot_id"
            ).fetchall()
        return [(int(r[0]), r[1], r[2], r[3]) for r in rows]


def expire_before(con: duckdb.DuckDBPyConnection, snapshot: int) -> tuple[int, int]:
    """Forget every snapshot before `snapshot` (which must be kept) and delete the files only they read;
    returns (snapshots forgotten, files deleted).  `con` has the lake attached, not read only."""
    kept = [row[0] for row in con.execute(f"SELECT snapshot_id FROM {ALIAS}.snapshots() ORDER BY 1").fetchall()]
    if snapshot not in kept:
        raise CatalogError(
            f"no snapshot {snapshot} in the lake's catalog: the snapshots kept are {kept[0]} to {kept[-1]}"
            if kept
            else f"no snapshot {snapshot}: the catalog has none"
        )
    older = [s for s in kept if s < snapshot]
    if older:
        listed = ", ".join(str(s) for s in older)
        # (Fetched as Arrow: DuckDB's Python rows of a timestamp with time zone need pytz.)
        con.execute(f"CALL ducklake_expire_snapshots('{ALIAS}', versions => [{listed}])").to_arrow_table()
    deleted = con.execute(f"CALL ducklake_cleanup_old_files('{ALIAS}', cleanup_all => true)").to_arrow_table()
    return len(older), deleted.num_rows


def object_store_secret(con: duckdb.DuckDBPyConnection) -> None:
    """The object store's credentials from the environment, as a secret of this connection only."""
    con.execute(object_store_secret_statement())


def object_store_secret_statement(in_shell: bool = False) -> str:
    """The statement that gives DuckDB the object store's keys from the environment.  `in_shell`: for the
    duckdb command line's opening statements, which read the keys from its own environment (getenv)
    rather than carry them on its command line, where the process list would show them."""
    key, secret = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
    if not key or not secret:
        raise CatalogError(
            "the lake's data is on an object store (s3://...): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
            "(and AWS_ENDPOINT_URL for a server other than Amazon's)"
        )

    def value(name: str) -> str:
        return f"getenv({_quoted(name)})" if in_shell else _quoted(os.environ[name])

    words = [f"KEY_ID {value('AWS_ACCESS_KEY_ID')}", f"SECRET {value('AWS_SECRET_ACCESS_KEY')}",
             f"REGION {_quoted(os.environ.get('AWS_REGION', 'us-east-1'))}"]  # fmt: skip
    if endpoint := os.environ.get("AWS_ENDPOINT_URL"):
        url = urlsplit(endpoint)
        words += [f"ENDPOINT {_quoted(url.netloc or url.path)}", "URL_STYLE 'path'"]
        words.append(f"USE_SSL {'true' if url.scheme == 'https' else 'false'}")
    return f"CREATE OR REPLACE TEMPORARY SECRET lake_object_store (TYPE s3, {', '.join(words)})"
