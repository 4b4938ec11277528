"""`lakehouse campaign run|show|list`: sweeps of replays over logs and settings, stored in the lake."""

from __future__ import annotations

import enum
import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lakehouse.base.errors import LakehouseError
from lakehouse.base.job_views import View
from lakehouse.base.lake import Lake
from lakehouse.base.render import OutputFormat, emit, labelled, stderr
from lakehouse.campaigns.executors import ExecutorKind
from lakehouse.campaigns.report import CHANGED_INPUTS, DEFAULT_CONFIDENCE, DEFAULT_REPLICATES, Block, Metric
from lakehouse.cli.common import (
    CooldownOption,
    FormatOption,
    LakeOption,
    OutputOption,
    ProgressLines,
    WarmupOption,
    WhereOption,
    announce_plots,
    clear_errors,
    workers_option,
    writable_folder,
)
from lakehouse.cli.replay_options import taking_tunables

if TYPE_CHECKING:  # the runner is imported when a campaign runs, not when the CLI starts
    from rich.progress import TaskID

    from lakehouse.campaigns.confidence import Bootstrap
    from lakehouse.campaigns.grid import Grid
    from lakehouse.campaigns.runner import Outcome

BlockOption = Annotated[Block, typer.Option(help="The blocks resampled: the weeks or the 30-day months of submission.")]
ReplicatesOption = Annotated[int, typer.Option(help="Bootstrap replicates.", min=10, max=1_000_000)]
ConfidenceOption = Annotated[float, typer.Option(help="The interval's confidence level.", min=0.5, max=0.999)]
SeedOption = Annotated[
    int, typer.Option(help="The resampling's random seed (the same seed, the same interval).", min=0)
]

#: The exit code counts the failed runs, up to this (codes above 125 mean "not run" or "killed" to shells).
MAX_FAILED_EXIT = 125

campaign_app = typer.Typer(
    help="Sweeps of simulations: every log x every combination of settings, stored as analysis.campaign_runs "
    "and resumed where it stopped.",
    no_args_is_help=True,
)


#: Replays a campaign runs without --yes: ~10 minutes of CEA-Curie-sized logs on 2 cores, an hour of
#: the shared logs; a grid larger than this is more often a slip (a glob, a long list) than a plan.
RUN_BUDGET = 10_000


class Preset(enum.StrEnum):
    triples = "triples"


