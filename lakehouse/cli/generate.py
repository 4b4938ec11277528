"""`lakehouse generate`: synthetic data in the published formats, with its planted truth."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lakehouse.base.errors import SettingsError
from lakehouse.base.render import stderr
from lakehouse.cli.common import clear_errors, command_group

generate_app = command_group("Write synthetic data in the published formats, with its planted truth.")


@generate_app.command("google")
@clear_errors
def generate_google(
    out: Annotated[Path, typer.Argument(help="Output folder: the trace goes to OUT/trace, the truth to OUT/truth.")],
    machines: Annotated[int, typer.Option(min=1, max=12_583, help="Machines of the cell (the real one: 12,583).")] = 20,
    days: Annotated[
        float, typer.Option(min=0.01, max=29.0, help="Length of the trace window (the real one: 29).")
    ] = 2.0,
    seed: Annotated[int, typer.Option(help="Random seed (same seed, same trace).")] = 0,
    services: Annotated[
        int, typer.Option(min=0, max=1_000, help="Long-running jobs with daily and weekly demand cycles.")
    ] = 6,
    batch_jobs_per_hour: Annotated[
        float, typer.Option(min=0.0, max=10_000.0, help="Arrival rate of batch jobs.")
    ] = 20.0,
    parts: Annotated[int, typer.Option(min=1, max=500, help="Parts per table (machine_events: one).")] = 4,
) -> None:
    """Generate a Google trace (clusterdata-2011-2 format) with planted ground truth.

    The truth (jobs with 1-second sampling switched off, each service's level, daily and weekly
    amplitudes and phases, noise) is written beside the trace, for tests and benchmarks.

    Example: `lakehouse generate google gen --days 7 && lakehouse ingest google gen/trace`
    """
    from lakehouse.synth.google_trace import Settings, generate

    if machines <= 0 or days <= 0 or parts <= 0:
        raise SettingsError("--machines, --days and --parts must be positive")
    settings = Settings(
        machines=machines, days=days, seed=seed, services=services, batch_jobs_per_hour=batch_jobs_per_hour, parts=parts
    )
    with stderr.status("generating..."):
        summary = generate(out, settings)
    stderr.print(
        f"{summary['jobs']:,} jobs, {summary['tasks']:,} tasks, {summary['usage_rows']:,} usage rows -> {out}/trace "
        f"(truth in {out}/truth)"
    )


@generate_app.command("google-lake")
@clear_errors
def generate_google_lake(
    lake: Annotated[Path, typer.Argument(help="A new lake folder to write the generated trace into.")],
    scale: Annotated[
        float, typer.Option(help="Share of the whole trace: 1 is 672,074 jobs and 1.23 G usage rows (0.0001-0.5).")
    ] = 0.01,
    seed: Annotated[int, typer.Option(help="Random seed (same seed and scale, same trace).")] = 0,
) -> None:
    """Generate a lake with the shape of the whole Google trace, scaled down, straight to Parquet.

    Jobs, tasks, usage rows, task events and machines are the published totals of clusterdata-2011-2
    times --scale, over the trace's 29 days, in parts of 2.5 M usage rows as published; the long-running
    services, tasks per job, task durations and sampled jobs follow the real trace (docs/full-trace.md).
    For measuring what the reports need on this machine before ingesting the real trace. Generating
    takes about 12 minutes per unit of scale on 2 cores, and about 2 GB of memory plus 5 GB per unit of
    scale (measured peaks: 2.06, 2.09 and 2.55 GB at 0.005, 0.02 and 0.1); at most 0.5.

    Example: `lakehouse generate google-lake shape --scale 0.05 && lakehouse report volatility --lake shape
    --memory-limit 3GB`
    """
    from lakehouse.base.lake import Lake
    from lakehouse.synth.google_shape import Shape, generate_shape_lake

    if not 0.0001 <= scale <= 0.5:
        raise SettingsError(f"--scale must be from 0.0001 to 0.5, got {scale:g}")
    if Lake(lake).exists():
        raise SettingsError(f"{lake} holds a lake already: generate into a new folder")
    with stderr.status(f"generating a trace at scale {scale:g}...") as status:
        counts = generate_shape_lake(lake, Shape(scale, seed), on_part=lambda text: status.update(text))
    stderr.print(
        f"{counts['jobs']:,} jobs, {counts['tasks']:,} tasks, {counts['usage_rows']:,} usage rows "
        f"({counts['measured_usage_rows']:,} of measured jobs), {counts['task_events']:,} task events -> {lake}"
    )


@generate_app.command("google-2019")
@clear_errors
def generate_google2019(
    out: Annotated[
        Path, typer.Argument(help="Output folder: the shards go to OUT/cell_C/, the truth to OUT/truth.json.")
    ],
    cell: Annotated[str, typer.Option(help="The cell (a-h): its time zone places the daily cycle.")] = "a",
    jobs: Annotated[
        int, typer.Option(min=1, max=100_000, help="Jobs (each with 1-3 tasks running the whole trace).")
    ] = 30,
    alloc_sets: Annotated[
        int, typer.Option(min=0, max=10_000, help="Alloc sets; a third of the jobs run inside one.")
    ] = 3,
    machines: Annotated[int, typer.Option(min=1, max=100_000, help="Machines (cell a has 10,001).")] = 40,
    hours: Annotated[float, typer.Option(min=0.1, max=744.0, help="Length of the trace (the real one: 744).")] = 24.0,
    shards: Annotated[int, typer.Option(min=1, max=10_000, help="Shards of instance_events and instance_usage.")] = 2,
    fmt: Annotated[str, typer.Option("--format", help="The export: json or parquet.")] = "json",
    seed: Annotated[int, typer.Option(help="Random seed (same seed, same cell).")] = 0,
    workflows: Annotated[
        int, typer.Option(min=0, max=1000, help="Recurring batch workflows (one-task jobs run one after another).")
    ] = 4,
    runs: Annotated[int, typer.Option(min=1, max=999, help="Runs per recurring workflow.")] = 6,
) -> None:
    """Generate a cell of Google's 2019 trace (format v3, as exported) with planted ground truth.

    Every window of every instance is drawn from 300 one-second values (a level, a daily cycle peaking
    at 14:00 local time, Gamma noise of a known spread), and its row holds what the trace holds: the
    mean, the maximum, one random second and the percentiles. Some jobs run inside alloc sets, whose
    rows count them again (the double count); priorities are drawn per tier; some machines are added
    without a capacity. Recurring batch workflows run one-task jobs that use exactly their level and
    request twice it (what `report predictions google-2019` should predict exactly). The truth (each
    window's exact spread, the top-level CPU, the counts, the runs) goes to OUT/truth.json, for the
    tests and for checking the reports.

    Example: `lakehouse generate google-2019 gen2019 --cell e && lakehouse ingest google-2019 gen2019/cell_e`
    """
    from lakehouse.base.google2019_format import cell_problem
    from lakehouse.synth.google2019_cell import CellSettings, generate_cell

    if problem := cell_problem(cell):
        raise SettingsError(problem)
    if fmt not in ("json", "parquet"):
        raise SettingsError(f"--format must be json or parquet, got {fmt!r}")
    settings = CellSettings(
        cell, jobs, alloc_sets, machines, min(3, machines), hours, shards, fmt, seed, workflows, runs
    )
    with stderr.status("generating..."):
        truth = generate_cell(out, settings)
    stderr.print(
        f"cell {cell}: {truth['usage_rows']:,} usage rows ({truth['rows_inside_alloc_sets']:,} inside alloc sets) "
        f"-> {out}/cell_{cell} (truth in {out}/truth.json)"
    )


@generate_app.command("google-2019-shape")
@clear_errors
def generate_google2019_shape(
    out: Annotated[
        Path, typer.Argument(help="Output folder: the shards go to OUT/cell_C/, the counts to OUT/truth.json.")
    ],
    scale: Annotated[
        float, typer.Option(help="Share of a real cell: 1 is 10,001 machines and about 1.43 G usage rows (0.0001-1).")
    ] = 0.01,
    cell: Annotated[str, typer.Option(help="The cell (a-h): its time zone places the services' daily cycle.")] = "a",
    days: Annotated[
        float, typer.Option(min=0.1, max=31.0, help="Length of the trace in days (the real one: 31).")
    ] = 31.0,
    seed: Annotated[int, typer.Option(help="Random seed (same seed and scale, same cell).")] = 0,
) -> None:
    """Generate a cell of Google's 2019 trace at a share of a real cell's size, as its Parquet export.

    --scale is the share of a real cell's machines: each runs 16 instances at a time over the 31 days, a
    quarter of them services with a daily cycle, the others one-task batch jobs of about two hours under
    recurring workflow names; each window's CPU percentiles are those of a known Gamma law. The shards
    (about a million usage rows each) are written one at a time, so memory stays that of one shard
    (about 0.9 GB) at any scale; on 2 cores it writes about 200,000 usage rows a second. For measuring
    the ingest and the reports at a real cell's size (`make bench`); `generate google-2019` plants exact
    truths in small cells for the tests.

    Example: `lakehouse generate google-2019-shape shape2019 --scale 0.01 && lakehouse ingest google-2019
    shape2019/cell_a --lake lake2019`
    """
    from lakehouse.base.google2019_format import cell_problem
    from lakehouse.synth.google2019_shape import Shape2019, generate_shape_cell

    if problem := cell_problem(cell):
        raise SettingsError(problem)
    if not 0.0001 <= scale <= 1:
        raise SettingsError(f"--scale must be from 0.0001 to 1, got {scale:g}")
    with stderr.status(f"generating cell {cell} at scale {scale:g}...") as status:
        truth = generate_shape_cell(
            out,
            Shape2019(scale, cell, seed, days),
            on_shard=lambda done, total: status.update(f"shard {done} of {total}"),
        )
    stderr.print(
        f"cell {cell}: {truth['machines']:,} machines, {truth['usage_rows']:,} usage rows in {truth['shards']:,} "
        f"shards, {truth['instances']:,} instances -> {out}/cell_{cell}"
    )
