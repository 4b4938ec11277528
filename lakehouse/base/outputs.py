"""Every file a command writes for its user (--output, --jobs-out, exports, figures, pages): its place
checked before any work, and the file written aside and renamed over the old one whole.

Checked first, because a replay or a report can take minutes and an output refused at its end loses
them; written aside, because a write stopped halfway (a full disk, a file-size limit, Ctrl-C) must
leave the previous file as it was, not a truncated one.

Where a file may go: never inside a lake this process opened (its Parquet and catalog are written by
the lake's own commands; an output there would replace a committed file); through a symbolic link
to the file it names (resolved, then checked again), which is replaced and the link kept; to a
character device, a FIFO or `-` (standard output) as a stream, written to in place, never replaced by a
regular file.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lakehouse.base.errors import OutputError

#: The lakes this process opened (resolved), each with the names of its top-level entries that hold its
#: data (the catalog and its copies, the Parquet, quarantine, analysis and meta folders, the spill
#: folder): no output may be written there.  (Other places in a lake, e.g. the nightly run's pages, are
#: the user's.)
_LAKES: dict[Path, tuple[str, ...]] = {}
#: What `--output -` means: standard output.
STDOUT = "-"


def protect(lake_root: Path, data: tuple[str, ...]) -> None:
    """Refuse outputs into the lake's data from now on in this process (each `Lake` calls it): the
    entries of `lake_root` named in `data`, or whose name starts with one (`lake.duckdb.wal`), hidden
    copies included (`.lake.duckdb.1.tmp`)."""
    _LAKES[Path(os.path.realpath(lake_root))] = data


def destination(path: Path) -> tuple[Path, bool]:
    """Where writing `path` really writes, and whether as a stream (a device, a FIFO, standard output)
    rather than a regular file replaced whole.  OutputError for a place inside an open lake."""
    if str(path) == STDOUT:
        return Path("/dev/stdout"), True
    target = Path(os.path.realpath(path.expanduser()))  # through every symbolic link
    for lake, data in _LAKES.items():
        if lake not in target.parents:
            continue
        entry = target.relative_to(lake).parts[0].lstrip(".")
        if any(entry.startswith(name.lstrip(".")) for name in data):
            raise OutputError(
                f"cannot write {path}: it is in the data of the lake {lake} (written by the lake's own commands "
                "only); write it elsewhere"
            )
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return target, False
    return target, not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def check_file(path: Path) -> Path:
    """Refuse (OutputError) a destination that cannot take a file: a missing or unwritable folder, a
    folder in its place, a name longer than the file system allows, a place where no file can be
    made (`/proc`).  A file is made and removed beside it, because only trying tells."""
    target, stream = destination(path)
    if stream:
        if not os.access(target, os.W_OK):
            raise OutputError(f"cannot write {path}: {os.strerror(errno.EACCES)}")
        return path
    folder = target.parent
    try:
        if not folder.is_dir():
            raise OutputError(f"cannot write {path}: folder {folder} does not exist")
        if target.is_dir():
            raise OutputError(f"cannot write {path}: it is a folder; give a file name")
        if len(target.name.encode()) > os.pathconf(folder, "PC_NAME_MAX"):
            raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), str(path))
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {_reason(exc)}") from None
    _probe(folder, path, target.name)
    return path


def check_folder(path: Path) -> Path:
    """Refuse a folder that files (figures) cannot be written into; a missing one is made."""
    target = path.expanduser().absolute()
    if target.exists() and not target.is_dir():
        raise OutputError(f"cannot write into {path}: it is a file, not a folder")
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot make folder {path}: {_reason(exc)}") from None
    _probe(target, path, "probe")
    return path


def _probe(folder: Path, path: Path, name: str) -> None:
    probe = folder / _aside_name(name)
    try:
        descriptor = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {_reason(exc)}") from None
    os.close(descriptor)
    probe.unlink(missing_ok=True)


def _aside_name(name: str) -> str:
    """The hidden name a file is written under before its rename (its process's id: never shared).
    A name near the file system's limit gets a shortened one (the rename gives the real one)."""
    return f".{name[:200]}.{os.getpid()}.tmp"


@contextmanager
def written_aside(path: Path) -> Iterator[Path]:
    """A path beside `path` to write; renamed over `path` when the block ends, removed if it raises.
    An OSError while writing (Polars' and Arrow's carry no errno) becomes one OutputError line."""
    target, stream = destination(path)
    if stream:  # written to as it is: a device or a FIFO is never replaced by a file
        try:
            yield target
        except OSError as exc:
            raise OutputError(f"could not write {path}: {_reason(exc)}") from None
        return
    tmp = target.with_name(_aside_name(target.name))
    try:
        yield tmp
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if (number := error_number(exc)) in (errno.ENOSPC, errno.EDQUOT):
            # the CLI's one line for a full disk names the file system
            raise OSError(number, os.strerror(number), str(target)) from None
        raise OutputError(
            f"could not write {path}: {_reason(exc)}; an earlier {path.name}, if any, is unchanged"
        ) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


_OS_ERROR = re.compile(r"\(os error (\d+)\)")


def error_number(exc: OSError) -> int | None:
    """The errno of an OSError, also of those Rust libraries raise with it only in the text."""
    if exc.errno is not None:
        return exc.errno
    found = _OS_ERROR.search(str(exc))
    return int(found.group(1)) if found else None


def _reason(exc: OSError) -> str:
    number = error_number(exc)
    return os.strerror(number) if number is not None else str(exc)
