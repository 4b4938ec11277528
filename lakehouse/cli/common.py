"""What every command group of the CLI shares: the common options and the error and progress wrappers."""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from typer.core import TyperGroup

from lakehouse.base.budget import (
    DEFAULT_SHARE,
    MAX_WORKERS,
    MEMORY_ENV,
    OUTSIDE_POOL,
    OUTSIDE_POOL_SHARE,
    THREADS_ENV,
)
from lakehouse.base.errors import LakehouseError, OutputError
from lakehouse.base.interrupts import stopped_by_interrupt
from lakehouse.base.lake import ENV_VAR
from lakehouse.base.outputs import check_file, check_folder, error_number
from lakehouse.base.render import OutputFormat, labelled, stderr

LakeOption = Annotated[
    Path | None,
    typer.Option("--lake", help=f"Lake folder [default: ${ENV_VAR}, else ./lake].", show_default=False),
]
AsOfOption = Annotated[
    int | None,
    typer.Option(
        "--as-of",
        help="Read a DuckLake lake as this snapshot left it (`lakehouse snapshots` lists them).",
        min=0,
        show_default=False,
    ),
]
MemoryLimitOption = Annotated[
    str | None,
    typer.Option(
        "--memory-limit",
        help=f"Memory the command may take, all of it (3GB, 512MB, 30%; at least 1GB to be held whole): DuckDB's own "
        f"limit is that less what the rest of the command takes ({OUTSIDE_POOL // 10**6} MB, or "
        f"{OUTSIDE_POOL_SHARE:.0%} of a larger limit, more for a report that needs it); "
        "beyond that, DuckDB spills into the lake's .spill folder "
        f"[default: ${MEMORY_ENV}, else {DEFAULT_SHARE:.0%} of this machine's memory].",
        show_default=False,
    ),
]
ThreadsOption = Annotated[
    int | None,
    typer.Option(
        "--threads", help=f"Threads DuckDB may use [default: ${THREADS_ENV}, else one per core].", show_default=False
    ),
]
FormatOption = Annotated[OutputFormat, typer.Option("--format", "-f", help="Output format.")]

#: The help panels of a replay's options (`simulate`, `campaign run`).
JOBS_PANEL, METRICS_PANEL = "Jobs replayed", "Metrics and schedule"
#: Which jobs a replay takes, and which of them its metrics count: one declaration for every command
#: that replays (`simulate`, `campaign run`).
WhereOption = Annotated[
    str | None,
    typer.Option(
        rich_help_panel=JOBS_PANEL,
        help='Extra SQL condition on the jobs, e.g. "submit_offset < 30*86400" (its first month; '
        'submit_offset = seconds since the log\'s first job in the view) or "procs <= 64": one '
        "condition on the view's columns (no subquery, no second statement).",
    ),
]
WarmupOption = Annotated[
    str | None,
    typer.Option(
        rich_help_panel=METRICS_PANEL,
        help="Leave the jobs submitted in the first this-long out of the metrics (still simulated).",
    ),
]
CooldownOption = Annotated[
    str | None,
    typer.Option(
        rich_help_panel=METRICS_PANEL,
        help="Leave the jobs submitted in the last this-long out of the metrics (still simulated).",
    ),
]


def _checked_before_the_work(check: Callable[[Path], Path]) -> Callable[[Path | None], Path | None]:
    """An option's callback that runs `check` (lakehouse.base.outputs) when the option is parsed, so that an
    output that cannot be written is refused before the work, not after it."""

    def callback(path: Path | None) -> Path | None:
        if path is not None:
            try:
                check(path)
            except OutputError as exc:
                raise typer.BadParameter(str(exc)) from None
        return path

    return callback


#: An output file: its folder exists and can take it.
writable_file = _checked_before_the_work(check_file)
#: A folder of figures: made if missing, and checked writable.
writable_folder = _checked_before_the_work(check_folder)


OutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output", "-o", help="Write to this file instead of stdout.", dir_okay=False, callback=writable_file
    ),
]

