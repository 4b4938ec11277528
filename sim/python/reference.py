"""A deliberately plain Python EASY-FCFS, written apart from the compiled engine.

It exists to check the engine (tests compare them start time for start time on real logs) and to
measure the engine's speed-up (`make bench`).  Canonical semantics only (docs/simulator.md): at each
instant all completions, then all submissions, then one pass; predictions are the requested time
(classic EASY) or the actual runtime (clairvoyant), so they are never exceeded.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Sequence


def easy_fcfs_starts(
    submit: Sequence[int],
    run: Sequence[int],
    requested: Sequence[int],
    procs: Sequence[int],
    machine_size: int,
    *,
    clairvoyant: bool = False,
) -> list[int]:
    """Start time of each job (input order; input sorted by submit, ties in input order)."""
    n = len(submit)
    actual = [min(r, q) for r, q in zip(run, requested, strict=True)]
    planned = actual if clairvoyant else list(requested)
    start = [-1] * n
    free = machine_size
    ends: list[tuple[int, int]] = []  # heap of (actual end, job)
    running: list[tuple[int, int]] = []  # sorted (planned end, job)
    waiting: list[int] = []
    next_job = 0
    while next_job < n or ends:
        now = int(min(submit[next_job] if next_job < n else float("inf"), ends[0][0] if ends else float("inf")))
        while ends and ends[0][0] == now:
            _, job = heapq.heappop(ends)
            free += procs[job]
            running.remove((start[job] + planned[job], job))
        while next_job < n and submit[next_job] == now:
            waiting.append(next_job)
            next_job += 1

        def launch(job: int, now: int = now) -> None:
            nonlocal free
            free -= procs[job]
            start[job] = now
            heapq.heappush(ends, (now + actual[job], job))
            bisect.insort(running, (now + planned[job], job))

        while waiting and procs[waiting[0]] <= free:
            launch(waiting.pop(0))
        if len(waiting) < 2:
            continue
        head = waiting[0]
        # Shadow time: walk predicted ends until the head fits; every job ending then counts.
        available, shadow = free, None
        for end, job in running:
            if shadow is not None and end > shadow:
                break
            available += procs[job]
            if shadow is None and available >= procs[head]:
                shadow = end
        extra = available - procs[head]
        still_waiting = [head]
        for job in waiting[1:]:
            if procs[job] <= free and shadow is not None and now + planned[job] <= shadow:
                launch(job)
            elif procs[job] <= free and procs[job] <= extra:
                extra -= procs[job]
                launch(job)
            else:
                still_waiting.append(job)
        waiting = still_waiting
    return start
