"""The databases a process keeps for the DuckLake lakes it reads and writes: one per lake (and snapshot,
and budget) for its readers, one per lake for its writer sessions, whose connections are its cursors.

DuckLake loads a lake's catalog into each database that attaches it: a new database took 20 ms to make
and 45-60 ms for its first query, where a cursor of one that has the lake attached answered in 9-10 ms
(measured here on the test suite's lakes: a nightly run opens some 300 readers).  A cursor is a
connection of its own (its own transaction, its own thread), and each of its statements reads the
catalog's latest snapshot, so sharing the database shows no reader an older lake than a database of its
own would.  The database's settings (the memory limit, threads, spill folder) are the whole database's:
its readers share the lake's budget, as one command's readers should.  A writer session takes a cursor
of its lake's writer database for each transaction (a nightly run has some twenty sessions, an ingest one
or more); a session that fails drops the database (`drop`), so that nothing of a transaction that went
wrong stays in what DuckLake keeps of the catalog.

A few databases are kept, the most recently used; one dropped from the list ends with its last cursor.
A SQLite catalog is keyed by its file's identity too: a catalog replaced under its name (a lake removed and
made again at the same path, a backup put back) is a new database's."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

import duckdb

_Identity = tuple[int, int]  # a file's device and inode

#: How many databases a process keeps (each holds its lake's catalog: 24-28 MB of its pool).
KEPT = 2


class KeptDatabases:
    """Databases kept by key, the most recent KEPT of them; each caller takes a cursor of one."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        # (key, its catalog file's identity) -> (the database, the descriptor holding that file open, if any)
        self._databases: OrderedDict[tuple[Hashable, _Identity | None], tuple[duckdb.DuckDBPyConnection, int | None]]
        self._databases = OrderedDict()
        self._pid = os.getpid()
        # A forked child's copies of the parent's databases: never used, and never closed either (closing a
        # DuckDB database another process's threads ran waits on threads the child does not have).
        self._inherited: list[object] = []

    def cursor(
        self, key: Hashable, make: Callable[[], duckdb.DuckDBPyConnection], catalog_file: str | None = None
    ) -> duckdb.DuckDBPyConnection:
        """A new connection (a cursor) of the database kept under `key` and, when it is given, the identity
        of the file `catalog_file` (held open while the database is kept, so that no other file takes its
        inode); made by `make` when there is none."""
        held = _opened(catalog_file)
        identity = None if held is None else _identity(held)
        with self._mutex:
            if self._pid != os.getpid():
                self._inherited.extend(self._databases.values())
                self._databases.clear()
                self._pid = os.getpid()
            kept = self._databases.get((key, identity))
            if kept is not None:
                self._databases.move_to_end((key, identity))
                if held is not None:
                    os.close(held)
                return kept[0].cursor()
            try:
                database = make()
            except BaseException:
                if held is not None:
                    os.close(held)
                raise
            self._databases[(key, identity)] = (database, held)
            while len(self._databases) > KEPT:
                _, (_, descriptor) = self._databases.popitem(last=False)  # (its cursors in use keep it open)
                if descriptor is not None:
                    os.close(descriptor)
            return database.cursor()

    def drop(self, key: Hashable) -> None:
        """Drop the database kept under `key` (whatever its file; its cursors in use keep it open)."""
        with self._mutex:
            for kept_key in [kept for kept in self._databases if kept[0] == key]:
                _, descriptor = self._databases.pop(kept_key)
                if descriptor is not None:
                    os.close(descriptor)


def _opened(path: str | None) -> int | None:
    if path is None:
        return None
    try:
        return os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None  # (no catalog there: `make` says so)


def _identity(descriptor: int) -> _Identity:
    found = os.fstat(descriptor)
    return found.st_dev, found.st_ino


#: This process's, for its readers (`Lake.cursor`) and for its writer sessions (`DuckLakeWriter`).
READER_DATABASES = KeptDatabases()
WRITER_DATABASES = KeptDatabases()
