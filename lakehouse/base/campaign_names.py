"""What a campaign may be called: its name is a part of file names in the lake."""

from __future__ import annotations

import re

PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
RULE = "use letters, digits, '.', '_' or '-' (at most 100, starting with a letter or digit)"


def name_problem(name: object) -> str | None:
    """Why `name` cannot name a campaign (RULE), or None."""
    return None if isinstance(name, str) and PATTERN.fullmatch(name) else RULE
