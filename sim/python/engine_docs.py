"""The docs' tables that are the engine's constants, written from them: a preset added in Rust
(`sim/src/engine/formula/presets.rs`) gets its row in docs/your-own-policy.md from `make docs`, which runs
this module (`python -m lakehouse.sim.engine_docs [--check] DOCS_FOLDER`).

A table sits between a start marker (an HTML comment naming it, invisible on the page) and an end marker;
the rest of the page is written by hand."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from lakehouse import _native

#: The page that holds the presets' table.
PRESETS_PAGE = "your-own-policy.md"
PRESETS_START = "<!-- presets: written by `make docs` from the engine's POLICY_PRESETS -->"
TABLE_END = "<!-- end of the written table -->"


def presets_table() -> list[str]:
    """The presets' table: each preset's name, formula and source (the engine's source, without the
    preset's name that begins it)."""
    lines = ["| name | formula | source |", "|---|---|---|"]
    for name, formula, source in _native.POLICY_PRESETS:
        cited = source.removeprefix(f"{name.upper()}:").strip()
        lines.append(f"| `{name}` | `{formula}` | {cited} |")
    return lines


#: Each written table: its page, its start marker and what it holds.
TABLES: tuple[tuple[str, str, Callable[[], list[str]]], ...] = ((PRESETS_PAGE, PRESETS_START, presets_table),)


def written(text: str, start: str, table: list[str], page: str) -> str:
    """`text` with the lines between `start` and the next end marker replaced by `table` (blank lines around
    it: Markdown takes a comment's lines up to a blank one for HTML)."""
    lines = text.splitlines()
    try:
        first = lines.index(start)
        last = lines.index(TABLE_END, first)
    except ValueError:
        raise SystemExit(f"docs/{page}: no {start!r} ... {TABLE_END!r} markers around the written table") from None
    return "\n".join([*lines[: first + 1], "", *table, "", *lines[last:]]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("docs", type=Path, help="the docs folder")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a table is not the engine's")
    arguments = parser.parse_args(argv)
    stale = []
    for page, start, table in TABLES:
        path = arguments.docs / page
        text = path.read_text()
        new = written(text, start, table(), page)
        if new != text:
            stale.append(page)
            if not arguments.check:
                path.write_text(new)
    if stale and arguments.check:
        print(f"not the engine's tables: {', '.join(stale)} (`make docs` writes them)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
