"""Frames to the terminal or to files: rich tables, CSV, JSON, Parquet.

Data goes to stdout (or --output); messages go to stderr, so `lakehouse ... --format csv > x.csv`
captures only data.
"""

from __future__ import annotations

import enum
import sys
from datetime import datetime
from pathlib import Path

import polars as pl
from rich.console import Console
from rich.table import Table

from lakehouse.errors import RenderError

stderr = Console(stderr=True)


class OutputFormat(enum.StrEnum):
    table = "table"
    csv = "csv"
    json = "json"
    parquet = "parquet"


def _cell(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        # Four significant digits below a thousand; whole numbers with separators above (a wait of
        # 262,194 s, never 2.622e+05).
        return f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return str(value)


def rich_table(frame: pl.DataFrame, title: str | None = None) -> Table:
    table = Table(title=title, header_style="bold", show_lines=False)
    for name, dtype in frame.schema.items():
        table.add_column(name, justify="right" if dtype.is_numeric() else "left", overflow="fold")
    for row in frame.iter_rows():
        table.add_row(*(_cell(v) for v in row))
    return table


def emit(
    frame: pl.DataFrame,
    fmt: OutputFormat,
    output: Path | None = None,
    title: str | None = None,
    console: Console | None = None,
) -> None:
    """Write a frame in the chosen format to --output, `console` (a table only) or stdout."""
    if fmt is OutputFormat.parquet:
        if output is None:
            if sys.stdout.isatty():
                raise RenderError("--format parquet writes binary data: give --output FILE or redirect stdout")
            frame.write_parquet(sys.stdout.buffer)
        else:
            frame.write_parquet(output)
    elif fmt is OutputFormat.table and console is not None:
        console.print(rich_table(frame, title))
    elif fmt is OutputFormat.table:
        console = (
            Console(file=open(output, "w"), width=200)
            if output
            else Console(width=None if sys.stdout.isatty() else 160)
        )
        console.print(rich_table(frame, title))
        if output:
            console.file.close()
    else:
        text = frame.write_csv() if fmt is OutputFormat.csv else frame.write_json()
        if output is None:
            sys.stdout.write(text if fmt is OutputFormat.csv else text + "\n")
        else:
            Path(output).write_text(text)
    if output is not None:
        stderr.print(f"wrote {frame.height:,} rows to {output}")
