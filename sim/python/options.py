"""Names of the simulator's choices, shared by the Python API and the CLI."""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from typing import TypeVar

from lakehouse import _native
from lakehouse.base.errors import OrderError, SettingsError
from lakehouse.base.prediction_tables import TABLE_PREFIX, PredictionTableError, check_name, prediction_column


class Algorithm(enum.StrEnum):
    easy = "easy"
    conservative = "conservative"


class Policy(enum.StrEnum):
    """Primary queue order; ties by submit time, then job id."""

    fcfs = "fcfs"  # first come, first served
    lcfs = "lcfs"  # last come first
    spf = "spf"  # smallest requested time first
    lpf = "lpf"  # largest requested time first
    sqf = "sqf"  # fewest processors first
    lqf = "lqf"  # most processors first
    lexp = "lexp"  # largest expansion factor (wait + requested) / requested first
    sexp = "sexp"  # smallest expansion factor first
    lrf = "lrf"  # largest requested / processors first
    srf = "srf"  # smallest requested / processors first
    laf = "laf"  # largest area requested x processors first
    saf = "saf"  # smallest area first


#: A queue order: a built-in policy, or a preset's name or a formula (`min:EXPR` / `max:EXPR`) as the
#: engine spells it (`parse_policy`).
QueueOrder = Policy | str

#: The help of a queue order.  The presets and the variables a formula reads are the engine's own lists
#: (a preset or a variable added in Rust appears here with nothing to edit); the built-ins' meanings are
#: said here, the engine exports their names only.
POLICY_HELP = (
    "Queue order, ties by submit time: fcfs (first come first), lcfs (last come first), spf/lpf (smallest/"
    "largest requested time first), sqf/lqf (fewest/most processors first), sexp/lexp (smallest/largest "
    "expansion factor (wait + requested) / requested first), srf/lrf (smallest/largest requested time per "
    "processor first), saf/laf (smallest/largest area requested x processors first); a preset: "
    + ", ".join(name for name, _, _ in _native.POLICY_PRESETS)
    + "; or a formula of yours: 'min:EXPR' (smallest first) or 'max:EXPR' over "
    + ", ".join(f"{name} ({meaning.split(':')[0].split(' (')[0]})" for name, meaning in _native.FORMULA_VARIABLES)
    + " and the view's numeric columns by name, e.g. 'max:(w/r)^3*n' (docs/your-own-policy.md)"
)


#: A queue order given a name of the user's: `NAME=ORDER` (`cube=max:(w/r)^3*n`); the name labels it in
#: tables and plots.  A name has no colon, so a formula's own `==` is never taken for one.
NAMED_ORDER = re.compile(r"([A-Za-z][A-Za-z0-9_.+-]{0,39})=(.+)", re.S)


def named_order(text: str) -> tuple[str | None, str]:
    """(the name given to a queue order, or None; the order's text)."""
    named = NAMED_ORDER.fullmatch(text.strip())
    if named is None:
        return None, text
    name, order = named.groups()
    if name.lower() in {str(p) for p in Policy} | {preset for preset, _, _ in _native.POLICY_PRESETS}:
        raise OrderError(f"{text}: {name!r} already names a queue order; give the formula another name")
    return name, order


def parse_policy(text: str) -> QueueOrder:
    """A queue order from its text: a built-in `Policy`, else a preset's name or a formula as the engine
    spells it (the engine checks formulas, one place; its error points at the place with a caret).  A
    name given to it (`NAME=ORDER`, `named_order`) is left out."""
    text = named_order(str(text))[1]
    try:
        spelled = _native.policy_spec(str(text))
    except ValueError as exc:
        raise OrderError(str(exc)) from None
    try:
        return Policy(spelled)
    except ValueError:
        return spelled


def spelled_order(text: str) -> str:
    """A queue order as the engine spells it, a name given to it kept (`cube=max:...`); its problem an
    OrderError whose message points at the place."""
    name = named_order(text)[0]
    spelled = str(parse_policy(text))
    return spelled if name is None else f"{name}={spelled}"


