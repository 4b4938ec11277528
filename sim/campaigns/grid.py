"""A campaign's grid: which logs, which view, and the product of the simulator's settings.

A grid comes from command-line lists (`--policy fcfs,spf`) or from a TOML file::

    name = "policies"
    logs = ["KTH-SP2-1996-2.1-cln", "CTC*"]     # names, unique prefixes or globs
    view = "jobs_strong"
    # machine_size = 128                       # default: the size each log's view was filtered with
    # machine_size = { CEA-Curie = 80640 }     # or per log (name, prefix or glob), the rest as their view
    [grid]
    algorithm = ["easy", "conservative"]
    policy = ["fcfs", "spf", "lexp"]
    backfill = ["queue", "sjbf"]

Every value is checked before anything runs; an error names the offending item and the choices.
"""

from __future__ import annotations

import enum
import hashlib
import itertools
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, make_dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from lakehouse.base import machine
from lakehouse.base.campaign_names import name_problem
from lakehouse.base.comma_lists import split_items
from lakehouse.base.conditions import one_condition
from lakehouse.base.errors import ORDER_KIND, LakehouseError, SettingsError, SimulationInputError
from lakehouse.base.job_views import View
from lakehouse.base.log_names import LogNameError, select_logs
from lakehouse.base.machine import machine_size_problem
from lakehouse.base.prediction_tables import TABLE_PREFIX
from lakehouse.base.tomlfile import read_toml
from lakehouse.base.units import parse_duration
from lakehouse.sim.options import (
    COLUMN_PREFIX,
    DAY,
    WEEK,
    Algorithm,
    Backfill,
    Correction,
    join_predictor_parameters,
    named_order,
)
from lakehouse.sim.settings import TUNABLE_DEFAULTS, TUNABLES, ReplaySettings, read_threshold

if TYPE_CHECKING:
    import polars as pl

#: The most combinations of settings one campaign may have: each is held while the campaign is planned
#: (~1 KB), and a grid this large is a typo more often than a plan.
MAX_SETTINGS = 100_000


class GridError(LakehouseError):
    """A campaign grid or TOML file that cannot run (unknown key, value, log or empty selection); a
    queue order's problem keeps its exit code (OrderError)."""

    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(message)
        self.exit_code = exit_code


class _PointMethods:
    """What a point of the grid does (`RunSettings` is made from the tunable settings' declarations)."""

    if TYPE_CHECKING:  # its fields are the declarations' (TUNABLES) and the grid's own (_GRID_FIELDS)
        __dataclass_fields__: ClassVar[dict[str, Any]]

        def __init__(self, **values: Any) -> None: ...

        def __getattr__(self, name: str) -> Any: ...

    def canonical(self) -> str:
        """A stable text of the settings (the run key hashes it).  Settings at their defaults are left
        out, so that fields added later leave the keys of stored runs as they were."""
        given = {k: v for k, v in asdict(self).items() if k in _FIRST_FIELDS or v != _DEFAULTS[k]}  # type: ignore[call-overload]
        return json.dumps(given, sort_keys=True)

    def replay_settings(self, machine_size: int, tau: float = 10.0) -> ReplaySettings:
        """The replay these settings give on a machine of `machine_size` processors."""
        # A setting left out (None, where the replay's default is not None) takes the replay's default.
        options: dict[str, Any] = {
            name: value
            for name in TUNABLES
            if (value := getattr(self, name)) is not None or TUNABLE_DEFAULTS[name] is None
        }
        if self.selector is not None:
            options.update(selector=self.selector, policies=list(self.policies) or None, decay=self.decay)
            options.update(seed=self.seed + (self.resample or 0))
            if self.period is not None:
                options["period"] = self.period
            if self.epsilon is not None:
                options["epsilon"] = self.epsilon
        options.update(warmup=self.warmup, cooldown=self.cooldown)
        return ReplaySettings.of(machine_size, tau=tau, **options)

    def label(self) -> str:
        """A short name of the variant for tables: `easy-fcfs`, `conservative-spf-sjbf`,
        `easy-full-week`, `easy-fcfs-r7` (the 8th week resample), `easy-cube` (a policy named
        `cube=max:(w/r)^3*n`), ...: the algorithm and the policy (or the selector), then every other
        setting off its default as its declaration shows it."""
        parts = [self.algorithm, named_order(self.policy)[0] or self.policy]
        if self.selector is not None:
            parts = [self.algorithm, self.selector, PERIOD_LABELS.get(self.period or WEEK, f"{self.period}s")]
            if self.epsilon is not None:
                parts.append(f"eps={self.epsilon:g}")
            if self.decay != 1.0:
                parts.append(f"decay={self.decay:g}")
        for name, declared in TUNABLES.items():
            value = getattr(self, name)
            if name not in _LEADING and value != _DEFAULTS[name]:
                parts.append(declared.label(value) if declared.label else f"{name}={value}")
        if self.resample is not None:
            parts.append(f"r{self.resample}")
        return "-".join(parts)


