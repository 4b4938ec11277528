"""Lists given as one value: `--policy fcfs,spf`, `--logs KTH,CTC`, a TOML grid's `"fcfs,spf"`.

One splitting rule for every list of the command line, the campaign grid and its TOML file: a comma
inside parentheses belongs to its item, so that a formula is one item (`fcfs,max:w/max(r,1)` is two).
"""

from __future__ import annotations

import math

from lakehouse.base.errors import LakehouseError


def split_items(text: str) -> list[str]:
    """Every item of a comma-separated list, stripped, empty ones kept (`"fcfs,,spf"` has three: a
    caller that refuses an empty value can name it)."""
    items, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth <= 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item.strip() for item in items]


def split_list(text: str | None) -> list[str]:
    """The non-empty items of a comma-separated list (`split_items`)."""
    return [item for item in split_items(text or "") if item]


def fractions(text: str, inclusive: bool = True) -> list[str]:
    """A comma-separated list of numbers in [0, 1] (in (0, 1) unless `inclusive`), each as written (a
    campaign keys its runs by the text); a LakehouseError saying what is expected otherwise."""
    written = split_list(text)
    try:
        values = [float(item) for item in written]
    except ValueError:
        values = [math.nan]  # (fails the range test below: one message for every bad list)
    inside = (lambda v: 0 <= v <= 1) if inclusive else (lambda v: 0 < v < 1)
    if not written or not all(inside(v) for v in values):
        interval = "[0, 1]" if inclusive else "(0, 1)"
        raise LakehouseError(f"{text!r}: give numbers in {interval}, comma-separated")
    return written
