"""The root `lakehouse` command; each module of this package adds its commands to it (`commands` assembles them)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType
from typing import Any

import click
import typer
from rich.columns import Columns
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from lakehouse.base.render import labelled, stderr
from lakehouse.cli.common import StrictGroup


def _loaded_when_used(name: str) -> ModuleType:
    """The module `name`, executed only when a command first reads one of its names.  typer imports
    its rich_utils only to draw a help page or an error, but it costs 0.1 s (rich's Markdown among it)
    and the changes below must be made to it: imported outright here, every command paid for it.  What
    is set on the module before it runs stays set after (importlib's LazyLoader keeps it)."""
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.loader is not None, name
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


#: (Any: its names are set below, as typer reads them, and mypy does not see a module made at run time.)
rich_utils: Any = sys.modules.get("typer.rich_utils") or _loaded_when_used("typer.rich_utils")


class _Folding:
    """A help cell's part rendered with long words folded.  An option's help is a rich Columns (its
    Markdown text, then [default: ...]) whose inner grid cuts a word wider than its cell with "…";
    rich takes a cell's overflow from its column, so the part sets it for itself here."""

    def __init__(self, inner: object) -> None:
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from console.render(self.inner, options.update(overflow="fold"))  # type: ignore[arg-type]

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.inner)  # type: ignore[arg-type]


class _FoldingTable(Table):
    """typer's help tables with every column folding: on an 80-column terminal a long word (an option
    such as --no-global-profile, $LAKEHOUSE_MEMORY_LIMIT, a folder) went on the next line instead of
    being cut with an ellipsis, which hid defaults.  typer has no setting for it, so its table class
    is replaced here, for help output only."""

    def add_row(self, *renderables: object, **options: object) -> None:
        cells = list(renderables)
        for i, cell in enumerate(cells):
            if isinstance(cell, Columns):  # an option's help: each of its parts folds too
                cell.renderables[:] = [_Folding(part) for part in cell.renderables]
            elif isinstance(cell, Text):
                cell.overflow = "fold"
                if cell.plain.startswith("<") and "|" in cell.plain:
                    # A list of choices may break after each `|`, never inside a choice
                    # (`<jobs_clean|jobs_stro` / `ng>`): rich wraps at spaces only.
                    cells[i] = Text(cell.plain.replace("|", "| "), style=cell.style, overflow="fold")
        super().add_row(*cells, **options)  # type: ignore[arg-type]
        for column in self.columns:
            column.overflow = "fold"


rich_utils.Table = _FoldingTable


def _usage_error(error: click.ClickException) -> None:
    """click's usage errors as our own errors read: the usage, the hint, then one `error:` line that is
    never folded.  typer draws them in a box as wide as the terminal, which cut a path given on the
    command line in the middle of a word (and a test that looked for a word found it, or not, by
    where the path happened to break)."""
    if error.__class__.__name__ == "NoArgsIsHelpError":  # (typer prints the help itself)
        return
    ctx = getattr(error, "ctx", None)
    if ctx is not None:
        stderr.print(ctx.get_usage())
        if ctx.command.get_help_option(ctx) is not None:
            stderr.print(f"Try '{ctx.command_path} {ctx.help_option_names[0]}' for help.")
    stderr.print(labelled("error:", "bold red", error.format_message()), highlight=False)


rich_utils.rich_format_error = _usage_error

app = typer.Typer(
    name="lakehouse",
    help="Job logs and cluster traces as a queryable DuckDB/Parquet lake, for scheduling research.\n\n"
    "Start with `lakehouse demo`, then `lakehouse ingest swf LOGS...` and "
    "`lakehouse shell` (the duckdb command line on the lake).",
    cls=StrictGroup,
    no_args_is_help=True,
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def _root() -> None:
    # (No docstring: the help above stays the root's.)  A callback keeps the root a group when the
    # command line loads one command only (`commands.app_for`): typer runs an app of a single command
    # as that command, which would take `simulate` for its first argument.
    pass
