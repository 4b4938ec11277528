"""Frames to the terminal or to files: rich tables, CSV, JSON, Parquet.

Data goes to stdout (or --output); messages go to stderr, so `lakehouse ... --format csv > x.csv`
captures only data.
"""

from __future__ import annotations

import contextlib
import enum
import json
import re
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rich.console import Console
from rich.table import Table
from rich.text import Text

from lakehouse.base.errors import RenderError
from lakehouse.base.outputs import written_aside

if TYPE_CHECKING:  # (imported by the frames' makers; `simulate` loads Polars while its replay runs)
    import polars as pl


# Data is never markup: a log's header, a file name or a cell may hold `[batch:1]` or `[/]`, which rich
# would take for styles (or fail on).  The consoles print text as it is; the few styled words of a
# message are built with `labelled`.
class _MessageConsole(Console):
    """A console whose messages are never folded: a message (text alone) goes out as one logical
    line that the terminal wraps, so a path or a word in it can be copied whole at any width (rich
    would cut `a-folder` into `a-f` / `older` at the 80th column).  Tables and bars still fit the width."""

    def print(self, *objects: object, **options: object) -> None:  # type: ignore[override]
        if objects and all(isinstance(o, str | Text) for o in objects):
            options.setdefault("soft_wrap", True)
        super().print(*objects, **options)  # type: ignore[arg-type]


stderr = _MessageConsole(stderr=True, markup=False)


def labelled(label: str, style: str, message: object) -> Text:
    """`error: <message>` with only the label styled: the message is shown as it is."""
    return Text.assemble((label, style), " ", str(message))


class OutputFormat(enum.StrEnum):
    table = "table"
    csv = "csv"
    json = "json"
    parquet = "parquet"


def _cell(value: object, plain: bool = False) -> str:
    """A value as a table shows it; `plain` (an identifier or an instant) without thousands separators,
    so that it can be copied back into SQL."""
    if value is None:
        return "—"
    if isinstance(value, float):
        # Four significant digits below a thousand; whole numbers with separators above (a wait of
        # 262,194 s, never 2.622e+05).
        if abs(value) < 1000:
            return f"{value:.4g}"
        return f"{value:.0f}" if plain else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value) if plain else f"{value:,}"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, list | tuple):  # (a list column: its items, not Python's repr)
        return ", ".join(_cell(item, plain) for item in value)
    if isinstance(value, dict):
        return ", ".join(f"{key}: {_cell(item)}" for key, item in value.items())
    return str(value)


#: Numeric columns that identify something (a job, a line, a user, a machine) or give an instant (a
#: submit time, a trace timestamp): printed without separators, as SQL takes them back.  Measures
#: (counts, waits, run times, sizes) keep theirs.
PLAIN = re.compile(
    r"(^|_)(id|ids|job|line|index|user|group|machine|task|part|seed|number)$|^(time|timestamp|row)$"
    r"|^(submit|start|end|finish)(_time|_at)?$"
)


#: Numeric columns in seconds, whose headers say so on a terminal (CSV and JSON keep the bare names).
SECONDS = re.compile(r"(^|_)(wait|response|makespan|seconds)$")

#: Columns that name things (a log, a view, a campaign, a class of jobs): never wrapped, whatever the
#: terminal's width.
NAME_COLUMNS = {"log", "source", "view", "audit", "campaign", "table", "size", "length", "user"}

#: Columns that hold a path (a run's report, a source file): never wrapped either, so that it can be
#: copied whole; a table too wide for the terminal gives them a block of their own.
PATH_COLUMNS = {"report", "path", "file", "source_file", "folder", "figure"}

#: Columns that identify a row when they lead a table (a log, its machine size and a variant; a log's
#: line and job): a table cut into blocks of columns repeats them in each block.
KEY_COLUMNS = NAME_COLUMNS | {
    "machine_size", "variant", "scheduler", "policy", "predictor", "strategy", "heuristic", "study",
    "quantity", "scenario", "resource", "metric", "name", "held_out", "states", "state", "line",
    "job", "job_id", "task_index", "week",
}  # fmt: skip
#: The column a table cut into blocks gets first when its leading columns do not tell its rows apart.
ROW_NUMBER = "row"


def _plain(frame: pl.DataFrame) -> list[bool]:
    """Which of the frame's columns print without separators (PLAIN)."""
    return [dtype.is_numeric() and bool(PLAIN.search(column)) for column, dtype in frame.schema.items()]


