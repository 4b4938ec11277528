"""How a user's name for a log becomes the lake's logs: one rule for every command, campaign grid and
configuration file.

A name is the log's exact name, else the beginning of exactly one log's name (`KTH` for
`KTH-SP2-1996-2.1-cln`); a glob (`SDSC-*`) names every log it matches.  A prefix that begins several
names is refused rather than guessed (two versions of a log share a prefix).
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase

from lakehouse.base.errors import LakehouseError

GLOB_CHARACTERS = "*?["


class LogNameError(LakehouseError):
    """A name that names no log, or several where one is needed."""


def is_glob(name: str) -> bool:
    return any(ch in name for ch in GLOB_CHARACTERS)


def logs_named(name: str, known: Sequence[str]) -> list[str]:
    """The logs of `known` that `name` names, in `known`'s order; LogNameError if none, or if a prefix
    begins several."""
    if is_glob(name):
        matches = [log for log in known if fnmatchcase(log, name)]
    elif name in known:
        matches = [name]
    else:
        matches = [log for log in known if log.startswith(name)]
        if len(matches) > 1:
            raise LogNameError(f"{name!r} names {len(matches)} logs ({', '.join(matches)}); give more of the name")
    if not matches:
        raise LogNameError(f"no log matches {name!r}; the lake has: {', '.join(known) or 'no logs yet'}")
    return matches


def log_named(name: str, known: Sequence[str]) -> str:
    """The one log `name` names (a glob must match exactly one)."""
    matches = logs_named(name, known)
    if len(matches) > 1:
        raise LogNameError(f"{name!r} names {len(matches)} logs ({', '.join(matches)}); name one")
    return matches[0]


def names_log(name: str, log: str, known: Sequence[str]) -> bool:
    """Whether `name` names `log` (one of `known`) by the rule above; a name that names no log names
    none of them (a configuration may be written before its logs arrive), an ambiguous prefix is a
    LogNameError."""
    if is_glob(name):  # (a glob that matches nothing yet names nothing, as a name not there yet)
        return fnmatchcase(log, name)
    if name not in known and not any(k.startswith(name) for k in known):
        return False
    return log in logs_named(name, known)


def short_log(log: str) -> str:
    """`KTH-SP2-1996-2.1-cln` -> `KTH-SP2`: the machine, for axis labels and legends."""
    return "-".join(log.split("-")[:2])


def select_logs(patterns: Sequence[str], known: Sequence[str]) -> list[str]:
    """The logs of `known` named by `patterns` (exact names, unique prefixes or globs: `logs_named`),
    each once, in the order the patterns name them."""
    chosen: list[str] = []
    for pattern in patterns:
        chosen.extend(logs_named(pattern, known))
    return list(dict.fromkeys(chosen))