#: The policy of a replay ordered by the caller's Python function (`simulate(..., order=fn)`).
PYTHON = "python"


def is_formula(order: str) -> bool:
    """Whether a queue order is written as a formula (`min:...`, `max:...`), not named."""
    return order.startswith(("min:", "max:"))


def order_columns(*orders: object) -> list[str]:
    """The columns of the jobs that these queue orders' formulas read (names that are not variables)."""
    names: list[str] = []
    for order in orders:
        if isinstance(order, str) and is_formula(order):
            names += _native.policy_columns(order)
    return list(dict.fromkeys(names))


def check_order_columns(
    orders: Sequence[object], known: Sequence[str], others: Mapping[str, str] | None = None
) -> None:
    """Refuse a formula that reads a column `known` (the jobs' numeric columns) lacks: a column of
    `others` (the jobs' other columns, with their types) as not numeric, any other name with the
    engine's message, the caret under the name and the variables and columns listed."""
    for order in orders:
        if isinstance(order, str) and is_formula(order):
            for name in order_columns(order):
                if name not in known and others and name in others:
                    raise OrderError(
                        f"{order}: column {name} holds {others[name]} values, not numbers: a formula reads "
                        f"numeric columns only ({', '.join(known)})"
                    )
            try:
                _native.policy_spec(order, list(known))
            except ValueError as exc:
                raise OrderError(str(exc)) from None


class Backfill(enum.StrEnum):
    queue = "queue"  # try the waiting jobs in queue order
    sjbf = "sjbf"  # shortest predicted runtime first


class Correction(enum.StrEnum):
    none = "none"
    requested = "requested"
    incremental = "incremental"
    doubling = "doubling"


class Compat(enum.StrEnum):
    canonical = "canonical"
    pyss = "pyss"


#: The bound of the bounded slowdown, seconds.
DEFAULT_TAU = 10


class JobClass(enum.StrEnum):
    """How a summary is broken down (`--by`)."""

    size = "size"  # 1 processor, <= 10 %, <= 50 %, > 50 % of the machine
    length = "length"  # run time < 1 min, < 1 h, < 10 h, >= 10 h
    user = "user"


class Selector(enum.StrEnum):
    """How the queue policy of EASY changes from period to period (docs/selection.md)."""

    full = "full"  # replay each past period under every candidate; the least total wait wins
    noisy = "noisy"  # the same, each replayed wait multiplied by U[0.85, 1.15]
    egreedy = "egreedy"  # epsilon-greedy bandit on the waits of the jobs that finished in each period
    # The same bandit charging each period with the jobs that started in it, as the selection study's
    # authors' simulator does where the paper counts those that finished (docs/reproductions.md).
    egreedy_started = "egreedy-started"

    @property
    def bandit(self) -> bool:
        """Whether it learns from the waits observed (and so takes an epsilon)."""
        return self in (Selector.egreedy, Selector.egreedy_started)


FIXED_PREFIX = "fixed:"
SELECTOR_HELP = (
    "fixed:POLICY (one policy throughout), full (replay each past period under every candidate policy, "
    "run the one with the least decayed total wait), noisy (full, each replayed wait times U[0.85, 1.15]) "
    "egreedy (epsilon-greedy bandit on the waits of the jobs finished in each period) or egreedy-started "
    "(the same, charging the jobs started in each period)"
)
DAY, WEEK = 86_400, 604_800
PERIOD_NAMES = {"day": DAY, "week": WEEK}


def parse_selector(text: str) -> tuple[Selector | None, QueueOrder | None]:
    """`fixed:P` as (None, P); a selector name as (selector, None); else a ValueError with the choices."""
    if text.startswith(FIXED_PREFIX):
        return None, parse_policy(text[len(FIXED_PREFIX) :])
    try:
        return Selector(text), None
    except ValueError:
        raise SettingsError(f"unknown selector {text!r}; expected fixed:POLICY, {', '.join(Selector)}") from None


def parse_period(text: str | int) -> int:
    """`day`, `week` or a number of seconds (positive)."""
    if isinstance(text, str) and text.lower() in PERIOD_NAMES:
        return PERIOD_NAMES[text.lower()]
    try:
        return int(text)  # its range is the engine's to check
    except ValueError:
        raise SettingsError(f"period must be day, week or a number of seconds, got {text!r}") from None


