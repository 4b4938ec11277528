"""`lakehouse reproduce STUDY`: a published study run as the paper states it, on the logs of the lake,
every published number beside ours.

Each study is one module of this package whose `STUDY` (lakehouse.reproduce.study.Study) says how our
numbers are made and what `--help` says of it: `STUDIES` holds every module's, with no list to edit.
The published numbers come from the package's data file (lakehouse.base.published).  A row whose log
the lake lacks says so (and has a value as soon as the log is ingested); a row we do not compute says
why.  Each study reuses the command behind it, so that our value is what that command gives: `report
locality` at the paper's cells, `report hmm-backfilling`'s campaign, `report triples`' tables of a
stored triples campaign.  The models, studies and campaigns load when a study runs, not when the
command line lists the studies.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from lakehouse.base.errors import LakehouseError
from lakehouse.base.lake import Lake
from lakehouse.base.published import Status, explanations, published, within_tolerance
from lakehouse.models.reproductions import REPRODUCTIONS, REPRODUCTIONS_SCHEMA
from lakehouse.reports import Report
from lakehouse.reproduce.study import COLUMNS, Request, Study

__all__ = ["REPRODUCE", "STUDIES", "Reproduction", "Request", "Study", "cite", "counts", "judge", "reproduce"]


def _discovered() -> dict[str, Study]:
    """The `STUDY` of every module of this package, in their `order`, by name."""
    found = []
    for module in pkgutil.iter_modules(__path__):
        study = getattr(importlib.import_module(f"{__name__}.{module.name}"), "STUDY", None)
        if isinstance(study, Study):
            found.append(study)
    return {s.name: s for s in sorted(found, key=lambda s: (s.order, s.name))}


STUDIES: dict[str, Study] = _discovered()


@dataclass(frozen=True)
class Reproduction:
    study: str
    table: pl.DataFrame  # one row per published number (REPRODUCTIONS_SCHEMA's columns)


def reproduce(lake: Lake, request: Request) -> Reproduction:
    """Every published number of the study beside ours, each with its status (`judge`)."""
    if request.study not in STUDIES:
        raise LakehouseError(f"unknown study {request.study!r}; the studies are: {', '.join(STUDIES)}")
    rows = STUDIES[request.study].rows(lake, published(request.study), request)
    table = pl.DataFrame(rows, schema={c: pl.Float64 if c in ("published", "ours") else pl.String for c in COLUMNS})
    table = table.with_columns(difference=pl.col("ours") - pl.col("published")).with_columns(
        # (A published 0 has no relative difference.)
        relative_pct=pl.when(pl.col("published") != 0).then(100 * pl.col("difference") / pl.col("published").abs())
    )
    return Reproduction(request.study, judge(table).select(REPRODUCTIONS_SCHEMA.names))


def judge(table: pl.DataFrame) -> pl.DataFrame:
    """The table with each row's status and the experiment behind it (lakehouse.base.published.Status):
    within the tolerance (lakehouse.base.published.within_tolerance); else explained or unknown as the
    package's record of experiments says (the first of its entries that matches the row; a row beyond
    the tolerance that none matches is unknown, with no experiment); not measured; or ours alone, for a
    number the paper leaves blank."""
    entries = explanations()
    digits = {(p.study, p.source, p.trace, p.quantity): p.resolution for p in published()}
    statuses, experiments = [], []
    for row in table.iter_rows(named=True):
        status, experiment = Status.unknown, None
        if row["ours"] is None:
            status = Status.not_measured
        elif row["published"] is None:
            status = Status.ours_alone
        elif within_tolerance(
            row["published"],
            row["ours"],
            digits.get((row["study"], row["source"], row["trace"], row["quantity"]), 0.0),
            STUDIES[row["study"]].last_digit_only,
        ):
            status = Status.within
        else:
            found = next((e for e in entries if e.matches(row)), None)
            if found is not None:
                status, experiment = found.status, found.experiment
        statuses.append(status.value)
        experiments.append(experiment)
    return table.with_columns(
        status=pl.Series(statuses, dtype=pl.String), experiment=pl.Series(experiments, dtype=pl.String)
    )


def counts(table: pl.DataFrame) -> dict[str, int]:
    """How many of a study's rows have each status, in Status's order (the counts docs/reproductions.md
    gives for each study)."""
    found = dict(table.group_by("status").len().iter_rows())
    return {status.value: int(found.get(status.value, 0)) for status in Status}


def cite(study: str) -> str:
    return STUDIES[study].citation


def _store(lake: Lake, result: Reproduction) -> None:
    from lakehouse.base.results import store

    store(lake, REPRODUCTIONS, result.table, name=result.study)


def _plot(lake: Lake, result: Reproduction, folder: Path) -> list[Path]:
    from lakehouse.models.reproductions.plots import plot_reproduction

    return plot_reproduction(result.table, result.study, folder)


#: `reproduce` as a report of the registry's kind (stored, shown and drawn as the others are): a client
#: of the registry, not one of its entries, since it runs the registry's reports itself.
REPRODUCE: Report[Request, Reproduction] = Report(
    "reproduce",
    "The published studies beside our runs (lakehouse reproduce)",
    (REPRODUCTIONS,),
    reproduce,
    _store,
    lambda result: [(f"{result.study}: published and ours", result.table)],
    _plot,
)
