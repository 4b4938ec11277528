"""Names of the simulator's choices, shared by the Python API and the CLI."""

from __future__ import annotations

import enum
from typing import TypeVar


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


class BasePredictor(enum.StrEnum):
    requested = "requested"
    clairvoyant = "clairvoyant"
    ave2 = "ave2"
    column = "column"


E = TypeVar("E", bound=enum.StrEnum)


def choose(kind: type[E], value: str) -> E:
    """`value` as a member of `kind`, or a ValueError that lists the choices."""
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(kind)
        raise ValueError(f"unknown {kind.__name__.lower()} {value!r}; expected one of: {choices}") from None


COLUMN_PREFIX = "column:"


def parse_predictor(text: str) -> tuple[BasePredictor, str | None]:
    """`requested`, `clairvoyant`, `ave2` or `column:NAME` -> (predictor, column name)."""
    if text.startswith(COLUMN_PREFIX):
        name = text[len(COLUMN_PREFIX) :]
        if not name:
            raise ValueError("column predictor needs a column name: column:NAME")
        return BasePredictor.column, name
    try:
        predictor = BasePredictor(text)
    except ValueError:
        choices = ", ".join(p.value for p in BasePredictor if p is not BasePredictor.column)
        raise ValueError(f"unknown predictor {text!r}; expected {choices} or column:NAME") from None
    if predictor is BasePredictor.column:
        raise ValueError("column predictor needs a column name: column:NAME")
    return predictor, None