@campaign_app.command("run")
@clear_errors
@taking_tunables(after="machine_size", lists=True)  # --algorithm, --policy, ...: lakehouse.sim.settings
def run(
    spec: Annotated[
        Path | None,
        typer.Argument(help="A TOML file with name, logs, view, machine_size, tau and a [grid] table.", dir_okay=False),
    ] = None,
    name: Annotated[
        str | None, typer.Option(help="The campaign's label [default: the TOML's name, else 'default'].")
    ] = None,
    log: Annotated[
        list[str] | None, typer.Option("--log", help="A log: name, unique prefix or glob ('SDSC-*'). Repeat for more.")
    ] = None,
    lake: LakeOption = None,
    view: Annotated[
        View | None,
        typer.Option(help="Cleaned jobs to replay [default: the TOML's, else jobs_clean].", show_default=False),
    ] = None,
    machine_size: Annotated[
        list[str] | None,
        typer.Option(
            help="Processors for every log, or LOG=N for the logs LOG names (repeat: --machine-size "
            "CEA-Curie=80640) [default: the size each log's view used]."
        ),
    ] = None,
    preset: Annotated[
        Preset | None,
        typer.Option(
            help="A study's fixed set of settings instead of a grid: triples = the SC'15 (prediction, correction, "
            "backfilling) triples, 130 EASY replays per log (with --compat, --view and the logs; see `lakehouse "
            "report triples`)."
        ),
    ] = None,
    tau: Annotated[float | None, typer.Option(help="Bound of the bounded slowdown, seconds [default: 10].")] = None,
    where: WhereOption = None,
    warmup: WarmupOption = None,
    cooldown: CooldownOption = None,
    executor: Annotated[ExecutorKind, typer.Option(help="local (a process pool) or ray.")] = ExecutorKind.local,
    workers: Annotated[int | None, workers_option("Processes (local) or CPUs of a Ray instance started here.")] = None,
    ray_address: Annotated[
        str | None, typer.Option(help="With --executor ray: auto or HOST:PORT [default: start Ray here].")
    ] = None,
    jobs_out: Annotated[
        bool, typer.Option("--jobs-out", help="Also keep every run's per-job schedule under analysis/campaign_jobs/.")
    ] = False,
    any_engine: Annotated[
        bool,
        typer.Option(
            "--any-engine",
            help="Count a run as done whatever build of the engine stored it (by default, runs stored by another "
            "build are replayed again).",
        ),
    ] = False,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes",
            help=f"Run a campaign of more than {RUN_BUDGET:,} replays (without it, such a campaign stops "
            "before the first replay and says how large it is).",
        ),
    ] = False,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
    **given: str | None,
) -> None:
    """Replay every log under every combination of the settings; each option takes a comma-separated list
    and the grid is their product.  Finished runs are stored as they come: Ctrl-C keeps them and running
    the same command again does only the rest (a run is skipped when the same jobs, machine size and
    settings are stored under the campaign's name by this build of the engine; after an upgrade of the
    engine, its runs are replayed again unless --any-engine).  A run that fails (e.g. a job wider than
    --machine-size) is stored with its error, and the exit code is the number of failed runs (at most 125).

    Example: `lakehouse campaign run --name policies --log KTH --log 'SDSC-*' --view jobs_strong
    --policy fcfs,spf,lexp --backfill queue,sjbf`

    Example: `lakehouse campaign run study.toml --workers 2`
    """
    from lakehouse.base.comma_lists import split_list
    from lakehouse.base.machine import parse_machine_sizes
    from lakehouse.base.units import parse_duration
    from lakehouse.campaigns.grid import given_grid, parse_values

    every_size, log_sizes = parse_machine_sizes(machine_size or [])
    # The jobs' window: given here, else the TOML's, else every job counted.
    window = {k: parse_duration(v) for k, v in (("warmup", warmup), ("cooldown", cooldown)) if v is not None}
    options = {key: parse_values(key, split_list(text)) for key, text in given.items() if text is not None}
    explicit: tuple = ()
    if preset is Preset.triples:
        from lakehouse.studies.triples import triple_settings

        compats = options.pop("compat", ("canonical",))
        explicit = tuple(s for c in compats for s in triple_settings(str(c)))
    on_the_command_line = {
        "logs": tuple(log) if log else None,
        "view": str(view) if view else None,
        "machine_size": every_size,
        "machine_sizes": log_sizes,
        "values": options,
        "tau": tau,
        "explicit": explicit,
        "where": where,
        **window,
    }
    grid = given_grid(spec, name, on_the_command_line)
    target = Lake(lake)
    if grid.repeats():
        stderr.print(
            f"{grid.repeats()} combination(s) replay like another (conservative backfilling has no backfill order; "
            "a confidence its predictor ignores): each runs once"
        )
    outcome = run_with_progress(
        target,
        grid,
        executor,
        workers,
        ray_address,
        keep_schedules=jobs_out,
        any_engine=any_engine,
        budget=None if yes else RUN_BUDGET,
    )
    _show(target, grid.name, Metric.mean_bounded_slowdown, None, fmt, output, summarize=True, check_inputs=False)
    exit_on_failures(outcome)


def _within_budget(budget: int | None, then: Callable[[Outcome], None], outcome: Outcome) -> None:
    if budget is not None and outcome.planned > budget:
        raise LakehouseError(
            f"campaign {outcome.name!r} would replay {outcome.planned:,} runs, more than {budget:,}: "
            "pass --yes to run them all, or narrow the logs or the settings"
        )
    then(outcome)


def run_with_progress(
    target: Lake,
    grid: Grid,
    executor: ExecutorKind,
    workers: int | None,
    ray_address: str | None,
    *,
    keep_schedules: bool = False,
    any_engine: bool = False,
    budget: int | None = None,
) -> Outcome:
    """Run a campaign's missing runs with a progress bar and a closing line; Ctrl-C keeps the finished
    runs and exits 130.  More than `budget` runs to do stops before the first (`--yes` lifts it)."""
    from lakehouse.campaigns.executors import make_executor
    from lakehouse.campaigns.runner import run_campaign

    cores = os.cpu_count() or 1
    chosen = make_executor(
        executor, workers=workers or cores, ray_address=ray_address, campaign=grid.name, view=grid.view, tau=grid.tau
    )
    started = time.perf_counter()
    with target.scratch_folder("campaign") as scratch, _ProgressBar(grid.name) as bar:
        try:
            outcome = run_campaign(
                target,
                grid,
                chosen,
                scratch=Path(scratch),
                keep_schedules=keep_schedules,
                any_engine=any_engine,
                on_plan=partial(_within_budget, budget, bar.plan),
                on_progress=bar.advance,
            )
        except KeyboardInterrupt as exc:
            stopped = getattr(exc, "outcome", None)
            kept = f"{stopped.ok + stopped.failed} finished runs kept" if stopped else "nothing was stored"
            bar.stop()
            stderr.print(f"interrupted: {kept}; run the same command again to resume")
            raise typer.Exit(130) from None
    stderr.print(
        f"campaign {grid.name!r}: {outcome.ok} runs ok, {outcome.failed} failed, {outcome.skipped} already stored, "
        f"in {time.perf_counter() - started:.1f} s ({executor.value} executor)"
    )
    return outcome


