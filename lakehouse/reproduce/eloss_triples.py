"""Reis' heuristic triples of runtime prediction, correction and backfilling (MSc thesis, 2015, chapter 2)."""

from __future__ import annotations

import polars as pl

from lakehouse.base.lake import Lake
from lakehouse.base.log_names import short_log
from lakehouse.base.machine import CEA_CURIE_PARTITION
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

#: The campaign that keeps the study's runs.
TRIPLES_CAMPAIGN = "reproduce-eloss-triples"

#: Table 2.6's quantities: the column of `report triples`' per-log table that holds ours.
PER_LOG_COLUMNS = {
    "AVEbsld clairvoyant FCFS": "clairvoyant_queue",
    "AVEbsld clairvoyant SJBF": "clairvoyant_sjbf",
    "AVEbsld EASY": "easy",
    "AVEbsld EASY++": "easy_plus_plus",
    "AVEbsld best learned FCFS": "best_learned_queue",
    "AVEbsld worst learned FCFS": "worst_learned_queue",
    "AVEbsld best learned SJBF": "best_learned_sjbf",
    "AVEbsld worst learned SJBF": "worst_learned_sjbf",
}
#: Table 2.7's EASY++ column, in percent: (EASY - EASY++) / EASY, from the per-log table.
EASY_PLUS_PLUS_REDUCTION = "reduction vs EASY of EASY++"
#: Table 2.7's: the column of the leave-one-out table.
LOO_COLUMNS = {
    "AVEbsld leave-one-out triple": "selected_bsld",
    "reduction vs EASY of the leave-one-out triple": "reduction_vs_easy_pct",
}


#: The machines the study replayed where they differ from the log's MaxProcs (its Table 2.4).
TRIPLES_MACHINE_SIZES = (CEA_CURIE_PARTITION,)


def _eloss_triples(lake: Lake, rows: list[Published], request: Request) -> list[dict[str, object]]:
    """The study's campaign (every triple, replayed as the published simulator replays: `--compat
    pyss`), then `report triples`' tables from its runs."""
    from lakehouse.campaigns.grid import Grid
    from lakehouse.campaigns.report import latest
    from lakehouse.campaigns.runner import campaign_rows
    from lakehouse.studies.triples import leave_one_out, log_correlations, per_log_table, triple_settings

    known = lake.log_names()
    logs, present = study_logs(rows, known)
    per_log = pl.DataFrame({"log": []}, schema={"log": pl.String})
    loo = pl.DataFrame({"held_out": []}, schema={"held_out": pl.String})
    runs = pl.DataFrame()
    correlations = pl.DataFrame({"pearson": []}, schema={"pearson": pl.Float64})
    if present:
        grid = Grid(
            name=request.campaign or TRIPLES_CAMPAIGN,
            logs=tuple(present),
            view=STUDY_VIEW,
            machine_sizes=tuple(
                (prefix, size)
                for prefix, size in TRIPLES_MACHINE_SIZES
                if any(log.startswith(prefix) for log in present)
            ),
            explicit=tuple(triple_settings("pyss")),
        )
        run_campaign_of(lake, grid, request)
        predictors = list({s.predictor for s in grid.settings()})  # (the campaign may hold other runs too)
        runs = campaign_rows(lake, grid.name).filter(
            pl.col("log").is_in(present), pl.col("compat") == "pyss", pl.col("predictor").is_in(predictors)
        )
        runs = grid.on_its_machines(runs, known)
        per_log = per_log_table(runs)
        if per_log.height >= 2:
            loo = leave_one_out(runs)
            correlations = log_correlations(runs).drop_nulls("pearson")
    out = []
    for p in rows:
        if not p.log:  # Pearson's correlation between the couples of logs: its mean, least and greatest
            statistic = p.settings()["statistic"]
            if correlations.is_empty():
                out.append(row(p, None, None, "needs two of the study's logs"))
                continue
            value = getattr(correlations["pearson"], statistic)()
            couples = f"on the {correlations.height} couples of the {len(present)} of its {len(logs)} logs in the lake"
            out.append(row(p, None, float(value), f"{MEASURED} {couples}"))
            continue
        log = logs[p.log]
        if log is None:
            out.append(row(p, None, None, lacking(p)))
        elif "metric" in p.settings():  # Table 2.8: one triple's prediction errors on the log
            s = p.settings()
            run = latest(runs).filter(
                pl.col("log") == log,
                pl.col("predictor") == s["predictor"],
                pl.col("correction") == s["correction"],
                pl.col("backfill") == s["backfill"],
            )
            value = run[s["metric"]][0] if run.height else None
            out.append(row(p, log, value, MEASURED if value is not None else "the triple did not run"))
        elif p.quantity in PER_LOG_COLUMNS:
            out.append(row(p, log, per_log.filter(pl.col("log") == log)[PER_LOG_COLUMNS[p.quantity]][0], MEASURED))
        elif p.quantity == EASY_PLUS_PLUS_REDUCTION:  # Table 2.7's EASY++ column: its AVEbsld against EASY's
            mine = per_log.filter(pl.col("log") == log).row(0, named=True)
            out.append(row(p, log, 100 * (1 - mine["easy_plus_plus"] / mine["easy"]), MEASURED))
        else:
            held = loo.filter(pl.col("held_out") == log)
            value = held[LOO_COLUMNS[p.quantity]][0] if held.height else None
            out.append(row(p, log, value, _loo_note(log, logs) if value is not None else
                            "leave-one-out needs two logs"))  # fmt: skip
    return out


def _loo_note(log: str, logs: dict[str, str | None]) -> str:
    """A Table 2.7 row's note: the logs ours selected the triple on (the study's others in the lake),
    and those of the paper's the lake lacks."""
    others = [short_log(name) for name in dict.fromkeys(logs.values()) if name is not None and name != log]
    lacking = [prefix for prefix, name in logs.items() if name is None]
    said = f"{MEASURED}: selected on the other {len(others)} logs in the lake ({', '.join(others)})"
    return f"{said}; the paper's also on {', '.join(lacking)}, which the lake lacks" if lacking else said


STUDY = Study(
    "eloss-triples",
    _eloss_triples,
    (
        "Reis 2015, tables 2.6-2.7: every heuristic triple replayed as the published simulator replays, `--compat"
        " pyss`, on its logs, CEA-Curie on 80,640 processors, as `lakehouse campaign run --preset triples` does; "
        "then `lakehouse report triples`' tables"
    ),
    order=40,
    citation=(
        "V. Reis, Modeling and Estimation for Resource Allocation Problems in Large-Scale Computing "
        "Systems, MSc thesis, 2015, chapter 2 (the SC'15 runtime-prediction study)"
    ),
)
