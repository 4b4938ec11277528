"""What a report is: how it computes, what it stores (its analysis.* tables), what it shows and what it
draws, and how the nightly run calls it; and the options it takes, each with its help and its range
once, for `lakehouse report NAME`, the nightly configuration and the code alike.  Its command is made
from this declaration (lakehouse.cli.report): its argument, its options, the runs they ask for and what
it prints of them.

A report computes without the writer lock (reading the lake may take minutes; ingests go on) and
`Report.run` stores the result under it: the one place a report takes the lock, so readers see the
old tables or the new ones, whole.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, NamedTuple, TypeVar

import polars as pl

from lakehouse.base.datasets import TRACES
from lakehouse.base.errors import LakehouseError
from lakehouse.base.google2019_format import CELL_TIME_ZONES
from lakehouse.base.lake import Lake
from lakehouse.base.tables import StoredTable

if TYPE_CHECKING:  # the campaigns load when a report's campaign runs
    from lakehouse.campaigns.grid import Grid

S = TypeVar("S")
R = TypeVar("R")
Tables = list[tuple[str, pl.DataFrame]]  # (caption, frame) as a page or a terminal shows them


@dataclass(frozen=True)
class Option:
    """One setting of a report, as `--NAME` on its command and `NAME` in its table of the nightly
    configuration: a whole number, a number, a flag, a text (which the report reads: a comma-separated
    list, a duration) or texts (`--NAME` repeated), with its default, its range and its help."""

    name: str  # snake_case; the command line spells it with dashes
    default: int | float | bool | str | None
    help: str
    minimum: float | None = None
    maximum: float | None = None
    holds: type | None = None  # what it holds when its default is None (none given: the report chooses)
    #: A text's allowed values, asked when a value is checked (a model's names: listing the reports
    #: loads no model).
    choices: Callable[[], Sequence[str]] | None = None
    #: How the report reads a text (a comma-separated list, a duration): what it stands for, or a
    #: LakehouseError or ValueError saying why not.  Part of the check, so a bad text is refused before
    #: any work with the same words on the command line (exit 2), in the nightly configuration and by
    #: --dry-run; the report's runs read the value with `read`.
    reads: Callable[[str], Any] | None = None

    @property
    def kind(self) -> type:
        return self.holds or type(self.default)

    def read(self, value: Any) -> Any:
        """What a checked value stands for (a text through `reads`; None and other values as they are)."""
        return self.reads(value) if self.reads is not None and isinstance(value, str) else value

    def problem(self, value: object) -> str | None:
        """Why `value` cannot be this option, if it cannot (the same words wherever it is given)."""
        kind = self.kind
        expected = f"expected {_KIND_WORDS[kind]}"
        if kind is list:
            texts = isinstance(value, list) and all(isinstance(v, str) for v in value)
            return None if texts else f"{expected}, got {value!r}"
        if self.minimum is not None and self.maximum is not None:
            expected += f" from {self.minimum:,g} to {self.maximum:,g}"
        elif self.minimum is not None:
            expected += f" of at least {self.minimum:,g}"
        elif self.maximum is not None:
            expected += f" of at most {self.maximum:,g}"
        number = int | float if kind is float else kind
        if isinstance(value, bool) != (kind is bool) or not isinstance(value, number):
            return f"{expected}, got {value!r}"
        if isinstance(value, float) and not math.isfinite(value):  # (NaN passes every comparison below)
            return f"{expected.replace('a number', 'a finite number')}, got {value!r}"
        if self.reads is not None and isinstance(value, str):
            try:
                self.reads(value)
            except (LakehouseError, ValueError) as exc:
                return str(exc)
        if self.choices is not None and isinstance(value, str) and value not in (allowed := list(self.choices())):
            return f"expected one of {', '.join(allowed)}, got {value!r}"
        if (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and (
                (self.minimum is not None and value < self.minimum)
                or (self.maximum is not None and value > self.maximum)
            )
        ):
            return f"{expected}, got {value!r}"
        return None


def view_option(default: str) -> Option:
    """`--view` of a report that replays logs: the cleaned jobs it replays (one help for every such report)."""
    return Option("view", default, "Cleaned jobs to replay: jobs_clean or jobs_strong.", choices=_views)


def _views() -> list[str]:
    from lakehouse.base.job_views import View

    return [str(v) for v in View]


def _campaign_name(text: str) -> str:
    from lakehouse.base.campaign_names import RULE, name_problem

    if name_problem(text):
        raise LakehouseError(f"campaign name {text!r}: {RULE}")
    return text


def campaign_option(default: str, help: str) -> Option:
    """`--name` of a report that runs a campaign: the campaign's name, checked by the campaigns' rule."""
    return Option("name", default, help, reads=_campaign_name)


TRACE_OPTIONS = (
    Option(
        "trace",
        "google-2011",
        "The trace: google-2011 (clusterdata-2011-2, the published studies' trace) or google-2019 (clusterdata-2019, "
        "every ingested cell); alibaba-2018 is refused with the reason.",
        choices=lambda: TRACES,
    ),
    Option(
        "cell",
        None,
        "With --trace google-2019: one cell (a-h) [default: every ingested cell].",
        holds=str,
        choices=lambda: tuple(CELL_TIME_ZONES),
    ),
)


def _ray_address(text: str) -> str:
    from lakehouse.base.partitions import ray_address

    return ray_address(text)


#: A report whose work splits by job: how many partitions, and where they run.
PARTITION_OPTIONS = (
    Option(
        "partitions",
        None,
        "Split the work into this many partitions by a hash of the job (predictions: of the workflow), each "
        "computed alone [default: volatility and predictions as many as --memory-limit needs, the others one].",
        minimum=1,
        holds=int,
    ),
    Option(
        "ray",
        None,
        "Run the partitions as Ray tasks on the cluster at this address: auto (the cluster this machine "
        "belongs to) or HOST:PORT; its workers read the lake's files, which must be on a path they share "
        "[default: in this process, one after the other].",
        holds=str,
        reads=_ray_address,
    ),
)

_KIND_WORDS = {int: "a whole number", float: "a number", bool: "true or false", str: "a text", list: "a list of texts"}


@dataclass(frozen=True)
class Argument:
    """The words after `lakehouse report NAME`: one (a log, a campaign) or several (logs)."""

    name: str
    help: str
    many: bool = False  # several; none given is None, and the report chooses (unless `required`)
    default: str | None = None  # one: what it is when not given (None: it must be given)
    required: bool = False  # several: at least one must be given


@dataclass(frozen=True)
class Call:
    """What a report's command was given: its argument, its options (defaults filled in) and whether
    it draws figures (a report may then keep what they need)."""

    argument: Any
    options: Mapping[str, Any]
    plots: bool = False
    grid: Grid | None = None  # the grid its campaign ran, once it ran (its runs read that campaign)

    def read(self, options: Sequence[Option]) -> dict[str, Any]:
        """Each option's value as the report reads it (Option.read: a list, a duration), by name."""
        return {option.name: option.read(self.options[option.name]) for option in options}


