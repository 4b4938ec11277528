"""`lakehouse simulate`: replay one log with the backfilling simulator."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from lakehouse.base.comma_lists import split_list
from lakehouse.base.errors import SettingsError, SimulationInputError
from lakehouse.base.job_views import View
from lakehouse.base.lake import Lake
from lakehouse.base.render import OutputFormat, emit, labelled, stderr
from lakehouse.base.units import parse_duration
from lakehouse.cli.common import (
    JOBS_PANEL,
    METRICS_PANEL,
    CooldownOption,
    FormatOption,
    LakeOption,
    OutputOption,
    WarmupOption,
    WhereOption,
    clear_errors,
    writable_file,
)
from lakehouse.cli.replay_options import taking_tunables
from lakehouse.cli.root import app
from lakehouse.sim.options import SELECTOR_HELP, JobClass


def schedule_path(path: Path | None) -> Path | None:
    """--jobs-out: its folder exists and its extension names a format, found out before the replay."""
    if path is None:
        return None
    from lakehouse.sim.schedule_io import check_schedule_path

    try:
        return check_schedule_path(writable_file(path))  # type: ignore[arg-type]
    except SettingsError as exc:
        raise typer.BadParameter(str(exc)) from None


#: simulate's options in groups, as `--help` shows them.
JOBS, METRICS = JOBS_PANEL, METRICS_PANEL
SELECTION = "Policy selection (--selector)"


@app.command()
@clear_errors
@taking_tunables(after="drop_wider")  # --algorithm, --policy, ..., --usage-half-life: lakehouse.sim.settings
def simulate(
    log: Annotated[str, typer.Argument(help="A log name in the lake (see `lakehouse logs`).")],
    lake: LakeOption = None,
    view: Annotated[View, typer.Option(rich_help_panel=JOBS, help="Cleaned jobs to replay.")] = View.jobs_clean,
    where: WhereOption = None,
    machine_size: Annotated[
        int | None,
        typer.Option(rich_help_panel=JOBS, help="Processors [default: the size the view was filtered with]."),
    ] = None,
    drop_wider: Annotated[
        bool,
        typer.Option(
            "--drop-wider",
            rich_help_panel=JOBS,
            help="Leave out (and count) the jobs wider than --machine-size instead of refusing.",
        ),
    ] = False,
    tau: Annotated[float, typer.Option(rich_help_panel=METRICS, help="Bound of the bounded slowdown, seconds.")] = 10,
    warmup: WarmupOption = "0",
    cooldown: CooldownOption = "0",
    by: Annotated[
        JobClass | None,
        typer.Option(
            rich_help_panel=METRICS,
            help="Also break the metrics down by job class: size (1 processor, <= 10 %, <= 50 %, > 50 % of the "
            "machine), length (run < 1 min, < 1 h, < 10 h, >= 10 h) or user; a second table (csv, json and "
            "parquet print the breakdown alone).",
            show_default=False,
        ),
    ] = None,
    selector: Annotated[
        str | None,
        typer.Option(
            rich_help_panel=SELECTION,
            help=f"Change the queue policy of EASY every period: {SELECTOR_HELP}.",
            show_default=False,
        ),
    ] = None,
    policies: Annotated[
        str | None,
        typer.Option(
            rich_help_panel=SELECTION,
            help="The selector's candidates, comma-separated (ties go to the first) [default: all twelve].",
        ),
    ] = None,
    period: Annotated[
        str, typer.Option(rich_help_panel=SELECTION, help="Selection period: day, week or seconds.")
    ] = "week",
    decay: Annotated[
        float, typer.Option(rich_help_panel=SELECTION, help="Selection: weight of each older period, in [0, 1].")
    ] = 1.0,
    epsilon: Annotated[
        float, typer.Option(rich_help_panel=SELECTION, help="egreedy: probability of a random policy, in [0, 1].")
    ] = 0.3,
    seed: Annotated[
        int, typer.Option(rich_help_panel=SELECTION, help="Selection: seed of the noise (noisy) and draws (egreedy).")
    ] = 0,
    jobs_out: Annotated[
        Path | None,
        typer.Option(
            "--jobs-out",
            rich_help_panel=METRICS,
            help="Write the per-job schedule to this file: .parquet (what produced it in its metadata), .csv, "
            ".swf (a log `lakehouse ingest swf` reads back) or .batsim.csv (the jobs file Batsim writes and evalys "
            "reads, with each job's processors).",
            dir_okay=False,
            callback=schedule_path,
        ),
    ] = None,
    with_jobs: Annotated[
        bool,
        typer.Option(
            "--with-jobs",
            rich_help_panel=METRICS,
            help="With --format json: the row also holds the per-job schedule, as a list `schedule` of records.",
        ),
    ] = False,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
    **tuned: Any,
) -> None:
    """Replay a log with the backfilling simulator and print its metrics.

    EASY++ is `--predictor ave2 --backfill sjbf --correction incremental`; the published E-Loss run is
    `--predictor eloss --backfill sjbf`.  The published SC'15 runs are `--view jobs_strong --compat pyss`.

    With `--selector`, EASY changes its queue policy at every period boundary and a second table gives
    the share of periods each candidate ran (docs/selection.md).

    Durations (`--warmup`, `--cooldown`) are seconds or a number and a unit: `2d`, `12h`, `30min`.

    A formula can be given a name that labels it: `--policy 'cube=max:(w/r)^3*n'`. Written as CSV or
    JSON, every row also carries what produced it: the view, --where and the settings (each of the
    Scheduler and Predictions groups, the order a named policy stands for, tau, warmup, cooldown).

    With `--predictor hmm`, a workload HMM trained during the replay gives each job a run-time
    distribution, and EASY also backfills a job it would refuse if it delays the head of the queue with
    probability below `--backfill-confidence` (docs/hmm.md).

    Example: `lakehouse simulate KTH-SP2-1996-2.1-cln --backfill sjbf --jobs-out kth.parquet`

    Example: `lakehouse simulate KTH --warmup 7d --cooldown 7d --by size`

    Example: `lakehouse simulate KTH --where "submit_offset < 30*86400" --machine-size 64 --drop-wider`

    Example: `lakehouse simulate KTH-SP2-1996-2.1-cln --selector full --policies fcfs,spf,saf --period day`

    Example: `lakehouse simulate KTH --view jobs_strong --predictor hmm:states=8 --backfill-confidence 0.1`

    Example: `lakehouse simulate KTH --policy 'cube=max:(w/r)^3*n' --format json --with-jobs -o kth.json`
    """
    from lakehouse.sim.from_lake import simulate_log

    window = (parse_duration(warmup or "0"), parse_duration(cooldown or "0"))  # checked before anything is read
    if with_jobs and (fmt is not OutputFormat.json or by is not None):
        raise typer.BadParameter("goes with --format json (and no --by): a CSV or a table has no room for it",
                                 param_hint="--with-jobs")  # fmt: skip
    target = Lake(lake)
    started = time.perf_counter()
    with stderr.status(f"replaying {log}..."):
        try:
            result = simulate_log(
                target,
                log,
                view=view,
                where=where,
                machine_size=machine_size,
                **tuned,
                tau=tau,
                selector=selector,
                policies=None if policies is None else split_list(policies),
                period=period,
                decay=decay,
                epsilon=epsilon,
                seed=seed,
                drop_wider=drop_wider,
                warmup=window[0],
                cooldown=window[1],
            )
        except SimulationInputError as exc:
            if exc.kind == "wider_than_machine":
                raise SimulationInputError(f"{exc}; --drop-wider leaves them out", kind=exc.kind) from None
            raise
    log, size = str(result.log), result.settings.machine_size
    if jobs_out is not None:
        from lakehouse.sim.schedule_io import write_schedule

        write_schedule(result, jobs_out, log=log, view=str(view), where=where)
        stderr.print(f"schedule -> {jobs_out}")
    # What produced the numbers, on every row of a file: the log, the jobs' view and window, the settings.
    provenance = {"view": str(view), "where": where, **result.settings.columns()}
    if by is not None and fmt is not OutputFormat.table:
        import polars as pl

        breakdown = result.summary_by(by)
        settings = pl.DataFrame([provenance] * breakdown.height)
        emit(pl.concat([breakdown.select(pl.lit(log).alias("log"), pl.all()), settings], how="horizontal"), fmt, output)
    elif fmt is OutputFormat.table:
        emit(result.summary_frame(log=log, machine_size=size), fmt, output)
    else:
        import polars as pl

        row = result.summary_frame(log=log, machine_size=size).hstack(pl.DataFrame([provenance]))
        if with_jobs:  # the per-job schedule as a list of records in the one row
            row = row.hstack(result.jobs.select(pl.struct(pl.all()).implode().alias("schedule")))
        emit(row, fmt, output)
    if by is not None and fmt is OutputFormat.table and output is None:
        emit(result.summary_by(by), fmt, None, title=f"by {by}")
    if result.periods is not None and fmt is OutputFormat.table and output is None:
        emit(result.policy_shares(), fmt, None, title="periods per policy")
    elif result.periods is not None and output is not None:  # a second table: a second file beside
        emit(result.policy_shares(), fmt, output.with_name(f"{output.stem}-periods{output.suffix}"))
    elif result.periods is not None:
        stderr.print(
            "the periods per policy are a second table: give --output FILE (it goes to FILE-periods) or -f table"
        )
    for warning in result.warnings:
        stderr.print(labelled("warning:", "yellow", warning), highlight=False)
    stderr.print(f"{result.summary['jobs']:,} jobs replayed in {time.perf_counter() - started:.2f} s")
