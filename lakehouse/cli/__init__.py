"""The `lakehouse` command line: data to stdout, progress and messages to stderr."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated

import polars as pl
import typer

from lakehouse.cli.campaign import campaign_app
from lakehouse.cli.common import (
    FormatOption,
    LakeOption,
    OutputOption,
    announce_plots,
    byte_progress,
    clear_errors,
    in_existing_folder,
)
from lakehouse.cli.selection import report_selection
from lakehouse.errors import LakehouseError
from lakehouse.lake import Lake
from lakehouse.render import OutputFormat, emit, stderr
from lakehouse.sim.options import PREDICTOR_HELP, SELECTOR_HELP

app = typer.Typer(
    name="lakehouse",
    help="Job logs and cluster traces as a queryable DuckDB/Parquet lake, for scheduling research.\n\n"
    "Start with `lakehouse demo`, then `lakehouse ingest swf LOGS...` and "
    "`duckdb -readonly lake/lake.duckdb`.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)
ingest_app = typer.Typer(help="Ingest raw files into the lake (incremental: unchanged files are skipped).")
catalog_app = typer.Typer(help="Maintain the DuckDB catalog (lake.duckdb).")
generate_app = typer.Typer(help="Write synthetic data in the published formats, with its planted truth.")
report_app = typer.Typer(help="Run a model over the lake, store its result as analysis.* and print a summary.")
app.add_typer(report_app, name="report")
app.add_typer(ingest_app, name="ingest")
app.add_typer(generate_app, name="generate")
app.add_typer(catalog_app, name="catalog")
app.add_typer(campaign_app, name="campaign")


@app.command()
@clear_errors
def init(lake: LakeOption = None) -> None:
    """Create an empty lake (folders, schema files, catalog). Safe to run again.

    Example: `lakehouse init --lake ~/lakes/pwa`
    """
    target = Lake(lake).init()
    stderr.print(f"lake ready at {target.root}")


@ingest_app.command("swf")
@clear_errors
def ingest_swf_command(
    paths: Annotated[list[str], typer.Argument(help="SWF files (.swf, .swf.gz), folders or glob patterns.")],
    lake: LakeOption = None,
    name: Annotated[
        str | None, typer.Option(help="Log name for a single file [default: file name without .swf/.swf.gz].")
    ] = None,
    machine_size: Annotated[
        int | None,
        typer.Option(help="Processors of the machine, for logs whose header lacks MaxProcs (or to override it)."),
    ] = None,
    force: Annotated[bool, typer.Option(help="Re-ingest even unchanged files.")] = False,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Ingest SWF job logs; bad lines go to swf.quarantine, broken files are reported and skipped.

    Example: `lakehouse ingest swf ../logs/*.swf.gz` or `lakehouse ingest swf RICC.swf.gz --machine-size 8192`
    """
    from lakehouse.ingest.swf import discover, ingest_swf

    target = Lake(lake)
    total = sum(p.stat().st_size for p in discover(paths))
    started = time.perf_counter()
    with byte_progress("ingest swf", total, lambda r: r.log) as advance:
        results = ingest_swf(target, paths, name=name, machine_size=machine_size, force=force, on_file=advance)
    elapsed = time.perf_counter() - started
    frame = pl.DataFrame(
        {
            "log": [r.log for r in results],
            "status": [r.status for r in results],
            "job_lines": [r.job_lines for r in results],
            "jobs": [r.jobs for r in results],
            "quarantined": [r.quarantined for r in results],
            "note": [r.error or "; ".join(r.warnings) for r in results],
        }
    )
    emit(frame, fmt, output)
    failed = [r for r in results if r.status == "failed"]
    jobs = sum(r.jobs for r in results)
    quarantined = sum(r.quarantined for r in results)
    stderr.print(
        f"{len(results)} files: {jobs:,} jobs ingested, {quarantined:,} lines quarantined, "
        f"{sum(r.status == 'unchanged' for r in results)} unchanged, {len(failed)} failed "
        f"in {elapsed:.1f} s -> {target.root}"
    )
    exit_if_failed(failed)


