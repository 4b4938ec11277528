"""The `lakehouse` command line: data to stdout, progress and messages to stderr.

`main` imports the commands itself (a quarter of a second of Polars, DuckDB and Arrow), so that a
Ctrl-C that lands while they load, or while typer builds the command line, ends as quietly as one
that lands while a command works; it loads only the module of the command it runs (`commands.app_for`)."""

from __future__ import annotations

import signal
import sys


def main() -> None:
    try:
        from lakehouse.cli.commands import app_for

        app_for(sys.argv[1:])()
    except KeyboardInterrupt:  # before a command started (each command reports its own)
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    finally:
        # The command is over (its exit status is set): a Ctrl-C now would only make a finished
        # command look killed while the interpreter shuts down.
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def __getattr__(name: str) -> object:
    if name == "app":  # `from lakehouse.cli import app`, as the tests and users' scripts do
        from lakehouse.cli.commands import app

        return app
    raise AttributeError(name)


__all__ = ["app", "main"]
