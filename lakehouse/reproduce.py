"""`lakehouse reproduce STUDY`: a published study run as the paper states it, on the logs of the lake,
every published number beside ours.

The published numbers come from the package's data file (lakehouse.base.published).  A row whose log the
lake lacks says so (and has a value as soon as the log is ingested); a row we do not compute says why.
Each study reuses the command behind it, so that our value is what that command gives: `report
locality` at the paper's cells, `report hmm-backfilling`'s campaign, `report triples`' tables of a
stored triples campaign.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import polars as pl

from lakehouse.base.errors import LakehouseError, TooLittleDataError
from lakehouse.base.job_views import View, log_machine_size
from lakehouse.base.lake import Lake
from lakehouse.base.log_names import LogNameError, logs_named, short_log
from lakehouse.base.machine import CEA_CURIE_PARTITION
from lakehouse.base.published import PAPERS, Published, Status, explanations, published, within_tolerance
from lakehouse.base.schemas import REPRODUCTIONS_SCHEMA
from lakehouse.campaigns.executors import local_executor
from lakehouse.campaigns.grid import Grid, parse_values
from lakehouse.campaigns.report import latest
from lakehouse.campaigns.runner import campaign_rows, run_campaign
from lakehouse.models.locality import Settings, Variant, kmeans_cell, log_jobs, runtime_bins
from lakehouse.reports import LOCALITY, Report
from lakehouse.studies.hmm_backfilling import (
    AS_PUBLISHED,
    CAMPAIGN,
    CONFIDENCE,
    EASY,
    MACHINE_SIZES,
    VIEW,
    study_grid,
)
from lakehouse.studies.triples import leave_one_out, log_correlations, per_log_table, triple_settings

COLUMNS = ["study", "source", "trace", "log", "quantity", "setting", "published", "ours", "unit", "note"]
MEASURED = "measured"
#: The campaign that keeps the triples study's runs, and the cleaned jobs it replays.
TRIPLES_CAMPAIGN, TRIPLES_VIEW = "reproduce-eloss-triples", "jobs_strong"


@dataclass(frozen=True)
class Request:
    study: str
    campaign: str | None = None  # eloss-triples, selection: the campaign that keeps its runs [default: reproduce-STUDY]
    workers: int | None = None  # campaigns: processes [default: cores]
    quick: bool = False  # selection: 10 resamples instead of the paper's 100


@dataclass(frozen=True)
class Reproduction:
    study: str
    table: pl.DataFrame  # one row per published number (REPRODUCTIONS_SCHEMA's columns)


def _row(p: Published, log: str | None, ours: float | None, note: str) -> dict[str, object]:
    return {
        "study": p.study,
        "source": p.source,
        "trace": p.trace,
        "log": log,
        "quantity": p.quantity,
        "setting": p.setting,
        "published": p.value,
        "ours": ours,
        "unit": p.unit,
        "note": note,
    }


def _lake_log(prefix: str, known: Sequence[str]) -> str | None:
    """The lake's log for an archive log name (one rule: lakehouse.base.log_names), None if it has none."""
    if not prefix:
        return None
    try:
        return logs_named(prefix, known)[0]
    except LogNameError:
        return None


def _by_log(rows: list[Published], known: Sequence[str]) -> Iterator[tuple[str | None, list[Published]]]:
    """The rows grouped by the archive log they belong to, in the data file's order, each group with the
    lake's log for it (None: the lake lacks it)."""
    for prefix in dict.fromkeys(p.log for p in rows):
        yield _lake_log(prefix, known), [p for p in rows if p.log == prefix]


def _lacking(p: Published) -> str:
    if not p.log:
        return "no log: a total over the study's logs, computed when all of them are in the lake"
    return f"the lake has no {p.log} log (ingest it from the Parallel Workloads Archive: `lakehouse ingest swf FILE`)"


# -- locality ------------------------------------------------------------------------------------------


