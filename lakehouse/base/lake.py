"""A lake on disk: its location, its folders, read-only queries and the single-writer session.

A lake is a DuckLake lake (lakehouse.base.ducklake, lakehouse.base.ducklake_lake): a folder holding its
catalog (``catalog.sqlite``) and its Parquet files (``data/``), or naming a team's catalog and data in
its lake file (``lake.toml``); every commit a snapshot.  Under the root, in either case::

    parquet/, quarantine/, analysis/   where the ingests and reports write their outputs aside
    .writer.lock                held by the one writer of the folder (an ingest, a report storing its tables)
    .spill/                     what DuckDB spills (lakehouse.base.budget)

A lake made before DuckLake has a DuckDB catalog instead, ``lake.duckdb`` (lakehouse.base.duckdb_lake:
its catalog, schema files and writer): the same reading and writing methods serve it, and `lakehouse
migrate` makes a DuckLake lake of it.  The writers of both formats share the folder's lock and their
session (lakehouse.base.writer); the databases a process reads and writes DuckLake lakes through are kept
(lakehouse.base.kept_databases).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import duckdb

from lakehouse.base.budget import SMALLEST, SPILL, SPILL_FOLDER, Budget
from lakehouse.base.catalog import named_query, sql_literal, view_files
from lakehouse.base.datasets import DATASETS
from lakehouse.base.duckdb_lake import CATALOG_FILE, CatalogWriter, attach_catalog, ensure_schema_files, rebuild
from lakehouse.base.ducklake import ALIAS, FOLDER_CATALOG, FOLDER_DATA, LAKE_FILE, DuckLake, lake_data_path
from lakehouse.base.ducklake_lake import DuckLakeWriter, init_catalog
from lakehouse.base.errors import LakeBusyError, LakehouseError, NoLakeError, QueryError, ResourceError, SettingsError
from lakehouse.base.interrupts import stopped_by_interrupt
from lakehouse.base.kept_databases import READER_DATABASES
from lakehouse.base.outputs import protect
from lakehouse.base.read_only import statement_writes
from lakehouse.base.writer import LOCK_FILE, process_lock

if TYPE_CHECKING:  # Polars takes ~70 ms to import: `simulate` loads it while the replay runs
    import numpy as np
    import polars as pl
    import pyarrow as pa

T = TypeVar("T")
#: The writer of a lake: the DuckDB catalog's, or a DuckLake lake's (the same methods).
LakeWriter = CatalogWriter | DuckLakeWriter

#: Where only the ingests (holding the writer lock) write.
ENV_VAR = "LAKEHOUSE_LAKE"
#: The format of a lake a command makes where there is none: `ducklake` (the default: a DuckLake lake of
#: one folder, as `init --ducklake`) or `duckdb` (the DuckDB catalog of lakes made before DuckLake).
FORMAT_VAR = "LAKEHOUSE_FORMAT"
#: The setting that keeps each join's right side as the one held in memory: DuckDB's join-order optimizer
#: and, after it, the one that swaps a join's sides by the estimated rows (which turned the 2019 windows'
#: LEFT JOIN of their tiers into a RIGHT JOIN holding the windows: 2.2 GB where 0.4 GB do) both choose it.
JOINS_AS_WRITTEN = "SET disabled_optimizers = 'join_order,build_side_probe_side'"
_SCRATCH_NUMBERS = itertools.count()  # each in-memory database spills into a folder of its own


def one_row(con: duckdb.DuckDBPyConnection, sql: str, params: list[object] | None = None) -> tuple[Any, ...]:
    """The row of a query that always gives one (an aggregate without GROUP BY)."""
    row = con.execute(sql, params).fetchone()
    assert row is not None, sql
    return row


def count(con: duckdb.DuckDBPyConnection, sql: str, params: list[object] | None = None) -> int:
    """The number a `SELECT count(...)` query gives."""
    return int(one_row(con, sql, params)[0])


_MISSING_TABLE = re.compile(r"Table with name (\S+) does not exist")


def _package_view_missing(message: str) -> str | None:
    """The package's view (schema.name) that a catalog error says is missing, if it is one of ours."""
    found = _MISSING_TABLE.search(message)
    if found is None:
        return None
    name = found[1].rstrip("!")
    return next((view.name for view in view_files() if view.name == name or view.name.endswith(f".{name}")), None)


def default_root() -> Path:
    """--lake DIR, else $LAKEHOUSE_LAKE, else ./lake."""
    return Path(os.environ.get(ENV_VAR) or "lake")