#: The settings a variant's name begins with (the algorithm, then the policy or the selector).
_LEADING = ("algorithm", "policy")


def _unset(name: str) -> Any:
    """A tunable setting's value in a point that does not give it: the replay's default (an enum's
    text), or None for a setting only some replays read."""
    default = TUNABLE_DEFAULTS[name]
    return None if TUNABLES[name].applies is not None else default.value if isinstance(default, enum.Enum) else default


#: The grid's own fields of a point, besides the tunable settings.
_GRID_FIELDS: list[tuple[str, Any, Any]] = [
    # Policy selection (docs/selection.md): the selector, its candidates, period (s), decay, epsilon
    # (egreedy) and seed; `policy` is then unused.
    ("selector", str | None, None),
    ("policies", tuple[str, ...], ()),
    ("period", int | None, None),
    ("decay", float, 1.0),
    ("epsilon", float | None, None),
    ("seed", int, 0),
    # Replay the `resample`-th week resample of the log (lakehouse.campaigns.resample, drawn with `seed`).
    ("resample", int | None, None),
    # Seconds of submissions at the start and at the end replayed but not counted in the metrics (the
    # grid's, given to every run; not in the variant's label: a campaign run again with another window
    # replaces its slots' runs).
    ("warmup", float, 0.0),
    ("cooldown", float, 0.0),
]

if TYPE_CHECKING:

    class RunSettings(_PointMethods):
        """One point of the grid: everything `simulate` takes besides the jobs and the machine size."""

else:
    RunSettings = make_dataclass(
        "RunSettings",
        [(name, Any, field(default=_unset(name))) for name in TUNABLES]
        + [(name, kind, field(default=default)) for name, kind, default in _GRID_FIELDS],
        bases=(_PointMethods,),
        frozen=True,
        namespace={
            "__doc__": "One point of the grid: everything `simulate` takes besides the jobs and the machine size."
        },
    )
    RunSettings.__module__ = __name__  # (pickled by name, to a pool's processes and Ray's workers)


#: EASY and its best-known refinements, by the names tables give them: the variants the demo and the
#: nightly run replay.
EASY_VARIANTS = {
    "EASY": RunSettings(),
    "EASY-SJBF": RunSettings(backfill=Backfill.sjbf.value),
    "EASY++": RunSettings(backfill=Backfill.sjbf.value, predictor="ave2", correction=Correction.incremental.value),
}

_DEFAULTS = {f.name: f.default for f in fields(RunSettings)}
#: The fields every run key has hashed since campaigns began.
_FIRST_FIELDS = ("algorithm", "policy", "backfill", "predictor", "correction", "threshold", "compat")
PERIOD_LABELS = {DAY: "day", WEEK: "week"}


