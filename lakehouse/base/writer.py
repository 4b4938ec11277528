"""What the writers of a lake share, whatever its format (lakehouse.base.ducklake_lake's, and
lakehouse.base.duckdb_lake's for a lake made before DuckLake): the folder's writer lock, the session that
records the manifest's rows and commits every few seconds, and the outputs written aside and put in place
whole.  `Lake.writer` opens the session."""

from __future__ import annotations

import fcntl
import hashlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import duckdb

from lakehouse.base.datasets import DATASETS
from lakehouse.base.errors import LakehouseError
from lakehouse.base.interrupts import interrupts_deferred

LOCK_FILE = ".writer.lock"


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