def _header(column: str, dtype: pl.DataType) -> str:
    """A column's name on a terminal: with its unit where the name does not say it."""
    return f"{column} (s)" if dtype.is_numeric() and SECONDS.search(column) else column


def rich_table(frame: pl.DataFrame, title: str | None = None) -> Table:
    """Numbers and names are never broken across lines: their columns are as wide as their widest cell
    and header, and only free text (notes, dates) folds; `print_table` widens what still does not fit."""
    table = Table(title=None if title is None else Text(title), header_style="bold", show_lines=False)
    plain = _plain(frame)
    rows = [[_cell(v, plain[i]) for i, v in enumerate(row)] for row in frame.iter_rows()]
    for i, (column, dtype) in enumerate(frame.schema.items()):
        name = _header(column, dtype)
        if dtype.is_numeric() or column in NAME_COLUMNS or column in PATH_COLUMNS:
            width = max([len(name), *(len(row[i]) for row in rows)])
            justify: Literal["right", "left"] = "right" if dtype.is_numeric() else "left"
            table.add_column(Text(name), justify=justify, no_wrap=True, min_width=width)
        else:
            widest = max([len(name), *(len(row[i]) for row in rows)])
            table.add_column(Text(name), overflow="fold", min_width=min(widest, max(len(name), FOLDED_MIN_WIDTH)))
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


#: The narrowest a column of free text gets before the table is printed wider than the terminal.
FOLDED_MIN_WIDTH = 24


def _needed(table: Table) -> int:
    return sum(column.min_width or 0 for column in table.columns) + 3 * len(table.columns) + 1


def print_table(console: Console, table: Table) -> None:
    """Print on `console`; a table whose fixed columns do not fit its width is printed as wide as
    they need rather than cutting a number or a log name (in a file or a pipe: one line per row)."""
    needed = _needed(table)
    if needed <= console.width:
        console.print(table)
        return
    narrower = console.width  # (rich caps a print's width at its console's, so the console widens)
    console.width = needed
    try:
        console.print(table, crop=False)
    finally:
        console.width = narrower


def print_frame(
    console: Console, frame: pl.DataFrame, title: str | None = None, keys: Sequence[str] | None = None
) -> None:
    """A frame on `console`, never a column dropped: on a terminal too narrow for it, a single row is
    shown turned (one line per column) and more rows in blocks of columns that fit, each repeating the
    columns that name the row (`keys`, else the leading ones: `row_keys`); in a file or a pipe every
    row stays one line."""
    table = rich_table(frame, title)
    if _needed(table) <= console.width or not console.is_terminal or frame.width < 2:
        print_table(console, table)
    elif frame.height == 1:
        plain = _plain(frame)
        turned = {
            "column": [_header(column, dtype) for column, dtype in frame.schema.items()],
            "value": [_cell(value, plain[i]) for i, value in enumerate(frame.row(0))],
        }
        print_table(console, rich_table(_frame(turned), title))
    else:
        for block, part in column_blocks(frame, console.width, keys):
            suffix = f"columns {block}"
            print_table(console, rich_table(part, f"{title} ({suffix})" if title else suffix))


def column_blocks(frame: pl.DataFrame, width: int, keys: Sequence[str] | None = None) -> list[tuple[str, pl.DataFrame]]:
    """The frame's columns cut into blocks that fit `width`, each led by the columns that identify a
    row (`row_keys`); (which columns, as `2-7 of 16`) and the block."""
    frame, count = row_keys(frame, keys)
    widths = [column.min_width or 0 for column in rich_table(frame).columns]
    base = sum(widths[:count]) + 3 * count + 1
    blocks: list[list[int]] = [[]]
    used = base
    for i in range(count, frame.width):
        if blocks[-1] and used + widths[i] + 3 > width:
            blocks.append([])
            used = base
        blocks[-1].append(i)
        used += widths[i] + 3
    return [
        (
            f"{block[0] + 1}-{block[-1] + 1} of {frame.width}",
            frame.select(frame.columns[:count] + [frame.columns[i] for i in block]),
        )
        for block in blocks
    ]