def _locality(lake: Lake, rows: list[Published], request: Request) -> list[dict[str, object]]:
    found: dict[int, dict[str, object]] = {}  # the row of each published number, by its place
    values: dict[tuple[str, str], float] = {}  # (archive log, quantity) -> ours, for the text's averages
    place = {id(p): i for i, p in enumerate(rows)}
    for log, mine in _by_log([p for p in rows if p.log], lake.log_names()):
        cells = [p for p in mine if "t_r" in p.settings()]
        if log is None:
            found |= {place[id(p)]: _row(p, None, None, _lacking(p)) for p in mine}
            continue
        settings = Settings(
            submit_bins=sorted({float(p.settings()["t_s"]) for p in cells if "t_s" in p.settings()}),
            runtime_ratios=sorted({float(p.settings()["t_r"]) for p in cells}),
            variants=[Variant(v) for v in dict.fromkeys(p.settings()["variant"] for p in cells)],
        )
        measured = LOCALITY.run(lake, (log, settings))
        grid = measured.grid
        jobs = measured.jobs.jobs

        by_quantity = {p.quantity: p for p in mine}
        for p in mine:
            s = p.settings()
            if "n_ratio" in s:  # N: the run-time bins from 1 s to the longest run of the jobs the cell uses
                users = p.quantity.endswith("f(u;r)") or "(s;u)" in p.quantity
                longest = (jobs.drop_nulls("user_id") if users else jobs)["run_time"].max()
                value = float(runtime_bins(np.array([longest]), float(s["n_ratio"]))[0] + 1)
            elif "bins" in s:  # Table 2.1: k-means run-time bins (lakehouse.models.locality.kmeans_cell)
                value = kmeans_cell(jobs, float(s["t_s"]), int(s["bins"])).locality
            elif "t_r" in s:
                value = _cell(grid, p)
            else:  # f(s; r | u): what the submit time adds to the user, the pair's best cell over the user's
                value = _cell(grid, by_quantity["f((s;u);r)"]) - _cell(grid, by_quantity["f(u;r)"])
            values[(p.log, p.quantity)] = value
            found[place[id(p)]] = _row(p, log, value, MEASURED)
    traces = list(dict.fromkeys(p.log for p in rows if p.log))
    for p in rows:
        if not p.log:
            found[place[id(p)]] = _locality_average(p, traces, values)
    return [found[i] for i in range(len(rows))]


#: The text's averages over the six traces: (statistic) -> (numerator, denominator, geometric).
LOCALITY_AVERAGES = {
    "simple_over_kmeans": ("f(s;r)", "f(s;r) K-Means run-time bins", False),
    "user_and_submit_over_user": ("f((s;u);r)", "f(u;r)", False),
    "user_bins_over_both": ("N run-time bins of f(u;r)", "N run-time bins of f((s;u);r)", True),
}


def _locality_average(p: Published, traces: list[str], values: dict[tuple[str, str], float]) -> dict[str, object]:
    """One of section 2's averages over the six traces: the mean excess (in %) of one of each trace's
    numbers over another, or the geometric mean of their ratio; measured when the lake holds every trace
    (the note gives it over those it holds)."""
    over, under, geometric = LOCALITY_AVERAGES[p.settings()["statistic"]]
    # (A trace whose denominator is 0, a log too small to carry locality, has no ratio.)
    ratios = [values[(t, over)] / values[(t, under)] for t in traces if values.get((t, under)) and (t, over) in values]
    if geometric:
        value = math.prod(ratios) ** (1 / len(ratios)) if ratios else None
    else:
        value = 100 * (sum(ratios) / len(ratios) - 1) if ratios else None
    if len(ratios) == len(traces):
        return _row(p, None, value, MEASURED)
    partial = f"; over the {len(ratios)} in the lake: {value:.3g}" if value is not None else ""
    return _row(p, None, None, f"{_lacking(p)} ({len(traces)} traces){partial}")


