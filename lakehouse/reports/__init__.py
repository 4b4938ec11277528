"""Every report, one module each in this package: how it computes, what it stores (its analysis.*
tables), what it shows and what it draws, its options and how the nightly run calls it
(lakehouse.reports.base.Report).  `lakehouse report ...`, the demo, the nightly run and `reproduce` all
go through `REPORTS`, which holds the `REPORT` of every module here: a new report is a new module,
with no list to edit (docs/contributing.md gives the recipe).

Studies stored as campaigns (`report hmm-backfilling`, and the runs behind `selection` and `triples`)
keep their runs in analysis.campaign_runs as each run ends.  The models, studies and matplotlib are
imported inside the modules' functions, when a report runs: every command lists this registry at start
and must not pay for them.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from lakehouse.reports.base import Option, Report, Tables
from lakehouse.reports.hmm import REPORT as HMM
from lakehouse.reports.locality import REPORT as LOCALITY
from lakehouse.reports.pack import REPORT as PACK
from lakehouse.reports.pack import PackRequest
from lakehouse.reports.periodicity import MAX_NOISE_TRIALS, PeriodicitySettings
from lakehouse.reports.periodicity import REPORT as PERIODICITY
from lakehouse.reports.predictions import REPORT as PREDICTIONS
from lakehouse.reports.predictions import Source
from lakehouse.reports.selection import REPORT as SELECTION
from lakehouse.reports.triples import REPORT as TRIPLES
from lakehouse.reports.volatility import REPORT as VOLATILITY

__all__ = [
    "HMM",
    "LOCALITY",
    "MAX_NOISE_TRIALS",
    "PACK",
    "PERIODICITY",
    "PREDICTIONS",
    "REPORTS",
    "SELECTION",
    "TRIPLES",
    "VOLATILITY",
    "Option",
    "PackRequest",
    "PeriodicitySettings",
    "Report",
    "Source",
    "Tables",
]


def _discovered() -> dict[str, Report[Any, Any]]:
    """The `REPORT` of every module of this package, in their `order`, by name."""
    found = []
    for module in pkgutil.iter_modules(__path__):
        if module.name != "base" and not module.name.startswith("_"):
            report = getattr(importlib.import_module(f"{__name__}.{module.name}"), "REPORT", None)
            if isinstance(report, Report):
                found.append(report)
    return {r.name: r for r in sorted(found, key=lambda r: (r.order, r.name))}


REPORTS: dict[str, Report[Any, Any]] = _discovered()