def exit_on_failures(outcome: Outcome) -> None:
    """Exit with the number of failed runs (at most 125), if any, after saying where to look."""
    grid_name = outcome.name
    if outcome.failed:
        stderr.print(
            labelled(
                f"{outcome.failed} run(s) failed:", "red", f"see their error (`lakehouse campaign show {grid_name}`)"
            )
        )
        raise typer.Exit(min(outcome.failed, MAX_FAILED_EXIT))


class _ProgressBar:
    """Runs done, runs/s and ETA on stderr, once the plan is known."""

    def __init__(self, name: str):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.progress = Progress(
            TextColumn(f"campaign {name}", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]} runs/s"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[failed]}"),
            console=stderr,
            transient=True,
        )
        self.task: TaskID | None = None
        self.lines: ProgressLines | None = None
        self.started = time.perf_counter()

    def __enter__(self) -> _ProgressBar:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def stop(self) -> None:
        self.progress.stop()

    def plan(self, outcome: Outcome) -> None:
        from lakehouse import _native

        for warning in outcome.warnings:
            stderr.print(labelled("warning:", "yellow", warning), highlight=False)
        if outcome.skipped:
            stderr.print(f"{outcome.skipped} runs already stored: skipped")
        if outcome.outdated:
            stderr.print(
                f"{outcome.outdated} runs were stored by another build of the engine: replayed with "
                f"{_native.ENGINE_BUILD} (--any-engine keeps them)"
            )
        self.started = time.perf_counter()
        self.task = self.progress.add_task("", total=outcome.planned, rate="-", failed="")
        self.lines = ProgressLines(f"campaign {outcome.name}: runs", outcome.planned)

    def advance(self, ok: int, failed: int) -> None:
        done = ok + failed
        rate = done / max(time.perf_counter() - self.started, 1e-9)
        assert self.task is not None  # started
        self.progress.update(
            self.task, completed=done, rate=f"{rate:.1f}", failed=f"[red]{failed} failed[/]" if failed else ""
        )
        if self.lines is not None:
            self.lines.update(done, f"{failed} failed" if failed else "")


#: A campaign run prints its whole table up to this many rows on a terminal; more go to the lake only,
#: with a summary per variant (`campaign show` prints them all).
SHOWN_ROWS = 60


def _show(
    target: Lake,
    name: str,
    metric: Metric,
    plots: Path | None,
    fmt: OutputFormat,
    output: Path | None,
    summarize: bool = False,
    check_inputs: bool = True,
    bootstrap: Bootstrap | None = None,
) -> None:
    """Print (and draw) a campaign's current results; `check_inputs`: recompute each run's jobs
    fingerprint on the lake as it is and mark the rows whose inputs changed since they ran;
    `bootstrap`: add the metric's confidence interval."""
    from lakehouse.campaigns.report import campaign_plots, campaign_table, variant_summary
    from lakehouse.campaigns.runner import campaign_rows, changed_inputs, not_run, planned_runs

    rows = campaign_rows(target, name)
    if bootstrap is not None:
        from lakehouse.campaigns.confidence import with_intervals

        with stderr.status(f"bootstrapping {metric} over {rows.height} runs..."):
            rows = with_intervals(target, rows, metric.value, bootstrap)
    plan = planned_runs(target, name) if check_inputs else None
    changed = None if plan is None else changed_inputs(target, plan)
    if changed is not None and not changed.is_empty():
        logs = ", ".join(dict.fromkeys(changed["log"].to_list()))
        stderr.print(
            labelled(
                "warning:",
                "yellow",
                f"the jobs of {logs} are not those the campaign replayed (ingested again, or a prediction table "
                f"imported again): their rows say `{CHANGED_INPUTS}`; `lakehouse campaign run` with the "
                "campaign's settings replays them on the lake as it is",
            ),
            highlight=False,
        )
    if missing := not_run(target, name):
        stderr.print(
            labelled("note:", "yellow", f"{missing} run(s) of the campaign's last plan are not stored yet (it was "
                     "interrupted): run the same command again to finish them"),
            highlight=False,
        )  # fmt: skip
    table = campaign_table(
        rows,
        metric,
        [] if changed is None else changed["jobs_fingerprint"].to_list(),
        None if plan is None else plan["run_key"].to_list(),
    )
    if summarize and fmt is OutputFormat.table and output is None and table.height > SHOWN_ROWS:
        emit(variant_summary(table, metric), fmt, None, title=f"campaign {name}: each variant over its logs")
        stderr.print(f"{table.height:,} rows stored: `lakehouse campaign show {name}` prints them all")
    else:
        emit(table, fmt, output, title=f"campaign {name}")
    if plots is not None:
        announce_plots(campaign_plots(rows, metric, plots))