def _cell(grid: pl.DataFrame, p: Published) -> float:
    """f at the cell the paper states for `p`."""
    s = p.settings()
    t_s = None if s["variant"] == "user" else float(s["t_s"])
    found = grid.filter(
        pl.col("variant") == s["variant"],
        pl.col("t_s").is_null() if t_s is None else pl.col("t_s") == t_s,
        pl.col("t_r") == float(s["t_r"]),
    )
    return float(found["locality"][0])


# -- the workload HMM ----------------------------------------------------------------------------------------

#: Table 3.1's rounds bound: the thesis runs Baum-Welch until no parameter moves by 1e-5 (L-infinity).
HMM_ROUNDS = 10_000


def _hmm(lake: Lake, rows: list[Published], request: Request) -> list[dict[str, object]]:
    """Table 3.1: the model fitted to the whole log with the caption's settings, its Viterbi path cut
    into stays, and each state's stays against their geometric law (`models.hmm.stay_divergences`).
    States are numbered as the static initial values number them: state i starts on the i-th band of
    run-time bins, shortest first (the thesis' Algorithm 3)."""
    from lakehouse.models.hmm import Init, Stop, whole_trace
    from lakehouse.models.hmm import Settings as HmmSettings

    out: list[dict[str, object]] = []
    for log, mine in _by_log(rows, lake.log_names()):
        if log is None:
            out += [_row(p, None, None, _lacking(p)) for p in mine]
            continue
        s = mine[0].settings()  # (one model per log: the caption's settings are every row's)
        settings = HmmSettings(
            states=int(s["states"]),
            submit_bin=float(s["t_s"]),
            runtime_ratio=float(s["t_r"]),
            init=Init.static,
            band=float(s["band"]),
            stop=Stop(s["stop"]),
            epsilon=float(s["epsilon"]),
            per_job=False,
            rounds=HMM_ROUNDS,
        )
        jobs = log_jobs(lake, log).jobs
        model = whole_trace(jobs["submit_time"].to_numpy(), jobs["run_time"].to_numpy(), settings)
        divergences = {row["state"]: row for row in model.divergences().iter_rows(named=True)}
        rounds = f"{model.fit.rounds} Baum-Welch rounds" + ("" if model.fit.converged else ", not converged")
        for p in mine:
            state = divergences[int(p.settings()["state"])]
            value = state[f"kl_{p.settings()['estimator']}"]
            note = f"{MEASURED} ({rounds}; {state['stays']} stays)" if value is not None else "the state has no stay"
            out.append(_row(p, log, value, note))
    return out


# -- CPU volatility ----------------------------------------------------------------------------------------


#: The tasks section 3.4 studies: high-SLO (scheduling class 2-3) tasks of month-long-running jobs, the
#: column of `report volatility`'s summary that holds them; its `all` column is the variant over every
#: task of the measured jobs.
VOLATILITY_SUBSET = "high_slo_long_running"


def _volatility(lake: Lake, rows: list[Published], request: Request) -> list[dict[str, object]]:
    """Section 3.4 publishes one number, the per-job sampling it states for every job; the numbers of its
    text are placeholders and its results figures.  Ours, on the section's tasks (VOLATILITY_SUBSET):
    `report volatility`'s summary over them, and the sampling of the jobs they belong to
    (google.job_sampling)."""
    from lakehouse.reports import VOLATILITY

    try:
        summary = VOLATILITY.run(lake, None).summary
    except TooLittleDataError as exc:
        return [
            _row(p, None, None, f"needs the Google trace with usage (lakehouse ingest google DIR): {exc}") for p in rows
        ]
    values = dict(zip(summary["metric"], summary[VOLATILITY_SUBSET], strict=True))
    jobs = lake.query(
        "SELECT 100 * avg(consistent::INT) FILTER (tasks_used > 0) AS consistent_jobs, "
        "count(*) FILTER (measured) AS measured_jobs FROM google.job_sampling "
        "WHERE job_id IN (SELECT job_id FROM google.tasks WHERE high_slo AND long_running)"
    ).row(0, named=True)
    values |= jobs
    out = []
    for p in rows:
        s = p.settings()
        value = values.get(s["metric"])
        note = MEASURED if p.value is not None else "the paper leaves this number blank"
        other = values.get(s.get("above", ""))  # a finding without a number: this quantity above that one
        if value is not None and other is not None:
            holds = "holds" if value > other else "does not hold"
            note += f"; its finding ({s['metric']} above {s['above']}) {holds} here"
        if value is None:  # (a CV needs two windows of a task; a median, one task)
            note = (
                "not defined on this lake's tasks: it holds no high-SLO task running through the whole trace "
                "(their task_events, from the trace's first part, and their usage)"
                if not values.get("tasks")
                else "not defined on this lake's tasks"
            )
        out.append(_row(p, None, None if value is None else float(value), note))
    return out


