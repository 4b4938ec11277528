"""Campaigns: every log of a grid replayed under every combination of settings, stored in the lake.

A run is (the fingerprint of the jobs' columns it reads, the machine size, the settings) and gives
one row of `analysis.campaign_runs`.  Each campaign run also records its plan (`analysis.campaign_plans`):
the run each slot of the campaign (log, machine size, variant, tau) stands for now, so that what the
campaign shows (`analysis.campaign_results`) is what its current inputs give, never a row of an older
plan (another view, a prediction table imported since).  Finished runs are written as they come (one
Parquet file per flush, renamed into place whole), so an interrupted campaign keeps them and a re-run
skips every run key stored by this build of the engine (a run another build stored is replayed, and its
newer row is the one the view shows).
Each log's jobs are queried once, written once as Parquet for the workers (or put once in Ray's object
store) and loaded once per worker, never once per run.
"""

from __future__ import annotations

import hashlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from lakehouse import _native
from lakehouse.base.datasets import DATASETS, SCHEMA_FILE
from lakehouse.base.errors import LakeBusyError, LakehouseError, SettingsError, SimulationInputError
from lakehouse.base.job_views import View, log_jobs, log_machine_size, order_problem_columns
from lakehouse.base.lake import Lake
from lakehouse.base.log_names import is_glob, select_logs
from lakehouse.base.writer import pending_path, process_lock, replace_atomically
from lakehouse.campaigns.grid import Grid, GridError, RunSettings, run_key
from lakehouse.campaigns.resample import resample_weeks
from lakehouse.models.campaigns import (
    CAMPAIGN_METRICS,
    CAMPAIGN_PLANS,
    CAMPAIGN_PLANS_SCHEMA,
    CAMPAIGN_RUNS,
    CAMPAIGN_RUNS_SCHEMA,
    CAMPAIGN_RUNS_VERSION,
    DISTRIBUTION_METRICS,
)
from lakehouse.sim.engine import refuse_empty_order_columns, replay
from lakehouse.sim.metrics import prediction_errors
from lakehouse.sim.options import WEEK, Compat, check_order_columns, order_columns, parse_predictor
from lakehouse.sim.settings import TUNABLES
from lakehouse.sim.workload import input_columns

RUNS = DATASETS[CAMPAIGN_RUNS.key]
PLANS = DATASETS[CAMPAIGN_PLANS.key]
#: Per-job schedules of a campaign (`--jobs-out`): <lake>/analysis/campaign_jobs/<campaign>/<run_key>.parquet
JOBS_FOLDER = "analysis/campaign_jobs"
#: Finished runs are written at least this often (seconds), so a kill -9 loses little (Ctrl-C loses
#: nothing: the runner writes what it has before it stops).  $LAKEHOUSE_CAMPAIGN_FLUSH_SECONDS changes it.
FLUSH_SECONDS = float(os.environ.get("LAKEHOUSE_CAMPAIGN_FLUSH_SECONDS", "2"))


@dataclass(frozen=True)
class LogInput:
    """One log as the workers get it: its replayed columns, once."""

    log: str
    machine_size: int
    jobs: int
    path: Path  # Parquet of the columns the grid's settings read
    where: str | None = None  # the condition that selected them (`--where`), if any


@dataclass(frozen=True)
class Run:
    settings: RunSettings
    key: str
    #: SHA-256 of the jobs' columns this run reads (and no others: importing a prediction table again
    #: changes the runs that read it, not the rest of the campaign).
    fingerprint: str


@dataclass(frozen=True)
class Task:
    """A batch of runs of one log: the unit a worker (process or Ray task) receives."""

    log: LogInput
    runs: tuple[Run, ...]
    #: Send each run's per-job schedule back (else only its row: on CEA-Curie a schedule is ~30 MB
    #: through the pool's pipe, more than the replay itself costs).
    keep_schedules: bool = False


