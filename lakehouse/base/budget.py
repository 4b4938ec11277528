"""How much memory and how many threads DuckDB may take, and where it spills what does not fit.

A report over the whole Google trace groups a billion usage rows; left to itself DuckDB lets a query
take 80 % of the machine, which on a shared server (a nightly run) starves everything else.  Every
connection the lake opens gets a budget instead:

- memory: ``--memory-limit`` on the commands that read ``google.*``, else ``$LAKEHOUSE_MEMORY_LIMIT``,
  else a quarter of the machine's memory (of the container's, where a cgroup limits it), at least 1 GB;
  a command's whole memory, of which DuckDB's own limit is what is left after ``OUTSIDE_POOL``;
- threads: ``--threads``, else ``$LAKEHOUSE_THREADS``, else one per core.

What does not fit in memory DuckDB writes to a spill folder inside the lake, ``<lake>/.spill/<id>``,
one per process, removed when the process ends.  A process killed before it could remove its folder
leaves it behind: the next process that opens the lake removes it.  A folder is known to be in use by
the lock its process holds on it (the kernel drops the lock with the process, however it ends).

Nothing outside the lake is ever removed: ``.spill`` is used only if it is a real folder (not a
symbolic link) of this user's, inside the lake, made private (0700); a sweep looks only at the real
folders directly in it and never follows a link.  Where the lake cannot be written, the spill folder
is a new private folder of a unique name in the system's temporary folder, which only this process
uses and removes (no fixed name anyone could plant a link under).
"""

from __future__ import annotations

import atexit
import fcntl
import math
import os
import re
import shutil
import stat
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from lakehouse.base.errors import SettingsError

MEMORY_ENV = "LAKEHOUSE_MEMORY_LIMIT"
THREADS_ENV = "LAKEHOUSE_THREADS"
#: The default share of the machine's memory: enough for every report on the whole trace (docs/full-trace.md),
#: and leaves three quarters to the rest of a shared server.
DEFAULT_SHARE = 0.25
DEFAULT_FLOOR = 1 << 30
#: The smallest budget, and the smallest DuckDB pool: DuckLake reads a lake's catalog (its tables, views
#: and files) into the pool, 24 to 28 MB whatever the lake holds (measured on this project's KTH and Google
#: samples alike, with one thread or two), and cannot spill it; less is a typo, not a budget.
SMALLEST = 32 * 10**6
#: What a command takes besides DuckDB's buffer pool, kept out of DuckDB's own limit: at least
#: OUTSIDE_POOL, and OUTSIDE_POOL_SHARE of a larger budget.  DuckDB counts only its pool against its limit;
#: the Python process with its libraries and DuckDB's allocations outside the pool come on top.  Measured on
#: `report predictions google` (the widest of the reports) with a 1 GB budget: about 415 MB above the pool at
#: 0.0275 and 0.055 of the trace, 510 MB at 0.22; under 3 GB, 484 MB at 0.11 and 563-788 MB at 0.22.  Given 90 %
#: of the budget, the command had peaked at 1.25 GB under 1 GB and at 3.36 GB under 3 GB.
OUTSIDE_POOL = 600 * 10**6
OUTSIDE_POOL_SHARE = 0.3
#: DuckDB's own limit is never below this share of the budget: under ~600 MB a budget cannot be held
#: whole (the Python process alone takes ~130 MB), and DuckDB still needs room to run.
SMALLEST_POOL_SHARE = 0.25
SPILL_FOLDER = ".spill"
#: The most worker processes a command or the nightly configuration may start (`--workers`, `workers =`):
#: four per core; more is a typo or a fork bomb, not a plan.
MAX_WORKERS = 4 * (os.cpu_count() or 1)


def workers_problem(workers: object) -> str | None:
    """What is wrong with a number of worker processes, if anything (the one place it is checked)."""
    if not isinstance(workers, int) or isinstance(workers, bool) or not 1 <= workers <= MAX_WORKERS:
        return f"expected a whole number of worker processes from 1 to {MAX_WORKERS} (4 per core), got {workers!r}"
    return None


_UNITS = {
    "": 1, "b": 1,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
    "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}  # fmt: skip
_AMOUNT = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*|%)\s*$", re.IGNORECASE)