#: What a command runs for what it was given: the settings of each run (one per log, say), and notes
#: said before the runs (the logs left out, and why).  A wrong value is a SettingsError naming its option.
Runs = Callable[[Lake, Call], tuple[list[Any], list[str]]]


class Shown(NamedTuple):
    """One table a command prints: its caption, the frame, and with `--output FILE` in a file format
    (csv, json, parquet) the name it is written beside the first table with (FILE-ASIDE.EXT)."""

    caption: str
    frame: pl.DataFrame
    aside: str = ""


#: How a nightly run calls a report that runs more than once (one run per changed SWF log, say): given
#: the lake, the logs that changed and the report's options (from the nightly configuration, defaults
#: filled), the settings of each run, and notes for the page.
Nightly = Callable[[Lake, Sequence[str], Mapping[str, Any]], tuple[list[Any], list[str]]]


@dataclass(frozen=True)
class Report(Generic[S, R]):
    name: str  # as in `lakehouse report NAME` and the nightly config's `reports`
    title: str  # its section's title in the nightly page
    tables: tuple[StoredTable, ...]  # what it stores (each read by its analysis.* view), as its topic declares
    compute: Callable[[Lake, S], R]  # reads the lake; TooLittleDataError when it has nothing to work on
    #: Writes the tables (under the writer lock); None: its campaign did.  It may return the result as stored,
    #: where storing moved a file the result reads (a DuckLake lake's writer moves it into its table's folder).
    store: Callable[[Lake, R], R | None] | None
    show: Callable[[R], Tables]  # the tables a page shows
    plot: Callable[[Lake, R, Path], list[Path]] | None = None
    follows: Literal["swf", "google"] | None = None  # the nightly run re-runs it when this family changes
    options: tuple[Option, ...] = ()  # its settings, for a generated command and the nightly config
    make: Callable[..., S] | None = None  # its settings from its options (keywords); None: no settings
    nightly: Nightly | None = None  # what a nightly run runs it on [default: once, with its options]
    order: int = 100  # where it runs in a nightly run, and is listed: lower first (pack after periodicity)
    summary: str = ""  # what its command's --help says it does [default: the title]
    doing: str | Callable[[S], str] = ""  # what its command says while a run runs [default: running NAME...]
    notes: Callable[[R], list[str]] | None = None  # lines that explain a result (a command's, a page's)
    argument: Argument | None = None  # its command's words after its name
    runs: Runs | None = None  # what its command runs [default: once, with the settings of its options]
    #: What its command prints of its runs' results, as a terminal's tables (True) or as a file's data
    #: (False) [default: each result's `show`].
    present: Callable[[list[R], bool], list[Shown]] | None = None
    drawing: str = ""  # what its command says while it draws [default: nothing: figures are quick]
    output: str = ""  # its command's --output help, when it writes more than one file [default: one file]
    #: The campaign its command runs before its runs (with a progress bar; a re-run runs only the runs the
    #: lake lacks, Ctrl-C keeps those that ended); its command then takes --executor, --workers and
    #: --ray-address, and exits with the number of failed runs.
    campaign: Callable[[Lake, Call], Grid] | None = None
    keep_schedules: bool = False  # its campaign keeps each run's schedule (its figures read them)

    def run(self, lake: Lake, settings: S) -> R:
        """Compute, then store under the writer lock; on a past snapshot of a DuckLake lake (`--as-of`),
        compute only: what it read is not what the lake now holds."""
        lake.require()  # a mistyped --lake: said before minutes of work, and no folder made there
        result = self.compute(lake, settings)
        if self.store is not None and lake.snapshot is None:
            with lake.writer():
                stored = self.store(lake, result)
            if stored is not None:
                result = stored
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
        return "-> " + ", ".join(table.view for table in self.tables)

    def option(self, name: str) -> Option:
        return next(o for o in self.options if o.name == name)

    def settings_for(self, options: Mapping[str, Any]) -> S:
        """Its settings from option values (the defaults for those not given)."""
        values = {o.name: o.default for o in self.options} | dict(options)
        return self.make(**values) if self.make is not None else None  # type: ignore[return-value]

    def doing_for(self, settings: S) -> str:
        """What its command says while it runs with `settings`."""
        if callable(self.doing):
            return self.doing(settings)
        return self.doing or f"running {self.name}..."

    def command_runs(self, lake: Lake, call: Call) -> tuple[list[S], list[str]]:
        """The settings of each run its command makes for `call`, and notes to say first."""
        if self.runs is not None:
            return self.runs(lake, call)
        return [self.settings_for(call.options)], []

    def presented(self, results: list[R], terminal: bool) -> list[Shown]:
        """What its command prints of `results`."""
        if self.present is not None:
            return self.present(results, terminal)
        return [Shown(caption, frame) for result in results for caption, frame in self.show(result)]

    def nightly_runs(self, lake: Lake, logs: Sequence[str], options: Mapping[str, Any]) -> tuple[list[S], list[str]]:
        """The settings of each run a nightly run makes of it, and notes for its section."""
        if self.nightly is not None:
            return self.nightly(lake, logs, options)
        return [self.settings_for(options)], []