def row_keys(frame: pl.DataFrame, keys: Sequence[str] | None = None) -> tuple[pl.DataFrame, int]:
    """The frame, its key columns first, and how many they are: `keys` as a table declares them, else
    the first column and those of KEY_COLUMNS that follow it.  Where they do not tell the rows apart
    (ad-hoc SQL, a log's several variants), a row number is put first."""
    if keys:
        frame = frame.select(*keys, *(c for c in frame.columns if c not in keys))
        count = len(keys)
    else:
        count = 1
        while count < frame.width - 1 and frame.columns[count] in KEY_COLUMNS:
            count += 1
    if frame.select(frame.columns[:count]).is_duplicated().any() and ROW_NUMBER not in frame.columns:
        return frame.with_row_index(ROW_NUMBER, offset=1), count + 1
    return frame, count


def _frame(columns: dict[str, list[str]]) -> pl.DataFrame:
    import polars as pl  # only a table turned on a narrow terminal needs Polars here

    return pl.DataFrame(columns)


def flat(frame: pl.DataFrame) -> pl.DataFrame:
    """CSV has no nested values: list and struct columns are written as JSON text in their cell."""
    import polars as pl  # every command imports this module; only CSV output needs Polars

    nested = [name for name, dtype in frame.schema.items() if dtype.is_nested()]
    return frame.with_columns(
        pl.Series(name, [None if v is None else json.dumps(v, default=str) for v in frame[name].to_list()], pl.String)
        for name in nested
    )


def emit(
    frame: pl.DataFrame,
    fmt: OutputFormat,
    output: Path | None = None,
    title: str | None = None,
    console: Console | None = None,
    keys: Sequence[str] | None = None,
) -> None:
    """Write a frame in the chosen format to --output, `console` (a table only) or stdout; `keys`: the
    columns that identify a row, repeated in each block of a table too wide for the terminal."""
    if fmt is OutputFormat.parquet:
        if output is None:
            if sys.stdout.isatty():
                raise RenderError("--format parquet writes binary data: give --output FILE or redirect stdout")
            frame.write_parquet(sys.stdout.buffer)
        else:
            with written_aside(output) as tmp:
                frame.write_parquet(tmp)
    elif fmt is OutputFormat.table and console is not None:
        print_frame(console, frame, title, keys)
    elif fmt is OutputFormat.table:
        if output:
            with written_aside(output) as tmp, open(tmp, "w") as file:
                print_table(Console(file=file, width=200, markup=False), rich_table(frame, title))
        else:
            console = Console(width=None if sys.stdout.isatty() else 160, markup=False)
            print_frame(console, frame, title, keys)
    else:
        text = flat(frame).write_csv() if fmt is OutputFormat.csv else frame.write_json()
        if output is None:
            sys.stdout.write(text if fmt is OutputFormat.csv else text + "\n")
        else:
            with written_aside(output) as tmp:
                tmp.write_text(text)
    if output is not None:
        stderr.print(f"wrote {frame.height:,} rows to {output}")


def stream_parquet(reader: object, output: Path | None) -> None:
    """Rows arriving in batches (a `pyarrow.RecordBatchReader`) written as Parquet to --output or
    stdout one batch at a time: a result larger than memory never has to be whole in it."""
    import pyarrow.parquet as pq  # only this output needs them

    if output is None and sys.stdout.isatty():
        raise RenderError("--format parquet writes binary data: give --output FILE or redirect stdout")
    rows = 0
    with written_aside(output) if output else contextlib.nullcontext(None) as tmp:
        sink = str(tmp) if tmp is not None else sys.stdout.buffer
        with pq.ParquetWriter(sink, reader.schema, compression="zstd") as writer:  # type: ignore[attr-defined]
            for batch in reader:  # type: ignore[attr-defined]
                writer.write_batch(batch)
                rows += batch.num_rows
    if output is not None:
        stderr.print(f"wrote {rows:,} rows to {output}")


def emit_tables(tables: list[tuple[pl.DataFrame, str]], output: Path | None = None) -> None:
    """Several titled tables, one after the other, to stdout or into one text file."""
    with (
        written_aside(output) if output else contextlib.nullcontext() as tmp,
        open(tmp, "w") if tmp else contextlib.nullcontext() as file,
    ):
        console = (
            Console(file=file, width=200, markup=False)
            if file
            else Console(width=None if sys.stdout.isatty() else 160, markup=False)
        )
        for frame, title in tables:
            print_frame(console, frame, title)
    if output is not None:
        stderr.print(f"wrote {len(tables)} tables to {output}")
