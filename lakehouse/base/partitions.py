"""A report's work in partitions: in this process one after the other, or as Ray tasks on a cluster.

A report whose per-job (or per-task) work outgrows one machine splits it by a hash of the job into
partitions, each small enough for a worker's memory limit, and combines their results.  The report
writes one function, the work of partition `number`; `run_partitions` runs it for every number, here or
on Ray, and hands back the results in partition order.  There is one implementation of the work, not
one per engine, so the results cannot differ by where they ran (tests check it all the same).

Why plain Ray tasks: each partition is already a DuckDB query over Parquet files; the engine only has to
place it, retry it when its worker dies and return its (small) result.  Ray Data would re-partition the
rows itself, and the per-task statistics need every window of a task in one partition (the measurements
are in docs/scale-out.md).

A partition's work must be idempotent: a worker killed mid-partition is run again by Ray (up to
`RETRIES` times), so it writes its files under temporary names and renames them into place last.
"""

from __future__ import annotations

import logging
import re
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lakehouse.base.catalog import sql_literal
from lakehouse.base.errors import LakehouseError, ResourceError, SettingsError

if TYPE_CHECKING:
    import duckdb


T = TypeVar("T")

RAY_MISSING = "Ray is optional and not installed: pip install 'lakehouse[ray]' (or pip install 'ray>=2.9')"
#: How often Ray runs a partition again whose worker died (killed, out of memory) before giving up.
RETRIES = 3
#: How long a Ray head may take to accept a connection before the command gives up on it (Ray's own
#: client retries for minutes).
CONNECT_SECONDS = 10.0
_RAY_ADDRESS = re.compile(r"^(?:ray://)?(?P<host>[A-Za-z0-9][A-Za-z0-9.\-]*|\[[0-9A-Fa-f:]+\]):(?P<port>\d{1,5})$")
RAY_AUTH_LOGGER = "ray._private.authentication.authentication_token_setup"


def ray_module() -> Any:
    """Ray, imported only when asked for (it takes seconds), or a LakehouseError saying how to get it."""
    try:
        import ray
    except ImportError:
        raise LakehouseError(RAY_MISSING) from None
    return ray


def ray_address(text: str) -> str:
    """`auto` (the cluster this machine belongs to) or HOST:PORT (ray://HOST:PORT), as written; a
    SettingsError otherwise (an Option's `reads`: checked before any work, and in the nightly config)."""
    if text == "auto":
        return text
    found = _RAY_ADDRESS.match(text)
    if found is None or not 0 < int(found["port"]) < 65536:
        raise SettingsError(f"Ray address {text!r}: expected auto, HOST:PORT or ray://HOST:PORT")
    return text


def check_ray_address(address: str, option: str = "--ray") -> None:
    """Refuse, before any work, an address that is not `auto` or HOST:PORT, or where nothing accepts a
    connection within CONNECT_SECONDS."""
    try:
        ray_address(address)
    except SettingsError as exc:
        raise LakehouseError(f"{option}: {exc}") from None
    if address == "auto":
        return
    found = _RAY_ADDRESS.match(address)
    assert found is not None
    host = found["host"].strip("[]")
    try:
        socket.create_connection((host, int(found["port"])), timeout=CONNECT_SECONDS).close()
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise LakehouseError(
            f"{option} {address}: nothing answers there ({reason}); start the head with `ray start --head` "
            "or give the address it printed"
        ) from None


def _not_the_token_notice(record: logging.LogRecord) -> bool:
    return "Token authentication is enabled for this Ray cluster" not in record.getMessage()


@contextmanager
def joined(address: str | None, workers: int | None = None) -> Iterator[Any]:
    """Ray, joined to the cluster at `address` (`auto`: the one this machine belongs to), or a Ray
    instance started here with `workers` CPUs when `address` is None; left (or stopped) at the end.
    Already joined (a test, a caller's own `ray.init`): used as it is.  (Check the address first,
    `check_ray_address`: Ray's own client waits minutes for one that does not answer.)"""
    ray = ray_module()
    started_here = not ray.is_initialized()
    if started_here:
        # "local": a new instance even where one runs already (Ray would join that one by itself).
        options = {"address": address} if address else {"address": "local", "num_cpus": workers}
        if not address:
            # Ray starts its own instance with token authentication (its default, kept) and tells
            # every command's stderr so: a notice for cluster operators, not for this command's user.
            logging.getLogger(RAY_AUTH_LOGGER).addFilter(_not_the_token_notice)
        try:
            ray.init(**options, include_dashboard=False, log_to_driver=False, configure_logging=False)
        except (ConnectionError, RuntimeError, TimeoutError) as exc:  # what Ray raises when it cannot start or join
            where = f"the Ray cluster at {address}" if address else "a local Ray instance"
            raise LakehouseError(f"could not start or join {where}: {exc}") from None
    try:
        yield ray
    finally:
        if started_here:
            ray.shutdown()