@dataclass
class Outcome:
    name: str
    planned: int = 0
    skipped: int = 0
    #: Runs stored by another build of the engine, replayed again (counted in `planned`).
    outdated: int = 0
    ok: int = 0
    failed: int = 0
    interrupted: bool = False
    seconds: float = 0.0
    #: What the plan left out and why (a log a glob matched that has no jobs in the view).
    warnings: list[str] = field(default_factory=list)


def frame_fingerprint(frame: pl.DataFrame) -> str:
    """SHA-256 of a frame's columns (names, types, values and nulls, in a fixed column order): the
    same jobs give the same fingerprint whatever produced them."""
    digest = hashlib.sha256()
    for name in sorted(frame.columns):
        column = frame[name]
        digest.update(f"{name}:{column.dtype}:{column.len()}:".encode())
        digest.update(column.is_null().to_numpy().tobytes())
        values = column.fill_null(0) if column.dtype.is_numeric() else column.fill_null("").cast(pl.String)
        if values.dtype.is_numeric():
            digest.update(np.ascontiguousarray(values.to_numpy()).tobytes())
        else:
            digest.update("\x1f".join(values.to_list()).encode())
    return digest.hexdigest()


def needed_columns(settings: Sequence[RunSettings]) -> list[str]:
    """Every column any of the settings' replays reads."""
    columns: list[str] = []
    for s in settings:
        column = parse_predictor(s.predictor)[1]
        formulas = order_columns(s.policy, *(s.policies if s.selector else ()))
        columns += input_columns(pyss=s.compat == Compat.pyss, prediction_column=column, formula_columns=formulas)
    return list(dict.fromkeys(columns))


def run_fingerprints(jobs: pl.DataFrame, settings: Sequence[RunSettings]) -> list[tuple[str, tuple[str, ...]]]:
    """Per settings, (the fingerprint of the columns its replay reads, those columns): a run's key holds
    only its own inputs.  RunSettings that read the same columns share one hash of them."""
    made: dict[tuple[str, ...], str] = {}
    chosen = []
    for s in settings:
        columns = tuple(sorted(needed_columns([s])))
        if columns not in made:
            made[columns] = frame_fingerprint(jobs.select(columns))
        chosen.append((made[columns], columns))
    return chosen


def replay_row(jobs: pl.DataFrame, log: LogInput, run: Run, campaign: str, view: str, tau: float) -> dict:
    """One run, as a row of analysis.campaign_runs; a run that fails is a row with its error."""
    s = run.settings
    row: dict[str, object] = {
        "campaign": campaign,
        "log": log.log,
        "view": view,
        "machine_size": log.machine_size,
        **{name: getattr(s, name) for name in TUNABLES},  # (a setting the run does not read: None)
        "tau": float(tau),
        "variant": s.label(),
        "run_key": run.key,
        "jobs_fingerprint": run.fingerprint,
        "engine_version": _native.ENGINE_BUILD,
        "schema_version": CAMPAIGN_RUNS_VERSION,
    }
    if s.selector is not None:
        row.update(selector=s.selector, policies=",".join(s.policies) or None, period=s.period)
        row.update(decay=s.decay, epsilon=s.epsilon, seed=s.seed)
    row["resample"] = s.resample
    row.update(where_condition=log.where, warmup=s.warmup, cooldown=s.cooldown)
    started = time.perf_counter()
    try:
        if s.resample is not None:
            jobs = resample_weeks(jobs, s.resample, s.seed)
        result = replay(jobs, s.replay_settings(log.machine_size, tau))
    except LakehouseError as exc:
        row.update(status="failed", error=str(exc), jobs=len(jobs))
        schedule = None
    else:
        row.update(status="ok", error=None, jobs=result.summary["jobs"])
        row.update({k: result.summary.get(k) for k in (*CAMPAIGN_METRICS, *DISTRIBUTION_METRICS)})
        row.update(prediction_errors(result.jobs))
        if s.selector is not None or s.resample is not None:
            row.update(weekly_waits(result.jobs))
        if result.periods is not None:
            row["period_policies"] = result.periods["policy"].to_list()
        schedule = result.jobs
    row["engine_seconds"] = time.perf_counter() - started
    row["finished_at"] = datetime.now(UTC)
    return {"row": row, "schedule": schedule}