def new_lake_format() -> str:
    """$LAKEHOUSE_FORMAT: the format of a lake a command makes (`ducklake`, the default, or `duckdb`)."""
    chosen = os.environ.get(FORMAT_VAR) or "ducklake"
    if chosen not in ("duckdb", "ducklake"):
        raise SettingsError(f"${FORMAT_VAR} is duckdb or ducklake, not {chosen!r}")
    return chosen


#: What DuckDB's readers take for a glob in a path (braces too): a lake's path must hold none.  (Log
#: names have their own, fewer: lakehouse.base.log_names.GLOB_CHARACTERS.)
PATH_GLOB_CHARACTERS = ("*", "?", "[", "]", "{", "}")

#: Rows per batch of a result streamed to a file (`Lake.user_sql`'s `stream`).
STREAMED_ROWS = 1_000_000


class Lake:
    """A lake rooted at a folder.  ``Lake()`` uses $LAKEHOUSE_LAKE or ./lake.

    `memory_limit` ('3GB', '30%') and `threads` bound every DuckDB connection the lake opens (default:
    $LAKEHOUSE_MEMORY_LIMIT and $LAKEHOUSE_THREADS, else a quarter of the machine's memory and one
    thread per core); what does not fit spills into the lake's `.spill` folder (`lakehouse.base.budget`)."""

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        memory_limit: str | None = None,
        threads: int | None = None,
        snapshot: int | None = None,
    ):
        self.root = Path(root if root is not None else default_root()).expanduser().absolute()
        self.budget = Budget.resolve(memory_limit, threads)
        #: Read the lake as this snapshot of its DuckLake left it (`--as-of`); None: as it is now.
        self.snapshot = snapshot
        #: How long (seconds) `writer()` waits for another writer by default: 0, fail at once.
        self.wait_for_writer = 0.0
        if self.root.exists() and not self.root.is_dir():
            raise LakehouseError(f"{self.root} is a file: a lake is a folder (give --lake the folder)")
        if any(c in PATH_GLOB_CHARACTERS for c in str(self.root)):
            # The views read the lake's Parquet through DuckDB globs, which would take these
            # characters as patterns and read other folders (or none).
            raise LakehouseError(
                f"the lake path {self.root} contains one of {' '.join(PATH_GLOB_CHARACTERS)}: DuckDB would read it "
                "as a pattern; choose a folder without them"
            )
        # `reading()`'s connection, one per thread: a DuckDB connection used from two threads at once
        # crashes the interpreter (the adversary's fourth pass: SIGSEGV in 1-3 of 4 runs).
        self._sessions = threading.local()
        self._writer: LakeWriter | None = None
        self._ducklake: DuckLake | None = None
        # No output of this process may land in the lake's data (e.g. `sql --output` over a log's Parquet).
        protect(
            self.root,
            (
                CATALOG_FILE,
                FOLDER_CATALOG,
                FOLDER_DATA,
                LAKE_FILE,
                "parquet",
                "quarantine",
                "analysis",
                "meta",
                SPILL_FOLDER,
            ),
        )

    def __repr__(self) -> str:
        return f"Lake({str(self.root)!r})"

    def __getstate__(self) -> dict[str, object]:
        """A copy for another process (a campaign's or a report's worker): the lake as named and
        budgeted, without this process's connections or writer session."""
        state = {k: v for k, v in self.__dict__.items() if k != "_sessions"}
        state["_writer"] = None
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._sessions = threading.local()

    @property
    def _session(self) -> duckdb.DuckDBPyConnection | None:
        """The connection `reading()` opened in this thread, if any."""
        return getattr(self._sessions, "connection", None)

    @_session.setter
    def _session(self, connection: duckdb.DuckDBPyConnection | None) -> None:
        self._sessions.connection = connection

    @property
    def catalog_path(self) -> Path:
        return self.root / CATALOG_FILE

    @property
    def ducklake(self) -> DuckLake | None:
        """The lake's DuckLake, when it has one rather than a DuckDB catalog (lakehouse.base.ducklake_lake):
        the folder's own (`init --ducklake`, `migrate`) or a team's that its lake file names (`init
        --catalog`)."""
        if self._ducklake is None:  # (once found, kept: a lake does not change its format)
            self._ducklake = DuckLake.found_in(self.root)
        return self._ducklake

    def exists(self) -> bool:
        return self.catalog_path.exists() or self.ducklake is not None

    def require(self) -> None:
        """Refuse (NoLakeError) where there is no lake, before any work and without making a folder."""
        if not self.exists():
            raise self._missing()

    def _missing(self) -> NoLakeError:
        return NoLakeError(f"no lake at {self.root} (run `lakehouse init` or `lakehouse ingest` first)")

    def init(self, ducklake: DuckLake | None = None) -> Lake:
        """Create the folders, the schema files and the catalog (idempotent); `ducklake`: a new lake's
        catalog is this DuckLake (the folder's own, or a team's, which it joins if it holds a lake)."""
        with self.writer(wait=True, create=True, ducklake=ducklake):
            pass
        return self

    def _ensure_layout(self) -> None:
        """The datasets' folders, where the ingests and reports write aside; in a lake of the DuckDB
        catalog's format, each with its schema file, which the views read (a DuckLake lake's tables have
        their schema: writing the 46 files took 0.3 s of every new lake)."""
        for dataset in DATASETS.values():
            dataset.directory(self.root).mkdir(parents=True, exist_ok=True)
        if self.ducklake is None:
            ensure_schema_files(self.root)

    # -- reading ------------------------------------------------------------------------------------
    def connect(self) -> duckdb.DuckDBPyConnection:
        """A read-only connection to the catalog (many can be open while a writer works), of a database of
        its own: its settings (a pool, `disabled_optimizers`, `preserve_insertion_order`) are the caller's
        to change.  A connection that only queries is `cursor()`'s, cheaper.

        The catalog is attached to an in-memory database of the connection's own rather than opened by
        its path: DuckDB keeps one database per path in a process, and once a connection to it was closed
        while something still held one of its results, every later connection by that path spun
        forever (a nightly run, after a kill, hung so in its volatility report)."""
        return self._attached("reader")

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A read-only connection for queries alone (it changes no setting: those are its database's, and
        other readers of this process share it): a DuckLake lake's is a cursor of this process's database
        of the lake (`lakehouse.base.kept_databases`: 10 ms, where a database of its own takes 60-70)."""
        ducklake = self.ducklake
        if ducklake is None:
            return self.connect()
        # A database of the lake per snapshot and budget (and, for a SQLite catalog, per file: a lake made
        # again at the same path is another file).
        key = (self.root, ducklake, self.snapshot, self.budget.duckdb_memory, self.budget.threads)
        con = READER_DATABASES.cursor(key, lambda: self._attached("readers"), ducklake.catalog_file)
        try:
            con.execute("SET enable_progress_bar = false")  # (a setting of the connection, not its database's)
            con.execute(f"USE {ALIAS}")
        except BaseException:
            con.close()
            raise
        return con

    def _attached(self, kind: str) -> duckdb.DuckDBPyConnection:
        """The catalog attached read-only (as `lake`, the default) to a new in-memory database, under the
        lake's budget, spilling into a folder of its own."""
        if not self.exists():
            raise self._missing()
        ducklake = self.ducklake
        con = duckdb.connect() if ducklake is None else ducklake.database()
        try:
            self.apply_budget(con, f"{kind}-{next(_SCRATCH_NUMBERS)}")
            con.execute("SET enable_progress_bar = false")
            if ducklake is not None:
                try:
                    ducklake.attach(con, read_only=True, snapshot=self.snapshot)
                    con.execute(f"USE {ALIAS}")  # (DuckLake reads its tables' list from the catalog here)
                except duckdb.OutOfMemoryException as exc:
                    raise ResourceError(self.budget.too_small(str(exc).strip())) from None
                return con
            attach_catalog(con, self.root, self.snapshot)
        except BaseException:
            con.close()
            raise
        return con

    def sealed(self) -> duckdb.DuckDBPyConnection:
        """A connection to the catalog (read-only) through which no statement can write a file: DuckDB
        reaches the lake's data folders and nothing else, and its settings are locked so that no
        statement lifts that.  Those settings belong to a database instance: the connection's own
        (`_attached`), so that sealing it leaves the process's other connections alone."""
        con = self._attached("sealed")
        try:
            tops = {Path(dataset.folder).parts[0] for dataset in DATASETS.values()}  # parquet/, analysis/, ...
            folders = sorted((self.root / top).as_posix() + "/" for top in tops)
            if self.ducklake is not None:  # (DuckLake reads its catalog through the connection it opened)
                folders = [self.ducklake.data]
            # A literal list: a bound Python list would make DuckDB import numpy and pandas (0.5 s).
            con.execute(f"SET allowed_directories = [{', '.join(sql_literal(f) for f in folders)}]")
            con.execute("SET enable_external_access = false")
            con.execute("SET autoinstall_known_extensions = false")
            con.execute("SET autoload_known_extensions = false")
            con.execute("SET lock_configuration = true")
        except BaseException:
            con.close()
            raise
        return con

    def rebuild(self) -> Path | None:
        """Recreate every view: of a lake of the DuckDB catalog's format for where the lake is now
        (`lakehouse.base.duckdb_lake.rebuild`), returning where a catalog DuckDB could not read was put;
        of a DuckLake lake, as this version of lakehouse makes them (its readers need them so after an
        upgrade, before any writer has made them)."""
        if self.ducklake is not None:
            with self.writer(wait=True) as session:
                assert isinstance(session, DuckLakeWriter)
                session.remake_views()
            return None
        return rebuild(self)

    def apply_budget(self, con: duckdb.DuckDBPyConnection, database: str, share: float = 1.0) -> None:
        """Give a DuckDB connection the lake's memory limit (or `share` of it, for one of several
        connections working at once) and threads, and its own spill folder inside the lake."""
        budget = self.budget
        if share != 1.0:
            budget = replace(budget, memory=max(int(budget.memory * share), SMALLEST))
        con.execute(budget.statements(SPILL.folder(self.root, database)))

    @contextmanager
    def scratch_folder(self, name: str) -> Iterator[Path]:
        """A folder for a command's own temporary files (a campaign's copy of its jobs, a report's
        partitions' files), in this process's spill folder of the lake, which a cluster's workers reach
        where they reach the lake: removed when the block ends, and, if the process is killed, by the
        next command that opens the lake (as DuckDB's spill files are).  In the system's temporary
        folder where the lake cannot be written."""
        database = f"{name}-{next(_SCRATCH_NUMBERS)}"
        folder = SPILL.folder(self.root, database)
        if folder is None:
            with tempfile.TemporaryDirectory(prefix=f"lakehouse-{name}-") as fallback:
                yield Path(fallback)
            return
        try:
            yield folder
        finally:
            SPILL.forget(self.root, database)

    @contextmanager
    def scratch(self, name: str, share: float = 1.0, threads: int | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        """An in-memory DuckDB connection (for ingest and export work) under the lake's budget (`share` of
        it), spilling into a folder of its own in the lake, removed with it (DuckDB's own default would
        be a `.tmp` folder in the current directory, and 80 % of the machine)."""
        folder = f"scratch-{name}-{next(_SCRATCH_NUMBERS)}"
        con = duckdb.connect()
        try:
            self.apply_budget(con, folder, share)
            if threads is not None:
                con.execute(f"SET threads = {int(threads)}")
            con.execute("SET enable_progress_bar = false")
            yield con
        finally:
            con.close()
            SPILL.forget(self.root, folder)

    @contextmanager
    def query_errors(self) -> Iterator[None]:
        """DuckDB's errors on the lake's queries as QueryError, in one place (the CLI prints it as one
        line); a query DuckDB stopped for Ctrl-C is the KeyboardInterrupt it is; one that ran out of the
        memory budget says which setting to raise."""
        try:
            yield
        except Exception as exc:
            if stopped_by_interrupt(exc):
                raise KeyboardInterrupt from None
            if isinstance(exc, duckdb.OutOfMemoryException):
                raise ResourceError(self.budget.too_small(str(exc).strip())) from None
            if isinstance(exc, duckdb.CatalogException) and (view := _package_view_missing(str(exc))):
                raise QueryError(
                    f"the lake's catalog has no view {view}, which this version of lakehouse reads: the catalog was "
                    f"made by an older version; run `lakehouse catalog rebuild --lake {self.root}` to bring its "
                    "views up to date"
                ) from None
            if isinstance(exc, duckdb.Error):
                raise QueryError(str(exc).strip()) from exc
            raise

    def query(self, sql: str, params: list[object] | dict[str, object] | None = None) -> pl.DataFrame:
        """Run SQL against the catalog and return a Polars frame; DuckDB's errors come out as QueryError."""
        return self._run(sql, params, lambda result: result.pl())

    def query_numpy(self, sql: str, params: list[object] | dict[str, object] | None = None) -> dict[str, np.ndarray]:
        """`query`'s columns as numpy arrays (masked where NULL), without Polars."""
        return self._run(sql, params, lambda result: result.fetchnumpy())

    def rows(self, sql: str, params: list[object] | dict[str, object] | None = None) -> list[tuple[Any, ...]]:
        """`query`'s rows as tuples: for small answers, without Polars."""
        return self._run(sql, params, lambda result: result.fetchall())

    def _run(
        self, sql: str, params: list[object] | dict[str, object] | None, fetch: Callable[[duckdb.DuckDBPyConnection], T]
    ) -> T:
        # execute, not sql(): DuckDB's relation of a query with parameters filtered only after reading
        # (a log's jobs out of swf.jobs: 0.9 s through a relation, 0.06 s executed, of 20 files it read
        # every one), which every report paid for each query it ran with a parameter.
        with self.query_errors():
            if self._session is not None:
                return fetch(self._session.execute(sql, params))
            with self.cursor() as con:
                return fetch(con.execute(sql, params))

    def copy(self, sql: str, params: list[object] | None = None) -> int:
        """Run a `COPY (query) TO file` statement (on the block's connection in `reading`); the rows written."""
        with self.query_errors():
            if self._session is not None:
                return int(self._session.execute(sql, params).fetchone()[0])  # type: ignore[index]
            with self.cursor() as con:
                return int(con.execute(sql, params).fetchone()[0])  # type: ignore[index]

    def log_names(self) -> list[str]:
        """The SWF logs in the lake, by name."""
        return [str(log) for (log,) in self.rows(named_query("log_names"))]

    def views(self) -> pl.DataFrame:
        """The lake's views (`schema.name`) with their descriptions."""
        return self.query(named_query("lake_views"))

    def user_sql(
        self, sql: str, allow_writes: bool = False, stream: Callable[[pa.RecordBatchReader], None] | None = None
    ) -> pl.DataFrame | None:
        """Run a user's SQL (one or more statements); the last statement's rows, or None when it
        returns none (SET, COPY, empty input).  With `stream`, the rows are handed to it in batches
        instead, while the query runs (memory bounded by a batch, not by the result), and None is
        returned.

        Unless `allow_writes`, no statement can write a file: the connection is `sealed` (DuckDB reaches
        no file but the lake's data, and its settings are locked), and statements that write (COPY,
        EXPORT, ATTACH, INSTALL, ..., also inside EXPLAIN ANALYZE or a prepared statement) are refused
        before anything runs, since the data folders themselves must stay as their writers left them."""
        with self.connect() if allow_writes else self.sealed() as con, self.query_errors():
            statements = con.extract_statements(sql)
            if not allow_writes:
                for statement in statements:
                    if statement.type.name == "CREATE" and not statement.query.strip():
                        # (what DuckDB makes of a PIVOT without its values: a type of them, created first)
                        raise LakehouseError(
                            "a PIVOT needs its values listed in lakehouse sql, `PIVOT t ON col IN ('a', 'b') "
                            "USING ...`: without them DuckDB first creates a type, and the connection only reads"
                        )
                    if problem := statement_writes(con, statement):
                        raise LakehouseError(
                            f"refusing {problem}: lakehouse sql only reads (it could write files, even into "
                            "the lake's folders); pass --allow-writes if you mean it"
                        )
            result = None
            for statement in statements:
                result = con.sql(statement.query)
            if result is None:
                return None
            if stream is not None:
                stream(result.to_arrow_reader(STREAMED_ROWS))
                return None
            return result.pl()

    def user_select(self, sql: str) -> pl.DataFrame:
        """The rows of a user's query that must be one SELECT (`pack --query`, which may read the user's
        own files): anything else, or a statement that could write, is refused before it runs."""
        with self.connect() as con, self.query_errors():
            statements = con.extract_statements(sql)
            if len(statements) != 1 or statements[0].type.name != "SELECT":
                kinds = ", ".join(s.type.name for s in statements) or "nothing"
                raise LakehouseError(f"the query must be one SELECT statement, not {kinds}")
            if problem := statement_writes(con, statements[0]):
                raise LakehouseError(f"refusing {problem}: the query only reads")
            return con.sql(statements[0].query).pl()

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Answer the queries of the block from one read-only connection (`cursor()`; otherwise each
        opens its own).  On a lake of the DuckDB catalog's format, the connection sees the catalog as it
        was when the block began: keep the block short."""
        if self._session is not None:
            yield
            return
        self._session = self.cursor()
        try:
            yield
        finally:
            self._session.close()
            self._session = None

    @contextmanager
    def joins_as_written(self) -> Iterator[None]:
        """Answer the block's queries (one read-only connection, of a database of its own: the setting is
        its database's) with each join's right side as the one held in memory, as the query is written.
        DuckDB chooses that side by its estimate of the rows, and it estimates a view over many Parquet
        files poorly: google2019.instance_usage's 71 million rows (0.05 of a cell) as 14,600, so it held
        them, with their histograms, to look up each window's tier, and ran out of a 1 GB budget that the
        query written the other way round keeps to 450 MB.  (`JOINS_AS_WRITTEN`: both of the optimizers
        that choose the side.)"""
        outer = self._session
        self._session = self.connect()
        try:
            self._session.execute(JOINS_AS_WRITTEN)
            yield
        finally:
            self._session.close()
            self._session = outer

    # -- writing ------------------------------------------------------------------------------------
    @contextmanager
    def writer(
        self,
        commit_every: float = 2.0,
        wait: bool | None = None,
        create: bool = False,
        ducklake: DuckLake | None = None,
    ) -> Iterator[LakeWriter]:
        """The single-writer session: takes the lock, yields a catalog copy, swaps it in at the end.

        The swap also happens when the block raises (Ctrl-C included), so whatever was recorded as
        done is kept and a re-run only does the rest.  `wait`: queue behind a running writer instead
        of failing (`init`, which is quick); by default, for as long as `wait_for_writer` says (the
        nightly run's writes queue behind a user's ingest, for an hour at most).  `create`: make the
        lake if there is none (init and the
        ingests; a report given a mistyped --lake must not leave an empty lake there); `ducklake`: a new
        lake's DuckLake (`lakehouse init --ducklake`, `--catalog`).  The lake's
        folders and schema files are made under the lock, so that writers starting together on a new
        lake do not race on them.
        """
        if not create and not self.exists():
            raise self._missing()
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LakehouseError(f"{self.root}: cannot make the lake here ({exc.strerror or exc})") from None

        # Seconds to wait for another writer: this lake's default, for ever (None), or not at all.
        patience = self.wait_for_writer if wait is None else (None if wait else 0.0)

        def busy(holder: str) -> LakehouseError:
            waited = f" (waited {patience:g} s)" if patience else ""
            return LakeBusyError(
                f"{self.root}: another writer is running (pid {holder}){waited}; wait for it to finish"
            )

        with process_lock(self.root / LOCK_FILE, busy, wait=patience):
            if ducklake is None and not self.exists() and new_lake_format() == "ducklake":
                ducklake = DuckLake.of_folder(self.root)
            if ducklake is not None:
                self._make_or_join(ducklake)
            self._ensure_layout()
            session: LakeWriter
            if self.ducklake is not None:
                if self.snapshot is not None:
                    raise LakehouseError(f"{self.root}: --as-of reads a snapshot; a command that writes cannot take it")
                session = DuckLakeWriter(self, commit_every)
            else:
                session = CatalogWriter(self, commit_every)
            self._writer = session
            try:
                yield session
            except Exception:
                # What was recorded is committed; a commit that fails too (a full disk, which also aborted
                # a DuckLake transaction) leaves the block's error to say what went wrong, not its own.
                self._writer = None
                with contextlib.suppress(Exception):
                    session.close()
                raise
            finally:
                if self._writer is not None:  # (a Ctrl-C too: what was done is kept)
                    self._writer = None
                    session.close()

    def _make_or_join(self, ducklake: DuckLake) -> None:
        """Make this new lake's DuckLake (or join a team's: its catalog holds a lake already), then, for a
        team's, the lake file that names it; a lake that exists keeps its own catalog."""
        if self.exists():
            if not ducklake.in_folder and self.ducklake != ducklake:
                has = self.ducklake.catalog if self.ducklake else CATALOG_FILE
                raise LakehouseError(
                    f"{self.root} is a lake already (its catalog: {has}); give a team's lake a new folder"
                )
            return
        if ducklake.in_folder or lake_data_path(ducklake.catalog) is None:
            init_catalog(ducklake)
        if not ducklake.in_folder:
            ducklake.write_lake_file(self.root)

    @property
    def committing(self) -> LakeWriter:
        """The writer session this lake is in (a report stores its tables only under it)."""
        if self._writer is None:
            raise LakehouseError("an analysis table is stored only under the lake's writer lock (Lake.writer)")
        return self._writer