def exit_if_failed(failed: list) -> None:
    """Name every file that failed, then exit with status 2 (the others are in the lake)."""
    for r in failed:
        stderr.print(f"[bold red]error:[/] {r.error}", highlight=False)
    if failed:
        raise typer.Exit(2)


@ingest_app.command("google")
@clear_errors
def ingest_google_command(
    folder: Annotated[Path, typer.Argument(help="A trace folder: job_events/, task_events/, task_usage/, ...")],
    lake: LakeOption = None,
    force: Annotated[bool, typer.Option(help="Re-ingest even unchanged parts.")] = False,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Ingest the Google cluster trace (clusterdata-2011-2): one Parquet file per gzipped CSV part.

    Bad lines go to google.quarantine with their part and line number; a broken part is reported and
    the rest is ingested; unchanged parts are skipped, so an interrupted ingest resumes where it stopped.
    Prints one row per table (and per failed part).

    Example: `lakehouse ingest google ~/traces/clusterdata-2011-2`
    """
    from lakehouse.ingest.google import discover_trace, ingest_google

    target = Lake(lake)
    parts, _, _ = discover_trace(folder)
    total = sum(p.path.stat().st_size for p in parts)
    started = time.perf_counter()
    with byte_progress("ingest google", total, lambda r: f"{r.table}/{r.part}") as advance:
        results, warnings = ingest_google(target, folder, force=force, on_part=advance)
    elapsed = time.perf_counter() - started
    parts_frame = pl.DataFrame(
        {
            "table": [r.table for r in results],
            "status": [r.status for r in results],
            "rows": [r.rows for r in results],
            "quarantined": [r.quarantined for r in results],
            "note": [r.error or "; ".join(r.warnings) for r in results],
        },
        schema={"table": pl.String, "status": pl.String, "rows": pl.Int64, "quarantined": pl.Int64, "note": pl.String},
    )
    summary = parts_frame.group_by("table", maintain_order=True).agg(
        parts=pl.len(),
        ok=(pl.col("status") == "ok").sum(),
        unchanged=(pl.col("status") == "unchanged").sum(),
        failed=(pl.col("status") == "failed").sum(),
        rows=pl.col("rows").sum(),
        quarantined=pl.col("quarantined").sum(),
    )
    emit(summary, fmt, output)
    failed = [r for r in results if r.status == "failed"]
    rows = sum(r.rows for r in results)
    stderr.print(
        f"{len(results)} parts: {rows:,} rows ingested, {sum(r.quarantined for r in results):,} lines quarantined, "
        f"{len(failed)} failed in {elapsed:.1f} s ({total / 1e6 / max(elapsed, 1e-9):,.1f} MB/s gzip) -> {target.root}"
    )
    for warning in warnings + [f"{r.table}/{r.part}: {w}" for r in results for w in r.warnings]:
        stderr.print(f"[yellow]warning:[/] {warning}", highlight=False)
    exit_if_failed(failed)


@generate_app.command("google")
@clear_errors
def generate_google(
    out: Annotated[Path, typer.Argument(help="Output folder: the trace goes to OUT/trace, the truth to OUT/truth.")],
    machines: Annotated[int, typer.Option(help="Machines of the cell.")] = 20,
    days: Annotated[float, typer.Option(help="Length of the trace window.")] = 2.0,
    seed: Annotated[int, typer.Option(help="Random seed (same seed, same trace).")] = 0,
    services: Annotated[int, typer.Option(help="Long-running jobs with daily and weekly demand cycles.")] = 6,
    batch_jobs_per_hour: Annotated[float, typer.Option(help="Arrival rate of batch jobs.")] = 20.0,
    parts: Annotated[int, typer.Option(help="Parts per table (machine_events: one).")] = 4,
) -> None:
    """Generate a Google trace (clusterdata-2011-2 format) with planted ground truth.

    The truth (jobs with 1-second sampling switched off, each service's level, daily and weekly
    amplitudes and phases, noise) is written beside the trace, for tests and benchmarks.

    Example: `lakehouse generate google gen --days 7 && lakehouse ingest google gen/trace`
    """
    from lakehouse.synth.google_trace import Settings, generate

    if machines <= 0 or days <= 0 or parts <= 0:
        raise LakehouseError("--machines, --days and --parts must be positive")
    settings = Settings(
        machines=machines, days=days, seed=seed, services=services, batch_jobs_per_hour=batch_jobs_per_hour, parts=parts
    )
    with stderr.status("generating..."):
        summary = generate(out, settings)
    stderr.print(
        f"{summary['jobs']:,} jobs, {summary['tasks']:,} tasks, {summary['usage_rows']:,} usage rows -> {out}/trace "
        f"(truth in {out}/truth)"
    )


PlotsOption = Annotated[
    Path | None, typer.Option("--plots", help="Also write the report's PNG figures into this folder.", file_okay=False)
]


@report_app.command("periodicity")
@clear_errors
def report_periodicity(
    lake: LakeOption = None,
    plots: PlotsOption = None,
    noise_trials: Annotated[
        int, typer.Option(help="Pure-noise series fitted to measure the test's false-positive rate (0: skip).")
    ] = 200,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Fit hourly, daily and weekly cycles to every long-running job of the Google lake.

    Each job's CPU demand per task at 5-minute resolution (google.job_demand_5min, observed windows
    only) is fitted by least squares with a level, a linear trend and a sine/cosine pair per period;
    a component is significant when the Wald test (HAC covariance) rejects at 1 %.  Stores one row per
    job in analysis.job_sinusoids (level c, daily amplitude rho and phase phi per task: the input of
    `lakehouse pack`) and prints, per component: the distribution of amplitude ratios over jobs, the
    share of jobs where it is significant, the test's false-positive rate measured on pure-noise series
    with the jobs' own gaps, and how spread the peaks of the significant jobs are (mean resultant
    length; circular standard deviation in hours).

    `--plots DIR` writes boxplots of the ratios, a polar plot of the daily peaks and three jobs' demand
    overlaid with their fits.

    Example: `lakehouse report periodicity --plots figures/`
    """
    from lakehouse.models.job_sinusoids import periodicity, summary

    with stderr.status(f"fitting long-running jobs, then {noise_trials} pure-noise series..."):
        result = periodicity(Lake(lake), noise_trials)
    fits, series, rates = result.fits, result.series, result.false_positive
    emit(summary(fits, false_positive=rates), fmt, output)
    stderr.print(f"{fits.height:,} long-running jobs fitted -> analysis.job_sinusoids")
    if fits.is_empty():
        stderr.print(
            "[yellow]no long-running job (google.tasks_long_running) has a day of usage windows: nothing to fit "
            "(a slice of the trace shorter than a day, or task_events not ingested)[/]"
        )
    elif plots is not None:
        from lakehouse.models.periodicity_plots import plot_periodicity

        announce_plots(plot_periodicity(fits, series, plots))


@report_app.command("volatility")
@clear_errors
def report_volatility(
    lake: LakeOption = None,
    plots: PlotsOption = None,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """How far 1-second CPU samples (mu1s) stray from the 5-minute means (mu5m) of the Google trace.

    Only tasks of mu1s-measured jobs count (google.job_sampling: jobs whose samples were never recorded
    are left out), in three columns: all of them, the high-SLO ones (scheduling class 2-3) and the
    long-running ones.  Rows: tasks with all-zero and with exactly 1-4 non-zero samples, median samples
    per task, median coefficients of variation (sd / mean, and the robust MAD / median) of mu1s and
    mu5m, the median of the per-task mean |d| with d = (mu5m - mu1s) / mu5m, then over all windows the
    share with mu1s = 0, mean d, mean |d| and quantiles of d.  Stores analysis.task_volatility,
    analysis.volatility_summary and analysis.volatility_histogram.

    `--plots DIR` writes ECDFs of both CVs, a histogram of per-task mean |d|, the ECDF of d, a
    log-count heatmap of mu5m/request vs mu1s/request and a scatter of per-task mean mu5m vs mu1s.

    Example: `lakehouse report volatility --plots figures/ --format csv`
    """
    from lakehouse.models.volatility import write_volatility

    target = Lake(lake)
    with target.writer(), stderr.status("measuring volatility over the usage windows..."):
        result = write_volatility(target)
    if result.tasks.is_empty():
        raise LakehouseError("no usage windows of mu1s-measured jobs in the lake (ingest task_usage first)")
    emit(result.summary, fmt, output)
    stderr.print(f"{result.tasks.height:,} tasks of measured jobs -> analysis.task_volatility")
    if plots is not None:
        from lakehouse.models.volatility_plots import plot_volatility

        announce_plots(plot_volatility(result, plots))


report_app.command("selection")(clear_errors(report_selection))


@report_app.command("triples")
@clear_errors
def report_triples(
    campaign: Annotated[
        str, typer.Argument(help="A campaign run with `lakehouse campaign run --preset triples`.")
    ] = "triples",
    lake: LakeOption = None,
    fmt: FormatOption = OutputFormat.table,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the per-log table here and the leave-one-out table to FILE-loo.EXT.",
            dir_okay=False,
        ),
    ] = None,
    plots: PlotsOption = None,
) -> None:
    """The SC'15 heuristic-triple tables from a campaign's stored runs (mean bounded slowdown), kept in
    the lake as analysis.triples and analysis.triples_loo; the initial predictions of every run are
    scored in analysis.prediction_errors.

    Per log: clairvoyant predictions with queue-order and SJBF backfilling, EASY, EASY++, and the best
    and worst learned (E-Loss) triple for each backfilling order.  Then leave-one-out: for each log
    held out, the triple with the least sum over the other logs, its value on the held-out log and its
    reduction against EASY and EASY++.  --plots replays each log with AVE2, a squared-loss regression
    and the E-Loss (EASY-SJBF) and draws the ECDFs of their prediction errors and predicted values,
    and a scatter of every triple's result on one log against another.

    Example: `lakehouse campaign run --preset triples --name triples --view jobs_strong --log KTH --log CTC
    --log SDSC-SP2 --machine-size CEA-Curie=80640` then `lakehouse report triples triples --plots figures`
    """
    from lakehouse.sim.campaign import campaign_rows
    from lakehouse.sim.triples import leave_one_out, per_log_table, store_tables

    target = Lake(lake)
    rows = campaign_rows(target, campaign)
    per_log = per_log_table(rows)
    emit(per_log, fmt, output, title=f"triples of campaign {campaign}: mean bounded slowdown per log")
    if per_log.height >= 2:
        loo = leave_one_out(rows)
        # With --output, the second table goes beside the first: FILE-loo.EXT.
        loo_output = output.with_name(f"{output.stem}-loo{output.suffix}") if output else None
        emit(loo, fmt, loo_output, title="leave-one-out selection")
    else:
        loo = pl.DataFrame()
        stderr.print("one log only: leave-one-out needs at least two")
    store_tables(target, campaign, per_log, loo)
    stderr.print("-> analysis.triples, analysis.triples_loo")
    if plots is not None:
        from lakehouse.sim.triples_plots import triples_plots

        with stderr.status("replaying each log with three predictors for the figures..."):
            announce_plots(triples_plots(target, rows, plots))