def machine_memory() -> int:
    """The memory this process may use: the machine's, or its container's limit when lower."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(limit_file).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total


def parse_memory(text: str, what: str = "--memory-limit") -> int:
    """Bytes from '3GB', '512MiB', '2.5 GB' (decimal and binary units, as DuckDB reads them) or '30%' (of
    the machine's memory)."""
    match = _AMOUNT.match(str(text))
    unit = match.group(2).lower() if match else None
    if match is None or (unit not in _UNITS and unit != "%"):
        raise SettingsError(f"{what}: cannot read {text!r} as an amount of memory (examples: 3GB, 512MB, 4GiB, 30%)")
    value = float(match.group(1))
    total = machine_memory()
    if unit == "%" and value > 100:
        raise SettingsError(f"{what}: {text!r} is more than all of this machine's memory (at most 100%)")
    amount = value / 100 * total if unit == "%" else value * _UNITS[unit]
    # Beyond the machine it is a typo (and past 2^64 bytes DuckDB's own count wraps to 0): one line,
    # before anything is opened or made.
    if not math.isfinite(amount) or amount > total:
        raise SettingsError(
            f"{what}: {text!r} is more than this machine's memory ({human(total)}); give at most that, e.g. 30% or 4GB"
        )
    if amount < SMALLEST:
        raise SettingsError(
            f"{what}: {text!r} is below {SMALLEST // 10**6} MB, the least DuckDB needs to hold a lake's catalog"
        )
    return int(amount)


def parse_threads(value: int | str, what: str = "--threads") -> int:
    try:
        threads = int(value)
    except (TypeError, ValueError):
        raise SettingsError(f"{what}: expected a whole number of threads, got {value!r}") from None
    if not 1 <= threads <= 1024:
        raise SettingsError(f"{what}: expected 1 to 1024 threads, got {threads}")
    return threads


def human(amount: int) -> str:
    """Bytes in the units the messages use (decimal: '3.0 GB')."""
    for unit, size in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6)):
        if amount >= size:
            return f"{amount / size:.1f} {unit}"
    return f"{amount / 10**3:.0f} kB"


@dataclass(frozen=True)
class Budget:
    """A DuckDB connection's memory limit (bytes) and threads, and where the limit came from."""

    memory: int
    threads: int
    memory_source: str = "default"  # an option, the environment variable, or the default share
    #: The share of a larger budget kept out of DuckDB's pool (a command whose operators hold more
    #: outside it leaves more: `leaving`).
    outside_share: float = OUTSIDE_POOL_SHARE

    @classmethod
    def resolve(cls, memory_limit: str | None = None, threads: int | str | None = None) -> Budget:
        """The option if given, else the environment variable, else the default."""
        if memory_limit is not None:
            memory, source = parse_memory(memory_limit), "--memory-limit"
        elif os.environ.get(MEMORY_ENV):
            memory, source = parse_memory(os.environ[MEMORY_ENV], f"${MEMORY_ENV}"), f"${MEMORY_ENV}"
        else:
            memory, source = max(int(machine_memory() * DEFAULT_SHARE), DEFAULT_FLOOR), "default"
        if threads is not None:
            count = parse_threads(threads)
        elif os.environ.get(THREADS_ENV):
            count = parse_threads(os.environ[THREADS_ENV], f"${THREADS_ENV}")
        else:
            count = os.cpu_count() or 1
        return cls(memory, count, source)

    @property
    def duckdb_memory(self) -> int:
        """The memory limit DuckDB is given: the budget less what DuckDB does not count (OUTSIDE_POOL, or
        `outside_share` of a larger budget), at least SMALLEST_POOL_SHARE of the budget."""
        outside = max(OUTSIDE_POOL, int(self.memory * self.outside_share))
        return max(self.memory - outside, int(self.memory * SMALLEST_POOL_SHARE), SMALLEST)

    def leaving(self, outside_share: float) -> Budget:
        """The same budget with `outside_share` of it kept out of DuckDB's pool."""
        return replace(self, outside_share=outside_share)

    def pool_statement(self) -> str:
        """The SET statement that gives a connection this budget's pool (`statements` gives it all)."""
        return f"SET memory_limit = '{self.duckdb_memory}B';"

    def statements(self, spill: Path | None) -> str:
        """The SET statements that give a DuckDB connection this budget (and its spill folder)."""
        sql = f"{self.pool_statement()} SET threads = {self.threads};"
        if spill is not None:
            sql += " SET temp_directory = '" + spill.as_posix().replace("'", "''") + "';"
        return sql

    def too_small(self, detail: str) -> str:
        """The one line a query that ran out of its memory prints: what to change."""
        where = {
            "default": f"the default, {DEFAULT_SHARE:.0%} of this machine's memory",
            "--memory-limit": "set by --memory-limit",
        }.get(self.memory_source, f"set by {self.memory_source}")
        return (
            f"the query needs more memory than the limit of {human(self.memory)} ({where}), even spilling to "
            f"disk: raise --memory-limit or ${MEMORY_ENV} (DuckDB: {detail.splitlines()[0]})"
        )


