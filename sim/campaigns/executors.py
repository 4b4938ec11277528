"""Where a campaign's tasks run: a local process pool, or a Ray cluster.

Both call `campaign.run_task` on the same tasks, so they give the same rows (a test checks it).  The
engine releases the GIL, but the per-run Python around it (input checks, metrics) does not: processes,
not threads, scale a campaign on one machine.
"""

from __future__ import annotations

import enum
import multiprocessing
import multiprocessing.pool
import signal
import threading
import time
from collections.abc import Callable
from functools import partial
from multiprocessing import resource_tracker
from typing import TYPE_CHECKING

from lakehouse.base.errors import LakehouseError
from lakehouse.base.partitions import check_ray_address, joined, ray_module

if TYPE_CHECKING:  # the runner is imported when a campaign runs, not when the CLI starts
    from lakehouse.campaigns.runner import Executor, Task


class ExecutorKind(enum.StrEnum):
    local = "local"  # a process pool on this machine
    ray = "ray"  # a Ray cluster (or a Ray instance started for the campaign)


def _spawn_pool(workers: int) -> multiprocessing.pool.Pool:
    """A spawned pool whose workers ignore Ctrl-C from their first instruction, started so that a
    Ctrl-C meanwhile stops the parent once the pool stands (and the pool with it).

    Ctrl-C reaches the whole process group: the parent handles it (it writes the finished runs and
    stops the pool); a worker that died of it would only add a traceback per process.  An initializer
    that ignores SIGINT runs too late (a worker still importing its modules printed a traceback), so the
    parent blocks SIGINT while it starts the workers: a blocked signal stays blocked across fork and exec,
    so a worker holds every Ctrl-C until its initializer ignores it for good.  Blocked, not ignored, in
    the parent: a Ctrl-C that arrives meanwhile is kept and raised once the pool stands, the pool
    stopped first (ignoring it, as this did, lost it, and the start of many workers could not be
    stopped).  Pool() returns
    once every worker has been exec'd."""
    # The resource tracker unblocks SIGINT when it starts: start it (once per process) beforehand.
    resource_tracker.ensure_running()
    # The mask is this thread's: in a process with other threads (DuckDB's, a test runner's) the kernel
    # may hand the Ctrl-C to one of them at once, and Python would raise it in the middle of Pool(),
    # before the pool could be stopped.  A handler that only notes it holds it wherever it lands.
    noted: list[int] = []
    handler = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, lambda signum, frame: noted.append(signum)) if handler else None
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    pool = None
    try:
        pool = multiprocessing.get_context("spawn").Pool(workers, initializer=_ignore_interrupts)
    finally:
        try:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a Ctrl-C held meanwhile lands here
        finally:
            if handler:
                signal.signal(signal.SIGINT, previous)
    if noted and previous is not signal.SIG_IGN:
        try:  # the Ctrl-C, now that the pool stands: as the handler it was meant for takes it
            if callable(previous):
                previous(signal.SIGINT, None)
            else:
                raise KeyboardInterrupt
        except BaseException:
            pool.terminate()
            pool.join()
            raise
    return pool


def _ignore_interrupts() -> None:
    """In a worker: drop the Ctrl-C held since it started and every later one (the parent stops it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


#: What a pool costs before its first run: each spawned worker imports the replay machinery (two workers
#: on two cores: 0.6-0.7 s of wall time, 1.3 s of CPU).  A campaign whose remaining runs a pool would
#: not finish sooner by at least this much runs them in this process: the nightly's three EASY variants
#: of one changed log took 0.9-1.5 s here and 2.8-3.3 s with two workers.
POOL_START_SECONDS = 1.0


def pool_pays(first_seconds: float, first_jobs: int, rest_jobs: int, workers: int) -> bool:
    """Whether `workers` processes would replay the rest sooner than this process, start included,
    estimated from the first task's time per job (the first is the longest kind: the largest log,
    conservative replays before the others)."""
    rest_seconds = first_seconds / max(first_jobs, 1) * rest_jobs
    return workers > 1 and rest_seconds * (1 - 1 / workers) > POOL_START_SECONDS


def local_executor(workers: int, campaign: str, view: str, tau: float) -> Executor:
    """Up to `workers` processes (spawned: the parent holds DuckDB and Polars thread pools, which a fork
    would copy mid-flight).  The first task runs in this process; the others go to a pool only when
    their replays would outlast its start (`pool_pays`), so a small campaign starts no process."""
    # The replay machinery, only once a campaign runs (every campaign command imports ExecutorKind).
    from lakehouse.campaigns.runner import run_task

    if workers < 1:
        raise LakehouseError(f"--workers must be at least 1, got {workers}")
    work = partial(run_task, campaign=campaign, view=view, tau=tau)

    def execute(tasks: list[Task], finished: Callable[[list[dict]], None]) -> None:
        if not tasks:
            return
        started = time.perf_counter()
        results = work(tasks[0])
        first_seconds = time.perf_counter() - started
        finished(results)
        rest = tasks[1:]
        helpers = min(workers, len(rest))
        if not pool_pays(first_seconds, tasks[0].log.jobs, sum(task.log.jobs for task in rest), helpers):
            for task in rest:
                finished(work(task))
            return
        pool = _spawn_pool(helpers)
        try:
            # chunksize 1: tasks are sorted longest first, and one run of a large log can take seconds.
            for done in pool.imap_unordered(work, rest, chunksize=1):
                finished(done)
        except BaseException:
            pool.terminate()
            raise
        else:
            pool.close()
        finally:
            pool.join()

    return execute


def ray_executor(address: str | None, workers: int | None, campaign: str, view: str, tau: float) -> Executor:
    """Ray tasks, one per campaign task, on the cluster at `address` (`auto`: the one this machine
    belongs to) or on a local Ray instance with `workers` CPUs.  Each log's jobs go to the object
    store once and every task of that log reads them from there."""
    # The replay machinery, only once a campaign runs (every campaign command imports ExecutorKind).
    from lakehouse.campaigns.runner import load_jobs

    if address is not None:
        check_ray_address(address, "--ray-address")
    ray_module()  # said before any work when Ray is missing

    def execute(tasks: list[Task], finished: Callable[[list[dict]], None]) -> None:
        with joined(address, workers) as ray:
            remote = ray.remote(num_cpus=1)(_ray_task)
            shipped: dict[str, object] = {}
            pending = []
            for task in tasks:
                key = str(task.log.path)
                if key not in shipped:
                    shipped[key] = ray.put(load_jobs(task.log).to_arrow())
                pending.append(remote.remote(task, shipped[key], campaign, view, tau))
            try:
                while pending:
                    done, pending = ray.wait(pending, num_returns=1)
                    finished(ray.get(done[0]))
            except BaseException:
                for ref in pending:
                    ray.cancel(ref, force=True)
                raise

    return execute


def _ray_task(task: Task, jobs: object, campaign: str, view: str, tau: float) -> list[dict]:
    # Runs in a Ray worker, which imports this module alone: it loads what the replay needs here.
    import polars as pl

    from lakehouse.campaigns.runner import run_task

    return run_task(task, campaign, view, tau, jobs=pl.from_arrow(jobs))  # type: ignore[arg-type]


def make_executor(
    kind: ExecutorKind, *, workers: int, ray_address: str | None, campaign: str, view: str, tau: float
) -> Executor:
    if kind is ExecutorKind.ray:
        return ray_executor(ray_address, workers, campaign, view, tau)
    if ray_address:
        raise LakehouseError("--ray-address goes with --executor ray")
    return local_executor(workers, campaign, view, tau)