def _checked(key: str, read: Callable[[Any], Any] | None) -> Callable[[object], object]:
    """How a value of dimension `key` is read: as the replay contract takes it, and checked there
    (alone, at the other settings' defaults), so that a bad value is refused before anything runs."""

    def parse(text: object) -> object:
        try:
            value: Any = read(text) if read is not None else str(text)
            settings = ReplaySettings(1, **{key: value})
        except SettingsError as exc:
            raise GridError(str(exc)) from None
        except SimulationInputError as exc:
            raise GridError(str(exc), exit_code=exc.exit_code) from None
        if key == "predictor" and settings.predictor.startswith(TABLE_PREFIX):
            return settings.predictor  # (the table's content is in the jobs' fingerprint)
        if key == "predictor":  # the engine's spelling, so that equal predictors make one run
            column = settings.prediction_column
            return f"{COLUMN_PREFIX}{column}" if column else settings.engine_predictor
        chosen = getattr(settings, key)
        chosen = chosen.value if isinstance(chosen, enum.Enum) else chosen
        if key == "policy" and settings.policy_name is not None:  # NAME=ORDER: the name labels the variant
            return f"{settings.policy_name}={chosen}"
        return chosen

    return parse


#: The grid's dimensions, one per tunable setting, and how one value of each is read.
DIMENSIONS = {name: _checked(name, declared.read) for name, declared in TUNABLES.items()}


def parse_threshold(text: object) -> int | None:
    """A threshold from a command line or a TOML file: whole seconds, or none."""
    try:
        return read_threshold(text)
    except SettingsError as exc:
        raise GridError(str(exc)) from None


@dataclass(frozen=True)
class Grid:
    """A campaign: its name, the logs (as given: names, prefixes or globs), the view, an optional
    machine size for every log, the settings' product, and the bound of the bounded slowdown."""

    name: str
    logs: tuple[str, ...]
    view: str = View.jobs_clean.value
    machine_size: int | None = None
    #: Per-log sizes, (name, prefix or glob, processors), overriding `machine_size` for the logs named.
    machine_sizes: tuple[tuple[str, int], ...] = ()
    values: Mapping[str, tuple[object, ...]] = field(default_factory=dict)
    tau: float = 10.0
    #: A preset's settings (e.g. the heuristic triples), run as they are instead of a product.
    explicit: tuple[RunSettings, ...] = ()
    #: The jobs replayed: one SQL condition on the view's columns (and submit_offset), as `simulate
    #: --where`; and the seconds of submissions at each end replayed but not counted.
    where: str | None = None
    warmup: float = 0.0
    cooldown: float = 0.0

    def __post_init__(self) -> None:
        if problem := name_problem(self.name):
            raise GridError(f"campaign name {self.name!r}: {problem}")
        if not self.logs:
            raise GridError("a campaign needs at least one log (--log NAME, a prefix or a glob)")
        try:
            View(self.view)
        except ValueError:
            raise GridError(f"unknown view {self.view!r}; expected one of: {', '.join(View)}") from None
        if self.where is not None:
            try:
                one_condition(self.where)
            except LakehouseError as exc:
                raise GridError(f"--where: {exc}") from None
        for size in [self.machine_size, *(size for _, size in self.machine_sizes)]:
            if size is not None and (problem := machine_size_problem(size)):
                raise GridError(problem)
        if (points := self.product_size()) > MAX_SETTINGS:
            raise GridError(
                f"the grid is {points:,} combinations of settings; a campaign takes at most {MAX_SETTINGS:,} "
                "(split it into several campaigns)"
            )
        for point in self.settings():  # every run's settings, checked as its replay will check them
            try:
                point.replay_settings(self.machine_size or 1, self.tau)
            except SimulationInputError as exc:
                said = str(exc) if exc.kind in ("setting", ORDER_KIND) else f"{point.label()}: {exc}"
                raise GridError(said, exit_code=exc.exit_code) from None
        unknown = set(self.values) - DIMENSIONS.keys()
        if unknown:
            raise GridError(f"unknown setting(s) {', '.join(sorted(unknown))}; expected: {', '.join(DIMENSIONS)}")
        for key, values in self.values.items():
            if not values:
                raise GridError(f"{key}: the list of values is empty")
        if self.explicit and self.values:
            raise GridError(f"a preset fixes the settings: drop {', '.join(sorted(self.values))}")

    def size_of(self, log: str, known: Sequence[str]) -> int | None:
        """The processors given for `log` (its own entry first, then the grid's), or None: the view's."""
        for pattern, size in self.machine_sizes:
            try:
                named = select_logs([pattern], known)
            except LogNameError as exc:  # a pattern that names no log is refused
                raise GridError(str(exc)) from None
            if log in named:
                return size
        return self.machine_size

    def on_its_machines(self, rows: pl.DataFrame, known: Sequence[str]) -> pl.DataFrame:
        """A campaign's rows replayed on the processors this grid gives their log (a campaign may also
        hold other machines' runs of a log); a log the grid leaves at its view's size keeps them all."""
        import polars as pl

        sizes = {log: size for log in rows["log"].unique().to_list() if (size := self.size_of(log, known)) is not None}
        if not sizes:
            return rows
        wanted = pl.col("log").replace_strict(sizes, default=None, return_dtype=pl.Int64)
        return rows.filter(wanted.is_null() | (pl.col("machine_size") == wanted))

    def product_size(self) -> int:
        """How many combinations the values give, repeats included (known without making them)."""
        return len(self.explicit) if self.explicit else math.prod(len(v) for v in self.values.values())

    def repeats(self) -> int:
        """Combinations that are another's replay (conservative x sjbf = conservative), run once."""
        return self.product_size() - len(self.settings())

    def settings(self) -> list[RunSettings]:
        """The product of every dimension's values (defaults where a dimension is not given), without
        repeats, in the order the values were given; a preset's settings as they are."""
        warmup, cooldown = float(self.warmup), float(self.cooldown)
        if self.explicit:
            return list(dict.fromkeys(replace(s, warmup=warmup, cooldown=cooldown) for s in self.explicit))
        keys = [k for k in DIMENSIONS if k in self.values]
        combos = itertools.product(*(self.values[k] for k in keys))
        points: Iterator[dict[str, Any]] = (dict(zip(keys, combo, strict=True)) for combo in combos)
        return list(
            dict.fromkeys(_meaningful(RunSettings(**point, warmup=warmup, cooldown=cooldown)) for point in points)
        )


