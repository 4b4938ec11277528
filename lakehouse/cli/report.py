"""`lakehouse report ...`: run a model over the lake, store its tables as analysis.*, print a summary."""

from __future__ import annotations

import contextlib
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
from lakehouse.reports.base import Argument, Call, Option, Report, Shown

report_app = command_group("Run a model over the lake, store its result as analysis.* and print a summary.")


report_app.command("selection")(clear_errors(report_selection))


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


# -- every other report of the registry: its command made from its declaration -----------------------

#: The reports whose command is written by hand: `selection` (above: a campaign, then its report) and
#: `pack` (`lakehouse pack`, a command of its own).
WRITTEN = frozenset({"selection", "pack"})


def _option_parameter(option: Option) -> inspect.Parameter:
    """A report option as a parameter of its command: `--NAME-WITH-DASHES`, its help and range."""
    flag = "--" + option.name.replace("_", "-")
    kind = option.kind
    spec = (
        typer.Option(f"{flag}/--no-{flag[2:]}", help=option.help)
        if kind is bool
        else typer.Option(
            flag, help=option.help, min=option.minimum, max=option.maximum, show_default=option.default is not None
        )
    )
    holds: Any = kind if option.default is not None else kind | None  # None: the report chooses
    return inspect.Parameter(
        option.name, inspect.Parameter.KEYWORD_ONLY, default=option.default, annotation=Annotated[holds, spec]
    )


def _argument_parameter(argument: Argument) -> inspect.Parameter:
    """A report's argument as the positional parameter of its command."""
    if argument.many:
        spec = typer.Argument(help=argument.help, show_default=False)
        return inspect.Parameter(
            argument.name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=None,
            annotation=Annotated[list[str] | None, spec],
        )
    default = inspect.Parameter.empty if argument.default is None else argument.default
    return inspect.Parameter(
        argument.name,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        default=default,
        annotation=Annotated[str, typer.Argument(help=argument.help)],
    )


def _beside(output: Path | None, aside: str, index: int) -> Path | None:
    """Where the `index`-th table goes with --output FILE in a file format: FILE for the first, beside it
    as FILE-ASIDE.EXT (FILE-N.EXT when it names none) for the others."""
    if output is None or index == 0:
        return output
    return output.with_name(f"{output.stem}-{aside or index + 1}{output.suffix}")


def _emit_shown(shown: list[Shown], fmt: OutputFormat, output: Path | None) -> None:
    if fmt is OutputFormat.table and len(shown) == 1:  # its caption says what it holds, beside where it is stored
        emit(shown[0].frame, fmt, output)
    elif fmt is OutputFormat.table:
        emit_tables([(s.frame, s.caption) for s in shown], output)
    else:
        for index, s in enumerate(shown):
            emit(s.frame, fmt, _beside(output, s.aside, index), title=s.caption)


COMMON = ("lake", "plots", "memory_limit", "threads", "fmt", "output")


def generated_command(report: Report[Any, Any]) -> Callable[..., None]:
    """`lakehouse report NAME` for a report of the registry: its argument and options, the lake's and
    the output's; runs and stores it as its options ask (once per log, say), prints the tables it
    presents and draws its figures."""

    def command(**given: Any) -> None:
        lake, plots, memory_limit, threads, fmt, output = (given.pop(name) for name in COMMON)
        argument = given.pop(report.argument.name) if report.argument is not None else None
        target = Lake(lake, memory_limit, threads)
        target.require()  # a mistyped --lake: said before any work, and no folder made there
        call = Call(argument, {o.name: o.default for o in report.options} | given, plots is not None)
        runs, notes = report.command_runs(target, call)
        for note in notes:
            stderr.print(note, highlight=False)
        results = []
        for settings in runs:
            with stderr.status(report.doing_for(settings)):
                result = report.run(target, settings)
            results.append(result)
            for note in report.notes_of(result):
                stderr.print(note, highlight=False)
            if plots is not None:
                with stderr.status(report.drawing) if report.drawing else contextlib.nullcontext():
                    announce_plots(report.plots(target, result, plots))
        shown = report.presented(results, fmt is OutputFormat.table) if results else []
        _emit_shown(shown, fmt, output)
        stderr.print(f"{shown[0].caption} {report.stored}" if len(shown) == 1 else report.stored, highlight=False)

    common = [
        ("lake", LakeOption, None),
        ("plots", PlotsOption, None),
        ("memory_limit", MemoryLimitOption, None),
        ("threads", ThreadsOption, None),
        ("fmt", FormatOption, OutputFormat.table),
        ("output", _output_option(report.output) if report.output else OutputOption, None),
    ]
    parameters = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
        for name, annotation, default in common
    ]
    arguments = [_argument_parameter(report.argument)] if report.argument is not None else []
    command.__signature__ = inspect.Signature([*arguments, *map(_option_parameter, report.options), *parameters])  # type: ignore[attr-defined]
    command.__doc__ = report.summary or f"{report.title}\n\nStores {', '.join(report.tables)}."
    command.__name__ = f"report_{report.name.replace('-', '_')}"
    return clear_errors(command)


def _output_option(help: str) -> Any:
    return Annotated[Path | None, typer.Option("--output", "-o", help=help, dir_okay=False, callback=writable_file)]


def _register_generated() -> None:
    from lakehouse.reports import REPORTS

    for name, report in REPORTS.items():
        if name not in WRITTEN:
            report_app.command(name)(generated_command(report))


_register_generated()
