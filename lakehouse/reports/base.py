"""What a report is: how it computes, what it stores (its analysis.* tables), what it shows and what it
draws, and how the nightly run calls it; and the options it takes, each with its help and its range
once, for `lakehouse report NAME`, the nightly configuration and the code alike.

A report computes without the writer lock (reading the lake may take minutes; ingests go on) and
`Report.run` stores the result under it: the one place a report takes the lock, so readers see the
old tables or the new ones, whole.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

import polars as pl

from lakehouse.base.lake import Lake

S = TypeVar("S")
R = TypeVar("R")
Tables = list[tuple[str, pl.DataFrame]]  # (caption, frame) as a page or a terminal shows them


def lazy(path: str) -> Callable[..., Any]:
    """The function at `module:name`, imported when it is first called: a report names its model's
    functions so, and listing the reports (every command does) loads no model."""
    module, name = path.split(":")

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__qualname__ = call.__name__ = path
    return call


@dataclass(frozen=True)
class Option:
    """One setting of a report, as `--NAME` on its command and `NAME` in its table of the nightly
    configuration: a whole number, a number or a flag, with its default, its range and its help."""

    name: str  # snake_case; the command line spells it with dashes
    default: int | float | bool
    help: str
    minimum: float | None = None
    maximum: float | None = None

    def problem(self, value: object) -> str | None:
        """Why `value` cannot be this option, if it cannot (the same words wherever it is given)."""
        kind = type(self.default)
        expected = f"expected {_KIND_WORDS[kind]}"
        if self.minimum is not None and self.maximum is not None:
            expected += f" from {self.minimum:,g} to {self.maximum:,g}"
        number = int | float if kind is float else kind
        if isinstance(value, bool) != (kind is bool) or not isinstance(value, number):
            return f"{expected}, got {value!r}"
        if kind is not bool and (
            (self.minimum is not None and value < self.minimum) or (self.maximum is not None and value > self.maximum)
        ):
            return f"{expected}, got {value!r}"
        return None


_KIND_WORDS = {int: "a whole number", float: "a number", bool: "true or false"}


#: How a nightly run calls a report that runs more than once (one run per changed SWF log, say): given
#: the lake, the logs that changed and the report's options (from the nightly configuration, defaults
#: filled), the settings of each run, and notes for the page.
Nightly = Callable[[Lake, Sequence[str], Mapping[str, Any]], tuple[list[Any], list[str]]]


@dataclass(frozen=True)
class Report(Generic[S, R]):
    name: str  # as in `lakehouse report NAME` and the nightly config's `reports`
    title: str  # its section's title in the nightly page
    tables: tuple[str, ...]  # the analysis.* views that read what it stores
    compute: Callable[[Lake, S], R]  # reads the lake; TooLittleDataError when it has nothing to work on
    store: Callable[[Lake, R], None]  # writes the tables (called under the writer lock)
    show: Callable[[R], Tables]  # the tables a page shows
    plot: Callable[[Lake, R, Path], list[Path]] | None = None
    follows: Literal["swf", "google"] | None = None  # the nightly run re-runs it when this family changes
    options: tuple[Option, ...] = ()  # its settings, for a generated command and the nightly config
    make: Callable[..., S] | None = None  # its settings from its options (keywords); None: no settings
    nightly: Nightly | None = None  # what a nightly run runs it on [default: once, with its options]
    order: int = 100  # where it runs in a nightly run, and is listed: lower first (pack after periodicity)
    summary: str = ""  # what a generated command's --help says it does [default: the title]
    doing: str = ""  # what a generated command says while it runs [default: running NAME...]
    notes: Callable[[R], list[str]] | None = None  # lines that explain a result (a command's, a page's)

    def run(self, lake: Lake, settings: S) -> R:
        """Compute, then store under the writer lock."""
        lake.require()  # a mistyped --lake: said before minutes of work, and no folder made there
        result = self.compute(lake, settings)
        with lake.writer():
            self.store(lake, result)
        return result

    def plots(self, lake: Lake, result: R, folder: Path) -> list[Path]:
        """Its figures of `result`, written into `folder` (none for a report without figures)."""
        return self.plot(lake, result, folder) if self.plot is not None else []

    def notes_of(self, result: R) -> list[str]:
        """What explains `result` beside its tables (why a cell is empty, say)."""
        return self.notes(result) if self.notes is not None else []

    @property
    def stored(self) -> str:
        """What a command says after storing: `-> analysis.x, analysis.y`."""
        return "-> " + ", ".join(self.tables)

    def option(self, name: str) -> Option:
        return next(o for o in self.options if o.name == name)

    def settings_for(self, options: Mapping[str, Any]) -> S:
        """Its settings from option values (the defaults for those not given)."""
        values = {o.name: o.default for o in self.options} | dict(options)
        return self.make(**values) if self.make is not None else None  # type: ignore[return-value]

    def nightly_runs(self, lake: Lake, logs: Sequence[str], options: Mapping[str, Any]) -> tuple[list[S], list[str]]:
        """The settings of each run a nightly run makes of it, and notes for its section."""
        if self.nightly is not None:
            return self.nightly(lake, logs, options)
        return [self.settings_for(options)], []
