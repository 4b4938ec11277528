"""The header of an SWF log: its `;` comment lines as keys and values, and the numbers the lake keeps.

Apart from the format's definition (`swf_format`) because the limits of the numbers are the
tokenizer's, which the compiled extension defines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from lakehouse import _native
from lakehouse.base.swf_format import NUMERIC_HEADER_COLUMNS, TEXT_HEADER_COLUMNS

# Header values the lake computes with stay within the ranges the tokenizer enforces on job lines
# (sim/src/swf.rs): a start time beyond them would make every timestamp of the log overflow.
HEADER_LIMITS = {
    "UnixStartTime": _native.SWF_MAX_SECONDS,
    "MaxRuntime": _native.SWF_MAX_SECONDS,
    "MaxProcs": _native.MAX_MACHINE_SIZE,  # the machine's size: the engine's limit
    "MaxNodes": _native.SWF_MAX_PROCS,
}
INT64_MAX = 2**63 - 1

_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_ ]*")
_LEADING_INT = re.compile(r"^\s*([-+]?\d+)")
#: More digits than this cannot fit in 64 bits: such a value is text, never turned into a number (Python
#: refuses to convert 4,300 digits and more, and a longer one would only cost time).
_MAX_DIGITS = 20


def key_line(line: str) -> tuple[str, str] | None:
    """(key, value) of a header line `; Key: value`, if it is one.  In linear time: a regular expression
    with a lazy key and optional blanks backtracked for minutes over a line of 200,000 blanks."""
    body = line[1:] if line.startswith(";") else None
    if body is None:
        return None
    key, colon, value = body.partition(":")
    key = key.strip()
    if not colon or not _KEY.fullmatch(key):
        return None
    return key.strip(), value[1:] if value.startswith((" ", "\t")) else value


def leading_integer(value: str, limit: int = INT64_MAX) -> int | None:
    """The integer a header value starts with: "338 (batch partition; 512 total)" -> 338.  None when
    there is none, or when its magnitude exceeds `limit` (the value is then kept as text only)."""
    m = _LEADING_INT.match(value)
    if not m or len(m.group(1).lstrip("+-")) > _MAX_DIGITS:
        return None
    number = int(m.group(1))
    return number if abs(number) <= limit else None


@dataclass
class SwfHeader:
    """The `;` comment lines of a log: every key (in order) and the raw text."""

    entries: dict[str, str] = field(default_factory=dict)
    raw_lines: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, comment_lines: list[str]) -> SwfHeader:
        header = cls(raw_lines=list(comment_lines))
        last_key: str | None = None
        for line in comment_lines:
            if pair := key_line(line):
                key, value = pair[0], pair[1].strip()
                # Repeated keys (Note:, Queue:, Partition:) accumulate, one value per line.
                if key in header.entries:
                    header.entries[key] += "\n" + value
                else:
                    header.entries[key] = value
                last_key = key
            else:
                text = line.lstrip(";").strip()
                if last_key is not None and text:
                    # An indented continuation of the previous key's value.
                    header.entries[last_key] += "\n" + text
                elif not text:
                    last_key = None
        return header

    def out_of_range(self) -> list[str]:
        """Why each value that starts with an integer is kept as text only: it does not fit in the
        lake's 64-bit columns, or exceeds its key's limit (HEADER_LIMITS)."""
        reasons = []
        for key, value in self.entries.items():
            if _LEADING_INT.match(value) and self._number(key, value) is None:
                if leading_integer(value) is None:
                    bound = "does not fit in 64 bits"
                else:
                    bound = f"exceeds {HEADER_LIMITS[key]:,} in magnitude"
                first = value.splitlines()[0]
                reasons.append(f"header {key}: {first!r} {bound} (kept as text only)")
        return reasons

    @staticmethod
    def _number(key: str, value: str) -> int | None:
        return leading_integer(value, HEADER_LIMITS.get(key, INT64_MAX))

    def numeric(self) -> dict[str, int]:
        out = {}
        for key, value in self.entries.items():
            number = self._number(key, value)
            if number is not None:
                out[key] = number
        return out

    def row(self) -> dict[str, Any]:
        numeric = self.numeric()
        row: dict[str, object] = {col: numeric.get(key) for key, col in NUMERIC_HEADER_COLUMNS.items()}
        for key, col in TEXT_HEADER_COLUMNS.items():
            value = self.entries.get(key)
            row[col] = value.split("\n")[0] if value is not None else None
        row["header"] = list(self.entries.items())
        row["header_numeric"] = list(numeric.items())
        row["raw_header"] = "\n".join(self.raw_lines)
        return row
