"""`lakehouse report ...`: run a model over the lake, store its tables as analysis.*, print a summary."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import polars as pl
import typer

from lakehouse.base.errors import TooLittleDataError
from lakehouse.base.lake import Lake
from lakehouse.base.render import OutputFormat, emit, emit_tables, stderr
from lakehouse.cli.common import (
    FormatOption,
    LakeOption,
    MemoryLimitOption,
    OutputOption,
    PlotsOption,
    ThreadsOption,
    announce_plots,
    clear_errors,
    command_group,
    workers_option,
    writable_file,
)
from lakehouse.cli.selection import report_selection
from lakehouse.reports import PERIODICITY, Option, Report

report_app = command_group("Run a model over the lake, store its result as analysis.* and print a summary.")


@report_app.command("periodicity")
@clear_errors
def report_periodicity(
    lake: LakeOption = None,
    plots: PlotsOption = None,
    noise_trials: Annotated[
        int,
        typer.Option(
            min=PERIODICITY.option("noise_trials").minimum,
            max=PERIODICITY.option("noise_trials").maximum,
            help=PERIODICITY.option("noise_trials").help,
        ),
    ] = PERIODICITY.option("noise_trials").default,  # type: ignore[assignment]
    memory_limit: MemoryLimitOption = None,
    threads: ThreadsOption = None,
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
    from lakehouse.reports import PeriodicitySettings

    target = Lake(lake, memory_limit, threads)
    with stderr.status(f"fitting long-running jobs, then {noise_trials} pure-noise series..."):
        result = PERIODICITY.run(target, PeriodicitySettings(noise_trials, overlays=plots is not None))
    [(_, table)] = PERIODICITY.show(result)
    emit(table, fmt, output)
    stderr.print(f"{result.fits.height:,} long-running jobs fitted {PERIODICITY.stored}")
    if plots is not None:
        announce_plots(PERIODICITY.plots(target, result, plots))


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
            callback=writable_file,
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
    reduction against EASY and EASY++, and Pearson's correlation of the triples' results between every
    two logs (mean, least, greatest).  --plots replays each log with AVE2, a squared-loss regression
    and the E-Loss (EASY-SJBF) and draws the ECDFs of their prediction errors and predicted values,
    and a scatter of every triple's result on one log against another.

    Example: `lakehouse campaign run --preset triples --name triples --view jobs_strong --log KTH --log CTC
    --log SDSC-SP2 --machine-size CEA-Curie=80640` then `lakehouse report triples triples --plots figures`
    """
    from lakehouse.reports import TRIPLES

    target = Lake(lake)
    result = TRIPLES.run(target, campaign)
    emit(result.per_log, fmt, output, title=f"triples of campaign {campaign}: mean bounded slowdown per log")
    if result.per_log.height >= 2:
        # With --output, the second table goes beside the first: FILE-loo.EXT.
        loo_output = output.with_name(f"{output.stem}-loo{output.suffix}") if output else None
        emit(result.loo, fmt, loo_output, title="leave-one-out selection")
        from lakehouse.studies.triples import log_correlations

        pearson = log_correlations(result.rows).drop_nulls("pearson")["pearson"].to_numpy()
        stderr.print(
            f"Pearson correlation of the triples' results between two logs, over {len(pearson)} couples: "
            f"mean {pearson.mean():.2f}, least {pearson.min():.2f}, greatest {pearson.max():.2f}"
        )
    else:
        stderr.print("one log only: leave-one-out needs at least two")
    stderr.print(TRIPLES.stored)
    if plots is not None:
        with stderr.status("replaying each log with three predictors for the figures..."):
            announce_plots(TRIPLES.plots(target, result, plots))


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
    memory_limit: MemoryLimitOption = None,
    threads: ThreadsOption = None,
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
    from lakehouse.models.predict import Settings, choose_sources
    from lakehouse.reports import PREDICTIONS, Source

    target = Lake(lake, memory_limit, threads)
    found, skipped = choose_sources(target, sources)
    for reason in skipped:
        stderr.print(f"skipped {reason}", highlight=False)
    settings = Settings(under, over, window, local_profile, global_profile, grouping)
    tables = []
    for family, name in found:
        with stderr.status(f"predicting {name}..."):
            result = PREDICTIONS.run(target, Source(family, name, settings))
        tables.append(result.table)
        stderr.print(f"{name}: sliding windows over the {result.grouping!r} grouping")
        if plots is not None:
            announce_plots(PREDICTIONS.plots(target, result, plots))
    emit(pl.concat(tables), fmt, output)