# -- EASY with the workload HMM ---------------------------------------------------------------------------


def _hmm_backfilling(lake: Lake, rows: list[Published], request: Request) -> list[dict[str, object]]:
    """Tables 5.1 and 5.2 from the study's campaign; for a log the study replays on a machine chosen
    because it gives the published figures (MACHINE_SIZES: CTC-SP2 on 512 processors, where its header
    says 338), the row says so, and the same rows follow under the header's machine."""
    known = lake.log_names()
    logs = {p.log: _lake_log(p.log, known) for p in rows if p.log}
    present = [log for log in dict.fromkeys(logs.values()) if log is not None]
    chosen = [log for log in present if any(log.startswith(prefix) for prefix, _ in MACHINE_SIZES)]
    values: dict[tuple[str, str], float] = {}  # (log prefix, quantity) -> ours, on the study's machines
    header: dict[tuple[str, str], float] = {}  # the same, on the header's machine, for the logs in `chosen`
    if present:
        grid = study_grid(CAMPAIGN, present, VIEW, AS_PUBLISHED, [CONFIDENCE])
        _run(lake, grid, request)
        values = _hmm_backfilling_values(lake, grid, logs, known)
        if chosen:
            # (Sizes given, not left to the view: the campaign also holds these logs' runs on the study's.)
            stated_sizes = [(log, log_machine_size(lake, log, View(VIEW))) for log in chosen]
            on_header = study_grid(CAMPAIGN, chosen, VIEW, AS_PUBLISHED, [CONFIDENCE], machine_sizes=stated_sizes)
            _run(lake, on_header, request)
            header = _hmm_backfilling_values(
                lake, on_header, {p: log for p, log in logs.items() if log in chosen}, known
            )
    out = []
    for p in rows:
        if p.log:
            ours, log = values.get((p.log, p.quantity)), logs[p.log]
            why = _lacking(p) if log is None else "undefined: EASY never waits on this log"
            size = dict(MACHINE_SIZES).get(p.log)
            if size is None or log not in chosen:
                out.append(_row(p, log, ours, MEASURED if ours is not None else why))
                continue
            stated = log_machine_size(lake, log, View(VIEW))
            gives = header.get((p.log, "mean wait EASY"))
            chosen_text = (
                f"{size} processors: the whole machine, chosen because it gives the published EASY waits "
                f"(the header's {stated}" + (f" gives {gives:.0f} min" if gives is not None else "") + ")"
            )
            out.append(_row(replace(p, setting=_joined(chosen_text, p.setting)), log, ours, MEASURED))
            mine = header.get((p.log, p.quantity))
            header_text = f"{stated} processors: the machine the log's header states"
            out.append(_row(replace(p, setting=_joined(header_text, p.setting)), log, mine, MEASURED))
        else:  # the total: the geometric mean of the per-log ratios, as the paper's totals are
            changes = [values.get((prefix, p.quantity)) for prefix in logs]
            if all(c is not None for c in changes):
                ratio = math.prod(1 + c / 100 for c in changes if c is not None) ** (1 / len(changes))
                out.append(_row(p, None, 100 * (ratio - 1), MEASURED))
            else:
                out.append(_row(p, None, None, _lacking(p)))
    return out


def _joined(first: str, setting: str) -> str:
    return f"{first}; {setting}" if setting else first


