"""`lakehouse report selection`: the online policy-selection study on week resamples of logs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lakehouse.base.errors import LakehouseError
from lakehouse.base.job_views import View
from lakehouse.base.lake import Lake
from lakehouse.base.render import OutputFormat, emit, stderr
from lakehouse.campaigns.executors import ExecutorKind
from lakehouse.cli.campaign import exit_on_failures, run_with_progress
from lakehouse.cli.common import FormatOption, LakeOption, OutputOption, announce_plots, workers_option, writable_folder


def _probability(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise LakehouseError(f"--epsilon: {text!r} is not a number in [0, 1]") from None


def report_selection(
    logs: Annotated[list[str], typer.Argument(help="Logs: names, unique prefixes or globs ('SDSC-*').")],
    lake: LakeOption = None,
    name: Annotated[str, typer.Option(help="The campaign that stores the runs (a re-run resumes it).")] = "selection",
    view: Annotated[View, typer.Option(help="Cleaned jobs to replay.")] = View.jobs_clean,
    machine_size: Annotated[
        list[str] | None,
        typer.Option(
            help="Processors for every log, or LOG=N (repeat) [default: the study's machines: CEA-Curie on 80,640, "
            "the others as each log's view]."
        ),
    ] = None,
    resamples: Annotated[int, typer.Option(min=1, max=1_000, help="Week resamples per log.")] = 100,
    seed: Annotated[int, typer.Option(help="Seed of the resamples (and of the selectors' draws).")] = 0,
    policies: Annotated[
        str | None,
        typer.Option(
            help="Candidate policies, comma-separated, or all (the twelve); fcfs must be one [default: the "
            "paper's ten, fcfs to srf]."
        ),
    ] = None,
    periods: Annotated[str, typer.Option(help="Selection periods, comma-separated: day, week, seconds.")] = "week,day",
    selectors: Annotated[
        str,
        typer.Option(
            help="Selectors, comma-separated: full, noisy, egreedy, egreedy-started (a bandit charging the jobs "
            "started in each period, as the authors' simulator does) or none (the fixed policies alone)."
        ),
    ] = "full,noisy,egreedy",
    epsilon: Annotated[
        str, typer.Option(help="The bandits: probabilities of a random policy, comma-separated, each in [0, 1].")
    ] = "0.3",
    threshold: Annotated[
        str,
        typer.Option(
            help="Seconds of wait after which a job goes first whatever the policy (the paper's Theta), or none."
        ),
    ] = "none",
    executor: Annotated[ExecutorKind, typer.Option(help="local (a process pool) or ray.")] = ExecutorKind.local,
    workers: Annotated[int | None, workers_option("Processes (local) or Ray CPUs.")] = None,
    ray_address: Annotated[str | None, typer.Option(help="With --executor ray: auto or HOST:PORT.")] = None,
    plots: Annotated[
        Path | None,
        typer.Option(
            help="Write the improvement-over-time and policy-share figures to this folder.",
            file_okay=False,
            callback=writable_folder,
        ),
    ] = None,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Online policy selection for EASY, evaluated on week resamples: for each log and resample, every
    candidate as a fixed queue policy and each selector (full, noisy and egreedy at epsilon 0.3 unless
    --selectors says otherwise) at each period, over the published study's ten candidates unless
    --policies says otherwise, as a campaign (stored as it runs; Ctrl-C keeps the finished runs and the
    same command resumes).

    Prints per log and strategy the ratio of its average wait to EASY-FCFS's on the same resample
    (mean, 10th and 90th percentiles over the resamples), stored as analysis.selection_runs, and the
    same ratio week by week as analysis.selection_curves (docs/selection.md).

    Example: `lakehouse report selection KTH CTC --view jobs_strong --resamples 20 --plots figures`
    """
    from lakehouse.base.comma_lists import split_list
    from lakehouse.base.job_views import View, log_jobs
    from lakehouse.base.log_names import select_logs
    from lakehouse.base.machine import parse_machine_sizes
    from lakehouse.campaigns.grid import Grid, parse_threshold
    from lakehouse.campaigns.resample import week_count
    from lakehouse.reports import SELECTION
    from lakehouse.sim.options import Policy, QueueOrder, Selector, choose, parse_period, parse_policy
    from lakehouse.studies.selection import PAPER_POLICIES, selection_settings, study_machine_sizes

    try:
        candidates: list[QueueOrder]
        if policies is None:
            candidates = [Policy(p) for p in PAPER_POLICIES]
        elif policies.strip() == "all":
            candidates = list(Policy)
        else:
            candidates = [parse_policy(p) for p in split_list(policies)]
        chosen_periods = [parse_period(p) for p in split_list(periods)]
        epsilons = [_probability(e) for e in split_list(epsilon)]
        chosen_selectors = [] if selectors.strip() == "none" else [choose(Selector, s) for s in split_list(selectors)]
        theta = parse_threshold(threshold)
    except ValueError as exc:
        raise LakehouseError(str(exc)) from None
    if not chosen_periods:
        raise LakehouseError("--periods needs at least one period")
    settings = selection_settings(
        resamples, seed, [str(p) for p in candidates], chosen_periods, epsilons, theta, chosen_selectors
    )
    every, per_log = parse_machine_sizes(machine_size or [])
    target = Lake(lake)
    if not target.exists():
        raise LakehouseError(f"no lake at {target.root} (run `lakehouse ingest swf LOGS...` first)")
    with target.reading():
        known = target.log_names()
        chosen = select_logs(logs, known)
        if every is None:  # the study's machines (CEA-Curie's 80,640) unless told otherwise
            per_log = study_machine_sizes(chosen, per_log)
        for log in chosen:
            weeks = week_count(log_jobs(target, log, View(view), columns=["submit_time"]))
            if weeks < 2:
                raise LakehouseError(f"{log}: resampling needs jobs in at least 2 weeks of swf.{view}, it has {weeks}")
    grid = Grid(
        name=name, logs=tuple(logs), view=str(view), machine_size=every, machine_sizes=per_log, explicit=tuple(settings)
    )
    outcome = run_with_progress(target, grid, executor, workers, ray_address)
    result = SELECTION.run(target, name)
    emit(result.table, fmt, output, title=f"policy selection ({name}): average wait / EASY-FCFS's, over resamples")
    stderr.print(SELECTION.stored)
    if plots is not None:
        announce_plots(SELECTION.plots(target, result, plots))
    exit_on_failures(outcome)