#: Worker processes a command may start: each loads the engine and a log's jobs (~150 MB), so a pool
#: much larger than the cores only adds memory.


def workers_option(what: str) -> Any:
    """--workers, bounded 1 to MAX_WORKERS (its help says so)."""
    return typer.Option(min=1, max=MAX_WORKERS, help=f"{what} [default: cores; at most 4 per core].")


PlotsOption = Annotated[
    Path | None,
    typer.Option(
        "--plots",
        help="Also write the report's PNG figures into this folder.",
        file_okay=False,
        callback=writable_folder,
    ),
]

F = TypeVar("F", bound=Callable[..., object])


class StrictGroup(TyperGroup):
    """A command group whose commands refuse a one-value option given twice: click would silently keep
    the last (`--policy fcfs --policy spf` replaying SPF alone), which hides a typo in a long command."""

    def resolve_command(self, ctx, args):  # type: ignore[no-untyped-def]  # typer's own click types
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None and not hasattr(command, "commands"):  # a command, not a group
            refuse_repeated_options(command, rest, ctx)
        return name, command, rest


def refuse_repeated_options(command: object, args: list[str], ctx: object) -> None:
    """A usage error naming the first one-value option that `args` give twice (any of its spellings).

    Typer ships its own copy of click, so its classes are recognized by their attributes."""
    single = {}
    for param in command.params:  # type: ignore[attr-defined]
        if param.param_type_name == "option" and not (param.multiple or param.count):
            single.update(dict.fromkeys([*param.opts, *param.secondary_opts], param))
    seen: dict[str, str] = {}
    tokens = iter(args)
    for token in tokens:
        if token == "--":
            break
        spelling, value = token, None
        if token.startswith("--") and "=" in token:
            spelling, value = token.split("=", 1)
        param = single.get(spelling)
        if param is None:
            continue
        if not param.is_flag and value is None:
            value = next(tokens, "")  # its value, which may look like an option
        shown = spelling if param.is_flag else repr(value)
        if param.name in seen:
            raise typer.BadParameter(f"given twice ({seen[param.name]}, then {shown}); give it once", ctx, param)  # type: ignore[arg-type]
        seen[param.name] = shown


def command_group(help_text: str) -> typer.Typer:
    """A sub-command group (`lakehouse ingest ...`) with the CLI's conventions."""
    return typer.Typer(help=help_text, cls=StrictGroup, no_args_is_help=True)


def clear_errors(func: F) -> F:
    """Turn our errors into one red line on stderr and their exit code (1; 2 for a value that cannot be
    used at all, such as a queue order's formula), no traceback; and Ctrl-C into one line and exit code
    130 (what a shell reports for SIGINT)."""

    @functools.wraps(func)
    def wrapper(*args: object, **kwargs: object) -> object:
        _second_interrupt_exits()
        try:
            return func(*args, **kwargs)
        except LakehouseError as exc:
            stderr.print(labelled("error:", "bold red", exc), highlight=False)
            raise typer.Exit(exc.exit_code) from None
        except OSError as exc:
            if error_number(exc) not in (errno.ENOSPC, errno.EDQUOT):
                raise
            stderr.print(labelled("error:", "bold red", disk_full(exc.filename)), highlight=False)
            raise typer.Exit(1) from None
        except Exception as exc:  # DuckDB's own report of a full disk (its writes are not OSErrors)
            if stopped_by_interrupt(exc):  # a query of a connection of the command's own
                _interrupted()
            if "No space left on device" not in str(exc):
                raise
            named = re.search(r'"(/[^"]+)"', str(exc))  # DuckDB names the file it could not write
            stderr.print(labelled("error:", "bold red", disk_full(named.group(1) if named else None)), highlight=False)
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            _interrupted()

    return wrapper  # type: ignore[return-value]


def _interrupted() -> NoReturn:
    """What was committed stays; the work in flight (a file being parsed, a replay) only wrote aside
    and is dropped.  Waiting for it is the one delay left: a second Ctrl-C ends at once."""
    signal.signal(signal.SIGINT, lambda *_: os._exit(INTERRUPTED))
    stderr.print("interrupted: what was done is kept; run the same command again to finish", highlight=False)
    raise typer.Exit(INTERRUPTED) from None


