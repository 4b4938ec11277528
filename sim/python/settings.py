"""The replay contract: every setting of one replay in one frozen, typed object, checked in one place.

`simulate`, campaigns, the policy-selection and triple studies, the nightly run and the CLI all build
a `ReplaySettings`; the engine reads that object itself (by attribute), so no setting is passed
twice and none is spelled differently on the way.  A setting a user tunes (a queue order, a predictor,
a half-life) is declared once, on its field (`tunable`): `simulate`'s option, a campaign's option and
TOML key, the grid's dimension, a variant's name, a replay's provenance and a stored run's values are
made from that declaration (`TUNABLES`).

Construction checks everything: the Python side turns text into the choices' types and checks what only
Python uses (tau, the summary window, the seed's 64 bits); every range the engine knows (machine size,
threshold, selection period, decay, epsilon, backfill confidence) and the combinations it replays are
checked by the engine's own `check_config`, the same code a replay runs. A problem is a
`SimulationInputError` whose `kind` callers branch on.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from lakehouse import _native
from lakehouse.base.errors import ORDER_KIND, LakehouseError, OrderError, SettingsError, SimulationInputError
from lakehouse.base.machine import machine_size_problem
from lakehouse.base.units import format_duration, parse_duration
from lakehouse.sim.options import (
    BACKFILL_CONFIDENCE,
    DEFAULT_TAU,
    DISTRIBUTION_PREDICTORS,
    POLICY_HELP,
    PREDICTOR_HELP,
    WEEK,
    Algorithm,
    Backfill,
    Compat,
    Correction,
    Policy,
    QueueOrder,
    Selector,
    choose,
    named_order,
    order_columns,
    parse_period,
    parse_policy,
    parse_predictor,
    parse_selector,
    spelled_order,
)

#: The groups of `simulate --help` a tunable setting's option is shown in.
SCHEDULER_PANEL, PREDICTIONS_PANEL = "Scheduler", "Predictions"


@dataclass(frozen=True)
class Tunable:
    """How a user gives a replay setting and how a campaign names it, declared on its `ReplaySettings`
    field (`tunable`).  `simulate` takes it as an option, `campaign run` as a comma-separated list (and
    a TOML file's `[grid]` key), the grid as a dimension whose values are checked by `ReplaySettings`
    itself, the variant's name shows it off its default, and analysis.campaign_runs stores it."""

    help: str
    panel: str = SCHEDULER_PANEL
    #: The type `simulate` reads (an enum's choices are listed by `--help` and checked by the parser).
    kind: Any = str
    #: The value from the text of a command line or a TOML file (a duration, a number); None: as given.
    #: A bad text raises SettingsError, in the words every command then uses.
    read: Callable[[Any], Any] | None = None
    #: The default as a user writes it ("7d"), where that is not the field's default.
    written_default: str | None = None
    #: Checked as `simulate`'s command line is read, the value as the engine spells it (the queue order:
    #: the caret under a formula's mistake is a usage error, as a bad choice is).
    check: Callable[[str], str] | None = None
    #: Its part of a campaign variant's name off the campaign's default; None: `NAME=VALUE`.
    label: Callable[[Any], str] | None = None
    #: Whether the replay reads it, for a setting only some replays read (the backfill confidence: the
    #: distribution predictors'); None: every replay.  Where it does not apply, a replay's provenance
    #: holds no value and a campaign leaves it out (its runs are one run, its run key has none).
    applies: Callable[[Any], bool] | None = None


def tunable(default: Any, **declaration: Any) -> Any:
    """A `ReplaySettings` field a user tunes, with its `Tunable` declaration."""
    return field(default=default, metadata={"tunable": Tunable(**declaration)})


def read_threshold(text: object) -> int | None:
    """A threshold from a command line or a TOML file: whole seconds, or none."""
    if text is None or (isinstance(text, str) and text.strip().lower() in (NO_THRESHOLD, "")):
        return None
    whole = isinstance(text, int) and not isinstance(text, bool)
    whole = whole or (isinstance(text, float) and text.is_integer())
    whole = whole or (isinstance(text, str) and text.strip().lstrip("+-").isdigit())
    if not whole:  # (int(3600.7) would be 3600 and int(1.9) 1: never rounded silently)
        raise SettingsError(f"threshold {text!r} is not a whole number of seconds (or {NO_THRESHOLD!r})")
    return int(text)  # type: ignore[call-overload, arg-type]


def read_confidence(text: object) -> float:
    try:
        return float(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise SettingsError(f"backfill confidence {text!r} is not a number") from None


def read_duration(text: object) -> float:
    """A duration as seconds: a number, or a number and a unit (`7d`, `12h`)."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return float(text)
    try:
        return parse_duration(str(text))
    except LakehouseError as exc:
        raise SettingsError(str(exc)) from None


def reads_distributions(settings: Any) -> bool:
    """Whether the replay's predictor gives run-time distributions (and so reads a backfill confidence)."""
    return str(settings.predictor).split(":")[0] in DISTRIBUTION_PREDICTORS


#: What a threshold of none is written as.
NO_THRESHOLD = "none"

#: The longest time the engine takes (a threshold, a selection period), seconds.
MAX_SECONDS: int = _native.SWF_MAX_SECONDS
#: The epsilon the engine's egreedy selector uses when none is given.
DEFAULT_EPSILON = 0.3


@dataclass(frozen=True)
class Selection:
    """Policy selection (docs/selection.md): change EASY's queue policy at every period boundary."""

    selector: Selector
    policies: tuple[QueueOrder, ...] = tuple(Policy)
    period: int = WEEK
    decay: float = 1.0
    epsilon: float | None = None  # egreedy only
    seed: int = 0

    @property
    def engine_epsilon(self) -> float:
        return DEFAULT_EPSILON if self.epsilon is None else self.epsilon


def window_problem(name: str, seconds: float) -> str | None:
    """What is wrong with a warm-up or cool-down, if anything."""
    if not (isinstance(seconds, int | float) and math.isfinite(seconds) and seconds >= 0):
        return f"{name} must be a finite number of seconds >= 0, got {seconds!r}"
    return None


@dataclass(frozen=True)
class ReplaySettings:
    """Everything one replay takes besides the jobs.  See `simulate` for what each setting means."""

    machine_size: int
    algorithm: Algorithm = tunable(
        Algorithm.easy, kind=Algorithm, help="easy (one reservation) or conservative (one per job)."
    )
    #: A built-in policy, a preset's name or a formula (`min:EXPR` / `max:EXPR`).
    policy: QueueOrder = tunable(Policy.fcfs, help=POLICY_HELP + ".", check=spelled_order, label=str)
    backfill: Backfill = tunable(
        Backfill.queue, kind=Backfill, help="Backfill order: queue, or sjbf (shortest predicted first).", label=str
    )
    predictor: str = tunable("requested", panel=PREDICTIONS_PANEL, help=PREDICTOR_HELP + ".", label=str)
    correction: Correction = tunable(
        Correction.requested,
        kind=Correction,
        panel=PREDICTIONS_PANEL,
        help="What a job that outlives its prediction is predicted next.",
        label=lambda value: f"corr={value}",
    )
    threshold: int | None = tunable(
        None,
        kind=int | None,
        read=read_threshold,
        help="Jobs waiting longer than this many seconds go first.",
        label=lambda value: f"thr={value}",
    )
    compat: Compat = tunable(
        Compat.canonical,
        kind=Compat,
        help="canonical (at one instant: all completions, then all submissions, then one pass) or pyss "
        "(the published SC'15 simulator: one event at a time, a pass after each; docs/simulator.md).",
        label=str,
    )
    backfill_confidence: float = tunable(
        BACKFILL_CONFIDENCE,
        kind=float,
        read=read_confidence,
        panel=PREDICTIONS_PANEL,
        help="With --predictor hmm or requested-law: also backfill a job EASY would refuse if the probability "
        "that it delays the head of the queue is below this, in (0, 1).",
        label=lambda value: f"conf={value:g}",
        applies=reads_distributions,
    )
    tau: float = DEFAULT_TAU
    warmup: float = 0
    cooldown: float = 0
    #: The half-life (s) of users' decayed usage, which formulas read as `uu` and `un`.
    usage_half_life: float = tunable(
        _native.USAGE_HALF_LIFE,
        read=read_duration,
        written_default="7d",
        help="Half-life of users' decayed usage, which a formula reads as uu (processor-seconds) and un (the "
        "user's share of all): a duration such as 7d (Slurm's default) or 12h.",
        label=lambda value: f"hl={format_duration(value).replace(' ', '')}",
    )
    selection: Selection | None = None
    #: `fixed:P` as the user gave it (the policy is then P, and the jobs gain a `policy` column).
    fixed_selector: bool = False
    record_reservations: bool = False
    drop_wider: bool = False
    #: The name a `NAME=ORDER` policy gave its order (tables and plots show it); None: the order itself.
    policy_name: str | None = None
    #: The predictor as the engine spells it, and the column of `column:NAME` (derived).
    engine_predictor: str = field(init=False, repr=False, compare=False)
    prediction_column: str | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            self._normalise()
        except SettingsError as exc:
            raise SimulationInputError(
                str(exc), kind=ORDER_KIND if isinstance(exc, OrderError) else "setting"
            ) from None
        if problem := machine_size_problem(self.machine_size):
            raise SimulationInputError(problem, kind="machine_size")
        try:
            _native.check_settings(self)
        except _native.InputError as exc:
            what, _, _, kind = exc.args
            raise SimulationInputError(what, kind=kind) from None

    def _normalise(self) -> None:
        """Text to the choices' types; what only Python reads, checked here."""
        set_ = object.__setattr__
        if isinstance(self.policy, str) and (name := named_order(self.policy)[0]) is not None:
            set_(self, "policy_name", name)
        set_(self, "policy", parse_policy(self.policy))
        for name, kind in (
            ("algorithm", Algorithm),
            ("backfill", Backfill),
            ("correction", Correction),
            ("compat", Compat),
        ):
            set_(self, name, choose(kind, getattr(self, name)))
        spec, column = parse_predictor(self.predictor)
        set_(self, "engine_predictor", spec)
        set_(self, "prediction_column", column)
        if not (isinstance(self.tau, int | float) and math.isfinite(self.tau) and self.tau > 0):
            raise SettingsError(f"tau must be a positive finite number of seconds, got {self.tau!r}")
        for name in ("warmup", "cooldown"):
            if problem := window_problem(name, getattr(self, name)):
                raise SettingsError(problem)
            set_(self, name, float(getattr(self, name)))
        set_(self, "tau", float(self.tau))
        if not isinstance(self.usage_half_life, int | float) or isinstance(self.usage_half_life, bool):
            raise SettingsError(f"the usage half-life must be a number of seconds, got {self.usage_half_life!r}")
        set_(self, "usage_half_life", float(self.usage_half_life))
        if not isinstance(self.backfill_confidence, int | float):
            raise SettingsError(f"the backfill confidence must be a number, got {self.backfill_confidence!r}")
        set_(self, "backfill_confidence", float(self.backfill_confidence))
        # The engine checks every range, but cannot even read a number beyond 64 bits: said here in its
        # words, with the engine's bound.
        if isinstance(self.threshold, int) and not -(2**63) <= self.threshold < 2**63:
            raise SettingsError(f"threshold must be from 0 to {MAX_SECONDS} seconds, got {self.threshold}")
        if self.selection is not None and not -(2**63) <= self.selection.period < 2**63:
            raise SettingsError(f"the selection period must be at most {MAX_SECONDS} s, got {self.selection.period} s")
        if self.selection is not None and not 0 <= self.selection.seed < 2**64:
            raise SettingsError(f"seed must be from 0 to 2^64 - 1, got {self.selection.seed}")

    @classmethod
    def of(
        cls,
        machine_size: int,
        *,
        selector: str | None = None,
        policies: Sequence[QueueOrder] | None = None,
        period: int | str = WEEK,
        decay: float = 1.0,
        epsilon: float = DEFAULT_EPSILON,
        seed: int = 0,
        **settings: object,
    ) -> ReplaySettings:
        """The settings from `simulate`'s keywords (a selector's parameters flat, as the CLI gives them)."""
        try:
            selection, fixed = _selection(selector, policies, period, decay, epsilon, seed)
        except SettingsError as exc:
            raise SimulationInputError(str(exc), kind="setting") from None
        if fixed is not None:  # fixed:P
            settings["policy"] = fixed
            return cls(machine_size, fixed_selector=True, **settings)  # type: ignore[arg-type]
        return cls(machine_size, selection=selection, **settings)  # type: ignore[arg-type]

    @property
    def orders(self) -> tuple[QueueOrder, ...]:
        """The queue orders in play: the policy, or a selection's candidates."""
        return (self.policy,) if self.selection is None else self.selection.policies

    @property
    def formula_columns(self) -> list[str]:
        """The columns of the jobs the formulas in play read besides the variables."""
        return order_columns(*self.orders)

    @property
    def uses_formulas(self) -> bool:
        """Whether a queue order in play (the policy, or a selection's candidates) is a formula."""
        return any(not isinstance(order, Policy) for order in self.orders)

    @property
    def uses_distributions(self) -> bool:
        return reads_distributions(self)

    @property
    def selector(self) -> str | None:
        """The selector as the user gave it: `fixed:P`, a selector's name, or None."""
        if self.fixed_selector:
            return f"fixed:{self.policy}"
        return None if self.selection is None else str(self.selection.selector)

    @property
    def policy_label(self) -> str:
        """The policy as tables and plots name it: its given name, else the order as the engine spells it."""
        return self.policy_name or self.selector or str(self.policy)

    def label(self) -> str:
        """A short name of the replay for a plot's legend: the policy and the settings off their defaults."""
        parts = [self.policy_label]
        parts += [str(self.backfill)] if self.backfill is not Backfill.queue else []
        parts += [self.predictor] if self.predictor != "requested" else []
        parts += [f"corr={self.correction}"] if self.correction is not Correction.requested else []
        return " ".join(parts)

    def columns(self) -> dict[str, object]:
        """The settings as the columns of a replay's summary (`simulate --format`): the same columns for
        every replay (each tunable setting and the metrics' window), null where a setting does not apply."""
        out: dict[str, object] = {
            "algorithm": str(self.algorithm),
            "policy": self.policy_label,
            "order": str(self.policy) if self.selection is None or self.fixed_selector else None,
        }
        for name in _COLUMNS:
            if name not in out:
                declared = TUNABLES.get(name)
                applies = declared is None or _applies(declared, self)
                out[name] = _plain(getattr(self, name)) if applies else None
        return out

    def record(self) -> dict[str, object]:
        """The settings as plain values (a schedule's provenance): what ran, with the selector's
        parameters and the settings only some replays read where they apply."""
        out: dict[str, object] = {
            name: _plain(getattr(self, name)) for name, declared in TUNABLES.items() if _applies(declared, self)
        }
        if self.selector is not None:
            out["selector"] = self.selector
        if (s := self.selection) is not None:
            out.update(policies=",".join(s.policies), period=s.period, decay=s.decay, seed=s.seed)
            if s.epsilon is not None:
                out["epsilon"] = s.epsilon
        out.update({k: getattr(self, k) for k in ("warmup", "cooldown") if getattr(self, k)})
        out["machine_size"] = self.machine_size
        return out


def _plain(value: object) -> object:
    """A setting's value as a plain one (an enum's text)."""
    return str(value) if isinstance(value, str) else value


def _applies(declared: Tunable, settings: Any) -> bool:
    return declared.applies is None or declared.applies(settings)


#: Every tunable setting's declaration, by name, in the order of ReplaySettings' fields.
TUNABLES: dict[str, Tunable] = {
    f.name: f.metadata["tunable"] for f in fields(ReplaySettings) if "tunable" in f.metadata
}
#: Their defaults, as ReplaySettings takes them when none is given.
TUNABLE_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(ReplaySettings) if f.name in TUNABLES}
assert all(default is not MISSING for default in TUNABLE_DEFAULTS.values())
#: A replay summary's columns of settings, in the order of the fields: the tunable ones and the metrics' window.
_COLUMNS = tuple(
    f.name for f in fields(ReplaySettings) if f.name in TUNABLES or f.name in ("tau", "warmup", "cooldown")
)


def _selection(
    selector: str | None,
    policies: Sequence[QueueOrder] | None,
    period: int | str,
    decay: float,
    epsilon: float,
    seed: int,
) -> tuple[Selection | None, QueueOrder | None]:
    """The selection a selector names, or (`fixed:P`) the policy P."""
    if selector is None:
        return None, None
    chosen, fixed = parse_selector(selector)
    if fixed is not None:
        return None, fixed
    assert chosen is not None
    candidates = tuple(Policy) if policies is None else tuple(parse_policy(str(p)) for p in policies)
    return Selection(
        chosen,
        candidates,
        parse_period(period),
        float(decay),
        float(epsilon) if chosen.bandit else None,
        int(seed),
    ), None
