"""EASY with the workload HMM's run-time distributions (the same thesis, Tables 5.1 and 5.2)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import polars as pl

from lakehouse.base.job_views import View, log_machine_size
from lakehouse.base.lake import Lake
from lakehouse.base.published import Published
from lakehouse.reproduce.study import (
    MEASURED,
    Request,
    Study,
    lacking,
    row,
    run_campaign_of,
    study_logs,
)

if TYPE_CHECKING:
    from lakehouse.campaigns.grid import Grid


def _hmm_backfilling(lake: Lake, rows: list[Published], request: Request) -> list[dict[str, object]]:
    """Tables 5.1 and 5.2 from the study's campaign; for a log the study replays on a machine chosen
    because it gives the published figures (MACHINE_SIZES: CTC-SP2 on 512 processors, where its header
    says 338), the row says so, and the same rows follow under the header's machine."""
    from lakehouse.studies.hmm_backfilling import AS_PUBLISHED, CAMPAIGN, CONFIDENCE, MACHINE_SIZES, VIEW, study_grid

    known = lake.log_names()
    logs, present = study_logs(rows, known)
    chosen = [log for log in present if any(log.startswith(prefix) for prefix, _ in MACHINE_SIZES)]
    values: dict[tuple[str, str], float] = {}  # (log prefix, quantity) -> ours, on the study's machines
    header: dict[tuple[str, str], float] = {}  # the same, on the header's machine, for the logs in `chosen`
    if present:
        grid = study_grid(CAMPAIGN, present, VIEW, AS_PUBLISHED, [CONFIDENCE])
        run_campaign_of(lake, grid, request)
        values = _hmm_backfilling_values(lake, grid, logs, known)
        if chosen:
            # (Sizes given, not left to the view: the campaign also holds these logs' runs on the study's.)
            stated_sizes = [(log, log_machine_size(lake, log, View(VIEW))) for log in chosen]
            on_header = study_grid(CAMPAIGN, chosen, VIEW, AS_PUBLISHED, [CONFIDENCE], machine_sizes=stated_sizes)
            run_campaign_of(lake, on_header, request)
            header = _hmm_backfilling_values(
                lake, on_header, {p: log for p, log in logs.items() if log in chosen}, known
            )
    out = []
    for p in rows:
        if p.log:
            ours, log = values.get((p.log, p.quantity)), logs[p.log]
            why = lacking(p) if log is None else "undefined: EASY never waits on this log"
            size = dict(MACHINE_SIZES).get(p.log)
            if size is None or log not in chosen:
                out.append(row(p, log, ours, MEASURED if ours is not None else why))
                continue
            stated = log_machine_size(lake, log, View(VIEW))
            gives = header.get((p.log, "mean wait EASY"))
            chosen_text = (
                f"{size} processors: the whole machine, chosen because it gives the published EASY waits "
                f"(the header's {stated}" + (f" gives {gives:.0f} min" if gives is not None else "") + ")"
            )
            out.append(row(replace(p, setting=_joined(chosen_text, p.setting)), log, ours, MEASURED))
            mine = header.get((p.log, p.quantity))
            header_text = f"{stated} processors: the machine the log's header states"
            out.append(row(replace(p, setting=_joined(header_text, p.setting)), log, mine, MEASURED))
        else:  # the total: the geometric mean of the per-log ratios, as the paper's totals are
            changes = [values.get((prefix, p.quantity)) for prefix in logs]
            if all(c is not None for c in changes):
                ratio = math.prod(1 + c / 100 for c in changes if c is not None) ** (1 / len(changes))
                out.append(row(p, None, 100 * (ratio - 1), MEASURED))
            else:
                out.append(row(p, None, None, lacking(p)))
    return out


def _joined(first: str, setting: str) -> str:
    return f"{first}; {setting}" if setting else first


def _hmm_backfilling_values(
    lake: Lake, grid: Grid, logs: dict[str, str | None], known: Sequence[str]
) -> dict[tuple[str, str], float]:
    """(log prefix, quantity) -> ours, from the campaign's runs on the grid's machines."""
    from lakehouse.campaigns.grid import parse_values
    from lakehouse.campaigns.report import latest
    from lakehouse.campaigns.runner import campaign_rows
    from lakehouse.studies.hmm_backfilling import AS_PUBLISHED, CAMPAIGN, CONFIDENCE, EASY

    # (The campaign may hold the study's runs with other predictors: `report hmm-backfilling`'s own.)
    (model,) = parse_values("predictor", [AS_PUBLISHED])
    runs = grid.on_its_machines(latest(campaign_rows(lake, CAMPAIGN)), known)
    runs = runs.filter(pl.col("predictor").is_in([EASY, model]))
    runs = runs.filter(pl.col("log").is_in(list(grid.logs)), pl.col("status") == "ok")
    values: dict[tuple[str, str], float] = {}
    for prefix, log in logs.items():
        if log is None:
            continue
        mine = runs.filter(pl.col("log") == log)
        easy = mine.filter(pl.col("predictor") == EASY)
        hmm = mine.filter(pl.col("predictor") != EASY, pl.col("backfill_confidence") == float(CONFIDENCE))
        if easy.is_empty() or hmm.is_empty():
            continue
        for name, column, scale in (("mean wait", "mean_wait", 60.0), ("geometric mean wait", "geomean_wait", 1.0)):
            before, after = float(easy[column][0]), float(hmm[column][0])
            values[(prefix, f"{name} EASY")] = before / scale
            values[(prefix, f"{name} EASY+HMM")] = after / scale
            if before > 0:  # (a log on which EASY never waits has no change to measure)
                values[(prefix, f"{name} change")] = 100 * (after / before - 1)
    return values


STUDY = Study(
    "hmm-backfilling",
    _hmm_backfilling,
    (
        "Nissimov and Feitelson, 2006, tables 5.1-5.2: EASY against EASY with the workload HMM's run-time "
        "distributions, run as `lakehouse report hmm-backfilling` runs it, as a campaign whose runs are kept"
    ),
    order=30,
    citation=(
        "A. Nissimov (D. Feitelson), Locality and its usage in parallel job runtime distribution "
        "modeling using HMM, MSc thesis, Hebrew University, 2006, chapter 5"
    ),
)