E = TypeVar("E", bound=enum.StrEnum)


def choose(kind: type[E], value: str) -> E:
    """`value` as a member of `kind`, or a ValueError that lists the choices."""
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(kind)
        raise SettingsError(f"unknown {kind.__name__.lower()} {value!r}; expected one of: {choices}") from None


COLUMN_PREFIX = "column:"
ELOSS = "eloss"
#: The help of a predictor: the engine's own list (a predictor added in Rust appears here with nothing
#: to edit), and the imported tables, which Python turns into a column before the engine sees them.
PREDICTOR_HELP = (
    ", ".join(f"{written} ({meaning})" for written, meaning, _ in _native.PREDICTORS)
    + ", or table:NAME (a table of predictions imported with `lakehouse import predictions`)"
)
#: Predictors that give each job a run-time distribution (EASY backfills by the probability of delay).
DISTRIBUTION_PREDICTORS = tuple(
    re.split(r"[\[:]", written)[0] for written, _, distributions in _native.PREDICTORS if distributions
)
#: The default of `--backfill-confidence`: a job EASY refuses is backfilled if it delays the head with
#: probability below this.
BACKFILL_CONFIDENCE = 0.05


def parse_predictor(text: str) -> tuple[str, str | None]:
    """A predictor as the engine spells it, and the column name of `column:NAME` (else None).

    The engine checks names and E-Loss parameters (one place for both) and gives the canonical
    spelling: `eloss:eta=5000` (the default) is `eloss`."""
    if text.startswith(COLUMN_PREFIX) or text == "column":
        name = text[len(COLUMN_PREFIX) :]
        if not name:
            raise SettingsError("column predictor needs a column name: column:NAME")
        return "column", name
    if text.startswith(TABLE_PREFIX) or text == "table":
        # An imported prediction table (lakehouse import predictions): its column, joined to the jobs.
        try:
            return "column", prediction_column(check_name(text[len(TABLE_PREFIX) :]))
        except PredictionTableError as exc:
            raise SettingsError(f"table predictor: {exc}") from None
    try:
        return _native.predictor_spec(text), None
    except ValueError as exc:
        raise SettingsError(str(exc)) from None


def join_predictor_parameters(pieces: list[str]) -> list[str]:
    """Undo a split on commas inside `eloss:over=linear,under=linear`: a `key=value` piece belongs to
    the E-Loss (or HMM) before it (so `--predictor ave2,eloss:over=linear,weight=one` is two predictors)."""
    joined: list[str] = []
    for piece in pieces:
        with_parameters = joined and joined[-1].startswith((ELOSS + ":", "hmm:"))
        if "=" in piece and ":" not in piece and with_parameters:
            joined[-1] += "," + piece
        else:
            joined.append(piece)
    return joined


def variant_name(
    algorithm: str = "easy",
    policy: str = "fcfs",
    backfill: str = "queue",
    predictor: str = "requested",
    correction: str = "requested",
) -> str:
    """A replay's name as papers and users write it: `EASY`, `EASY-SJBF`, `EASY++` (AVE2 predictions,
    SJBF, incremental corrections), `EASY-SPF`, `Conservative-LEXP`, then any other predictor or
    correction in brackets: `EASY-SJBF (clairvoyant)`."""
    if (algorithm, policy, backfill, predictor, correction) == ("easy", "fcfs", "sjbf", "ave2", "incremental"):
        return "EASY++"
    parts = ["EASY" if algorithm == Algorithm.easy else "Conservative"]
    if policy != Policy.fcfs:
        parts.append(policy if is_formula(policy) else policy.upper())
    if backfill == Backfill.sjbf and algorithm == Algorithm.easy:  # (conservative has no backfill order)
        parts.append("SJBF")
    extra = [p for p, default in ((predictor, "requested"), (correction, "requested")) if p != default]
    return "-".join(parts) + (f" ({', '.join(extra)})" if extra else "")
