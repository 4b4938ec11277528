"""Durations as users write them on the command line (`10min`, `2h`, `1d`, `900`) and as reports print them."""

from __future__ import annotations

import math
import re

from lakehouse.base.errors import LakehouseError

_UNITS = {"s": 1, "min": 60, "h": 3600, "d": 86400, "w": 604800}
_DURATION = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*(s|min|h|d|w)?\s*")


def parse_duration(text: str) -> float:
    """Seconds in `text`: a number (seconds) or a number and a unit, s, min, h, d or w."""
    match = _DURATION.fullmatch(text)
    if not match:
        raise LakehouseError(
            f"{text!r} is not a duration: write seconds (900) or a number and s, min, h, d or w (15min)"
        )
    seconds = float(match.group(1)) * _UNITS[match.group(2) or "s"]
    if not math.isfinite(seconds):
        raise LakehouseError(f"{text!r} is not a finite duration")
    return seconds


def format_duration(seconds: float | None) -> str:
    """600 -> '10 min', 7200 -> '2 h', 86400 -> '1 d', 90 -> '90 s'; None -> '-'."""
    if seconds is None:
        return "-"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)} {unit}"
    return f"{seconds:g} s"
