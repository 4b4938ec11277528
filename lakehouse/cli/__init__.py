"""The `lakehouse` command line: data to stdout, progress and messages to stderr.

`main` imports the commands itself (a quarter of a second of Polars, DuckDB and Arrow), so that a
Ctrl-C that lands while they load, or while typer builds the command line, ends as quietly as one
that lands while a command works; it loads only the module of the command it runs (`commands.app_for`)."""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading


def main() -> None:
    """The `lakehouse` script: runs the command of `sys.argv` and ends the process with its status
    (`end`).  To run commands inside a Python process, use `app` (e.g. with typer's `CliRunner`)."""
    status: int | str | None = 0
    try:
        from lakehouse.cli.commands import app_for

        app_for(sys.argv[1:])()
    except KeyboardInterrupt:  # before a command started (each command reports its own)
        print("interrupted", file=sys.stderr)
        status = 130
    except SystemExit as exit:  # how typer ends every command, with its status
        status = exit.code
    finally:
        # The command is over (its exit status is set): a Ctrl-C now would only make a finished
        # command look killed while the interpreter shuts down.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    end(status)


def end(status: int | str | None) -> None:
    """End the process with `status` without tearing the interpreter down: freeing every module
    (Polars, DuckDB, Arrow, typer's pydantic) takes ~50 ms, a tenth of a whole `lakehouse simulate`,
    for a process that is about to vanish anyway.  What the teardown would do that matters still
    happens: the exit handlers run (libraries register their cleanups there: logging flushes, temporary
    folders, Ray's shutdown) and the standard streams are flushed.  Files are written and closed
    by the commands themselves (`with` blocks) before this point.  If another thread still runs, or a
    stream cannot be flushed (a closed pipe), the interpreter ends as usual and reports as usual."""
    if threading.active_count() > 1 or not (status is None or isinstance(status, int)):
        sys.exit(status)
    atexit._run_exitfuncs()  # what the interpreter's own exit runs first
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(status)
    os._exit(status or 0)


def __getattr__(name: str) -> object:
    if name == "app":  # `from lakehouse.cli import app`, as the tests and users' scripts do
        from lakehouse.cli.commands import app

        return app
    raise AttributeError(name)


__all__ = ["app", "main"]
