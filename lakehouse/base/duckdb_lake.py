"""A lake of the DuckDB catalog's format, made before DuckLake (`LAKEHOUSE_FORMAT=duckdb` still makes one;
`lakehouse migrate` makes a DuckLake lake of it): its catalog, ``lake.duckdb``, holds views over the
Parquet of ``parquet/``, ``quarantine/`` and ``analysis/`` by absolute path, each dataset's folder a schema
file of no rows that its view reads, and ``meta/`` a copy of each meta table (lakehouse.base.catalog).

Here: how `Lake` attaches such a catalog (refusing one DuckDB cannot open, or one built for a lake
elsewhere), the schema files, `catalog rebuild`, and the writer.  DuckDB lets one process write a database
file *or* many read it, so the writer (`CatalogWriter`) works on a private copy of the catalog and renames
it over the real one at each commit.
"""

from __future__ import annotations

import functools
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from lakehouse.base.budget import SPILL
from lakehouse.base.catalog import (
    META_FOLDER,
    meta_problem,
    named_query,
    prepare_catalog,
    refresh_views,
    save_meta,
    sql_literal,
)
from lakehouse.base.datasets import DATASETS, SCHEMA_FILE
from lakehouse.base.errors import LakehouseError
from lakehouse.base.interrupts import interrupts_deferred
from lakehouse.base.writer import WriterSession, fsync_dir, invocation, remove_stale_outputs, replace_atomically

if TYPE_CHECKING:
    from lakehouse.base.lake import Lake

CATALOG_FILE = "lake.duckdb"
WRITER_SPILL = "catalog-writer"  # the spill folder of the writer's catalog copy


def attach_catalog(con: duckdb.DuckDBPyConnection, root: Path, snapshot: int | None) -> None:
    """Attach the catalog of the lake at `root` read-only to `con`, as `lake`, in use."""
    if snapshot is not None:
        raise LakehouseError(
            f"{root}: a lake of the DuckDB-catalog format keeps no snapshots (--as-of reads a "
            "DuckLake lake's; `lakehouse migrate` makes one of this lake)"
        )
    with opening_catalog(root):
        con.execute(f"ATTACH {sql_literal(str(root / CATALOG_FILE))} AS lake (READ_ONLY)")
    con.execute("USE lake")
    _check_root(con, root)


@contextmanager
def opening_catalog(root: Path) -> Iterator[None]:
    """A catalog DuckDB cannot open (overwritten, truncated) is named with the way back."""
    try:
        yield
    except duckdb.Error as exc:
        raise LakehouseError(
            f"{root / CATALOG_FILE}: {str(exc).strip()}; `lakehouse catalog rebuild --lake {root}` "
            "remakes the catalog from the lake's files"
        ) from None


def catalog_problem(root: Path) -> str | None:
    """Why DuckDB cannot read the catalog of the lake at `root`, or None when it can."""
    try:
        with duckdb.connect(str(root / CATALOG_FILE), read_only=True) as con:
            con.execute("SELECT count(*) FROM meta.manifest").fetchone()
    except duckdb.Error as exc:
        return str(exc).strip()
    return None


def rebuild(lake: Lake) -> Path | None:
    """Recreate every view for where the lake is now; a catalog DuckDB cannot read is moved aside
    (returned) and remade from the copies of its tables and the lake's files."""
    aside = None
    # The session remakes the catalog when it ends: from a copy of the one in place, or anew.
    # Checked before the writer's session, which would try to commit the broken catalog on its way out.
    if lake.exists() and catalog_problem(lake.root) is not None and (problem := meta_problem(lake.root)):
        raise LakehouseError(
            f"{lake.root / META_FOLDER}: the copies of the catalog's tables cannot be read ({problem}), "
            "so the catalog cannot be remade from them; nothing was moved: put back meta/ from a backup"
        )
    with lake.writer(wait=True, create=True):
        if lake.exists() and catalog_problem(lake.root) is not None:
            aside = lake.catalog_path.with_name(f"{CATALOG_FILE}.broken-{time.strftime('%Y%m%d-%H%M%S')}")
            os.replace(lake.catalog_path, aside)
    return aside


def _check_root(con: duckdb.DuckDBPyConnection, root: Path) -> None:
    """Refuse a catalog built for a lake elsewhere: its views would read there."""
    try:
        built = con.execute("SELECT root FROM meta.lake").fetchone()
    except duckdb.CatalogException:
        built = None  # a catalog made before the check existed
    if built and Path(built[0]).resolve() != root.resolve():
        con.close()
        raise LakehouseError(
            f"the lake at {root} was built at {built[0]}: its views still read there; "
            f"run `lakehouse catalog rebuild --lake {root}`"
        )


def ensure_schema_files(root: Path) -> None:
    """Each dataset's schema file, which its view reads.  A dataset that gained columns (its schema's
    version went up) gets its new empty file, so that views naming the new columns bind in lakes made
    before them."""
    import pyarrow.parquet as pq  # only writers need it; readers (every report, `simulate`) start faster

    for dataset in DATASETS.values():
        schema_file = dataset.directory(root) / SCHEMA_FILE
        if _schema_file_checked(schema_file):
            continue
        if not schema_file.exists() or not pq.read_schema(schema_file).equals(dataset.schema):
            tmp = schema_file.with_name(f".{SCHEMA_FILE}.tmp")
            tmp.write_bytes(_empty_parquet(dataset.key))
            os.replace(tmp, schema_file)
        _schema_file_checked(schema_file, checked=True)


#: The schema files this process found right (or wrote), by what `stat` says of them: a writer session
#: read all ~45 of them again (10 ms), though the same file, unchanged, holds the same schema.
_CHECKED_SCHEMA_FILES: set[tuple[str, int, int, int]] = set()


