"""Reading a file a user names, whatever it turns out to be: a regular file and not a FIFO, a device,
a folder or a link to one (a FIFO blocks its reader for ever, /dev/zero never ends), and no larger than
what the reader can use."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from lakehouse.base.errors import LakehouseError


def not_a_file(path: Path) -> str | None:
    """Why `path` cannot be read as an input file (through links), if so."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    return _kind_problem(mode)


def _kind_problem(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device or a socket"
    return f"not a regular file ({kind}, or a link to one): left alone"


def read_bounded(path: Path, limit: int, error: type[LakehouseError]) -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them; `error` names the file otherwise.
    Opened without blocking and checked on what was opened, so that a FIFO put in its place after a
    check neither blocks nor is read."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise error(f"{path}: {exc.strerror or exc}") from None
    with os.fdopen(descriptor, "rb") as file:
        if problem := _kind_problem(os.fstat(descriptor).st_mode):
            raise error(f"{path}: {problem}")
        data = file.read(limit + 1)
    if len(data) > limit:
        raise error(f"{path}: larger than {limit:,} bytes: not a file of this kind")
    return data
