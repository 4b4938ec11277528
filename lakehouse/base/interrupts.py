"""Ctrl-C (and SIGTERM, taken as one) where steps must happen together, and how to tell a query
stopped by one from a query that failed."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

#: Whether the main thread is inside a block that defers interrupts (one entry per block).
_deferring: list[bool] = []


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Steps that must happen together (outputs renamed into place and their manifest row; the
    catalog's swap): a Ctrl-C that arrives inside the block takes effect when it ends."""
    if threading.current_thread() is not threading.main_thread() or _deferring:
        # Signals reach the main thread only; and a block inside another waits for the outer one's end
        # (it raised at its own: the DuckLake writer's put of one output, inside the pipeline's block of
        # an input's outputs and manifest row, let a Ctrl-C commit a log's files without its row).
        yield
        return
    received: list[int] = []
    # SIGTERM too where a handler makes it an interrupt (the nightly run's, for systemd's stop): raised
    # mid-block, it left a catalog connection half made, and the next one to the same file waited forever.
    numbers = [signal.SIGINT] + [signal.SIGTERM] * callable(signal.getsignal(signal.SIGTERM))
    previous = {number: signal.signal(number, lambda got, _frame: received.append(got)) for number in numbers}
    _deferring.append(True)
    try:
        yield
    finally:
        _deferring.pop()
        for number, handler in previous.items():
            signal.signal(number, handler)
    if received:
        raise KeyboardInterrupt


def stopped_by_interrupt(exc: BaseException) -> bool:
    """Whether DuckDB stopped a query for a Ctrl-C (or a SIGTERM taken as one): it says so with an
    InterruptException, or with a RuntimeError when the signal was pending as the query began.  Code
    that turns errors into messages (a report's section, a command's one line) must let these stop."""
    return isinstance(exc, duckdb.InterruptException) or (
        isinstance(exc, RuntimeError) and str(exc) == "Query interrupted"
    )