@functools.cache
def _empty_parquet(dataset: str) -> bytes:
    """A Parquet file of no rows with the dataset's schema, made once per process (pyarrow took 2 ms
    a file, 0.1 s for the ~45 files of every new lake)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(DATASETS[dataset].schema.empty_table(), sink)
    return bytes(sink.getvalue())


def _schema_file_checked(path: Path, checked: bool = False) -> bool:
    """Whether `path`, as it is now, was found right by this process; `checked`: record that it was."""
    try:
        status = path.stat()
    except OSError:
        return False
    key = (str(path), status.st_ino, status.st_size, status.st_mtime_ns)
    if checked:
        _CHECKED_SCHEMA_FILES.add(key)
    return key in _CHECKED_SCHEMA_FILES


class CatalogWriter(WriterSession):
    """A private copy of the catalog that is renamed over the real one at each commit."""

    def __init__(self, lake: Lake, commit_every: float):
        self.lake = lake
        self.commit_every = commit_every
        self._sessions = 0
        self._tmp = self._session_file()
        # Left by killed writers: the catalog copy and its write-ahead log (we hold the lock: nobody
        # else owns them), and outputs not yet renamed into place.
        for path in [*lake.root.glob(f".{CATALOG_FILE}.*.tmp"), *lake.root.glob(f".{CATALOG_FILE}.*.tmp.wal")]:
            path.unlink(missing_ok=True)
        remove_stale_outputs(lake.root)
        self._con: duckdb.DuckDBPyConnection | None = None
        self._views: dict[str, str] = {}  # the DDL of each view as applied to the copy
        self._prepared = False  # the setup files run on the copy (once per writer)
        self._last_commit = time.monotonic()
        self._dirty = True  # the views are re-applied on every session: commit at least once

    def _session_file(self) -> Path:
        """A catalog copy of its own for each session: DuckDB keeps one database per file in a process,
        and a connection of an earlier session still referenced somewhere (an interrupted query's
        traceback) made a new connection to the same file wait for it forever."""
        self._sessions += 1
        return self.lake.root / f".{CATALOG_FILE}.{os.getpid()}.{self._sessions}.tmp"

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            # Whole or not at all: a catalog copy interrupted halfway through its views would be swapped
            # in by close() with views missing.
            with interrupts_deferred():
                if self.lake.catalog_path.exists():
                    shutil.copyfile(self.lake.catalog_path, self._tmp)
                with opening_catalog(self.lake.root):
                    con = duckdb.connect(str(self._tmp))
                self.lake.apply_budget(con, WRITER_SPILL)
                # The first session brings the catalog up to this package's setup; the later ones copy
                # what this writer committed, which has it (re-applying took ~0.5 s a commit).  The views
                # are made at the commit, for the files committed by then: made here too, a new lake's
                # ~80 views were bound twice in its first session (0.2 s).
                if not self._prepared:
                    self._views = prepare_catalog(con, self.lake.root)
                    self._prepared = True
                self._con = con
        return self._con

    def _record_row(self, dataset: str, name: str, entry: tuple[str, str], row: list[object]) -> None:
        self.con.execute(named_query("manifest_forget"), [dataset, name])
        self.con.execute(named_query("manifest_record"), row)
        self._dirty = True

    def commit_outputs(self, renames: list[tuple[Path, Path]], quarantined: int | None = None) -> None:
        """Rename an input's outputs (each written aside) into place, in order; the next commit's views
        read them (every output, an empty quarantine file too: the views list them by the manifest)."""
        for written, final in renames:
            replace_atomically(written, final)

    def has_output(self, key: str, name: str) -> bool:
        """Whether the output `name` of the dataset `key` is in place."""
        return DATASETS[key].file(self.lake.root, name).exists()

    def place(self, dataset: str, written: Path, name: str, rows: int) -> Path:
        """Rename a finished file of an analysis table into its folder and record it (meta.outputs) as
        its view's to read from the next commit on; returns where it now is."""
        con = self.con
        final = DATASETS[dataset].file(self.lake.root, name)
        with interrupts_deferred():  # the file and its row together
            replace_atomically(written, final)
            con.execute(named_query("output_record"), [dataset, name, invocation(), rows])
            self._dirty = True
        return final

    def remove(self, dataset: str, name: str) -> None:
        """Take a committed file of an analysis table out of its view (committed at once), then delete
        it: a reader of the catalog as it was may still be reading it, so the file goes last."""
        self.con.execute(named_query("output_forget"), [dataset, name])
        self._dirty = True
        with interrupts_deferred():
            self.commit()
            DATASETS[dataset].file(self.lake.root, name).unlink(missing_ok=True)

    def manifest_entry(self, dataset: str, name: str) -> tuple[str, str] | None:
        """(content_hash, status) of an output, if the manifest has it."""
        with self.lake.query_errors():
            row = self.con.execute(named_query("manifest_entry"), [dataset, name]).fetchone()
        return (row[0], row[1]) if row else None

    def commit(self) -> None:
        if self._con is None and not self._dirty:
            return
        # The views read the files the manifest names: those recorded since they were made, too.
        refresh_views(self.con, self.lake.root, self._views)
        save_meta(self.con, self.lake.root)
        self.con.execute("CHECKPOINT")
        self.con.close()
        self._con = None
        os.replace(self._tmp, self.lake.catalog_path)
        self._tmp = self._session_file()
        fsync_dir(self.lake.root)
        self._dirty = False
        self._last_commit = time.monotonic()

    def _closed(self) -> None:
        self._tmp.unlink(missing_ok=True)
        self._tmp.with_name(f"{self._tmp.name}.wal").unlink(missing_ok=True)  # a commit that failed
        SPILL.forget(self.lake.root, WRITER_SPILL)
