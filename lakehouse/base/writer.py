"""The single writer of a lake: its lock, and the private copy of the catalog it works on and renames
over the real one at each commit (DuckDB lets one process write a database file *or* many read it),
with the outputs it renames into place.  `Lake.writer` opens it."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING

import duckdb

from lakehouse.base.budget import SPILL
from lakehouse.base.catalog import named_query, prepare_catalog, refresh_views, save_meta
from lakehouse.base.datasets import DATASETS
from lakehouse.base.errors import LakehouseError
from lakehouse.base.interrupts import interrupts_deferred

if TYPE_CHECKING:
    from lakehouse.base.lake import Lake

CATALOG_FILE = "lake.duckdb"
LOCK_FILE = ".writer.lock"
WRITER_SPILL = "catalog-writer"  # the spill folder of the writer's catalog copy


@contextmanager
def process_lock(
    path: Path, busy: Callable[[str], LakehouseError], wait: bool | float | None = False
) -> Iterator[None]:
    """An exclusive lock on `path` for this process, which the kernel releases when the process ends
    (a killed holder never leaves a stale lock).  The file holds the holder's pid; `busy(pid)` is raised
    when another process holds it, at once (`wait` False or 0), after `wait` seconds, or never (True or
    None: queue until it is free)."""
    # Unbuffered: a write that fails (a full disk) leaves nothing behind for close() to fail on again.
    try:
        lock_file = open(path, "a+b", buffering=0)  # noqa: SIM115 (closed by the with below)
    except OSError as exc:  # a read-only mount (EROFS), a folder in its place, no permission
        raise LakehouseError(
            f"{path.parent}: cannot take the writers' lock ({exc.strerror or exc}): a command that changes "
            "the lake (init, ingest, catalog rebuild, a report, nightly) needs a lake it can write; one that "
            "reads (sql, logs, simulate) works on it as it is"
        ) from None
    forever = wait is None or wait is True
    deadline = time.monotonic() + (0.0 if forever or not wait else float(wait))
    with lock_file as lock:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | (0 if forever else fcntl.LOCK_NB))
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    lock.seek(0)
                    raise busy(lock.read().decode(errors="replace").strip() or "unknown") from None
                time.sleep(0.2)
        _write_pid(lock, str(os.getpid()))
        try:
            yield
        finally:
            _write_pid(lock, "")


def _write_pid(lock: IO[bytes], text: str) -> None:
    try:
        lock.truncate(0)
        lock.write(text.encode())
    except OSError:  # a full disk: the lock holds all the same, only the message lacks the pid
        pass


class WriterSession:
    """What both writers of a lake (this module's and a DuckLake lake's) do alike: record the manifest's
    rows, committing when `commit_every` seconds have passed since the last commit, and close."""

    commit_every: float
    _last_commit: float
    _con: duckdb.DuckDBPyConnection | None

    def record(
        self,
        *,
        dataset: str,
        name: str,
        source: str,
        size: int | None,
        content_hash: str | None,
        rows_in: int | None,
        rows_out: int | None,
        rows_quarantined: int | None,
        status: str,
        message: str | None,
    ) -> None:
        """Record one manifest row (replacing the output's previous row)."""
        row: list[object] = [
            dataset, name, source, size, content_hash, rows_in, rows_out, rows_quarantined, str(status), message
        ]  # fmt: skip
        self._record_row(dataset, name, (str(content_hash), str(status)), row)
        if time.monotonic() - self._last_commit >= self.commit_every:
            self.commit()

    def _record_row(self, dataset: str, name: str, entry: tuple[str, str], row: list[object]) -> None:
        """Record the manifest's `row` of the output `name` of `dataset`: `entry`, its (content_hash,
        status), is what `manifest_entry` then answers."""
        raise NotImplementedError

    def commit(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Commit what was recorded (a Ctrl-C waits for it), then let go of the connection."""
        try:
            with interrupts_deferred():
                self.commit()
        finally:
            if self._con is not None:
                self._con.close()
                self._con = None
            self._closed()

    def _closed(self) -> None:
        """What this writer leaves to clean after its last commit."""
        raise NotImplementedError


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
                with self.lake.opening_catalog():
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


def fingerprint(chunks: Iterator[bytes] | list[bytes]) -> str:
    """The manifest's fingerprint of an input: SHA-256 (hardware-accelerated here, 2.5x BLAKE2b, which
    mattered when every Google part is hashed before it is read)."""
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk)
    return digest.hexdigest()


def remove_stale_outputs(root: Path) -> None:
    """Remove the outputs that killed writers wrote aside and never put in place (a writer holds the lake's
    lock: nobody else owns them) -- except a report's output computed outside the lock, named after its
    process (`.NAME.PID.tmp`): it is stale once that process is gone."""
    for dataset in DATASETS.values():
        for path in dataset.directory(root).glob(".*.tmp"):
            if not _owner_alive(path):
                path.unlink(missing_ok=True)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _owner_alive(path: Path) -> bool:
    """Whether `.NAME.PID.tmp` belongs to a running process, this one included (a report's result
    waiting to be stored); a name without a pid has no owner but the writer."""
    pid = path.name.removesuffix(".tmp").rpartition(".")[2]
    if not pid.isdigit():
        return False
    if int(pid) == os.getpid():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def invocation() -> str:
    """The command that wrote a file (`lakehouse report NAME --option value`), for meta.outputs."""
    return " ".join([Path(sys.argv[0]).name, *sys.argv[1:]])[:300]


def pending_path(final: Path) -> Path:
    """Where an output written outside the writer's lock (a report's computation, a campaign's runs)
    waits to be renamed into place: a hidden name that carries this process's id, so that the next
    writer removes it once the process is gone, and never while it runs."""
    return final.with_name(f".{final.name}.{os.getpid()}.tmp")


def replace_atomically(tmp: Path, final: Path) -> None:
    """Rename a finished output into place (readers see the old file or the new one, never half)."""
    os.replace(tmp, final)
    fsync_dir(final.parent)
