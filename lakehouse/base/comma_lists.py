"""Lists given as one command-line value: `--policy fcfs,spf`, `--logs KTH,CTC`."""

from __future__ import annotations


def split_list(text: str | None) -> list[str]:
    """The items of a comma-separated list; a comma inside parentheses belongs to its item, so that a
    formula is one item: `fcfs,max:w/max(r,1)` is two."""
    if not text:
        return []
    items, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth <= 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]