@campaign_app.command("show")
@clear_errors
def show(
    name: Annotated[str, typer.Argument(help="The campaign (see `lakehouse campaign list`).")],
    lake: LakeOption = None,
    metric: Annotated[
        Metric, typer.Option(help="The metric of the plots (and a column of the table).")
    ] = Metric.mean_bounded_slowdown,
    plots: Annotated[
        Path | None,
        typer.Option(
            help="Write a heatmap of --metric relative to EASY-FCFS and one bar chart per log here.",
            file_okay=False,
            callback=writable_folder,
        ),
    ] = None,
    ci: Annotated[
        bool,
        typer.Option(
            "--ci",
            help="Add the bootstrap confidence interval of --metric (columns METRIC_low, METRIC_high; error bars "
            "in --plots): the log's weeks (--block) resampled with replacement.",
        ),
    ] = False,
    block: BlockOption = Block.week,
    replicates: ReplicatesOption = DEFAULT_REPLICATES,
    confidence: ConfidenceOption = DEFAULT_CONFIDENCE,
    seed: SeedOption = 0,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Print a campaign's results: one row per log and variant with the headline metrics.

    With --ci, each row gains the bootstrap confidence interval of --metric over the log's weeks (or
    months): see docs/campaigns.md, "Confidence".

    Each row is the run the campaign's last plan chose for it (its newest `campaign run` covering that
    log, machine size and variant), never an older run of another view or prediction table. The jobs
    are checked against the lake as it is now: a row whose inputs changed since it ran (the log
    ingested again, a prediction table imported again) says `changed since the run` in its `inputs`
    column, with a warning; runs planned but not stored yet (an interrupted campaign) are counted.

    Example: `lakehouse campaign show policies --plots figures/ --metric mean_wait`

    Example: `lakehouse campaign show policies --ci --metric p90_wait --block month`
    """
    bootstrap = _bootstrap(block, replicates, confidence, seed) if ci else None
    _show(Lake(lake), name, metric, plots, fmt, output, bootstrap=bootstrap)


def _bootstrap(block: Block, replicates: int, confidence: float, seed: int) -> Bootstrap:
    from lakehouse.campaigns.confidence import BLOCKS, Bootstrap

    return Bootstrap(BLOCKS[block], replicates, confidence, seed)


@campaign_app.command("compare")
@clear_errors
def compare(
    name: Annotated[str, typer.Argument(help="The campaign (see `lakehouse campaign list`).")],
    first: Annotated[str, typer.Argument(help="A variant of it, as `campaign show` names it (e.g. easy-fcfs).")],
    second: Annotated[str, typer.Argument(help="Another variant, compared with the first on the same jobs.")],
    lake: LakeOption = None,
    metric: Annotated[Metric, typer.Option(help="The metric compared.")] = Metric.mean_bounded_slowdown,
    block: BlockOption = Block.week,
    replicates: ReplicatesOption = DEFAULT_REPLICATES,
    confidence: ConfidenceOption = DEFAULT_CONFIDENCE,
    seed: SeedOption = 0,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Compare two variants of a campaign log by log, on the same jobs: each one's metric, the difference
    (second - first), its bootstrap confidence interval and a two-sided p-value. The weeks (--block) of
    each log are resampled with replacement, the same weeks for both variants (a paired bootstrap);
    docs/campaigns.md, "Confidence", states the method.

    Example: `lakehouse campaign compare policies easy-fcfs easy-spf --metric mean_wait`
    """
    from lakehouse.campaigns.confidence import compare_variants
    from lakehouse.campaigns.runner import campaign_rows

    target = Lake(lake)
    rows = campaign_rows(target, name)
    bootstrap = _bootstrap(block, replicates, confidence, seed)
    with stderr.status(f"comparing {first} and {second}..."):
        table = compare_variants(target, rows, first, second, metric.value, bootstrap)
    emit(table, fmt, output, title=f"campaign {name}: {metric} of {second} - {first}, {confidence:.0%} interval")


@campaign_app.command("list")
@clear_errors
def list_campaigns(
    lake: LakeOption = None, fmt: FormatOption = OutputFormat.table, output: OutputOption = None
) -> None:
    """List the stored campaigns: of the runs their current plans stand for (what `campaign show`
    prints), the logs, variants, runs, failures, when the last run finished and the engine builds that
    made them; `stored` counts every run kept, those of older plans too (another view, an older
    prediction table), which a re-run finds again instead of replaying.

    Example: `lakehouse campaign list --format csv`
    """
    from lakehouse.campaigns.report import campaign_list
    from lakehouse.campaigns.runner import current_results, stored_runs

    target = Lake(lake)
    if not target.exists():
        raise LakehouseError(f"no lake at {target.root}")
    emit(campaign_list(current_results(target), stored_runs(target)), fmt, output)
