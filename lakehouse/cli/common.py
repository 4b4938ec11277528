"""What every command group of the CLI shares: the common options and the error and progress wrappers."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Annotated, TypeVar

import typer

from lakehouse.errors import LakehouseError
from lakehouse.lake import ENV_VAR
from lakehouse.render import OutputFormat, stderr

LakeOption = Annotated[
    Path | None,
    typer.Option("--lake", help=f"Lake folder [default: ${ENV_VAR}, else ./lake].", show_default=False),
]
FormatOption = Annotated[OutputFormat, typer.Option("--format", "-f", help="Output format.")]


def in_existing_folder(path: Path | None) -> Path | None:
    """An output file's folder must exist: found out before the work, not after it."""
    folder = None if path is None else path.expanduser().absolute().parent
    if folder is not None and not folder.is_dir():
        raise typer.BadParameter(f"folder {folder} does not exist")
    return path


OutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output", "-o", help="Write to this file instead of stdout.", dir_okay=False, callback=in_existing_folder
    ),
]

F = TypeVar("F", bound=Callable[..., object])


def clear_errors(func: F) -> F:
    """Turn our errors into one red line on stderr and exit code 1 (no traceback)."""

    @functools.wraps(func)
    def wrapper(*args: object, **kwargs: object) -> object:
        try:
            return func(*args, **kwargs)
        except LakehouseError as exc:
            stderr.print(f"[bold red]error:[/] {exc}", highlight=False)
            raise typer.Exit(1) from None

    return wrapper  # type: ignore[return-value]


def announce_plots(paths: Iterable[Path]) -> None:
    """Name each figure a command wrote, on stderr."""
    for path in paths:
        stderr.print(f"plot -> {path}")


@contextlib.contextmanager
def byte_progress(label: str, total: int, describe: Callable[[object], str]) -> Iterator[Callable[[object, int], None]]:
    """A transient progress bar over input bytes (MB/s and ETA) on stderr; yields the `on_file` callback."""
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    with Progress(
        TextColumn(label),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.description}"),
        console=stderr,
        transient=True,
    ) as progress:
        task = progress.add_task("", total=total)
        yield lambda result, size: progress.update(task, advance=size, description=describe(result))


__all__ = [
    "FormatOption",
    "LakeOption",
    "OutputFormat",
    "OutputOption",
    "announce_plots",
    "byte_progress",
    "clear_errors",
]
