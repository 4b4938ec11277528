"""A lake whose catalog is DuckLake's (`DuckLake.of_folder`): how its catalog is made, and its writer.

The catalog holds one DuckLake table per dataset (`stored.KEY`, which the views of sql/ read), the meta
tables (the manifest, the analysis files' list, the nightly history), and the macros and views of sql/.
`make_catalog` makes them for a new lake (`lakehouse init --ducklake`, `lakehouse migrate`), and
`bring_up_to_date` gives a lake made by another version the tables, columns, macros and views of this one.

The writer (`DuckLakeWriter`) keeps the interface of the DuckDB catalog's (`lakehouse.base.duckdb_lake`): the
ingests write each output aside, as they do for either format, and the writer moves it into its DuckLake
table's folder under a name of its own (`<stem>.<12 hex>.parquet`: a file an older snapshot reads is never
overwritten) and registers it there (`ducklake_add_data_files`, which names a file inside its table's
folder relative to the data path, so the lake moves as a folder), a batch of files at a time by the
pattern of their names (`_register`); the rows of the output it replaces are
deleted by file name, which ends that file in the new snapshot without writing a delete file.  Each commit
is one DuckLake snapshot whose message is the command that ran.  A writer killed before its commit leaves
files no snapshot names: the next writer removes them (`_remove_orphans`), before it places any of its own.

A team's lake (`team_lake`: its catalog on PostgreSQL, its data in a shared folder or on an object store,
named by each member's lake file) has writers on several machines at once: each uploads its outputs
(`_put`) and commits in its turn (`DuckLake.turn`), refusing a commit that would keep an output another
writer committed while it worked (`_refuse_what_others_committed`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import os
import secrets
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from lakehouse.base.catalog import META_TABLES, named_query, schemas_digest, setup_files, sql_literal, view_files
from lakehouse.base.datasets import DATASETS, PARQUET_OPTIONS
from lakehouse.base.ducklake import ALIAS, Catalog, DuckLake, data_path, lake_data_path
from lakehouse.base.errors import LakeBusyError, LakehouseError, ResourceError, SettingsError
from lakehouse.base.interrupts import interrupts_deferred
from lakehouse.base.kept_databases import WRITER_DATABASES
from lakehouse.base.tables import STORED_SCHEMA
from lakehouse.base.writer import WriterSession, fsync_dir, invocation, remove_stale_outputs, replace_atomically

if TYPE_CHECKING:  # (pyarrow: only a writer that makes tables needs it; every command imports this module)
    import pyarrow as pa

    from lakehouse.base.lake import Lake

#: How many files placed in a table are registered at once, before the commit (a call costs ~5 ms more
#: than its files; a batch's file names share a part, so that one pattern finds them: at most 16**4).
REGISTER_BATCH = 50
#: The spill folders of the writer databases (one per database, numbered).
DUCKLAKE_WRITER_SPILL = "ducklake-writer"
_DATABASE_NUMBERS = itertools.count()
#: The meta table that records which version of sql/ the catalog's views and macros were made from.
CATALOG_VERSION = "meta.catalog_version"


def sql_digest() -> str:
    """A digest of the macros and views of sql/ and of the datasets' schemas: a catalog another version of
    lakehouse made is brought up to date by the next writer (`bring_up_to_date`)."""
    text = "\n".join([*(setup.statements for setup in setup_files()), *(view.ddl() for view in view_files())])
    return hashlib.sha256(f"{text}\n{schemas_digest()}".encode()).hexdigest()[:16]


def make_catalog(con: duckdb.DuckDBPyConnection) -> None:
    """Make, in the open transaction of `con` (the lake attached and in use), the catalog of a new lake."""
    # No rows kept inside the catalog: DuckLake would put each table of under 10 rows (most analysis and
    # meta tables) in a table of the SQLite catalog, which every reader then looks up: binding the views
    # took twice as long (`predict.cluster_targets` 0.96 s against 0.44 s, measured here).
    con.execute(f"CALL {ALIAS}.set_option('data_inlining_row_limit', 0)")
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {CATALOG_VERSION.split('.')[0]}")
    con.execute(f"CREATE TABLE {CATALOG_VERSION} (digest VARCHAR)")
    bring_up_to_date(con)


def bring_up_to_date(con: duckdb.DuckDBPyConnection) -> None:
    """Make what this version of lakehouse has and the catalog lacks: a table per dataset and the meta
    tables, each with every column this version declares (a table of an older lake gains the new ones,
    NULL in its files); then the macros and views of sql/, made again; then record the version."""
    for schema in sorted({STORED_SCHEMA, "meta"} | {view.schema for view in view_files()}):
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    # The columns of every table, read once (a lookup per table took 0.43 s of a new lake's 0.67).
    have: dict[str, set[str]] = {}
    for schema, table, column in con.execute(
        "SELECT schema_name, table_name, column_name FROM duckdb_columns() WHERE database_name = $1", [ALIAS]
    ).fetchall():
        have.setdefault(f"{schema}.{table}", set()).add(column)
    for dataset in DATASETS.values():
        _ensure_table(con, dataset.stored, dataset.schema.empty_table(), have.get(dataset.stored, set()))
    # The meta tables as the setup files declare them, made in a database of their own (a transaction
    # writes one database): DuckLake keeps no primary keys, so each is made from the declared one's columns.
    with duckdb.connect() as declared:
        for setup in setup_files():
            if setup.file_name.startswith("meta/"):
                declared.execute(setup.statements)
        for table in META_TABLES:
            empty = declared.execute(f"SELECT * FROM meta.{table}").to_arrow_table()
            _ensure_table(con, f"meta.{table}", empty, have.get(f"meta.{table}", set()))
    for setup in setup_files():
        if not setup.file_name.startswith("meta/"):
            con.execute(setup.statements)
    for view in view_files():
        con.execute(view.ddl())
    con.execute(f"DELETE FROM {CATALOG_VERSION}")
    con.execute(f"INSERT INTO {CATALOG_VERSION} VALUES ({sql_literal(sql_digest())})")


def _ensure_table(con: duckdb.DuckDBPyConnection, name: str, empty: pa.Table, have: set[str]) -> None:
    """The table `name` (schema.table), whose columns are `have` (none: no table), with the columns of
    `empty`: made, or given those it lacks."""
    con.register("declared_table", empty)
    try:
        if not have:
            con.execute(f"CREATE TABLE {name} AS SELECT * FROM declared_table")
            return
        for column, kind in con.execute("SELECT column_name, column_type FROM (DESCRIBE declared_table)").fetchall():
            if column not in have:
                con.execute(f'ALTER TABLE {name} ADD COLUMN "{column}" {kind}')
    finally:
        con.unregister("declared_table")


@contextmanager
def making_catalog(
    ducklake: DuckLake, message: str, before: Callable[[duckdb.DuckDBPyConnection], None] = lambda con: None
) -> Iterator[duckdb.DuckDBPyConnection]:
    """The catalog of a new lake, made in a transaction the block continues (the lake attached and in
    use) and commits as the first snapshot, named by `message`.  `before` runs first, outside the
    transaction (ATTACH cannot join a transaction that writes another database)."""
    ducklake.create_catalog_file()
    with ducklake.connection() as con:
        con.execute("SET enable_progress_bar = false")
        before(con)
        con.execute(f"USE {ALIAS}")
        con.execute("BEGIN")
        make_catalog(con)
        yield con
        con.execute(f"CALL {ALIAS}.set_commit_message('lakehouse', {sql_literal(message)})")
        con.execute("COMMIT")


def init_catalog(ducklake: DuckLake) -> None:
    """Make the catalog of a new lake (its database empty or absent) and its first snapshot.  A lake
    folder's is made aside, then renamed into place whole: a command killed while it made the catalog
    (the first ingest into a new folder) left a catalog file without DuckLake's tables, which every later
    command refused to open."""
    if not ducklake.in_folder:
        with making_catalog(ducklake, invocation()):
            pass
        return
    final = Path(ducklake.catalog.where)
    final.parent.mkdir(parents=True, exist_ok=True)
    aside = final.with_name(f".{final.name}.new")
    for leftover in (aside, *(aside.with_name(aside.name + end) for end in ("-wal", "-shm"))):
        leftover.unlink(missing_ok=True)  # (of a command killed while it made one)
    with making_catalog(replace(ducklake, catalog=Catalog("sqlite", str(aside))), invocation()):
        pass
    import sqlite3

    # Everything in the file itself (SQLite syncs it) before it is renamed: its write-ahead log would not be.
    with contextlib.closing(sqlite3.connect(aside)) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    replace_atomically(aside, final)


def team_lake(catalog: str, data: str | None) -> DuckLake:
    """The DuckLake of a team's lake (`init --catalog CATALOG --data DATA`): the lake the catalog holds,
    whose data path `data` may leave out, or a new one at `data`."""
    named = Catalog.parse(catalog)
    kept = lake_data_path(named)
    if kept is None and data is None:
        raise SettingsError(f"{named} holds no lake yet: give --data, where the new lake's files go")
    if kept is not None and data is not None and data_path(data) != kept:
        raise SettingsError(f"the lake of {named} keeps its data at {kept}, not {data_path(data)}")
    return DuckLake(named, kept or data_path(data or ""))


def register(con: duckdb.DuckDBPyConnection, key: str, paths: list[str], glob: str | None = None) -> None:
    """Add files that sit in the folder of the table `stored.KEY` to it (DuckLake then names each relative
    to that folder), in one call (one per file took 6 ms, 6 s of a Google sample's 1,026 outputs).  A
    file of an analysis table written before a later column: that column is NULL.  `glob`: a pattern that
    matches exactly `paths`, which DuckLake reads in one query where it reads a list's files one query
    each (0.4 ms a file against 1.5)."""
    missing = ", allow_missing => true" if DATASETS[key].evolves else ""
    files = sql_literal(glob) if glob is not None else f"[{', '.join(sql_literal(path) for path in paths)}]"
    con.execute(f"CALL ducklake_add_data_files('{ALIAS}', '{key}', {files}, schema => 'stored'{missing})")


def stored_name(name: str) -> str:
    """The name of an output's file in its table's folder: its own, never that of a file an older snapshot
    reads."""
    return f"{name}.{secrets.token_hex(6)}.parquet"


class DuckLakeWriter(WriterSession):
    """The single writer of a DuckLake lake folder: one DuckLake transaction, committed as a snapshot
    every `commit_every` seconds of work and at the end (see the module)."""

    def __init__(self, lake: Lake, commit_every: float):
        ducklake = lake.ducklake
        assert ducklake is not None
        self.lake, self.ducklake, self.commit_every = lake, ducklake, commit_every
        self._con: duckdb.DuckDBPyConnection | None = None
        self._last_commit = time.monotonic()
        # What this session knows of the catalog, read once (we hold the lock: only we change it): each
        # read of DuckLake's catalog took 20-100 ms, several per ingested log.
        self._manifest: dict[tuple[str, str], tuple[str, str]] | None = None
        self._files: dict[str, dict[str, list[str]]] = {}  # per table, per output: its files
        # Per table, the files placed and the files whose rows end, both at the commit, in one statement each.
        self._to_add: dict[str, list[str]] = {}
        self._to_end: dict[str, list[str]] = {}
        # Per table, the batch its placed files belong to (their names end `.<batch><4 hex>.parquet`) and how
        # many it has: in a data folder, a batch is registered by one pattern (`register`'s glob).
        self._batches: dict[str, tuple[str, int]] = {}
        self._unsynced: set[Path] = set()  # folders whose new names reach the disk before the commit names them
        self._manifest_rows: dict[tuple[str, str], list[object]] = {}  # recorded, written at the commit
        # On a catalog other machines write too (`DuckLake.concurrent_writers`): the snapshot this session's
        # transaction reads, and the outputs it writes, checked at its commit against what others committed.
        self._began_at = 0
        self._written: set[tuple[str, str]] = set()
        self._keys: dict[Path, str] | None = None  # the dataset of each folder an ingest writes aside in
        remove_stale_outputs(lake.root)
        self._swept = False  # whether this session removed the files killed writers left (`_remove_orphans`)
        self._views_made = False  # whether this session made the views of this version (`bring_up_to_date`)

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            # A cursor of this process's writer database of the lake (`lakehouse.base.kept_databases`):
            # DuckLake loads the catalog once per database, 60-70 ms of every session made a database anew.
            con = WRITER_DATABASES.cursor(self._database_key, self._database, self.ducklake.catalog_file)
            try:
                con.execute("SET enable_progress_bar = false")
                con.execute(f"USE {ALIAS}")
                if not self._swept:
                    # Before this session puts a file in the data path: every file is placed after this
                    # connection is made (`_replace` looks up the output's files through it first).
                    with self.ducklake.reaching_data():
                        self._remove_orphans(con)
                    self._swept = True
                con.execute("BEGIN")
                if self.ducklake.concurrent_writers:
                    self._began_at = int(con.execute(f"FROM ducklake_current_snapshot('{ALIAS}')").fetchall()[0][0])
                made = con.execute(f"SELECT digest FROM {CATALOG_VERSION}").fetchone()
                if made is None or made[0] != sql_digest():  # a lakehouse of another version made them
                    bring_up_to_date(con)
                    self._views_made = True
            except duckdb.OutOfMemoryException as exc:  # (DuckLake reads its catalog under the budget)
                self._let_go(con, failed=True)
                raise ResourceError(self.lake.budget.too_small(str(exc).strip())) from None
            except BaseException:
                self._let_go(con, failed=True)
                raise
            self._con = con
        return self._con

    @property
    def _database_key(self) -> tuple[object, ...]:
        return (self.lake.root, self.ducklake, self.lake.budget.duckdb_memory, self.lake.budget.threads)

    def _database(self) -> duckdb.DuckDBPyConnection:
        """A new database with the lake attached to write, under the lake's budget (its spill folder kept as
        long as the database: DuckDB does not make it again)."""
        con = self.ducklake.connect()
        try:
            self.lake.apply_budget(con, f"{DUCKLAKE_WRITER_SPILL}-{next(_DATABASE_NUMBERS)}")
        except BaseException:
            con.close()
            raise
        return con

    def _let_go(self, con: duckdb.DuckDBPyConnection, failed: bool) -> None:
        """Close the session's connection; after a failure, drop the database too (nothing of a transaction
        that went wrong stays in what DuckLake keeps of the catalog)."""
        con.close()
        if failed:
            WRITER_DATABASES.drop(self._database_key)

    def _record_row(self, dataset: str, name: str, entry: tuple[str, str], row: list[object]) -> None:
        """The manifest row, known at once and written with the commit."""
        self._known_manifest()[(dataset, name)] = entry
        self._manifest_rows[(dataset, name)] = row
        self._written.add((dataset, name))

    def remake_views(self) -> None:
        """Make this version's tables, macros and views in the catalog again (`lakehouse catalog rebuild`;
        the session's first statement does so by itself where another version made them)."""
        con = self.con
        if not self._views_made:
            bring_up_to_date(con)
            self._views_made = True

    def commit_outputs(self, renames: list[tuple[Path, Path]], quarantined: int | None = None) -> None:
        """Put an input's outputs (each written aside, `final` naming its dataset's file as the DuckDB
        catalog's lakes lay it out) into their tables, in place of that input's earlier outputs.
        `quarantined`: how many of its lines were rejected, if known (0: its quarantine output is empty)."""
        if self._keys is None:
            self._keys = {dataset.directory(self.lake.root): key for key, dataset in DATASETS.items()}
        for written, final in renames:
            key = self._keys[final.parent]
            self._replace(key, final.stem, written, empty=quarantined == 0 and DATASETS[key].is_quarantine)

    def place(self, dataset: str, written: Path, name: str, rows: int) -> Path | None:
        """A finished file of an analysis table, in place of the one of that name; returns where it now is
        (None on an object store: no file of this machine)."""
        final = self._replace(dataset, name, written)
        self.con.execute(named_query("output_record"), [dataset, name, invocation(), rows])
        self._written.add((dataset, name))
        return None if final is None or self.ducklake.on_object_store else Path(final)

    def remove(self, dataset: str, name: str) -> None:
        """Take a file of an analysis table out of its table (older snapshots keep it)."""
        self._forget_files(dataset, name)
        self.con.execute(named_query("output_forget"), [dataset, name])
        self._written.add((dataset, name))

    def manifest_entry(self, dataset: str, name: str) -> tuple[str, str] | None:
        """(content_hash, status) of an output, if the manifest has it."""
        return self._known_manifest().get((dataset, name))

    def _known_manifest(self) -> dict[tuple[str, str], tuple[str, str]]:
        if self._manifest is None:
            rows = self.con.execute("SELECT dataset, name, content_hash, status FROM meta.manifest").fetchall()
            self._manifest = {(d, n): (str(h), str(s)) for d, n, h, s in rows}
        return self._manifest

    def _write_manifest(self) -> None:
        if not self._manifest_rows:
            return
        keys = ", ".join(f"({sql_literal(d)}, {sql_literal(n)})" for d, n in self._manifest_rows)
        self.con.execute(f"DELETE FROM meta.manifest WHERE (dataset, name) IN ({keys})")
        # One INSERT of every row (the manifest's columns, as `manifest_record` takes them, then the time):
        # a statement per row took 1.7 s of the Google sample's 513 rows.
        rows = list(self._manifest_rows.values())
        values = ", ".join(f"({', '.join(['?'] * len(row))}, now())" for row in rows)
        self.con.execute(f"INSERT INTO meta.manifest VALUES {values}", [value for row in rows for value in row])
        self._manifest_rows.clear()

    def _settle_files(self) -> None:
        """End the rows of the files replaced, then add the files placed, a statement per table (each
        folder's new names made durable first, once: an fsync per file took 1.3 s of the Google sample)."""
        for folder in self._unsynced:
            fsync_dir(folder)
        self._unsynced.clear()
        for key, paths in self._to_end.items():
            listed = ", ".join(sql_literal(path) for path in paths)
            self.con.execute(f"DELETE FROM {DATASETS[key].stored} WHERE filename IN ({listed})")
        for key in list(self._to_add):
            self._register(key)
        self._to_end = {}

    def has_output(self, key: str, name: str) -> bool:
        """Whether the table of `key` holds a file of the output `name`.  A file of a data folder that its
        table names and someone deleted is refused in one line: DuckLake ends a file's rows by reading it,
        so the input cannot be ingested again in its place (a lake of the DuckDB catalog's format did so)."""
        files = self._files_of(key, name)
        if not self.ducklake.on_object_store and (gone := [path for path in files if not Path(path).exists()]):
            raise LakehouseError(
                f"{gone[0]}: a file of the lake's table {DATASETS[key].stored} was deleted outside lakehouse; "
                "put it back (from a backup), or ingest the inputs into a new lake"
            )
        return bool(files)

    def _files_of(self, key: str, name: str) -> list[str]:
        """The files of the output `name` in the table of `key` (each named `<name>.<12 hex>.parquet`)."""
        if key not in self._files:
            by_name: dict[str, list[str]] = {}
            for (path,) in self.con.execute(
                f"SELECT data_file FROM ducklake_list_files('{ALIAS}', '{key}', schema => 'stored')"
            ).fetchall():
                by_name.setdefault(Path(path).name.rsplit(".", 2)[0], []).append(path)
            self._files[key] = by_name
        return self._files[key].get(name, [])

    def _forget_files(self, key: str, name: str) -> None:
        placed = self._to_add.get(key, [])
        for path in self._files_of(key, name):
            if path in placed:  # placed by this session, never registered: its batch's pattern must not find it
                placed.remove(path)
                if not self.ducklake.on_object_store:
                    Path(path).unlink(missing_ok=True)
            else:  # a committed file's rows end; one registered in this transaction is dropped from it
                self._to_end.setdefault(key, []).append(path)
        self._files[key].pop(name, None)

    def _replace(self, key: str, name: str, written: Path, empty: bool = False) -> str | None:
        """Put an output in its table in place of the files of its name; where it went (None: an empty
        quarantine file, which is not kept).  `empty`: known to hold no rows (else a quarantine file's
        footer says; reading it took 0.35 s of the Google sample's 513 parts)."""
        import pyarrow.parquet as pq  # (see the imports)

        final = self.ducklake.table_path(key) + self._batched_name(key, name)
        with interrupts_deferred(), self.ducklake.reaching_data():
            self._forget_files(key, name)
            if DATASETS[key].is_quarantine and (empty or pq.read_metadata(written).num_rows == 0):
                # An input without a rejected line: no file (registering one took half of the Google
                # sample's registrations, 513 of 1,026 files, each of no rows).
                written.unlink()
                return None
            self._put(written, final)
            placed = self._to_add.setdefault(key, [])
            placed.append(final)
            self._files[key][name] = [final]
            if len(placed) >= REGISTER_BATCH:
                # Registered in the open transaction as they come, while an ingest's workers parse the
                # next inputs, rather than all by the commit that ends the ingest, when nothing else runs.
                self._register(key)
        return final

    def _batched_name(self, key: str, name: str) -> str:
        """`stored_name`'s, in a data folder with the table's batch in its last part (8 random hex: should
        a file of the folder have them already, `_register` finds more files than the batch's and takes
        the list)."""
        if self.ducklake.on_object_store:
            return stored_name(name)
        batch, count = self._batches.get(key) or (secrets.token_hex(4), 0)
        self._batches[key] = (batch, count + 1)
        return f"{name}.{batch}{count:04x}.parquet"

    def _register(self, key: str) -> None:
        """Add the files placed in the table of `key` since the last registration (in a data folder, the
        batch, by its pattern) and start a new batch."""
        paths = self._to_add.pop(key, [])
        batch, _ = self._batches.pop(key, ("", 0))
        if not paths:
            return
        glob = None
        if batch:
            folder, pattern = Path(self.ducklake.table_path(key)), f"*.{batch}????.parquet"
            if sorted(str(found) for found in folder.glob(pattern)) == sorted(paths):  # (else: the list)
                glob = f"{folder.as_posix()}/{pattern}"
        register(self.con, key, paths, glob)

    def _put(self, written: Path, final: str) -> None:
        """Move an output written aside to its place in the data path: renamed into its table's folder,
        or, on an object store, uploaded (DuckDB's httpfs writes the object whole or not at all)."""
        if self.ducklake.on_object_store:
            self.con.execute(
                f"COPY (FROM read_parquet({sql_literal(str(written))})) TO {sql_literal(final)} ({PARQUET_OPTIONS})"
            )
            written.unlink()
            return
        target = Path(final)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.replace(written, target)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            # A data folder on another file system (a team's shared folder): copied beside its place, then
            # renamed there (a copy the next writer finds unregistered is an orphan it removes).
            aside = target.with_name(f".{target.name}.tmp")
            shutil.copyfile(written, aside)
            os.replace(aside, target)
            os.unlink(written)
        self._unsynced.add(target.parent)

    def _remove_orphans(self, con: duckdb.DuckDBPyConnection) -> None:
        """Files of the data path that no snapshot names: a writer's, killed before its commit.  On a lake
        of one folder (we hold its lock: no other writer is at work) every one goes; on a catalog writers
        share, those older than the lake's orphan age (another writer may be about to commit a newer one).
        DuckLake's own cleanup lists the data path against its catalog.  Through the session's connection,
        before its transaction (a connection of its own took 50-70 ms of every writer session)."""
        if self.ducklake.concurrent_writers:
            which = f"older_than => now() - to_seconds({self.ducklake.orphan_age_s})"
        else:
            which = "cleanup_all => true"
        con.execute(f"CALL ducklake_delete_orphaned_files('{ALIAS}', {which})").fetchall()

    def commit(self) -> None:
        # Work since the last commit: a transaction (the nightly history writes through `con` itself), or
        # only files placed and manifest rows recorded, which need none until now (what the session knows
        # of the catalog is kept across commits).
        if self._con is None and not (self._to_add or self._to_end or self._manifest_rows):
            return
        con = self.con
        try:
            with self.ducklake.reaching_data():
                self._settle_files()
            self._write_manifest()
            # (DuckLake makes no snapshot of a transaction that changed nothing.)
            con.execute(f"CALL {ALIAS}.set_commit_message('lakehouse', {sql_literal(invocation())})")
        except BaseException:
            WRITER_DATABASES.drop(self._database_key)  # (the connection is closed with the session)
            raise
        failed = True
        try:
            with self.ducklake.reaching_data(), self.ducklake.turn():
                if self.ducklake.concurrent_writers:
                    self._refuse_what_others_committed()
                # DuckLake writes each new file's rows into the catalog on one thread faster than on two
                # (0.8 ms a file against 1.3, measured here; an ingest's parsing has the cores meanwhile).
                con.execute("SET threads = 1")
                with self.ducklake.naming_a_full_disk():
                    con.execute("COMMIT")
            con.execute(f"SET threads = {self.lake.budget.threads}")  # (the database's, kept for the next session)
            failed = False
        finally:
            self._let_go(con, failed)
            self._con = None
            self._written.clear()
            if self.ducklake.concurrent_writers:  # (what this session knew: others have committed since)
                self._manifest, self._files = None, {}
        self._last_commit = time.monotonic()

    def _refuse_what_others_committed(self) -> None:
        """Refuse the commit (nothing of it kept) if another writer committed one of its outputs since this
        session's transaction began: both would keep their rows, and every view would count them twice.
        Called in this writer's turn, so that no other commit comes between the check and ours."""
        if not self._written:
            return
        with self.ducklake.connection(read_only=True) as latest:
            now = int(latest.execute(f"FROM ducklake_current_snapshot('{ALIAS}')").fetchall()[0][0])
            if now == self._began_at:
                return
            span = f"{self._began_at + 1}, {now}"
            theirs = {
                (str(dataset), str(name))
                for table in ("manifest", "outputs")
                for dataset, name in latest.execute(
                    f"SELECT dataset, name FROM ducklake_table_insertions('{ALIAS}', 'meta', '{table}', {span})"
                ).fetchall()
            }
        if both := sorted(theirs & self._written):
            named = ", ".join(f"{dataset} {name}" for dataset, name in both[:5])
            raise LakeBusyError(
                f"another writer committed {named}{' and more' if len(both) > 5 else ''} to the lake's catalog "
                f"{self.ducklake.catalog} while this one worked: nothing of this commit was kept; run the "
                "command again (what the lake holds is skipped)"
            )

    def _closed(self) -> None:
        """Nothing: the writer database's spill folder goes with its process (`SPILL.remove_all`)."""
