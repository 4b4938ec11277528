"""The local pool's start and Ctrl-C: a Ctrl-C while the workers start stops the parent once the pool
stands (it used to be ignored, so the start of many workers could not be stopped), and a running
worker ignores Ctrl-C (the parent handles it for all)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time

import pytest

from lakehouse.campaigns import executors


def _square(x: int) -> int:
    return x * x


def test_a_ctrl_c_while_the_workers_start_is_raised_once_they_stand_and_stops_them(monkeypatch) -> None:
    spawn = multiprocessing.get_context("spawn")
    made: list[multiprocessing.pool.Pool] = []

    class Interrupted:
        """The spawn context, with a Ctrl-C that lands while Pool() starts the workers."""

        def Pool(self, *args, **kwargs):  # noqa: N802 (the context's method name)
            pool = spawn.Pool(*args, **kwargs)
            made.append(pool)
            os.kill(os.getpid(), signal.SIGINT)
            return pool

    monkeypatch.setattr(executors.multiprocessing, "get_context", lambda method: Interrupted())
    with pytest.raises(KeyboardInterrupt):
        executors._spawn_pool(2)
    (pool,) = made
    assert all(not worker.is_alive() for worker in pool._pool)  # type: ignore[attr-defined]
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == set()  # the mask is as it was


def test_a_running_worker_ignores_ctrl_c() -> None:
    pool = executors._spawn_pool(2)
    try:
        assert pool.map(_square, range(4)) == [0, 1, 4, 9]
        for worker in pool._pool:  # type: ignore[attr-defined]
            os.kill(worker.pid, signal.SIGINT)
        time.sleep(0.5)
        assert all(worker.is_alive() for worker in pool._pool)  # type: ignore[attr-defined]
        assert pool.map(_square, range(4)) == [0, 1, 4, 9]
    finally:
        pool.terminate()
        pool.join()