def _meaningful(settings: RunSettings) -> RunSettings:
    """The settings without what their replay ignores, so that the product has no repeats: a setting
    only some replays read (a confidence its predictor does not use), a backfill order under
    conservative backfilling (which reserves every job in queue order, and has none)."""
    ignored = {
        name: None
        for name, declared in TUNABLES.items()
        if declared.applies is not None and getattr(settings, name) is not None and not declared.applies(settings)
    }
    settings = replace(settings, **ignored) if ignored else settings
    if settings.algorithm == Algorithm.conservative.value and settings.backfill != Backfill.queue.value:
        settings = replace(settings, backfill=Backfill.queue.value)
    return settings


def parse_values(key: str, items: Iterable[object]) -> tuple[object, ...]:
    """One dimension's values, each parsed and checked; comma-separated strings are split as every list
    of the command line is (`split_items`: a comma inside a formula's parentheses stays in it)."""
    if key not in DIMENSIONS:
        raise GridError(f"unknown setting {key!r}; expected one of: {', '.join(DIMENSIONS)}")
    pieces: list[Any] = []
    for item in items:
        split = split_items(item) if isinstance(item, str) else [item]
        if "" in split:
            raise GridError(f"{key}: an empty value in {item!r}")
        pieces += split
    if key == "predictor":  # (the items may come split already: `eloss:over=linear` then `weight=one`)
        pieces = join_predictor_parameters(pieces)
    return tuple(dict.fromkeys(DIMENSIONS[key](piece) for piece in pieces))


TOML_KEYS = ("name", "logs", "view", "machine_size", "tau", "where", "warmup", "cooldown", "grid")


def grid_from_toml(path: Path, name: str | None = None) -> Grid:
    """A grid from a TOML file (format in the module docstring); `name` overrides the file's."""
    return Grid(**_toml_fields(path, name))


