"""Work for the partition tests' Ray workers, which import it by name (the test adds this folder to
their PYTHONPATH): a partition whose worker kills itself the first time it runs it, and one whose query
outgrows its worker's budget."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def square_unless_first_try(marker: str, doomed: int, number: int) -> tuple[int, str]:
    """number**2 and the node that computed it; partition `doomed`'s first worker dies of SIGKILL midway
    (before it returns anything), leaving `marker` to show that it did.  Each takes a fifth of a second,
    as real work would: a partition that ends in microseconds leaves the second node's worker unneeded."""
    if number == doomed and not Path(marker).exists():
        Path(marker).write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.2)
    import ray

    return number**2, ray.get_runtime_context().get_node_id()


def hungry_unless_first(lake: str, number: int) -> int:
    """Partition 0 aggregates ten million numbers into one list (a list cannot spill) under a 32 MB budget,
    where DuckDB runs out of memory at once; the others answer at once.  (`list(range(...))`, a list
    made by a function, ran out of memory too, but after 7 s.)"""
    from lakehouse.base.lake import Lake

    starved = Lake(lake, memory_limit="32MB")
    with starved.connect() as con, starved.query_errors():
        size = 10_000_000 if number == 0 else 10
        return len(con.execute(f"SELECT list(i) FROM range({size}) AS t(i)").fetchone()[0])
