"""Lists given as one value: `--policy fcfs,spf`, `--logs KTH,CTC`, a TOML grid's `"fcfs,spf"`.

One splitting rule for every list of the command line, the campaign grid and its TOML file: a comma
inside parentheses belongs to its item, so that a formula is one item (`fcfs,max:w/max(r,1)` is two).
"""

from __future__ import annotations


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