def given_grid(spec: Path | None, name: str | None, given: Mapping[str, Any]) -> Grid:
    """The grid `campaign run` asks for: a TOML file's (if `spec`), with what the command line `given`
    put in its place (a value of None: not given).  Per-log machine sizes add to the file's (the command
    line's first) and the dimensions' values replace the file's one dimension at a time."""
    fields: dict[str, Any] = _toml_fields(spec, name) if spec is not None else {"name": name or "default"}
    for key, value in given.items():
        if key == "machine_sizes":
            fields[key] = (*value, *fields.get(key, ()))
        elif key == "values":
            fields[key] = {**fields.get(key, {}), **value}
        elif value is not None:
            fields[key] = value
    return Grid(**fields)


def _toml_fields(path: Path, name: str | None) -> dict[str, Any]:
    """A TOML file's grid, as the fields of a `Grid` (checked, but for what the whole grid must hold:
    its logs may come from the command line)."""
    data = read_toml(path, GridError)
    unknown = set(data) - set(TOML_KEYS)
    if unknown:
        raise GridError(f"{path}: unknown key(s) {', '.join(sorted(unknown))}; expected: {', '.join(TOML_KEYS)}")
    grid = data.get("grid", {})
    if not isinstance(grid, dict):
        raise GridError(f'{path}: [grid] must be a table of lists, e.g. policy = ["fcfs", "spf"]')
    values = {}
    for key, items in grid.items():
        if key not in DIMENSIONS:
            raise GridError(f"{path}: unknown key grid.{key}; expected: {', '.join(DIMENSIONS)}")
        listed = items if isinstance(items, list) else [items]
        if not all(isinstance(x, str | int | float) and not isinstance(x, bool) for x in listed):
            raise GridError(
                f'{path}: grid.{key} must be a value or a list of values, e.g. ["fcfs", "spf"], not {items!r}'
            )
        values[key] = parse_values(key, [str(x) if key == "predictor" else x for x in listed])
    logs = data.get("logs", [])
    if isinstance(logs, str):
        logs = [logs]
    if not (isinstance(logs, list) and all(isinstance(x, str) for x in logs)):
        raise GridError(f'{path}: logs must be a list of log names, e.g. ["KTH", "SDSC-*"], not {logs!r}')
    for key in ("name", "view", "where"):
        if key in data and not isinstance(data[key], str):
            raise GridError(f"{path}: {key} must be a string, not {data[key]!r}")
    window = {"warmup": 0.0, "cooldown": 0.0}
    for key in window:
        if key in data:
            try:
                window[key] = parse_duration(str(data[key]))
            except LakehouseError as exc:
                raise GridError(f"{path}: {key}: {exc}") from None
    tau = data.get("tau", 10.0)
    if isinstance(tau, bool) or not isinstance(tau, int | float):
        raise GridError(f"{path}: tau must be a number of seconds, not {tau!r}")
    campaign = name or data.get("name") or path.stem
    sizes = data.get("machine_size")
    items = [f"{log}={size}" for log, size in sizes.items()] if isinstance(sizes, dict) else [sizes]
    try:
        every, per_log = machine.parse_machine_sizes([] if sizes is None else items)
    except SettingsError as exc:
        raise GridError(f"{path}: {exc}") from None
    return {
        "name": str(campaign),
        "logs": tuple(str(x) for x in logs),
        "view": str(data.get("view", View.jobs_clean.value)),
        "machine_size": every,
        "machine_sizes": per_log,
        "values": values,
        "tau": float(tau),
        "where": data.get("where"),
        "warmup": window["warmup"],
        "cooldown": window["cooldown"],
    }


def run_key(fingerprint: str, machine_size: int, settings: RunSettings, tau: float) -> str:
    """The identity of one run: the same jobs, machine, settings and tau give the same key."""
    text = f"{fingerprint}|{machine_size}|{settings.canonical()}|{tau!r}"
    return hashlib.sha256(text.encode()).hexdigest()[:24]