def weekly_waits(schedule: pl.DataFrame) -> dict[str, list]:
    """Per week of submission from the first one: the jobs' total wait and their count (every week,
    empty ones included)."""
    week = ((pl.col("submit_time") - pl.col("submit_time").min()) // WEEK).alias("week")
    per_week = schedule.group_by(week).agg(pl.col("wait").sum().cast(pl.Float64), pl.len()).sort("week")
    weeks = int(per_week["week"].max()) + 1  # type: ignore[arg-type]
    wait, count = [0.0] * weeks, [0] * weeks
    for w, total, n in per_week.iter_rows():
        wait[w], count[w] = total, n
    return {"weekly_wait": wait, "weekly_jobs": count}


_LOADED: dict[str, pl.DataFrame] = {}


def load_jobs(log: LogInput) -> pl.DataFrame:
    """A worker's copy of a log's jobs, read from Parquet once per worker process."""
    key = str(log.path)
    if key not in _LOADED:
        _LOADED.clear()  # tasks come grouped by log: keep one log in memory, not all of them
        _LOADED[key] = pl.read_parquet(log.path)
    return _LOADED[key]


def run_task(task: Task, campaign: str, view: str, tau: float, jobs: pl.DataFrame | None = None) -> list[dict]:
    """The work of one task (a worker's entry point): its runs on its log's jobs."""
    frame = jobs if jobs is not None else load_jobs(task.log)
    results = [replay_row(frame, task.log, run, campaign, view, tau) for run in task.runs]
    if not task.keep_schedules:
        for result in results:
            result["schedule"] = None
    return results


# -- storage ---------------------------------------------------------------------------------------


def runs_folder(lake: Lake) -> Path:
    return RUNS.directory(lake.root)


def stored_runs(lake: Lake, campaign: str | None = None) -> pl.DataFrame:
    """Every stored run (of one campaign, or all) as the view `analysis.campaign_runs` shows them (the
    newest row of each run key), those of older plans included: what a re-run may skip."""
    if campaign is None:
        return lake.query("SELECT * FROM analysis.campaign_runs")
    return lake.query("SELECT * FROM analysis.campaign_runs WHERE campaign = $1", [campaign])


def current_results(lake: Lake, campaign: str | None = None) -> pl.DataFrame:
    """The campaign's (or every campaign's) current numbers, `analysis.campaign_results`: per slot, the
    row of the run its newest plan chose."""
    if campaign is None:
        return lake.query("SELECT * FROM analysis.campaign_results")
    return lake.query("SELECT * FROM analysis.campaign_results WHERE campaign = $1", [campaign])


def campaign_rows(lake: Lake, campaign: str) -> pl.DataFrame:
    """A stored campaign's current rows (`current_results`), or an error naming the campaigns there are."""
    if not lake.exists():
        raise LakehouseError(f"no lake at {lake.root}")
    rows = current_results(lake, campaign)
    if rows.is_empty() and (planned := planned_runs(lake, campaign).height):
        raise LakehouseError(
            f"campaign {campaign!r} has no stored run of its last plan yet ({planned} planned): run the same "
            "command again to finish it"
        )
    if rows.is_empty():
        known = stored_runs(lake)["campaign"].unique().sort().to_list()
        raise LakehouseError(f"no campaign named {campaign!r}; stored: {', '.join(known) or 'none yet'}")
    return rows


def planned_runs(lake: Lake, campaign: str) -> pl.DataFrame:
    """The campaign's current plan (`analysis.campaign_plans`): a row per slot, with the run it stands
    for and the inputs of that run (view, columns, fingerprint); empty for campaigns stored before
    plans were recorded."""
    return lake.query("SELECT * FROM analysis.campaign_plans WHERE campaign = $1", [campaign])


def not_run(lake: Lake, campaign: str) -> int:
    """Runs the campaign's current plan holds that are not stored (an interrupted campaign)."""
    return lake.rows(
        "SELECT count(*) FROM analysis.campaign_plans p ANTI JOIN analysis.campaign_runs r "
        "ON r.campaign = p.campaign AND r.run_key = p.run_key WHERE p.campaign = $1",
        [campaign],
    )[0][0]


def changed_inputs(lake: Lake, plan: pl.DataFrame) -> pl.DataFrame:
    """The plan's (log, view, columns) whose jobs no longer give the fingerprint its runs were keyed by
    (the log ingested again, its prediction table imported again): a row each, with the slots' count."""
    if plan.is_empty():
        return plan.select("log", "view", "jobs_fingerprint")
    changed = []
    groups = plan.group_by("log", "view", "jobs_fingerprint", maintain_order=True).agg(
        pl.col("columns").first(), pl.col("where_condition").first()
    )
    with lake.reading():
        known = set(lake.log_names())
        for log, view, fingerprint, columns, where in groups.iter_rows():
            try:  # a log no longer in the lake, a prediction table dropped: changed too
                jobs = log_jobs(lake, log, View(view), where, columns=list(columns)) if log in known else None
            except LakehouseError:
                jobs = None
            if jobs is None or frame_fingerprint(jobs.select(sorted(columns))) != fingerprint:
                changed.append((log, view, fingerprint))
    return pl.DataFrame(changed, schema=["log", "view", "jobs_fingerprint"], orient="row")


def write_rows(lake: Lake, campaign: str, rows: list[dict]) -> tuple[Path, str, int]:
    """A new results file of the campaign, written aside under this process's name (the next writer
    removes it if the process dies before `commit_rows` places it); returns (file, name, rows)."""
    name = f"{campaign}.{time.time_ns()}.{os.getpid()}"
    tmp = pending_path(RUNS.file(lake.root, name))
    empty = cast(pl.DataFrame, pl.from_arrow(CAMPAIGN_RUNS_SCHEMA.empty_table()))
    table = pl.DataFrame(rows, schema=empty.schema).to_arrow()
    pq.write_table(table.cast(CAMPAIGN_RUNS_SCHEMA), tmp, compression="zstd")
    return tmp, name, len(rows)


def store_rows(lake: Lake, campaign: str, rows: list[dict]) -> None:
    """Write and commit one results file of the campaign (rows made elsewhere: tests, imports)."""
    commit_rows(lake, [write_rows(lake, campaign, rows)], wait=True)


def store_plan(lake: Lake, campaign: str, rows: list[dict]) -> None:
    """Commit a campaign run's plan (`plan_rows`): from now on its slots show these runs' results."""
    if not rows:
        return
    name = f"{campaign}.{time.time_ns()}.{os.getpid()}"
    tmp = pending_path(PLANS.file(lake.root, name))
    pq.write_table(pa.Table.from_pylist(rows, schema=CAMPAIGN_PLANS_SCHEMA), tmp, compression="zstd")
    with lake.writer(wait=True) as writer:
        writer.place(PLANS.key, tmp, name, len(rows))


def commit_rows(lake: Lake, written: list[tuple[Path, str, int]], wait: bool) -> None:
    """Place the written results files under the lake's writer, which lists them for the view; when
    another writer (an ingest) holds the lake and not `wait`, they wait for the next flush."""
    if not written:
        return
    try:
        with lake.writer(wait=wait) as writer:
            while written:
                tmp, name, rows = written[0]
                try:
                    writer.place(RUNS.key, tmp, name, rows)
                finally:  # forgotten once placed: the session commits it even when a Ctrl-C ends the block
                    if not tmp.exists():
                        written.pop(0)
    except LakeBusyError:
        pass


def write_schedule(lake: Lake, campaign: str, key: str, schedule: pl.DataFrame) -> None:
    final = lake.root / JOBS_FOLDER / campaign / f"{key}.parquet"
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = pending_path(final)
    schedule.write_parquet(tmp)
    replace_atomically(tmp, final)


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold a Ctrl-C until the block is done, then raise it (a second Ctrl-C raises at once).  Only
    the main thread receives signals; elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def hold(signum: int, frame: object) -> None:
        if caught:
            raise KeyboardInterrupt
        caught.append(signum)

    previous = signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


@contextmanager
def campaign_lock(lake: Lake, campaign: str) -> Iterator[None]:
    """One runner per campaign at a time (two would replay the same runs twice)."""

    def busy(holder: str) -> LakehouseError:
        return LakehouseError(f"campaign {campaign!r} is already running in {lake.root} (pid {holder})")

    with process_lock(runs_folder(lake) / f".{campaign}.lock", busy):
        yield


def ensure_catalog(lake: Lake) -> None:
    """Lakes of the DuckDB catalog's format made before campaigns existed lack the view and its folder:
    add them once (a DuckLake lake's next writer brings its catalog up to date)."""
    if not lake.exists():
        raise LakehouseError(f"no lake at {lake.root} (run `lakehouse ingest swf LOGS...` first)")
    if lake.ducklake is None and not (runs_folder(lake) / SCHEMA_FILE).exists():
        lake.init()


# -- planning and running --------------------------------------------------------------------------


def plan(
    lake: Lake,
    grid: Grid,
    scratch: Path,
    keep_schedules: bool = False,
    any_engine: bool = False,
    warnings: list[str] | None = None,
    plan_rows: list[dict] | None = None,
) -> tuple[list[Task], int, int]:
    """Resolve the logs, write each one's jobs once, and cut the runs not yet stored into tasks.
    Returns the tasks (largest logs first), how many runs were skipped as stored, and how many of the
    tasks' runs are stored by another build of the engine (replayed again unless `any_engine`); every
    run, skipped or not, is a row of `plan_rows` (the campaign's plan, `store_plan`).
    A log without jobs in the view is refused when the grid names it, and left out (a line in
    `warnings`) when only a glob matched it."""
    settings = grid.settings()
    columns = needed_columns(settings)
    stored = stored_runs(lake, grid.name)
    current = stored if any_engine else stored.filter(pl.col("engine_version") == _native.ENGINE_BUILD)
    done = set(current["run_key"].to_list())
    outdated_keys = set(stored["run_key"].to_list()) - done
    tasks: list[Task] = []
    skipped = outdated = 0
    view = View(grid.view)
    with lake.reading():  # one connection for every query of the plan
        orders = [order for s in settings for order in (s.policy, *(s.policies if s.selector else ()))]
        if order_columns(*orders):  # a formula's name the view lacks: the caret, before any query
            try:
                check_order_columns(orders, *order_problem_columns(lake, view))
            except SettingsError as exc:
                raise GridError(str(exc), exit_code=exc.exit_code) from None
        known = lake.log_names()
        logs = select_logs(grid.logs, known)
        named = set(select_logs([p for p in grid.logs if not is_glob(p)], known))
        sizes = [grid.size_of(log, known) or log_machine_size(lake, log, view) for log in logs]
        selected = [
            (log, size, log_jobs(lake, log, view, grid.where, columns=columns))
            for log, size in zip(logs, sizes, strict=True)
        ]
    for log, size, jobs in selected:
        if jobs.is_empty() and log in named:
            raise GridError(f"{log} has no jobs in swf.{grid.view}")
        formula_columns = [(c, jobs[c].cast(pl.Float64).fill_null(np.nan).to_numpy()) for c in order_columns(*orders)]
        try:  # a formula whose column this log leaves empty: refused before any replay, as `simulate` does
            refuse_empty_order_columns(formula_columns, orders)
        except SimulationInputError as exc:
            raise GridError(f"{log}: {exc}", exit_code=exc.exit_code) from None
        if jobs.is_empty():
            if warnings is not None:
                warnings.append(f"{log} has no jobs in swf.{grid.view}: left out")
            continue
        path = scratch / f"{frame_fingerprint(jobs)}.parquet"
        jobs.write_parquet(path)
        log_input = LogInput(log, int(size), jobs.height, path, grid.where)
        inputs = run_fingerprints(jobs, settings)
        runs = [
            Run(s, run_key(fingerprint, int(size), s, grid.tau), fingerprint)
            for s, (fingerprint, _) in zip(settings, inputs, strict=True)
        ]
        if plan_rows is not None:
            planned_at = datetime.now(UTC)
            plan_rows += [
                {
                    "campaign": grid.name,
                    "log": log,
                    "view": grid.view,
                    "machine_size": int(size),
                    "tau": float(grid.tau),
                    "variant": run.settings.label(),
                    "run_key": run.key,
                    "jobs_fingerprint": run.fingerprint,
                    "columns": list(columns),
                    "planned_at": planned_at,
                    "where_condition": grid.where,
                }
                for run, (_, columns) in zip(runs, inputs, strict=True)
            ]
        todo = [r for r in runs if r.key not in done]
        skipped += len(runs) - len(todo)
        outdated += sum(r.key in outdated_keys for r in todo)
        # Conservative replays take longest: send them first so the last tasks are short ones.
        todo.sort(key=lambda r: r.settings.algorithm != "conservative")
        tasks += [Task(log_input, (r,), keep_schedules) for r in todo]
    tasks.sort(key=lambda t: -t.log.jobs)
    return tasks, skipped, outdated


#: An executor takes the tasks and calls back with each finished task's results, in any order.
Executor = Callable[[list[Task], Callable[[list[dict]], None]], None]


def run_campaign(
    lake: Lake,
    grid: Grid,
    executor: Executor,
    *,
    scratch: Path,
    keep_schedules: bool = False,
    any_engine: bool = False,
    on_plan: Callable[[Outcome], None] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> Outcome:
    """Run every stored-not-yet run of the grid with `executor`, writing results as they finish.

    `on_plan(outcome)` is told the plan (planned, skipped, outdated), `on_progress(ok, failed)` after
    each finished task.  Runs stored by another build of the engine are replayed again, unless
    `any_engine` (then any stored run counts as done).
    KeyboardInterrupt is re-raised after the finished runs are written (the Outcome is on the
    exception as `.outcome`).
    """
    ensure_catalog(lake)
    outcome = Outcome(grid.name)
    started = time.perf_counter()
    with campaign_lock(lake, grid.name):
        plan_rows: list[dict] = []
        tasks, outcome.skipped, outcome.outdated = plan(
            lake, grid, scratch, keep_schedules, any_engine, outcome.warnings, plan_rows
        )
        if not tasks and not outcome.skipped:
            raise GridError(f"none of the logs has jobs in swf.{grid.view}")
        outcome.planned = sum(len(t.runs) for t in tasks)
        if on_plan:  # (it may refuse the campaign, a budget: then the stored plan stays the older one)
            on_plan(outcome)
        # Before the first run: an interrupted campaign shows none of an older plan's rows in its slots.
        with interrupts_deferred():
            store_plan(lake, grid.name, plan_rows)
        pending: list[dict] = []
        written: list[tuple[Path, str, int]] = []  # files not yet placed (another writer held the lake)
        last_flush = time.monotonic()

        def flush(wait: bool = False) -> None:
            nonlocal last_flush
            # Written and forgotten as one step: a Ctrl-C between the two would write them twice.
            with interrupts_deferred():
                if pending:
                    written.append(write_rows(lake, grid.name, pending))
                    pending.clear()
                commit_rows(lake, written, wait)
            last_flush = time.monotonic()

        def finished(results: list[dict]) -> None:
            for result in results:
                row = result["row"]
                if keep_schedules and result["schedule"] is not None:
                    write_schedule(lake, grid.name, row["run_key"], result["schedule"])
                pending.append(row)
                if row["status"] == "ok":
                    outcome.ok += 1
                else:
                    outcome.failed += 1
            if time.monotonic() - last_flush >= FLUSH_SECONDS:
                flush()
            if on_progress:
                on_progress(outcome.ok, outcome.failed)

        try:
            if tasks:
                executor(tasks, finished)
        except KeyboardInterrupt as exc:
            outcome.interrupted = True
            flush()
            outcome.seconds = time.perf_counter() - started
            exc.outcome = outcome  # type: ignore[attr-defined]
            raise
        flush(wait=True)
    outcome.seconds = time.perf_counter() - started
    return outcome