@dataclass(frozen=True)
class Partitioning:
    """How a report splits its work: `count` partitions (None: as many as the memory limit asks for),
    run in this process (`ray` None) or as Ray tasks on the cluster at `ray` (auto or HOST:PORT)."""

    count: int | None = None
    ray: str | None = None

    def resolve(self, needed: int, units: Callable[[], int], unit: str) -> int:
        """The number of partitions: the one asked for, else `needed` (what the memory limit asks for:
        a partition it leaves empty costs nothing).  One asked for is refused when it is more than there
        are `units()` (jobs, tasks; counted only then) to split, since a partition would be empty."""
        if self.count is None:
            return max(needed, 1)
        if self.count < 1:
            raise SettingsError(f"--partitions {self.count}: at least 1")
        if self.count > (most := max(units(), 1)):
            raise SettingsError(
                f"--partitions {self.count}: there are only {most:,} {unit} to split; give at most {most:,}"
            )
        return self.count


class PartitionError(LakehouseError, RuntimeError):
    """A partition that failed (after Ray's retries): the message names it and what to change."""


def run_partitions(work: Callable[[int], T], count: int, ray: str | None = None) -> list[T]:
    """`work(number)` for number 0..count-1: here, one after the other (`ray` None), or as Ray tasks on
    the cluster at `ray`; the results in partition order.  On Ray, `work` and its result travel by
    pickle: a module-level function, or a partial of one, over picklable arguments (a Lake is)."""
    if ray is None:
        return [_here(work, number, count) for number in range(count)]
    check_ray_address(ray)
    with joined(ray) as engine:
        # SPREAD: the partitions go to every node of the cluster, not first to fill the one the command
        # runs on (each partition takes a worker's memory; a short one would otherwise all land there).
        remote = engine.remote(num_cpus=1, max_retries=RETRIES, retry_exceptions=False, scheduling_strategy="SPREAD")(
            _partition
        )
        pending = {remote.remote(work, number): number for number in range(count)}
        results_by_number: dict[int, T] = {}
        try:
            while pending:
                done, _ = engine.wait(list(pending), num_returns=1)
                number = pending.pop(done[0])
                try:
                    results_by_number[number] = engine.get(done[0])
                except engine.exceptions.RayError as exc:
                    raise PartitionError(_failure(number, count, exc)) from None
        except BaseException:
            for ref in pending:
                engine.cancel(ref, force=True)
            raise
    return [results_by_number[number] for number in range(count)]


def _partition(work: Callable[[int], T], number: int) -> T:
    return work(number)


def _here(work: Callable[[int], T], number: int, count: int) -> T:
    """One partition in this process; out of memory, one line naming it (of several) and what to change."""
    try:
        return work(number)
    except ResourceError as exc:
        if count == 1:
            raise
        raise PartitionError(_out_of_memory(number, count, exc)) from None


def _out_of_memory(number: int, count: int, exc: ResourceError) -> str:
    return f"partition {number} of {count}: {exc}; or give more partitions (--partitions)"


def _failure(number: int, count: int, exc: Exception) -> str:
    """One line for a partition that failed on Ray: which, why, and what to change."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, ResourceError):  # DuckDB's memory limit, even spilling
        return _out_of_memory(number, count, cause)
    if isinstance(cause, LakehouseError):  # the work's own words (a query error)
        return f"partition {number} of {count}: {cause}"
    text = " ".join(str(exc).split())
    if "OutOfMemory" in type(exc).__name__ or "out of memory" in text.lower():
        return (
            f"partition {number} of {count} ran out of its worker's memory: give more partitions (--partitions) "
            "or a larger --memory-limit"
        )
    died = "WorkerCrashed" in type(exc).__name__ or "died" in text.lower()
    reason = f"its worker died {RETRIES + 1} times" if died else text[:300]
    return f"partition {number} of {count} failed on Ray: {reason}"


def split_by_hash(con: duckdb.DuckDBPyConnection, folder: Path, name: str, query: str, key: str, count: int) -> None:
    """Write `query`'s rows into `folder/name/partition=N/` by a hash of `key` (columns of the query),
    in one scan: each of the `count` partitions then reads its own rows (`partition_files`), not all
    of them filtered, so the work grows with the rows, not with the rows times the partitions."""
    con.execute("SET preserve_insertion_order = false")  # lets DuckDB write the partitions without buffering
    target = sql_literal((folder / name).as_posix())
    con.execute(
        f"COPY (SELECT *, hash({key}) % {count} AS partition FROM ({query})) TO {target} "
        "(FORMAT parquet, PARTITION_BY (partition), WRITE_PARTITION_COLUMNS false)"
    )


def partition_files(folder: Path, name: str, number: int) -> list[Path]:
    """The files `split_by_hash` wrote for partition `number` of `name` (none when it had no rows)."""
    return sorted((folder / name / f"partition={number}").glob("*.parquet"))


def read_files(files: list[Path]) -> str:
    """A FROM clause reading exactly these Parquet files (their folders' names are not columns)."""
    return f"read_parquet([{', '.join(sql_literal(f.as_posix()) for f in files)}], hive_partitioning = false)"