@report_app.command("locality")
@clear_errors
def report_locality(
    logs: Annotated[
        list[str] | None,
        typer.Argument(help="SWF logs: names, unique prefixes or globs ('SDSC-*') [default: every log in the lake]."),
    ] = None,
    lake: LakeOption = None,
    submit_bins: Annotated[
        str | None,
        typer.Option(
            help="Submit-time bin widths t_s, comma-separated: seconds or with a unit (s, min, h, d, w) "
            "[default: 10 min to 30 d, the study's cells].",
            show_default=False,
        ),
    ] = None,
    runtime_ratios: Annotated[
        str | None,
        typer.Option(
            help="Run-time bin ratios t_r (> 1), comma-separated [default: 1.03 to 2.5, the study's cells].",
            show_default=False,
        ),
    ] = None,
    variant: Annotated[
        str, typer.Option(help="Comma-separated: time (S = submit bin), user (S = user), time+user (S = the pair).")
    ] = "time,user,time+user",
    shuffles: Annotated[
        int, typer.Option(help="Shuffles of the run-time bins whose mean is subtracted (0 to 1,000).")
    ] = 10,
    seed: Annotated[int, typer.Option(help="Seed of the shuffles.")] = 0,
    plots: PlotsOption = None,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """How much a job's submit time (or its user) tells about its run time: the runtime locality
    f = I(S; R) - mean over shuffles of I(S; R shuffled), in bits.

    R = floor(ln(max(run time, 1)) / ln(t_r)) is the job's run-time bin (run times below 1.5 s share the
    bin of 1 s); S is its submit bin floor(submit / t_s) (variant time), its user (user) or both
    (time+user).  I is the plug-in mutual information over the non-empty cells; the shuffles permute R
    over the jobs (the same permutations for every cell of a log) and measure what I would be by chance
    with this many bins, so f is the information beyond that.  Every cell of the grid t_s x t_r is
    measured; the table shows f per cell for the time variant and each variant's best cell.  Jobs count
    when their submit time, run time and one processor count (allocated or requested) are known; the
    user variants also need the user.  Stored as analysis.locality, per log and cell: a later run
    replaces the cells it computes and keeps the others.

    `--plots DIR` writes a heatmap of f per log.  `--format csv|json|parquet` prints the full grid.

    Example: `lakehouse report locality SDSC-SP2 CTC-SP2 --plots figures/`

    Example: `lakehouse report locality SDSC-SP2 --variant user --runtime-ratios 1.057,1.1,1.2`
    """
    from lakehouse.base.comma_lists import split_list
    from lakehouse.base.log_names import select_logs
    from lakehouse.base.units import parse_duration
    from lakehouse.models.locality import RUNTIME_RATIOS, SUBMIT_BINS, Settings, Variant, best_cells, pivot
    from lakehouse.reports import LOCALITY

    try:
        ratios = [float(x) for x in split_list(runtime_ratios)] if runtime_ratios else list(RUNTIME_RATIOS)
    except ValueError:
        raise typer.BadParameter(
            f"{runtime_ratios!r}: give numbers above 1, e.g. 1.2,1.49", param_hint="--runtime-ratios"
        ) from None
    try:
        variants = [Variant(v) for v in split_list(variant)]
    except ValueError:
        raise typer.BadParameter(f"{variant!r}: choose among time, user, time+user", param_hint="--variant") from None
    settings = Settings(
        submit_bins=[parse_duration(x) for x in split_list(submit_bins)] if submit_bins else list(SUBMIT_BINS),
        runtime_ratios=ratios,
        variants=variants or list(Variant),
        shuffles=shuffles,
        seed=seed,
    )
    target = Lake(lake)
    chosen = select_logs(logs, target.log_names()) if logs else target.log_names()
    if not chosen:
        raise TooLittleDataError("no SWF log in the lake (run `lakehouse ingest swf FILE` first)")
    grids = []
    for log in chosen:
        with stderr.status(f"measuring locality of {log}..."):
            measured = LOCALITY.run(target, (log, settings))
        c = measured.jobs.counts
        dropped = ", ".join(
            f"{c[k]:,} {k.replace('_', ' ')}" for k in ("no_submit_time", "no_run_time", "no_processors") if c[k]
        )
        stderr.print(
            f"{log}: {c['kept']:,} of {c['in_log']:,} jobs used" + (f" (left out: {dropped})" if dropped else "")
        )
        if c["unknown_user"] and any(v is not Variant.time for v in settings.variants):
            stderr.print(f"{log}: {c['unknown_user']:,} jobs of unknown user left out of the user variants")
        grids.append(measured.grid)
    frame = pl.concat(grids)
    if fmt is OutputFormat.table:
        tables = [
            (pivot(frame, log, Variant.time), f"{log}: f (bits) by t_s and t_r")
            for log in (chosen if Variant.time in settings.variants else [])
        ]
        tables.append((best_cells(frame), "best cell of each log and variant"))
        emit_tables(tables, output)
    else:
        emit(frame, fmt, output)
    stderr.print(f"{frame.height:,} cells {LOCALITY.stored}")
    if plots is not None:
        from lakehouse.models.locality_plots import plot_locality  # matplotlib, only for figures

        announce_plots(plot_locality(frame, plots))  # every log's grid at once


@report_app.command("hmm")
@clear_errors
def report_hmm(
    log: Annotated[str, typer.Argument(help="An SWF log: name or unique prefix.")],
    lake: LakeOption = None,
    states: Annotated[
        str, typer.Option(help="Numbers of hidden states (1 to 64), comma-separated: one model per number.")
    ] = "1,2,4,8,16",
    submit_bin: Annotated[
        str, typer.Option(help="Submit-time bin t_s: seconds or with a unit (s, min, h, d, w).")
    ] = "15min",
    runtime_ratio: Annotated[float, typer.Option(help="Run-time bin ratio t_r (> 1).")] = 1.8,
    init: Annotated[
        str, typer.Option(help="Initial values: static (uniform, each state its band of run times) or kmeans.")
    ] = "static",
    band: Annotated[
        float,
        typer.Option(
            min=1.0,
            help="static: how many times likelier each state starts on its own band of run times (2: the "
            "thesis' Static-IV).",
        ),
    ] = 2.0,
    stop: Annotated[
        str,
        typer.Option(help="linf or l1: stop when the parameters move less than epsilon/sqrt(jobs); rounds: run all."),
    ] = "linf",
    rounds: Annotated[int, typer.Option(min=1, max=10_000, help="At most this many Baum-Welch rounds.")] = 200,
    epsilon: Annotated[float, typer.Option(help="Convergence threshold, times 1/sqrt(training jobs).")] = 1.0,
    poisson: Annotated[bool, typer.Option("--poisson", help="Also model each bin's load (Poisson per state).")] = False,
    seed: Annotated[int, typer.Option(help="Seed of k-means.")] = 0,
    plots: PlotsOption = None,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Model the workload as a hidden Markov model over submit-time bins and measure what it predicts
    about run times on jobs it has not seen.

    Each bin of t_s seconds is one step; its observation is the count of its jobs per run-time bin
    floor(ln(max(run time, 1)) / ln(t_r)) (empty bins included), emitted by the hidden state with a
    multinomial law (and, with --poisson, a Poisson number of jobs).  Baum-Welch fits the model to the
    first half of the jobs in submit order; the second half is scored from the state the training
    ended in, without its jobs in run-time bins the training never saw.  The table shows, per number of
    states, the held-out gain over the single-state model (the training's run-time mix alone) in bits
    per job, the training log-likelihood per job, the rounds and the time per round.  Jobs count when
    their submit time, run time and a processor count are known.  Stored as analysis.hmm_fits and
    analysis.hmm_states (each state's share, load, median run time, emissions, transitions and its
    stays on the Viterbi path against a geometric law).

    `--plots DIR` writes the transition matrix of the largest model, its states' stays against their
    geometric fits and the gain against the number of states.

    Example: `lakehouse report hmm SDSC-SP2 --states 1,4,16 --plots figures/`

    Example: `lakehouse report hmm KTH --states 8 --init kmeans --poisson --submit-bin 1h`
    """
    from lakehouse.base.comma_lists import split_list
    from lakehouse.base.job_views import resolve_log
    from lakehouse.base.units import parse_duration
    from lakehouse.models.hmm import Init, Settings, Stop
    from lakehouse.reports import HMM

    try:
        counts = [int(x) for x in split_list(states)]
    except ValueError:
        raise typer.BadParameter(f"{states!r}: give whole numbers, e.g. 1,4,16", param_hint="--states") from None
    if not counts:
        raise typer.BadParameter("give at least one number of states", param_hint="--states")
    try:
        chosen_init, chosen_stop = Init(init), Stop(stop)
    except ValueError:
        raise typer.BadParameter(
            f"--init is static or kmeans (not {init!r}); --stop is linf, l1 or rounds (not {stop!r})"
        ) from None
    base: dict[str, Any] = dict(
        submit_bin=parse_duration(submit_bin),
        runtime_ratio=runtime_ratio,
        init=chosen_init,
        stop=chosen_stop,
        rounds=rounds,
        epsilon=epsilon,
        poisson=poisson,
        seed=seed,
        band=band,
    )
    settings = [Settings(states=n, **base) for n in counts]  # every setting checked before any work
    target = Lake(lake)
    name = resolve_log(target, log)
    with stderr.status(f"fitting {', '.join(map(str, counts))} state(s) to {name}..."):
        result = HMM.run(target, (name, settings))
    c, fits = result.counts, result.fits
    stderr.print(f"{name}: {c['kept']:,} of {c['in_log']:,} jobs have a submit time, run time and processor count")
    table = fits.select(
        "states",
        pl.col("gain_bits_per_job").round(4).alias("held-out gain (bits/job)"),
        pl.col("train_bits_per_job").round(3).alias("train log-lik (bits/job)"),
        "rounds",
        "converged",
        (pl.col("seconds_per_round") * 1000).round(1).alias("ms/round"),
        "valid_jobs",
        "valid_removed",
    )
    if fmt is OutputFormat.table:
        emit(table, fmt, output, title=f"{name}: workload HMM, t_s {submit_bin}, t_r {runtime_ratio}")
    else:
        emit(fits, fmt, output)
    stderr.print(f"{fits.height} model(s) {HMM.stored}")
    if plots is not None:
        announce_plots(HMM.plots(target, result, plots))


@report_app.command("hmm-backfilling")
@clear_errors
def report_hmm_backfilling(
    logs: Annotated[
        list[str] | None,
        typer.Argument(
            help="SWF logs: names, unique prefixes or globs [default: KTH-SP2, CTC-SP2, SDSC-SP2, SDSC-BLUE]."
        ),
    ] = None,
    lake: LakeOption = None,
    view: Annotated[str, typer.Option(help="Cleaned jobs to replay: jobs_clean or jobs_strong.")] = "jobs_strong",
    predictor: Annotated[
        str, typer.Option(help="The distribution predictor: hmm or hmm:KEY=VALUE,... (docs/hmm.md).")
    ] = "hmm",
    backfill_confidence: Annotated[
        str, typer.Option(help="Confidences to replay it with, comma-separated, each in (0, 1).")
    ] = "0.05",
    name: Annotated[str, typer.Option(help="The campaign that keeps the runs (re-runs skip stored ones).")] = (
        "hmm-backfilling"
    ),
    as_published: Annotated[
        bool,
        typer.Option(
            "--as-published",
            help="The model as the thesis sets it (16 states, Static-IV, uniform initial transitions, Baum-Welch on "
            "terminated jobs to L1 convergence, re-estimated by the thesis' rule, a week of warm-up, the whole "
            "history) instead of --predictor; ours is the default: faster, and within 3 points of it on each "
            "log's change of mean wait.",
        ),
    ] = False,
    workers: Annotated[int | None, workers_option("Processes.")] = None,
    plots: PlotsOption = None,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """EASY against EASY with run-time distributions from the online workload HMM (which also
    backfills jobs EASY refuses when they delay the head with probability below the confidence), on the
    published study's logs: mean wait, geometric mean wait (waits below 10 s counted as 10 s) and mean bounded
    slowdown, each with its change against EASY on the same log, and the published figures beside.
    CTC-SP2 is replayed on 512 processors, the whole machine, as the study did (its header gives the
    338 of the batch partition; with 338, EASY waits ten times the published figure).

    The runs are a campaign (stored in analysis.campaign_runs under --name, with their schedules, so a
    second call only prints); `--plots DIR` draws each log's CDF of waits.

    Example: `lakehouse report hmm-backfilling KTH CTC-SP2 --backfill-confidence 0.05,0.2 --plots figures/`

    Example: `lakehouse report hmm-backfilling --as-published`
    """
    from lakehouse.base.comma_lists import split_list
    from lakehouse.base.log_names import select_logs
    from lakehouse.campaigns.runner import JOBS_FOLDER, campaign_rows
    from lakehouse.cli.campaign import ExecutorKind, exit_on_failures, run_with_progress
    from lakehouse.studies.hmm_backfilling import (
        AS_PUBLISHED,
        STUDY_LOGS,
        study_grid,
        study_table,
    )

    target = Lake(lake)
    known = target.log_names()
    if logs:
        chosen = select_logs(logs, known)
    else:
        chosen = [log for prefix in STUDY_LOGS for log in known if log.startswith(prefix)]
        if not chosen:
            raise TooLittleDataError(
                "none of the study's logs (KTH-SP2, CTC-SP2, SDSC-SP2, SDSC-BLUE) is in the lake: "
                "ingest them with `lakehouse ingest swf FILE...`, or name the logs to replay"
            )
    if as_published:
        predictor = AS_PUBLISHED
    grid = study_grid(name, chosen, view, predictor, split_list(backfill_confidence))
    outcome = run_with_progress(target, grid, ExecutorKind.local, workers, None, keep_schedules=True)
    rows = grid.on_its_machines(campaign_rows(target, grid.name).filter(pl.col("log").is_in(chosen)), known)
    emit(study_table(rows), fmt, output, title=f"EASY vs EASY+HMM ({view})")
    if plots is not None:
        from lakehouse.studies.hmm_backfilling import wait_cdfs

        announce_plots(wait_cdfs(target, rows, plots, target.root / JOBS_FOLDER / grid.name))
    exit_on_failures(outcome)


# -- the reports of the registry without a command above -------------------------------------------

#: The reports whose command is written by hand (above, and `lakehouse pack`); every other report of the
#: registry gets one made from its options.
WRITTEN = frozenset({"periodicity", "selection", "triples", "predictions", "locality", "hmm", "pack"})


def _option_parameter(option: Option) -> inspect.Parameter:
    """A report option as a parameter of its command: `--NAME-WITH-DASHES`, its help and range."""
    flag = "--" + option.name.replace("_", "-")
    kind = type(option.default)
    spec = (
        typer.Option(f"{flag}/--no-{flag[2:]}", help=option.help)
        if kind is bool
        else typer.Option(flag, help=option.help, min=option.minimum, max=option.maximum)
    )
    return inspect.Parameter(
        option.name, inspect.Parameter.KEYWORD_ONLY, default=option.default, annotation=Annotated[kind, spec]
    )


def generated_command(report: Report[Any, Any]) -> Callable[..., None]:
    """`lakehouse report NAME` for a report of the registry: its options, the lake's and the output's;
    runs and stores it, prints the tables it shows and draws its figures."""

    def command(
        lake: Path | None = None,
        plots: Path | None = None,
        memory_limit: str | None = None,
        threads: int | None = None,
        fmt: OutputFormat = OutputFormat.table,
        output: Path | None = None,
        **options: Any,
    ) -> None:
        target = Lake(lake, memory_limit, threads)
        with stderr.status(report.doing or f"running {report.name}..."):
            result = report.run(target, report.settings_for(options))
        tables = report.show(result)
        if len(tables) == 1:  # its caption says what it holds, beside where it is stored
            emit(tables[0][1], fmt, output)
        elif fmt is OutputFormat.table:
            emit_tables([(frame, caption) for caption, frame in tables], output)
        else:
            for caption, frame in tables:
                emit(frame, fmt, output, title=caption)
        for note in report.notes_of(result):
            stderr.print(note, highlight=False)
        stderr.print(f"{tables[0][0]} {report.stored}" if len(tables) == 1 else report.stored, highlight=False)
        if plots is not None:
            announce_plots(report.plots(target, result, plots))

    common = [
        ("lake", LakeOption, None),
        ("plots", PlotsOption, None),
        ("memory_limit", MemoryLimitOption, None),
        ("threads", ThreadsOption, None),
        ("fmt", FormatOption, OutputFormat.table),
        ("output", OutputOption, None),
    ]
    parameters = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
        for name, annotation, default in common
    ]
    command.__signature__ = inspect.Signature([*map(_option_parameter, report.options), *parameters])  # type: ignore[attr-defined]
    command.__doc__ = report.summary or f"{report.title}\n\nStores {', '.join(report.tables)}."
    command.__name__ = f"report_{report.name.replace('-', '_')}"
    return clear_errors(command)


def _register_generated() -> None:
    from lakehouse.reports import REPORTS

    for name, report in REPORTS.items():
        if name not in WRITTEN:
            report_app.command(name)(generated_command(report))


_register_generated()