def _hmm_backfilling_values(
    lake: Lake, grid: Grid, logs: dict[str, str | None], known: Sequence[str]
) -> dict[tuple[str, str], float]:
    """(log prefix, quantity) -> ours, from the campaign's runs on the grid's machines."""
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


# -- E-Loss heuristic triples -------------------------------------------------------------------------------

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
    known = lake.log_names()
    logs = {p.log: _lake_log(p.log, known) for p in rows if p.log}
    present = [log for log in dict.fromkeys(logs.values()) if log is not None]
    per_log = pl.DataFrame({"log": []}, schema={"log": pl.String})
    loo = pl.DataFrame({"held_out": []}, schema={"held_out": pl.String})
    runs = pl.DataFrame()
    correlations = pl.DataFrame({"pearson": []}, schema={"pearson": pl.Float64})
    if present:
        grid = Grid(
            name=request.campaign or TRIPLES_CAMPAIGN,
            logs=tuple(present),
            view=TRIPLES_VIEW,
            machine_sizes=tuple(
                (prefix, size)
                for prefix, size in TRIPLES_MACHINE_SIZES
                if any(log.startswith(prefix) for log in present)
            ),
            explicit=tuple(triple_settings("pyss")),
        )
        _run(lake, grid, request)
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
                out.append(_row(p, None, None, "needs two of the study's logs"))
                continue
            value = getattr(correlations["pearson"], statistic)()
            couples = f"on the {correlations.height} couples of the {len(present)} of its {len(logs)} logs in the lake"
            out.append(_row(p, None, float(value), f"{MEASURED} {couples}"))
            continue
        log = logs[p.log]
        if log is None:
            out.append(_row(p, None, None, _lacking(p)))
        elif "metric" in p.settings():  # Table 2.8: one triple's prediction errors on the log
            s = p.settings()
            run = latest(runs).filter(
                pl.col("log") == log,
                pl.col("predictor") == s["predictor"],
                pl.col("correction") == s["correction"],
                pl.col("backfill") == s["backfill"],
            )
            value = run[s["metric"]][0] if run.height else None
            out.append(_row(p, log, value, MEASURED if value is not None else "the triple did not run"))
        elif p.quantity in PER_LOG_COLUMNS:
            out.append(_row(p, log, per_log.filter(pl.col("log") == log)[PER_LOG_COLUMNS[p.quantity]][0], MEASURED))
        elif p.quantity == EASY_PLUS_PLUS_REDUCTION:  # Table 2.7's EASY++ column: its AVEbsld against EASY's
            mine = per_log.filter(pl.col("log") == log).row(0, named=True)
            out.append(_row(p, log, 100 * (1 - mine["easy_plus_plus"] / mine["easy"]), MEASURED))
        else:
            held = loo.filter(pl.col("held_out") == log)
            value = held[LOO_COLUMNS[p.quantity]][0] if held.height else None
            out.append(_row(p, log, value, _loo_note(log, logs) if value is not None else
                            "leave-one-out needs two logs"))  # fmt: skip
    return out


def _loo_note(log: str, logs: dict[str, str | None]) -> str:
    """A Table 2.7 row's note: the logs ours selected the triple on (the study's others in the lake),
    and those of the paper's the lake lacks."""
    others = [short_log(name) for name in dict.fromkeys(logs.values()) if name is not None and name != log]
    lacking = [prefix for prefix, name in logs.items() if name is None]
    said = f"{MEASURED}: selected on the other {len(others)} logs in the lake ({', '.join(others)})"
    return f"{said}; the paper's also on {', '.join(lacking)}, which the lake lacks" if lacking else said


# -- packing periodic services ---------------------------------------------------------------------------

#: task_usage parts of the whole Google 2011-2 trace: the paper's Table 1 and Table 2 need all of them.
WHOLE_TRACE_PARTS = 500


