"""The numbers the published studies report, as typed from the papers: one data file in the package
(lakehouse/data/published.csv), one row per number, with the table it comes from, the trace, the
archive log it corresponds to and the setting the paper states for it.

`lakehouse reproduce` prints our value beside each; the studies that print a published figure beside
their own (`report hmm-backfilling`) read it here too.

A second data file (lakehouse/data/explained.csv) records, for the numbers beyond the tolerance, the
experiment run on each (named as docs/reproductions.md names it) and what it found: explained (a cause
found) or unknown (every cause the papers and the authors' code leave open ruled out, or none tried).
"""

from __future__ import annotations

import csv
import enum
import fnmatch
import io
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True)
class Published:
    study: str
    source: str  # the paper's table
    trace: str  # as the paper names it
    log: str  # the Parallel Workloads Archive log it corresponds to, as a prefix of its file name ('' : none)
    quantity: str
    setting: str  # what the paper states for it: `key=value` words, or prose
    value: float | None  # None: the paper states the quantity but leaves its number blank (a placeholder)
    unit: str
    resolution: float = 0.0  # the last digit the paper prints (`resolution`), 0 for a blank

    def settings(self) -> dict[str, str]:
        """The `key=value` words of the setting."""
        return dict(word.split("=", 1) for word in self.setting.split() if "=" in word)


def published(study: str | None = None) -> list[Published]:
    """Every published number, or one study's, in the data file's order."""
    text = resources.files("lakehouse.data").joinpath("published.csv").read_text(encoding="utf-8")
    rows = [
        Published(
            **{**row, "value": float(row["value"]) if row["value"] else None},  # type: ignore[arg-type]
            resolution=resolution(row["value"]) if row["value"] else 0.0,
        )
        for row in csv.DictReader(io.StringIO(text))
    ]
    return [r for r in rows if study is None or r.study == study]


class Status(enum.StrEnum):
    """What a row of `lakehouse reproduce` is, in the order the counts are given."""

    within = "within 5 %"  # (the workload HMM's stays, in bits: within 0.005 bit)
    explained = "explained"  # beyond it, with a cause an experiment found
    unknown = "unknown"  # beyond it, with no cause found
    not_measured = "not measured"  # the lake lacks what it needs (the row says what)
    ours_alone = "ours alone"  # the paper leaves the number blank


#: Within 5 % of the published value, or within half the last digit the paper prints (its 4 % is any
#: value from 3.5 to 4.5); the stays' divergences are whole bits to two decimals, near zero, so within
#: half their last digit alone, 0.005 bit (see docs/reproductions.md).
RELATIVE_TOLERANCE = 0.05


def within_tolerance(published: float, ours: float, resolution: float = 0.0, last_digit_only: bool = False) -> bool:
    """`resolution`: the paper's last printed digit (Published.resolution); `last_digit_only`: the study's
    numbers are within half that digit alone (Study.last_digit_only)."""
    relative = 0.0 if last_digit_only else RELATIVE_TOLERANCE * abs(published)
    return abs(ours - published) <= max(relative, resolution / 2)


def resolution(text: str) -> float:
    """The last digit of a number as typed from the paper: 0.01 for `0.85`, 1 for `4` or `40100`."""
    mantissa = text.lower().split("e")[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    exponent = int(text.lower().split("e")[1]) if "e" in text.lower() else 0
    return 10.0 ** (exponent - decimals)


@dataclass(frozen=True)
class Explanation:
    """The experiment run on published numbers beyond the tolerance: those of the study whose source,
    trace, quantity and setting match (shell patterns: `*` any text), and what it found."""

    study: str
    source: str
    trace: str
    quantity: str
    status: Status  # explained or unknown
    experiment: str  # as docs/reproductions.md names it
    setting: str = "*"

    def matches(self, row: Mapping[str, object]) -> bool:
        fields = (
            ("source", self.source),
            ("trace", self.trace),
            ("quantity", self.quantity),
            ("setting", self.setting),
        )
        return row["study"] == self.study and all(
            fnmatch.fnmatchcase(str(row[key] or ""), pattern) for key, pattern in fields
        )


def explanations() -> list[Explanation]:
    """The record of experiments, in the data file's order (the first entry that matches a row holds)."""
    text = resources.files("lakehouse.data").joinpath("explained.csv").read_text(encoding="utf-8")
    return [
        Explanation(**{**row, "status": Status(row["status"])})  # type: ignore[arg-type]
        for row in csv.DictReader(io.StringIO(text))
    ]
