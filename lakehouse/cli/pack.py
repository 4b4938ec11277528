"""`lakehouse pack`: services with daily demand cycles onto machines."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lakehouse.base.lake import Lake
from lakehouse.base.render import OutputFormat, emit, stderr
from lakehouse.cli.common import (
    FormatOption,
    LakeOption,
    MemoryLimitOption,
    OutputOption,
    ThreadsOption,
    clear_errors,
    writable_file,
)
from lakehouse.cli.root import app
from lakehouse.models.packing.campaign import SEEDS
from lakehouse.models.packing.model import DEFAULT_PACK_QUERY, TaskOrder


@app.command()
@clear_errors
def pack(
    lake: LakeOption = None,
    query: Annotated[
        str,
        typer.Option(
            help="One SELECT giving job, tasks, c, rho, phi (one row per job; tasks identical within a job); it "
            "may read your files (read_csv), never write one."
        ),
    ] = DEFAULT_PACK_QUERY,
    capacity: Annotated[
        float | None,
        typer.Option(help="Machine capacity [default: the most common CPU capacity of google.machine_events]."),
    ] = None,
    order: Annotated[
        TaskOrder, typer.Option(help="Task order: c (decreasing level) or peak (decreasing c + rho).")
    ] = TaskOrder.c,
    clip: Annotated[bool, typer.Option(help="Use rho = c where the amplitude exceeds the level.")] = False,
    trace: Annotated[
        str,
        typer.Option(
            help="google-2011, or google-2019: one cell's periodic jobs of analysis.periodicity_2019 (run `report "
            "periodicity --trace google-2019` first) on that cell's most common machine (NCU)."
        ),
    ] = "google-2011",
    cell: Annotated[
        str | None, typer.Option(help="With --trace google-2019: the cell [default: the only one fitted].")
    ] = None,
    synthetic: Annotated[
        bool, typer.Option(help="Run the synthetic campaign (8 families of instances) instead of --query.")
    ] = False,
    seeds: Annotated[
        int, typer.Option(min=1, max=1_000, help="Instances per family in the synthetic campaign.")
    ] = SEEDS,
    plot: Annotated[
        Path | None,
        typer.Option(help="With --synthetic: write grouped bars to this PNG.", dir_okay=False, callback=writable_file),
    ] = None,
    memory_limit: MemoryLimitOption = None,
    threads: ThreadsOption = None,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
) -> None:
    """Pack services with daily demand cycles onto machines: FFD, BFD, MM and packing by peak (MMM).

    A task demands c + rho sin(2 pi t / 1 day + phi); a machine holds a set of tasks if the sum of c plus
    the modulus of the sum of rho e^(i phi) fits its capacity.  Machines are reported next to the lower
    bound (sum c + |sum rho e^(i phi)|) / capacity, and stored as analysis.packing.  The default input is
    analysis.job_sinusoids (run `lakehouse report periodicity` first); `--trace google-2019 --cell C` packs
    a cell of the 2019 trace (its fits in the cell's local time, its machines' capacity).

    `--synthetic` runs the campaign of 8 instance families (capacity 20, expected bound 250 machines) and
    reports each heuristic's machines / lower bound, for both task orders.

    Example: `lakehouse pack --query "select job, tasks, c, rho, phi from read_csv('services.csv')" --capacity 20`
    """
    if synthetic:
        from lakehouse.models.packing.campaign import campaign
        from lakehouse.models.packing.campaign import plot as plot_campaign

        with stderr.status("packing the synthetic campaign..."):
            table = campaign(seeds)
        emit(table, fmt, output)
        if plot is not None:
            plot_campaign(table, plot)
            stderr.print(f"plot -> {plot}")
        return
    from lakehouse.base.errors import SettingsError
    from lakehouse.base.google2019_format import cell_problem
    from lakehouse.base.report import TRACES
    from lakehouse.reports import PACK, PackRequest

    if trace not in TRACES:
        raise SettingsError(f"--trace: expected one of {', '.join(TRACES)}, got {trace!r}")
    if cell is not None and (trace != "google-2019" or cell_problem(cell)):
        raise SettingsError(cell_problem(cell) or "--cell goes with --trace google-2019")
    if query != DEFAULT_PACK_QUERY and trace == "google-2019":
        raise SettingsError("--query chooses the jobs itself: give it without --trace google-2019")
    request = PackRequest(None if trace == "google-2019" else query, capacity, order, clip, trace, cell)
    packed = PACK.run(Lake(lake, memory_limit, threads), request)
    emit(packed.table, fmt, output)
    stderr.print(f"{packed.tasks:,} tasks of {packed.jobs:,} jobs, machine capacity {packed.capacity:g} {PACK.stored}")
