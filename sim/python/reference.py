"""Plain Python schedulers written apart from the compiled engine, to check it start for start (the
tests do, on real logs) and to measure its speed-up (`make bench`): EASY and conservative backfilling
under every queue order, canonical semantics (docs/simulator.md), predictions that are the requested
time (a job runs min(run, requested) seconds and plans max(requested, 1)) or the run time itself
(`clairvoyant`), so never exceeded.

Nothing here is fast or clever: the plan of free processors is rebuilt from scratch at every pass,
every waiting job searches its slot again at every pass, the queue is sorted again at every pass.  The
engine does none of these (it keeps its plan, skips searches that cannot succeed, shares what one
search learnt with the next), which is what a comparison can catch.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Callable, Sequence

# The queue orders as documented (docs/simulator.md): the primary key of a waiting job at instant
# `now` from its submit time, requested time and processors; ties go by submit time, then input order
# (lcfs is fcfs reversed, ties included).
ORDERS: dict[str, Callable[[int, int, int, int], float]] = {
    "fcfs": lambda now, s, r, p: s,
    "spf": lambda now, s, r, p: r,
    "lpf": lambda now, s, r, p: -r,
    "sqf": lambda now, s, r, p: p,
    "lqf": lambda now, s, r, p: -p,
    "sexp": lambda now, s, r, p: (now - s + r) / r,
    "lexp": lambda now, s, r, p: -(now - s + r) / r,
    "srf": lambda now, s, r, p: r / p,
    "lrf": lambda now, s, r, p: -r / p,
    "saf": lambda now, s, r, p: r * p,
    "laf": lambda now, s, r, p: -r * p,
}


class Jobs:
    """The jobs in submit order (ties in input order).  `requested` keeps the user's request, the key
    of the queue orders; `planned` is what a job plans with."""

    def __init__(
        self,
        submit: Sequence[int],
        run: Sequence[int],
        requested: Sequence[int],
        procs: Sequence[int],
        clairvoyant: bool = False,
    ):
        self.submit, self.procs = list(submit), list(procs)
        self.requested = [max(int(q), 1) for q in requested]
        self.actual = [min(int(r), int(q)) for r, q in zip(run, requested, strict=True)]
        self.planned = [max(a, 1) for a in self.actual] if clairvoyant else self.requested

    def order(self, waiting: list[int], policy: Order, now: int) -> list[int]:
        """`policy` is a built-in order's name or a key of (now, submit, requested, processors), smallest
        first; a key that is not a finite number sorts last (docs/your-own-policy.md)."""
        if policy == "fcfs":
            return waiting  # already: arrivals join at the end
        if policy == "lcfs":
            return sorted(waiting, key=lambda j: (self.submit[j], j), reverse=True)
        key = policy if callable(policy) else ORDERS[policy]

        def finite(value: float) -> float:
            return value if math.isfinite(value) else math.inf

        return sorted(
            waiting,
            key=lambda j: (finite(key(now, self.submit[j], self.requested[j], self.procs[j])), self.submit[j], j),
        )


def _events(jobs: Jobs, on_pass: Callable[[int, list[int], list[int]], None], ends: list[tuple[int, int]]) -> None:
    """The canonical event loop: at each instant, every completion, then every submission, then one
    pass (`on_pass(now, arrived)`).  `ends` is the heap of (actual end, job) the pass pushes to."""
    n, next_job = len(jobs.submit), 0
    while next_job < n or ends:
        now = min(jobs.submit[next_job] if next_job < n else float("inf"), ends[0][0] if ends else float("inf"))
        finished = []
        while ends and ends[0][0] == now:
            finished.append(heapq.heappop(ends)[1])
        arrived = []
        while next_job < n and jobs.submit[next_job] == now:
            arrived.append(next_job)
            next_job += 1
        on_pass(int(now), finished, arrived)


#: A queue order: a built-in order's name, or a key of (now, submit, requested, processors), smallest first.
Order = str | Callable[[int, int, int, int], float]


def easy_starts(jobs: Jobs, machine_size: int, policy: Order = "fcfs") -> list[int]:
    """EASY: heads start while they fit; the first that does not gets a reservation at its shadow
    time; the others, in queue order, start when they fit now and end by the shadow time or use no
    more than the extra processors."""
    start = [-1] * len(jobs.submit)
    ends: list[tuple[int, int]] = []
    running: list[tuple[int, int]] = []  # sorted (planned end, job)
    waiting: list[int] = []
    free = machine_size

    def launch(job: int, now: int) -> None:
        nonlocal free
        free -= jobs.procs[job]
        start[job] = now
        heapq.heappush(ends, (now + jobs.actual[job], job))
        bisect.insort(running, (now + jobs.planned[job], job))

    def on_pass(now: int, finished: list[int], arrived: list[int]) -> None:
        nonlocal free, waiting
        for job in finished:
            free += jobs.procs[job]
            running.remove((start[job] + jobs.planned[job], job))
        queue = jobs.order(waiting + arrived, policy, now)
        while queue and jobs.procs[queue[0]] <= free:
            launch(queue.pop(0), now)
        if len(queue) >= 2:
            head = queue[0]
            available, shadow = free, None
            for end, job in running:
                if shadow is not None and end > shadow:
                    break
                available += jobs.procs[job]
                if shadow is None and available >= jobs.procs[head]:
                    shadow = end
            extra = available - jobs.procs[head]
            for job in list(queue[1:]):
                if jobs.procs[job] <= free and shadow is not None and now + jobs.planned[job] <= shadow:
                    launch(job, now)
                    queue.remove(job)
                elif jobs.procs[job] <= free and jobs.procs[job] <= extra:
                    extra -= jobs.procs[job]
                    launch(job, now)
                    queue.remove(job)
        waiting = queue

    _events(jobs, on_pass, ends)
    return start


class _Plan:
    """Free processors over time: steps [time, free], the last one lasting forever."""

    def __init__(self, now: int, capacity: int):
        self.times, self.free = [now], [capacity]

    def _split(self, t: int) -> int:
        i = bisect.bisect_right(self.times, t) - 1
        if self.times[i] != t:
            self.times.insert(i + 1, t)
            self.free.insert(i + 1, self.free[i])
            i += 1
        return i

    def take(self, a: int, b: int, procs: int) -> None:
        for i in range(self._split(a), self._split(b)):
            self.free[i] -= procs

    def earliest(self, now: int, procs: int, length: int) -> int:
        """The first instant >= now from which `procs` processors stay free for `length` seconds."""
        for i, t in enumerate(self.times):
            if t < now and (i + 1 == len(self.times) or self.times[i + 1] <= now):
                continue
            candidate = max(t, now)
            j = i
            while j < len(self.times) and self.times[j] < candidate + length and self.free[j] >= procs:
                j += 1
            if j == len(self.times) or self.times[j] >= candidate + length:
                return candidate
        raise AssertionError("the plan ends with every processor free")


def conservative_starts(jobs: Jobs, machine_size: int, policy: str = "fcfs") -> list[int]:
    """Conservative backfilling: at each pass, every waiting job in queue order gives its slot back
    and takes the earliest slot that fits around the running jobs and every other job's slot; the
    jobs whose slot is now start."""
    start = [-1] * len(jobs.submit)
    ends: list[tuple[int, int]] = []
    running: set[int] = set()
    slots: dict[int, int] = {}  # waiting job -> its reserved start

    def on_pass(now: int, finished: list[int], arrived: list[int]) -> None:
        running.difference_update(finished)
        queue = jobs.order([*slots, *arrived], policy, now)
        plan = _Plan(now, machine_size)
        for job in running:
            plan.take(now, start[job] + jobs.planned[job], jobs.procs[job])
        for job, slot in slots.items():
            plan.take(slot, slot + jobs.planned[job], jobs.procs[job])
        for job in queue:
            if slots.get(job) == now:
                continue  # already due: it keeps its slot
            length, procs = jobs.planned[job], jobs.procs[job]
            if job in slots:  # gives its slot back
                plan.take(slots[job], slots[job] + length, -procs)
            slots[job] = plan.earliest(now, procs, length)
            plan.take(slots[job], slots[job] + length, procs)
        free = machine_size - sum(jobs.procs[j] for j in running)
        for job in queue:
            if slots[job] == now and jobs.procs[job] <= free:
                free -= jobs.procs[job]
                del slots[job]
                start[job] = now
                running.add(job)
                heapq.heappush(ends, (now + jobs.actual[job], job))

    _events(jobs, on_pass, ends)
    return start
