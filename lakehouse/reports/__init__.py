"""Every report: how it computes, what it stores (its analysis.* tables), what it shows and what it
draws, its options and how the nightly run calls it (lakehouse.base.report.Report).  A report on what
the lake holds is the `report.py` of its topic's folder (models/locality/report.py), beside the tables
it declares and its model; a study built on campaigns is a module of this package (it needs the
campaigns, a layer above the models).  `lakehouse report ...`, the demo, the nightly run and
`reproduce` all go through `REPORTS`, which holds the `REPORT` of each: a new report is a new module,
with no list to edit (docs/contributing.md gives the recipe).

Studies stored as campaigns (`report hmm-backfilling`, and the runs behind `selection` and `triples`)
keep their runs in analysis.campaign_runs as each run ends.  The models, studies and matplotlib are
imported inside the modules' functions, when a report runs: every command lists this registry at start
and must not pay for them.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from typing import Any

from lakehouse.base.report import Option, Report, Tables
from lakehouse.models.hmm.report import REPORT as HMM
from lakehouse.models.locality.report import REPORT as LOCALITY
from lakehouse.models.packing.report import REPORT as PACK
from lakehouse.models.packing.report import PackRequest
from lakehouse.models.periodicity.report import MAX_NOISE_TRIALS, PeriodicitySettings
from lakehouse.models.periodicity.report import REPORT as PERIODICITY
from lakehouse.models.predictions.report import REPORT as PREDICTIONS
from lakehouse.models.predictions.report import Source
from lakehouse.models.volatility.report import REPORT as VOLATILITY
from lakehouse.reports.selection import REPORT as SELECTION
from lakehouse.reports.triples import REPORT as TRIPLES

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
    """The `REPORT` of every module of this package and of every topic folder's `report` module, in
    their `order`, by name."""
    import lakehouse.models as topics

    modules = [f"{__name__}.{m.name}" for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]
    for topic in pkgutil.iter_modules(topics.__path__):
        if topic.ispkg and importlib.util.find_spec(f"{topics.__name__}.{topic.name}.report") is not None:
            modules.append(f"{topics.__name__}.{topic.name}.report")
    found = [
        report
        for name in modules
        if isinstance(report := getattr(importlib.import_module(name), "REPORT", None), Report)
    ]
    return {r.name: r for r in sorted(found, key=lambda r: (r.order, r.name))}


REPORTS: dict[str, Report[Any, Any]] = _discovered()