def _synthetic(campaign: pl.DataFrame, s: dict[str, str]) -> float:
    """The campaign's figure for one sentence of the paper: the mean (over the families the sentence
    names) of the mean ratio, or the largest ratio of any instance."""
    rows = campaign.filter(pl.col("heuristic") == s["heuristic"], pl.col("order") == s["order"])
    if "tasks" in s:
        rows = rows.filter(pl.col("family").str.starts_with(f"{s['tasks']} tasks"))
    if "amplitude" in s:
        rows = rows.filter(pl.col("family").str.contains(f"{s['amplitude']} amplitude", literal=True))
    if s["statistic"] == "max":
        return float(rows["max_ratio"].max())  # type: ignore[arg-type]
    return float(rows["mean_ratio"].mean())  # type: ignore[arg-type]


def task_usage_parts(lake: Lake) -> int:
    """How many parts of the Google trace's task_usage the lake holds."""
    found = lake.query("SELECT count(*) AS n FROM meta.manifest WHERE dataset = 'google.task_usage'")
    return int(found["n"][0])


def _whole_trace(lake: Lake, rows: list[Published]) -> dict[tuple[str, str], float]:
    """Table 1 (`report periodicity`'s summary) and Table 2 (`lakehouse pack` on its fits), run as those
    commands run, on a lake holding the whole trace: (quantity, setting) -> ours."""
    from lakehouse.models.job_sinusoids import summary
    from lakehouse.reports import PACK, PERIODICITY, PackRequest, PeriodicitySettings

    periodicity = PERIODICITY.run(lake, PeriodicitySettings())
    components = summary(periodicity.fits, false_positive=periodicity.false_positive)
    packed = PACK.run(lake, PackRequest())
    machines = dict(packed.table.select("heuristic", "machines").iter_rows())
    values = {}
    for p in rows:
        s = p.settings()
        if "component" in s:
            found = components.filter(pl.col("component") == s["component"])[s["statistic"]]
            values[(p.quantity, p.setting)] = found[0]
        elif s.get("heuristic") == "bound":
            values[(p.quantity, p.setting)] = float(packed.table["lower_bound"][0])
        elif "heuristic" in s:
            values[(p.quantity, p.setting)] = float(machines[s["heuristic"]])
    return values


def _packing(lake: Lake, rows: list[Published], request: Request) -> list[dict[str, object]]:
    """Section 6's synthetic campaign (`lakehouse pack --synthetic`), and, on a lake holding the whole
    Google trace, Table 1 and Table 2."""
    from lakehouse.models.packing_campaign import campaign

    synthetic = campaign()  # as `lakehouse pack --synthetic` runs it, with its instances per family
    trace = [p for p in rows if p.trace.startswith("Google")]
    parts = task_usage_parts(lake) if trace else 0
    whole = _whole_trace(lake, trace) if parts >= WHOLE_TRACE_PARTS else {}
    out = []
    for p in rows:
        if not p.trace.startswith("Google"):
            out.append(_row(p, None, _synthetic(synthetic, p.settings()), MEASURED))
        elif whole:
            value = whole.get((p.quantity, p.setting))
            out.append(_row(p, None, value, MEASURED if value is not None else "not computed"))
        else:
            why = (
                f"needs the whole Google trace: the lake holds {parts} of its {WHOLE_TRACE_PARTS} task_usage parts "
                "(lakehouse ingest google DIR)"
            )
            out.append(_row(p, None, None, why))
    return out


# -- online policy selection ------------------------------------------------------------------------------

#: The study's campaign, its resamples (the paper's 100; --quick: 10) and its cleaned jobs.
SELECTION_CAMPAIGN, SELECTION_RESAMPLES, SELECTION_QUICK_RESAMPLES = "reproduce-selection", 100, 10


