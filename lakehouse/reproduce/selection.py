"""Gaussier et al.'s online selection of EASY's queue policy (2017)."""

from __future__ import annotations

import polars as pl

from lakehouse.base.lake import Lake
from lakehouse.base.published import Published
from lakehouse.reproduce.study import (
    MEASURED,
    STUDY_VIEW,
    Request,
    Study,
    lacking,
    row,
    run_campaign_of,
    study_logs,
)

#: The study's campaign, its resamples (the paper's 100; --quick: 10) and its cleaned jobs.
SELECTION_CAMPAIGN, SELECTION_RESAMPLES, SELECTION_QUICK_RESAMPLES = "reproduce-selection", 100, 10


def _selection(lake: Lake, rows: list[Published], request: Request) -> list[dict[str, object]]:
    """Table 1 (each log's machine, as the study's replays use it, and its jobs) and the abstract's two
    best-log figures, from `lakehouse report selection`'s campaign with the paper's ten policies, periods
    of a week and a day, on the study's logs in the lake and on its machines."""
    from lakehouse.base.catalog import named_query
    from lakehouse.campaigns.grid import Grid
    from lakehouse.campaigns.runner import campaign_rows
    from lakehouse.studies.selection import selection_settings, selection_table, study_machine_sizes

    known = lake.log_names()
    logs, present = study_logs(rows, known)
    table = pl.DataFrame()
    baseline = pl.DataFrame()
    if present:
        resamples = SELECTION_QUICK_RESAMPLES if request.quick else SELECTION_RESAMPLES
        grid = Grid(
            name=request.campaign or SELECTION_CAMPAIGN,
            logs=tuple(present),
            view=STUDY_VIEW,
            machine_sizes=study_machine_sizes(present, ()),
            explicit=tuple(selection_settings(resamples)),
        )
        run_campaign_of(lake, grid, request)
        wanted = {s.label() for s in grid.settings()}
        runs = campaign_rows(lake, grid.name).filter(pl.col("log").is_in(present), pl.col("variant").is_in(wanted))
        runs = grid.on_its_machines(runs, known)
        table = selection_table(runs)
        # Table 1 counts each log's jobs as the archive has them (before the study's filter).
        jobs = lake.query(named_query("log_summary")).select("log", "jobs")
        baseline = runs.filter(pl.col("variant") == "easy-fcfs-r0").select("log", "machine_size").join(jobs, on="log")
    out = []
    for p in rows:
        if p.log:
            log = logs[p.log]
            found = baseline.filter(pl.col("log") == log) if log is not None else baseline.clear()
            if found.is_empty():
                out.append(row(p, log, None, lacking(p)))
            else:
                column = "machine_size" if p.quantity == "MaxProcs" else "jobs"
                out.append(row(p, log, float(found[column][0]), MEASURED))
        else:  # the best log: the lowest mean ratio of the selector (at either period) over the logs here
            selector = p.settings()["selector"]
            # The period follows the selector's name: `easy-egreedy-day-...`, not `easy-egreedy-started-...`.
            named = pl.col("strategy").str.contains(f"^easy-{selector}-(week|day|[0-9]+s)")
            mine = table.filter(named) if present else table
            missing = [prefix for prefix, log in logs.items() if log is None]
            if mine.is_empty():
                out.append(row(p, None, None, lacking(p)))
            else:
                note = MEASURED
                if missing:
                    note += f" on the {len(present)} of its {len(logs)} logs in the lake (not: {', '.join(missing)})"
                out.append(row(p, None, float(mine["mean_ratio"].min()), note))  # type: ignore[arg-type]
    return out


STUDY = Study(
    "selection",
    _selection,
    (
        "Gaussier et al., 2017: its logs' machines and jobs, and the best log's average wait under noisy "
        "simulation feedback and under the bandit, against EASY-FCFS's, from `lakehouse report selection`'s "
        "campaign with the paper's ten policies and 100 week resamples, 10 with --quick"
    ),
    order=60,
    citation=(
        "E. Gaussier, J. Lelong, V. Reis, D. Trystram, Online (bandit) policy selection for EASY-backfilling, 2017"
    ),
)
