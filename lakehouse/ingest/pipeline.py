"""The one shape of every ingest: fingerprint each input file, skip it when the manifest says it is
committed unchanged, otherwise parse it and write its outputs aside (worker threads); then, in the
main thread, rename them into place and record the file in the manifest — all inside the lake's
single-writer session, so that a crash or Ctrl-C keeps exactly what was recorded, no output is in
place without its manifest row, and a re-run does the rest.

Ctrl-C: the files not started are dropped, the ones being parsed are left to finish writing aside
(the next writer removes what they wrote), and what was recorded is committed.

An ingest (SWF logs, Google trace parts) says only what differs: how a file is fingerprinted, whether
its committed output is still in place, and how it is parsed and written (`Source`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import duckdb

from lakehouse.base.errors import BrokenFileError
from lakehouse.base.interrupts import interrupts_deferred
from lakehouse.base.lake import Lake, LakeWriter
from lakehouse.ingest.status import Status


@dataclass
class Outcome:
    """What became of one input file; its counts go to the manifest as they are."""

    status: Status = Status.ok
    rows_in: int = 0  # data lines read
    rows_out: int = 0  # rows written
    quarantined: int = 0  # lines sent to the quarantine
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0
    size: int = 0  # bytes of the input file
    content_hash: str | None = None
    renames: list[tuple[Path, Path]] = field(default_factory=list)  # (written aside, final), in order

    def fail(self, error: str) -> Outcome:
        self.status, self.error = Status.failed, error
        return self


@dataclass(frozen=True)
class Task:
    """One input file and where the manifest keeps it."""

    dataset: str  # e.g. 'swf', 'google.task_usage'
    name: str  # the output's name in its dataset: the log, the part
    path: Path
    problem: str | None = None  # found unusable before reading (e.g. a misnamed file): reported, not recorded


class Source(Protocol):
    def fingerprint(self, task: Task) -> tuple[str, int]:
        """The file's content hash and size (OSError if it cannot be read, BrokenFileError if it must
        not be ingested, e.g. a copy of another input)."""
        ...

    def committed(self, task: Task) -> bool:
        """Its committed output is in place and was made with the same options."""
        ...

    def process(self, task: Task) -> Outcome:
        """Parse, write the outputs aside, rename them into place (BrokenFileError for a file that is
        not what it should be)."""
        ...

    def failed(self, task: Task, outcome: Outcome) -> None:
        """Amend the error of a file that failed (e.g. say what of it stays in the lake)."""
        ...


def ingest_files(
    lake: Lake,
    tasks: Sequence[Task],
    source: Source,
    *,
    force: bool = False,
    workers: int = 2,
    on_done: Callable[[Task, Outcome], None] | None = None,
) -> list[tuple[Task, Outcome]]:
    """Run the ingest of `tasks` in order; one outcome per task, recorded as it finishes."""
    done: list[tuple[Task, Outcome]] = []
    pending: list[tuple[Task, Outcome, Future[Outcome] | None, float]] = []
    with lake.writer(create=True) as writer, _workers(workers, pending) as pool:
        for task in tasks:
            outcome = Outcome()
            if task.problem is not None:
                pending.append((task, outcome.fail(task.problem), None, 0.0))
                continue
            try:
                outcome.content_hash, outcome.size = source.fingerprint(task)
            except OSError as exc:
                pending.append((task, outcome.fail(f"{task.path}: {exc.strerror or exc}"), None, 0.0))
                continue
            except BrokenFileError as exc:  # e.g. a copy of another input
                pending.append((task, outcome.fail(str(exc)), None, 0.0))
                continue
            if not force and _unchanged(writer, task, outcome, source):
                outcome.status = Status.unchanged
                _finish(done, task, outcome, on_done)
                continue
            pending.append((task, outcome, pool.submit(source.process, task), time.perf_counter()))
        # Recorded in submission order; a Ctrl-C here still commits what was recorded (see Lake.writer).
        for task, outcome, future, started in pending:
            if future is not None:
                outcome = _result(task, outcome, future)
                outcome.seconds = time.perf_counter() - started
            if outcome.status is Status.failed:
                source.failed(task, outcome)
            with interrupts_deferred():  # an output in place always has its manifest row
                if outcome.status is Status.ok:
                    writer.commit_outputs(outcome.renames, outcome.quarantined)
                    outcome.renames = []
                if task.problem is None:
                    _record(writer, task, outcome)
            _finish(done, task, outcome, on_done)
    order = {id(task): i for i, task in enumerate(tasks)}
    return sorted(done, key=lambda pair: order[id(pair[0])])


@contextmanager
def _workers(
    count: int, pending: list[tuple[Task, Outcome, Future[Outcome] | None, float]]
) -> Iterator[ThreadPoolExecutor]:
    """A thread pool that, on Ctrl-C (or any error), drops the files not started, waits for the ones
    being parsed (they only write aside: at most a file's time) and removes what they wrote and
    nobody committed, so that no thread of this ingest outlives it."""
    pool = ThreadPoolExecutor(max_workers=count)
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        for _, _, future, _ in pending:
            if future is not None and not future.cancelled() and future.exception() is None:
                for written, _ in future.result().renames:
                    written.unlink(missing_ok=True)
        raise
    pool.shutdown(wait=True)


def _unchanged(writer: LakeWriter, task: Task, outcome: Outcome, source: Source) -> bool:
    return writer.manifest_entry(task.dataset, task.name) == (outcome.content_hash, Status.ok) and source.committed(
        task
    )


def _result(task: Task, outcome: Outcome, future: Future[Outcome]) -> Outcome:
    try:
        made = future.result()
    except BrokenFileError as exc:
        return outcome.fail(str(exc))
    except OSError as exc:
        return outcome.fail(f"{task.path}: {exc.strerror or exc}")
    except duckdb.Error as exc:  # e.g. DuckDB's report of a full disk while it wrote the outputs
        return outcome.fail(f"{task.path}: {str(exc).strip().splitlines()[0]}")
    made.size, made.content_hash = outcome.size, outcome.content_hash
    return made


def _record(writer: LakeWriter, task: Task, outcome: Outcome) -> None:
    writer.record(
        dataset=task.dataset,
        name=task.name,
        source=str(task.path),
        size=outcome.size,
        content_hash=outcome.content_hash,
        rows_in=outcome.rows_in,
        rows_out=outcome.rows_out,
        rows_quarantined=outcome.quarantined,
        status=Status.ok if outcome.status is Status.ok else Status.failed,
        message=outcome.error or ("; ".join(outcome.warnings) or None),
    )


def _finish(
    done: list[tuple[Task, Outcome]],
    task: Task,
    outcome: Outcome,
    on_done: Callable[[Task, Outcome], None] | None,
) -> None:
    done.append((task, outcome))
    if on_done is not None:
        on_done(task, outcome)