class SpillFolders:
    """This process's spill folder in each lake it opens (`folder`), and the removal of the folders of
    processes that ended without removing theirs."""

    def __init__(self) -> None:
        self._held: dict[Path, tuple[Path, int]] = {}  # spill root -> (our folder, its locked descriptor)
        self._mutex = threading.Lock()
        atexit.register(self.remove_all)

    def folder(self, lake_root: Path, database: str) -> Path | None:
        """A folder for one database's spill files, inside this process's folder of the lake (made and
        locked on first use).  Falls back to the system's temporary folder where the lake cannot be
        written (a read-only mount); None where neither can."""
        with self._mutex:
            for root in (lake_root / SPILL_FOLDER, None):
                key = root or _PRIVATE
                held = self._held.get(key)
                if held is not None and not held[0].is_dir():  # the lake was removed and made again
                    os.close(held[1])
                    del self._held[key]
                    held = None
                held = held or (self._make(root) if root is not None else self._make_private())
                if held is not None:
                    self._held[key] = held
                    folder = held[0] / re.sub(r"[^A-Za-z0-9_.-]", "_", database)
                    try:
                        folder.mkdir(mode=0o700, exist_ok=True)
                    except OSError:
                        return None
                    return folder
        return None

    def forget(self, lake_root: Path, database: str) -> None:
        """Remove one database's spill folder (the database is closed: DuckDB removed its files)."""
        with self._mutex:
            held = self._held.get(lake_root / SPILL_FOLDER) or self._held.get(_PRIVATE)
        if held is not None:
            shutil.rmtree(held[0] / re.sub(r"[^A-Za-z0-9_.-]", "_", database), ignore_errors=True)

    def _make_private(self) -> tuple[Path, int] | None:
        """A new private folder of a unique name in the system's temporary folder (the lake is read-only)."""
        try:
            folder = Path(tempfile.mkdtemp(prefix="lakehouse-spill-"))  # 0700, ours, never existed before
            descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            return None
        return folder, descriptor

    def _make(self, root: Path) -> tuple[Path, int] | None:
        try:
            try:
                root.mkdir(mode=0o700)
            except FileExistsError:
                pass
            if not _private_folder(root):
                return None  # a link, a file, someone else's folder: not ours to spill in or to sweep
            sweep(root)
            # Made under a hidden name, locked, then renamed: a sweeper only looks at visible names, so it
            # never takes a folder between its making and its lock.
            hidden = Path(tempfile.mkdtemp(prefix=".new-", dir=root))
            descriptor = os.open(hidden, os.O_RDONLY)
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            final = root / f"{os.getpid()}-{hidden.name.removeprefix('.new-')}"
            os.rename(hidden, final)
        except OSError:
            return None
        return final, descriptor

    def remove_all(self) -> None:
        """Remove this process's folders (at exit; DuckDB has removed its files when its databases closed)."""
        with self._mutex:
            for folder, descriptor in self._held.values():
                shutil.rmtree(folder, ignore_errors=True)
                os.close(descriptor)
            self._held.clear()


#: The key of the private fallback folder (the lake cannot be written).
_PRIVATE = Path("<private>")


def _private_folder(root: Path) -> bool:
    """Whether `root` is a real folder (not a link) of this user's; made private (0700) if so."""
    try:
        info = os.lstat(root)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        return False
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(root, 0o700)  # (checked a real folder just above)
    return True


def sweep(root: Path) -> list[Path]:
    """Remove the spill folders under `root` that no living process holds; returns them.  Only a
    private folder of ours is swept, and in it only real folders: a link is never followed."""
    removed: list[Path] = []
    if not _private_folder(root):
        return removed
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    for item in entries:
        entry = Path(item.path)
        try:
            if not item.is_dir(follow_symlinks=False):
                continue  # a link or a file: not a spill folder, never followed
            if entry.name.startswith(".new-") and time.time() - item.stat(follow_symlinks=False).st_mtime < 60:
                continue  # a folder being made (unlocked for a moment), unless a killed process left it
        except OSError:
            continue
        if not _unlocked(entry):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


def _unlocked(folder: Path) -> bool:
    """Whether no process holds the folder's lock (taking it and letting it go at once)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(descriptor)


SPILL = SpillFolders()