@report_app.command("predictions")
@clear_errors
def report_predictions(
    sources: Annotated[
        list[str] | None,
        typer.Argument(help="SWF log names, or `google` [default: every log in the lake, and google if ingested]."),
    ] = None,
    lake: LakeOption = None,
    grouping: Annotated[
        str | None,
        typer.Option(
            help="Workflow grouping of the sliding-window scenarios (SWF: user, user+group, application, queue, "
            "request signature; Google: job, user, logical name, request signature) [default: the one with the "
            "least loss among the 'max of all history' rows]."
        ),
    ] = None,
    window: Annotated[
        int | None, typer.Option(help="Window of k completed jobs [default: chosen per user on their first 80 %].")
    ] = None,
    local_profile: Annotated[bool, typer.Option(help="Cold start from the user's used/requested ratio.")] = True,
    global_profile: Annotated[bool, typer.Option(help="Cold start from everyone's used/requested ratio.")] = True,
    under: Annotated[float, typer.Option(help="Loss weight of an under-estimate.")] = 1.0,
    over: Annotated[float, typer.Option(help="Loss weight of an over-estimate.")] = 0.5,
    plots: PlotsOption = None,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Predict each job's walltime, memory and processors (Google: CPU and memory, mean and peak) from
    the jobs of its workflow that had completed before it was submitted, and score the predictions
    against the users' own requests.

    Scenarios: the users' requests; each workflow grouping with the maximum of its whole history; then
    for one grouping a sliding window over the last k completed jobs (k chosen per user and resource on
    the first 80 % of the user's jobs), + cold-start profiles, and the mean, median, 90 % quantile and
    mean of the last two over the same window for comparison.  Scores, on the last 20 % of each user's
    jobs: loss = sum of w |predicted - used| x walltime (resource units x hours; w: --under, --over),
    the loss relative to the requests, accuracy min(p, u) / max(p, u), the share under-estimated and
    the share of reserved resource-time freed.  Stored as analysis.predictions_scores and
    analysis.predictions_jobs; `lakehouse simulate LOG --predictor column:predicted_walltime` schedules
    with the walltime predictions.

    Example: `lakehouse report predictions HPC2N-2002-2.2-cln --plots figures/`
    """
    from lakehouse.models.predict import PredictionError, Settings, report, write_report
    from lakehouse.models.predict import sources as lake_sources

    target = Lake(lake)
    found = lake_sources(target)
    if sources:
        known = {name: family for family, name in found}
        missing = [name for name in sources if name not in known]
        if missing:
            have = ", ".join(known) or "no source with requests"
            raise LakehouseError(f"nothing to predict for {', '.join(missing)}: the lake has {have}")
        found = [(known[name], name) for name in sources]
    if not found:
        raise LakehouseError("no job with both a request and a usage in the lake (ingest SWF logs or a Google trace)")
    settings = Settings(under, over, window, local_profile, global_profile, grouping)
    tables = []
    for family, name in found:
        with stderr.status(f"predicting {name}..."):
            try:
                result = report(target, family, name, settings)
            except PredictionError as exc:
                raise LakehouseError(str(exc)) from None
            with target.writer():
                write_report(target, result)
        tables.append(result.table)
        stderr.print(f"{name}: sliding windows over the {result.grouping!r} grouping")
        if plots is not None:
            from lakehouse.models.predictions_plots import plot_predictions

            announce_plots(plot_predictions(result.jobs, name, plots))
    emit(pl.concat(tables), fmt, output)


DEFAULT_PACK_QUERY = "SELECT job_id AS job, tasks, c, rho, phi FROM analysis.job_sinusoids"


@app.command()
@clear_errors
def pack(
    lake: LakeOption = None,
    query: Annotated[
        str, typer.Option(help="SQL giving job, tasks, c, rho, phi (one row per job; tasks identical within a job).")
    ] = DEFAULT_PACK_QUERY,
    capacity: Annotated[
        float | None,
        typer.Option(help="Machine capacity [default: the most common CPU capacity of google.machine_events]."),
    ] = None,
    order: Annotated[str, typer.Option(help="Task order: c (decreasing level) or peak (decreasing c + rho).")] = "c",
    clip: Annotated[bool, typer.Option(help="Use rho = c where the amplitude exceeds the level.")] = False,
    synthetic: Annotated[
        bool, typer.Option(help="Run the synthetic campaign (8 families of instances) instead of --query.")
    ] = False,
    seeds: Annotated[int, typer.Option(help="Instances per family in the synthetic campaign.")] = 10,
    plot: Annotated[
        Path | None, typer.Option(help="With --synthetic: write grouped bars to this PNG.", dir_okay=False)
    ] = None,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Pack services with daily demand cycles onto machines: FFD, BFD, MM and packing by peak (MMM).

    A task demands c + rho sin(2 pi t / 1 day + phi); a machine holds a set of tasks if the sum of c plus
    the modulus of the sum of rho e^(i phi) fits its capacity.  Machines are reported next to the lower
    bound (sum c + |sum rho e^(i phi)|) / capacity, and stored as analysis.packing.  The default input is
    analysis.job_sinusoids (run `lakehouse report periodicity` first).

    `--synthetic` runs the campaign of 8 instance families (capacity 20, expected bound 250 machines) and
    reports each heuristic's machines / lower bound, for both task orders.

    Example: `lakehouse pack --query "select job, tasks, c, rho, phi from read_csv('services.csv')" --capacity 20`
    """
    import duckdb

    from lakehouse.models.packing import PackingInputError, pack_all

    if synthetic:
        from lakehouse.models.packing_campaign import campaign
        from lakehouse.models.packing_campaign import plot as plot_campaign

        if seeds <= 0:
            raise LakehouseError("--seeds must be positive")
        with stderr.status("packing the synthetic campaign..."):
            table = campaign(seeds)
        emit(table, fmt, output)
        if plot is not None:
            plot_campaign(table, plot)
            stderr.print(f"plot -> {plot}")
        return
    target = Lake(lake)
    try:
        jobs = target.query(query)
        if capacity is None:
            modes = target.query("SELECT mode(cpus) AS capacity FROM google.machine_events WHERE cpus > 0")
            capacity = modes["capacity"][0]
            if capacity is None:
                raise LakehouseError("no machines in google.machine_events: give --capacity")
    except duckdb.Error as exc:
        raise LakehouseError(str(exc).strip()) from None
    if jobs.is_empty():
        raise LakehouseError("the query returned no jobs")
    try:
        table = pack_all(jobs, float(capacity), order=order, clip=clip)
    except PackingInputError as exc:
        raise LakehouseError(str(exc)) from None
    from lakehouse.models.packing import write_packing

    with target.writer():
        write_packing(target, table, float(capacity), jobs, query)
    emit(table, fmt, output)
    stderr.print(f"{jobs['tasks'].sum():,} tasks of {jobs.height:,} jobs, machine capacity {capacity}")


@app.command()
@clear_errors
def sql(
    query: Annotated[
        str,
        typer.Argument(help="SQL (DuckDB dialect) over the lake's views; several statements may be separated by ';'."),
    ],
    lake: LakeOption = None,
    allow_writes: Annotated[
        bool,
        typer.Option(
            "--allow-writes",
            help="Also run statements that write files (COPY ... TO, EXPORT, ATTACH, INSTALL). Never write "
            "into the lake's folders: the views would read what you write there.",
        ),
    ] = False,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Run SQL on the lake (read-only) and print or save the last statement's result ("ok" if it has none).

    Example: `lakehouse sql "select log, count(*) from swf.jobs_clean group by log" --format csv`
    """
    import duckdb

    try:
        frame = Lake(lake).user_sql(query, allow_writes=allow_writes)
    except duckdb.Error as exc:
        raise LakehouseError(str(exc).strip()) from None
    if frame is None:
        print("ok")
        return
    emit(frame, fmt, output)


@app.command()
@clear_errors
def views(lake: LakeOption = None, fmt: FormatOption = OutputFormat.table, output: OutputOption = None) -> None:
    """List the lake's views with their descriptions.

    Example: `lakehouse views --format csv`
    """
    frame = Lake(lake).query(
        "SELECT schema_name || '.' || view_name AS view, comment FROM duckdb_views() "
        "WHERE NOT internal AND database_name = current_database() ORDER BY view"
    )
    emit(frame, fmt, output)


@app.command()
@clear_errors
def logs(lake: LakeOption = None, fmt: FormatOption = OutputFormat.table, output: OutputOption = None) -> None:
    """Summarize each SWF log: jobs, users, span, machine size, offered load, overruns, estimate ratio.

    Example: `lakehouse logs --format json`
    """
    emit(Lake(lake).query("SELECT * FROM swf.log_summary"), fmt, output)


@app.command()
@clear_errors
def simulate(
    log: Annotated[str, typer.Argument(help="A log name in the lake (see `lakehouse logs`).")],
    lake: LakeOption = None,
    view: Annotated[str, typer.Option(help="Cleaned jobs to replay: jobs_clean or jobs_strong.")] = "jobs_clean",
    where: Annotated[
        str | None, typer.Option(help='Extra SQL condition on the jobs, e.g. "submit_time < 86400*30".')
    ] = None,
    machine_size: Annotated[
        int | None, typer.Option(help="Processors [default: the size the view was filtered with].")
    ] = None,
    algorithm: Annotated[str, typer.Option(help="easy (one reservation) or conservative (one per job).")] = "easy",
    policy: Annotated[
        str, typer.Option(help="Queue order: fcfs lcfs spf lpf sqf lqf lexp sexp lrf srf laf saf.")
    ] = "fcfs",
    backfill: Annotated[str, typer.Option(help="Backfill order: queue, or sjbf (shortest predicted first).")] = "queue",
    predictor: Annotated[str, typer.Option(help=PREDICTOR_HELP + ".")] = "requested",
    correction: Annotated[
        str, typer.Option(help="When a job outlives its prediction: none, requested, incremental, doubling.")
    ] = "requested",
    threshold: Annotated[int | None, typer.Option(help="Jobs waiting longer than this many seconds go first.")] = None,
    compat: Annotated[
        str,
        typer.Option(
            help="canonical (at one instant: all completions, then all submissions, then one pass) or pyss "
            "(the published SC'15 simulator: one event at a time, a pass after each; docs/simulator.md)."
        ),
    ] = "canonical",
    tau: Annotated[float, typer.Option(help="Bound of the bounded slowdown, seconds.")] = 10,
    selector: Annotated[
        str | None,
        typer.Option(help=f"Change the queue policy of EASY every period: {SELECTOR_HELP}.", show_default=False),
    ] = None,
    policies: Annotated[
        str | None,
        typer.Option(help="The selector's candidates, comma-separated (ties go to the first) [default: all twelve]."),
    ] = None,
    period: Annotated[str, typer.Option(help="Selection period: day, week or seconds.")] = "week",
    decay: Annotated[float, typer.Option(help="Selection: weight of each older period, in [0, 1].")] = 1.0,
    epsilon: Annotated[float, typer.Option(help="egreedy: probability of a random policy, in [0, 1].")] = 0.3,
    seed: Annotated[int, typer.Option(help="Selection: seed of the noise (noisy) and draws (egreedy).")] = 0,
    jobs_out: Annotated[
        Path | None,
        typer.Option(
            "--jobs-out",
            help="Write the per-job schedule to this Parquet file.",
            dir_okay=False,
            callback=in_existing_folder,
        ),
    ] = None,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Replay a log with the backfilling simulator and print its metrics.

    EASY++ is `--predictor ave2 --backfill sjbf --correction incremental`; the published E-Loss run is
    `--predictor eloss --backfill sjbf`.  The published SC'15 runs are `--view jobs_strong --compat pyss`.

    With `--selector`, EASY changes its queue policy at every period boundary and a second table gives
    the share of periods each candidate ran (docs/selection.md).

    Example: `lakehouse simulate KTH-SP2-1996-2.1-cln --backfill sjbf --jobs-out kth.parquet`

    Example: `lakehouse simulate KTH-SP2-1996-2.1-cln --selector full --policies fcfs,spf,saf --period day`
    """
    from lakehouse.sim import simulate as replay
    from lakehouse.sim.options import Compat, choose, parse_predictor
    from lakehouse.sim.source import View, log_jobs, log_machine_size, resolve_log
    from lakehouse.sim.workload import input_columns

    target = Lake(lake)
    try:
        chosen = View(view)
    except ValueError:
        raise LakehouseError(f"--view must be one of {', '.join(View)}, not {view!r}") from None
    try:
        pyss = choose(Compat, compat) is Compat.pyss
        columns = input_columns(pyss=pyss, prediction_column=parse_predictor(predictor)[1])
    except ValueError as exc:
        raise LakehouseError(str(exc)) from None
    started = time.perf_counter()
    with target.reading():
        log = resolve_log(target, log)
        size = machine_size if machine_size is not None else log_machine_size(target, log, chosen)
        jobs = log_jobs(target, log, chosen, where, columns)
    with stderr.status(f"replaying {log}..."):
        if jobs.is_empty():
            raise LakehouseError(f"no jobs of {log} in swf.{chosen}" + (f" where {where}" if where else ""))
        result = replay(
            jobs,
            size,
            algorithm=algorithm,
            policy=policy,
            backfill=backfill,
            predictor=predictor,
            correction=correction,
            threshold=threshold,
            compat=compat,
            tau=tau,
            selector=selector,
            policies=None if policies is None else [p.strip() for p in policies.split(",") if p.strip()],
            period=period,
            decay=decay,
            epsilon=epsilon,
            seed=seed,
        )
    if jobs_out is not None:
        result.jobs.write_parquet(jobs_out)
    emit(result.summary_frame(log=log, machine_size=size), fmt, output)
    if result.periods is not None and fmt is OutputFormat.table and output is None:
        emit(result.policy_shares(), fmt, None, title="periods per policy")
    stderr.print(f"{result.summary['jobs']:,} jobs replayed in {time.perf_counter() - started:.2f} s")


@catalog_app.command("rebuild")
@clear_errors
def catalog_rebuild(lake: LakeOption = None) -> None:
    """Recreate every view with the lake's current absolute path (run this after moving a lake).

    Example: `mv lake /data/lake && lakehouse catalog rebuild --lake /data/lake`
    """
    target = Lake(lake)
    if not target.exists():
        raise LakehouseError(f"no lake at {target.root}")
    target.init()
    stderr.print(f"catalog rebuilt for {target.root}")


@app.command()
@clear_errors
def demo(lake: LakeOption = None, fmt: FormatOption = OutputFormat.table) -> None:
    """Run the main job on the embedded sample: build a lake, ingest the real KTH-SP2 log, summarize.

    Example: `lakehouse demo --lake demo-lake`
    """
    from lakehouse.demo import run_demo

    target = Lake(lake)
    started = time.perf_counter()
    with stderr.status("building the demo lake..."):
        frames = run_demo(target)
    for title, frame in frames.items():
        if fmt is OutputFormat.table:
            emit(frame, fmt, None, title=title)
        else:
            stderr.print(title)
            emit(frame, fmt, None)
    stderr.print(
        f"demo done in {time.perf_counter() - started:.1f} s. Explore it: duckdb -readonly {target.catalog_path}"
    )


def main() -> None:
    app()


if __name__ == "__main__":
    sys.exit(main())
