"""`lakehouse report ...`: run a model over the lake, store its tables as analysis.*, print a summary."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from lakehouse.base.errors import RunSkipped, TooLittleDataError
from lakehouse.base.lake import Lake
from lakehouse.base.render import OutputFormat, emit, emit_tables, stderr
from lakehouse.base.report import Argument, Call, Option, Report, Shown
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

report_app = command_group("Run a model over the lake, store its result as analysis.* and print a summary.")


# -- every report of the registry: its command made from its declaration -------------------------------

#: The report whose command is not `lakehouse report NAME`: `lakehouse pack`, a command of its own.
ELSEWHERE = frozenset({"pack"})


def _option_parameter(option: Option) -> inspect.Parameter:
    """A report option as a parameter of its command: `--NAME-WITH-DASHES`, its help and range."""
    flag = "--" + option.name.replace("_", "-")
    kind = option.kind

    def checked(value: Any) -> Any:
        """The option's own check (Option.problem), with the words the nightly configuration uses."""
        if value is not None and (problem := option.problem(value)):
            raise typer.BadParameter(problem)
        return value

    # The range is checked by `checked` alone (click's own check words it otherwise), and shown in the help.
    bounds = (option.minimum, option.maximum)
    shown = "" if bounds == (None, None) else " [" + " to ".join(f"{b:,g}" for b in bounds if b is not None) + "]"
    if bounds[1] is None and bounds[0] is not None:
        shown = f" [at least {bounds[0]:,g}]"
    spec = (
        typer.Option(f"{flag}/--no-{flag[2:]}", help=option.help)
        if kind is bool
        else typer.Option(flag, help=option.help + shown, show_default=option.default is not None, callback=checked)
    )
    holds: Any = list[str] if kind is list else kind  # texts: the option repeated
    if option.default is None:  # none given: the report chooses
        holds = holds | None
    return inspect.Parameter(
        option.name, inspect.Parameter.KEYWORD_ONLY, default=option.default, annotation=Annotated[holds, spec]
    )


def _argument_parameter(argument: Argument) -> inspect.Parameter:
    """A report's argument as the positional parameter of its command."""
    if argument.many and argument.required:
        return inspect.Parameter(
            argument.name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            annotation=Annotated[list[str], typer.Argument(help=argument.help)],
        )
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
#: The options of a report that runs a campaign first.
CAMPAIGN = ("executor", "workers", "ray_address")


def generated_command(report: Report[Any, Any]) -> Callable[..., None]:
    """`lakehouse report NAME` for a report of the registry: its argument and options, the lake's and
    the output's; runs and stores it as its options ask (once per log, say), prints the tables it
    presents and draws its figures."""

    def command(**given: Any) -> None:
        lake, plots, memory_limit, threads, fmt, output = (given.pop(name) for name in COMMON)
        executor, workers, ray_address = (given.pop(name, None) for name in CAMPAIGN)
        argument = given.pop(report.argument.name) if report.argument is not None else None
        target = Lake(lake, memory_limit, threads)
        target.require()  # a mistyped --lake: said before any work, and no folder made there
        call = Call(argument, {o.name: o.default for o in report.options} | given, plots is not None)
        outcome = None
        if report.campaign is not None:
            from lakehouse.cli.campaign import run_with_progress

            grid = report.campaign(target, call)
            call = replace(call, grid=grid)  # its runs read the campaign it ran
            outcome = run_with_progress(
                target, grid, executor, workers, ray_address, keep_schedules=report.keep_schedules
            )
        runs, notes = report.command_runs(target, call)
        for note in notes:
            stderr.print(note, highlight=False)
        results, skipped = [], []
        for settings in runs:
            try:
                with stderr.status(report.doing_for(settings)):
                    result = report.run(target, settings)
            except RunSkipped as exc:  # one the report chose itself found nothing: the others go on
                stderr.print(f"skipped {exc}", highlight=False)
                skipped.append(str(exc))
                continue
            results.append(result)
            for note in report.notes_of(result):
                stderr.print(note, highlight=False)
            if plots is not None:
                with stderr.status(report.drawing) if report.drawing else contextlib.nullcontext():
                    announce_plots(report.plots(target, result, plots))
        if skipped and not results:
            raise TooLittleDataError(f"nothing to report: every run was skipped ({'; '.join(skipped)})")
        shown = report.presented(results, fmt is OutputFormat.table) if results else []
        _emit_shown(shown, fmt, output)
        stderr.print(f"{shown[0].caption} {report.stored}" if len(shown) == 1 else report.stored, highlight=False)
        if outcome is not None:
            from lakehouse.cli.campaign import exit_on_failures

            exit_on_failures(outcome)

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
    if report.campaign is not None:
        from lakehouse.campaigns.executors import ExecutorKind

        campaign = [
            (
                "executor",
                Annotated[ExecutorKind, typer.Option(help="local (a process pool) or ray.")],
                ExecutorKind.local,
            ),
            ("workers", Annotated[int | None, workers_option("Processes (local) or Ray CPUs.")], None),
            ("ray_address", Annotated[str | None, typer.Option(help="With --executor ray: auto or HOST:PORT.")], None),
        ]
        parameters += [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
            for name, annotation, default in campaign
        ]
    arguments = [_argument_parameter(report.argument)] if report.argument is not None else []
    command.__signature__ = inspect.Signature([*arguments, *map(_option_parameter, report.options), *parameters])  # type: ignore[attr-defined]
    command.__doc__ = report.summary or f"{report.title}\n\nStores {', '.join(t.view for t in report.tables)}."
    command.__name__ = f"report_{report.name.replace('-', '_')}"
    return clear_errors(command)


def _output_option(help: str) -> Any:
    return Annotated[Path | None, typer.Option("--output", "-o", help=help, dir_okay=False, callback=writable_file)]


def _register_generated() -> None:
    from lakehouse.reports import REPORTS

    for name, report in REPORTS.items():
        if name not in ELSEWHERE:
            report_app.command(name)(generated_command(report))


_register_generated()