def disk_full(path: object) -> str:
    """One line for a full disk: the file system (its mount point) and what became of the work."""
    where = ""
    if path:
        folder = Path(str(path)).absolute()
        while not os.path.ismount(folder) and folder != folder.parent:
            folder = folder.parent
        where = f" on {folder} (writing {path})"
    return (
        f"no space left{where}: what was committed before is kept and nothing half-written is; "
        "free some space and run the same command again"
    )


#: The exit code of a command stopped by Ctrl-C (128 + SIGINT, as shells report it).
INTERRUPTED = 130


def _second_interrupt_exits() -> None:
    """The first Ctrl-C stops the command cleanly (KeyboardInterrupt); a second one while it winds
    down (waiting for a file being parsed, committing) ends the process at once.  What it leaves
    is written aside, and the next writer removes it."""
    if threading.current_thread() is not threading.main_thread():
        return
    received = 0

    def on_interrupt(number: int, frame: object) -> None:
        nonlocal received
        received += 1
        if received > 1:
            os._exit(INTERRUPTED)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_interrupt)


def announce_plots(paths: Iterable[Path]) -> None:
    """Name each figure a command wrote, on stderr."""
    for path in paths:
        stderr.print(f"plot -> {path}")


#: Seconds between two progress lines where stderr is not a terminal ($LAKEHOUSE_PROGRESS_SECONDS).
PROGRESS_SECONDS = 30.0


class ProgressLines:
    """Progress where stderr is not a terminal (a log file, a pipe, cron), where a bar shows nothing:
    a line every $LAKEHOUSE_PROGRESS_SECONDS (30) with what is done, the rate and the time left, and
    one when all is done.  On a terminal it says nothing (the bar does)."""

    def __init__(self, label: str, total: float, show: Callable[[float], str] = lambda n: f"{n:,.0f}") -> None:
        self.label, self.total, self.show = label, total, show
        self.on = not stderr.is_terminal
        self.every = float(os.environ.get("LAKEHOUSE_PROGRESS_SECONDS", PROGRESS_SECONDS))
        self.started = self.last = time.monotonic()

    def update(self, done: float, note: str = "") -> None:
        now = time.monotonic()
        if not self.on or (now - self.last < self.every and done < self.total):
            return
        self.last = now
        elapsed = max(now - self.started, 1e-9)
        rate = done / elapsed
        left = f", about {_clock((self.total - done) / rate)} left" if 0 < done < self.total else ""
        share = f" ({done / self.total:.0%})" if self.total else ""
        stderr.print(
            f"{self.label}: {self.show(done)} of {self.show(self.total)}{share}, {self.show(rate)}/s{left}"
            + (f", {note}" if note else "")
        )


def _clock(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


@contextlib.contextmanager
def byte_progress(label: str, total: int, describe: Callable[[Any], str]) -> Iterator[Callable[[Any, int], None]]:
    """A transient progress bar over input bytes (MB/s and ETA) on stderr, and progress lines where
    stderr is not a terminal; yields the `on_file` callback."""
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    with Progress(
        TextColumn(label, markup=False),  # (file names: data, never markup)
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.description}", markup=False),
        console=stderr,
        transient=True,
    ) as progress:
        task = progress.add_task("", total=total)
        lines = ProgressLines(label, total, lambda n: f"{n / 1e6:,.1f} MB")
        done = 0

        def on_file(result: Any, size: int) -> None:
            nonlocal done
            done += size
            progress.update(task, advance=size, description=describe(result))
            lines.update(done)

        yield on_file


__all__ = [
    "FormatOption",
    "LakeOption",
    "OutputFormat",
    "OutputOption",
    "PlotsOption",
    "StrictGroup",
    "announce_plots",
    "byte_progress",
    "ProgressLines",
    "clear_errors",
    "command_group",
    "writable_file",
    "writable_folder",
]
