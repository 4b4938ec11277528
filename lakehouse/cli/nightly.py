"""`lakehouse nightly`: the scheduled re-analysis of an inbox of new traces."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import polars as pl
import typer

from lakehouse.base.lake import Lake
from lakehouse.base.render import OutputFormat, emit, labelled, stderr
from lakehouse.cli.common import (
    FormatOption,
    LakeOption,
    MemoryLimitOption,
    OutputOption,
    ThreadsOption,
    clear_errors,
    writable_folder,
)
from lakehouse.cli.root import app

if TYPE_CHECKING:
    from lakehouse.nightly.run import Outcome


def _time_of_day(value: str) -> str:
    if not re.fullmatch(r"([01]?\d|2[0-3]):[0-5]\d", value):
        raise typer.BadParameter(f"{value!r}: give a time of day as HH:MM, e.g. 02:30")
    return value


@app.command()
@clear_errors
def nightly(
    inbox: Annotated[
        Path | None,
        typer.Option(help="Folder where new traces arrive: SWF logs (.swf, .swf.gz) and Google trace folders."),
    ] = None,
    lake: LakeOption = None,
    config: Annotated[
        Path | None,
        typer.Option(
            help="TOML file: reports to run, replay view, machine sizes (see `docs/nightly.md`).", dir_okay=False
        ),
    ] = None,
    reports: Annotated[
        Path | None,
        typer.Option(
            help="Where the dated HTML reports go [default: LAKE/reports].", file_okay=False, callback=writable_folder
        ),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List what would be done, and do nothing.")] = False,
    verify: Annotated[
        bool, typer.Option(help="Hash every inbox file (by default a file whose size and time are unchanged is not).")
    ] = False,
    history_: Annotated[bool, typer.Option("--history", help="List the recorded runs and stop.")] = False,
    print_systemd: Annotated[
        bool, typer.Option("--print-systemd", help="Print a systemd service + timer (and a crontab line) for this run.")
    ] = False,
    at: Annotated[
        str, typer.Option(help="With --print-systemd: the time of day to run.", callback=_time_of_day)
    ] = "02:30",
    memory_limit: MemoryLimitOption = None,
    threads: ThreadsOption = None,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Pick up what arrived in the inbox, ingest it, re-run the standard reports for what changed, and
    leave a dated HTML report (LAKE/reports/YYYY-MM-DD/index.html, all runs in LAKE/reports/index.html).

    New and changed files are ingested (unchanged ones are skipped; a changed file replaces its own log or
    part).  A changed SWF log gets `lakehouse logs`, EASY / EASY-SJBF / EASY++ replays (campaign `nightly`,
    with the change since the log's previous version) and `report predictions`; a changed Google trace
    gets `report volatility`, `report periodicity` and `pack`.  The run is recorded in meta.nightly_runs.

    Safe under cron or a systemd timer: one run at a time per lake.  Exit codes: 0 all ok, 1 partial
    (some files or reports failed; the rest is done), 2 nothing could be done, 75 another nightly run holds
    the lake (this one did nothing), 130 interrupted.

    Example: `lakehouse nightly --inbox /srv/traces/inbox --lake /srv/lake`

    Example: `lakehouse nightly --inbox inbox --dry-run`, then `lakehouse nightly --inbox inbox --print-systemd`
    """
    from lakehouse.nightly import history
    from lakehouse.nightly.config import load
    from lakehouse.nightly.run import EXIT_BUSY, EXIT_FAILED, NightlyBusyError, NothingDoneError, plan, run
    from lakehouse.nightly.schedule import instructions

    target = Lake(lake, memory_limit, threads)
    if history_:
        if not target.exists():
            stderr.print(f"no lake at {target.root}: no runs yet")
            return
        emit(history.runs(target), fmt, output)
        return
    if inbox is None:
        raise typer.BadParameter("give the folder new traces arrive in", param_hint="--inbox")
    settings = load(config)
    if print_systemd:
        budget = [
            *(["--memory-limit", memory_limit] if memory_limit else []),
            *(["--threads", str(threads)] if threads else []),
        ]
        typer.echo(instructions(inbox, target.root, config, at, budget), nl=False)
        return
    if dry_run:
        todo = plan(target, inbox, settings, verify)
        emit(todo.describe().drop("path"), fmt, output)
        reports_text = ", ".join(todo.reports) or "none (nothing new)"
        stderr.print(
            f"dry run: would ingest {len(todo.swf)} SWF log(s) and {len(todo.google)} trace part(s), then run: "
            f"{reports_text}; nothing was changed"
        )
        return
    try:
        outcome = run(target, inbox, settings, reports_root=reports, verify=verify, say=stderr.print)
    except NightlyBusyError as exc:
        stderr.print(labelled("busy:", "bold yellow", exc), highlight=False)
        raise typer.Exit(EXIT_BUSY) from None
    except NothingDoneError as exc:
        stderr.print(labelled("error:", "bold red", exc), highlight=False)
        raise typer.Exit(EXIT_FAILED) from None
    record = outcome.record
    emit(_summary(outcome), fmt, output)
    for error in record.errors:
        stderr.print(labelled("problem:", "red", error), highlight=False)
    stderr.print(
        f"nightly {record.run}: {record.status}, {record.files_ingested} file(s) ingested, {record.files_skipped} "
        f"unchanged, {record.files_failed} failed, reports: {', '.join(record.reports_run) or 'none'} "
        f"in {record.seconds.get('total', 0):.1f} s"
    )
    if outcome.page is not None:
        stderr.print(f"report -> {outcome.page}")
    raise typer.Exit(outcome.exit_code)


def _summary(outcome: Outcome) -> pl.DataFrame:
    """What a run did, as item/value rows (stdout; the details are in its HTML report)."""
    record = outcome.record
    rows = [("status", record.status), ("files seen", str(record.files_seen))]
    rows += [("files ingested", str(record.files_ingested)), ("files unchanged", str(record.files_skipped))]
    rows += [("files failed", str(record.files_failed)), ("reports", ", ".join(record.reports_run) or "none")]
    rows += [("report", str(outcome.page or ""))]
    return pl.DataFrame(rows, schema=["item", "value"], orient="row")