def _selection(lake: Lake, rows: list[Published], request: Request) -> list[dict[str, object]]:
    """Table 1 (each log's machine, as the study's replays use it, and its jobs) and the abstract's two
    best-log figures, from `lakehouse report selection`'s campaign with the paper's ten policies, periods
    of a week and a day, on the study's logs in the lake and on its machines."""
    from lakehouse.base.catalog import named_query
    from lakehouse.studies.selection import selection_settings, selection_table, study_machine_sizes

    known = lake.log_names()
    logs = {p.log: _lake_log(p.log, known) for p in rows if p.log}
    present = [log for log in dict.fromkeys(logs.values()) if log is not None]
    table = pl.DataFrame()
    baseline = pl.DataFrame()
    if present:
        resamples = SELECTION_QUICK_RESAMPLES if request.quick else SELECTION_RESAMPLES
        grid = Grid(
            name=request.campaign or SELECTION_CAMPAIGN,
            logs=tuple(present),
            view=TRIPLES_VIEW,
            machine_sizes=study_machine_sizes(present, ()),
            explicit=tuple(selection_settings(resamples)),
        )
        _run(lake, grid, request)
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
                out.append(_row(p, log, None, _lacking(p)))
            else:
                column = "machine_size" if p.quantity == "MaxProcs" else "jobs"
                out.append(_row(p, log, float(found[column][0]), MEASURED))
        else:  # the best log: the lowest mean ratio of the selector (at either period) over the logs here
            selector = p.settings()["selector"]
            # The period follows the selector's name: `easy-egreedy-day-...`, not `easy-egreedy-started-...`.
            named = pl.col("strategy").str.contains(f"^easy-{selector}-(week|day|[0-9]+s)")
            mine = table.filter(named) if present else table
            missing = [prefix for prefix, log in logs.items() if log is None]
            if mine.is_empty():
                out.append(_row(p, None, None, _lacking(p)))
            else:
                note = MEASURED
                if missing:
                    note += f" on the {len(present)} of its {len(logs)} logs in the lake (not: {', '.join(missing)})"
                out.append(_row(p, None, float(mine["mean_ratio"].min()), note))  # type: ignore[arg-type]
    return out


def _run(lake: Lake, grid: Grid, request: Request) -> None:
    """A study's campaign: the runs it lacks (a second call only reads)."""
    executor = local_executor(request.workers or os.cpu_count() or 1, grid.name, grid.view, grid.tau)
    with lake.scratch_folder("reproduce") as scratch:
        outcome = run_campaign(lake, grid, executor, scratch=scratch)
    if outcome.failed:
        raise LakehouseError(f"{outcome.failed} replay(s) of the study failed (lakehouse campaign show {grid.name})")


STUDIES: dict[str, Callable[[Lake, list[Published], Request], list[dict[str, object]]]] = {
    "locality": _locality,
    "hmm": _hmm,
    "hmm-backfilling": _hmm_backfilling,
    "eloss-triples": _eloss_triples,
    "packing": _packing,
    "selection": _selection,
    "volatility": _volatility,
}


def reproduce(lake: Lake, request: Request) -> Reproduction:
    """Every published number of the study beside ours, each with its status (`judge`)."""
    if request.study not in STUDIES:
        raise LakehouseError(f"unknown study {request.study!r}; the studies are: {', '.join(STUDIES)}")
    rows = STUDIES[request.study](lake, published(request.study), request)
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
            row["study"],
            row["published"],
            row["ours"],
            digits.get((row["study"], row["source"], row["trace"], row["quantity"]), 0.0),
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
    return PAPERS[study]


def _store(lake: Lake, result: Reproduction) -> None:
    from lakehouse.base.results import store

    store(lake, "analysis_reproductions", result.table, REPRODUCTIONS_SCHEMA, name=result.study)


def _plot(lake: Lake, result: Reproduction, folder: Path) -> list[Path]:
    from lakehouse.models.reproduction_plots import plot_reproduction

    return plot_reproduction(result.table, result.study, folder)


#: `reproduce` as a report of the registry's kind (stored, shown and drawn as the others are): a client
#: of the registry, not one of its entries, since it runs the registry's reports itself.
REPRODUCE: Report[Request, Reproduction] = Report(
    "reproduce",
    "The published studies beside our runs (lakehouse reproduce)",
    ("analysis.reproductions",),
    reproduce,
    _store,
    lambda result: [(f"{result.study}: published and ours", result.table)],
    _plot,
)
