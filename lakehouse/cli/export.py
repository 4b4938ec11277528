"""`lakehouse export swf|google-swf|batsim`: the lake back out as Standard Workload Format files, and as
Batsim workloads."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lakehouse.base.export import GOOGLE_RULES, PROCESSOR_RULES, DelayProfileType, ExportView, Processors
from lakehouse.base.job_views import View
from lakehouse.base.lake import Lake
from lakehouse.base.render import stderr
from lakehouse.cli.common import (
    LakeOption,
    MemoryLimitOption,
    ThreadsOption,
    WhereOption,
    clear_errors,
    command_group,
    writable_file,
)

export_app = command_group(
    "Write the lake back out as SWF files (gzipped when the name ends in .gz) or Batsim workloads (JSON)."
)

OutputFile = Annotated[
    Path, typer.Option("--output", "-o", help="The SWF file to write.", dir_okay=False, callback=writable_file)
]


@export_app.command("swf")
@clear_errors
def export_swf_command(
    log: Annotated[str, typer.Argument(help="A log of the lake: its name or a unique prefix.")],
    output: OutputFile,
    view: Annotated[ExportView, typer.Option(help="Which jobs: as ingested, cleaned or strong-filtered.")] = (
        ExportView.jobs_clean
    ),
    lake: LakeOption = None,
) -> None:
    """Write one log's jobs (a view of it) as an SWF file with the log's header.

    The header is the original one with MaxJobs/MaxRecords set to the jobs written and a note naming the
    log and view; each job is its 18 SWF fields with -1 for unknown values.  Ingesting the file again
    gives the same rows.

    Example: `lakehouse export swf SDSC-SP2 --view jobs_strong -o SDSC-SP2-strong.swf.gz`
    """
    from lakehouse.base.export import export_swf

    jobs = export_swf(Lake(lake), log, view, output)
    stderr.print(f"{jobs:,} jobs -> {output}")


_RULES = "\n\n".join(f"- {line}" for line in GOOGLE_RULES[1:])
_PROCESSORS = (
    f"{PROCESSOR_RULES[Processors.tasks]} (--processors tasks) or "
    f"{PROCESSOR_RULES[Processors.cpu].format(cores='--cores-per-machine')} (--processors cpu); CPU requests are "
    "fractions of the largest machine"
)


@export_app.command(
    "google-swf",
    help=f"""Convert the Google lake's jobs into an SWF file, so that the
backfilling simulator can replay a Google-derived workload.

Rules:

{_RULES.format(processors=_PROCESSORS)}

- MaxProcs = machines in machine_events x --cores-per-machine.

Example: `lakehouse export google-swf --cores-per-machine 32 --processors cpu -o google.swf`
""",
)
@clear_errors
def export_google_swf_command(
    output: OutputFile,
    lake: LakeOption = None,
    processors: Annotated[Processors, typer.Option(help="How a job's processors are counted.")] = Processors.tasks,
    cores_per_machine: Annotated[
        int, typer.Option(min=1, help="Cores of a machine (CPU requests are fractions of one machine).")
    ] = 1,
    memory_limit: MemoryLimitOption = None,
    threads: ThreadsOption = None,
) -> None:
    from lakehouse.base.export import export_google_swf

    jobs = export_google_swf(Lake(lake, memory_limit, threads), output, processors, cores_per_machine)
    stderr.print(f"{jobs:,} jobs -> {output}")


@export_app.command("batsim")
@clear_errors
def export_batsim_command(
    log: Annotated[str, typer.Argument(help="A log of the lake: its name or a unique prefix.")],
    output: Annotated[
        Path,
        typer.Option(
            "--output", "-o", help="The workload file to write (JSON).", dir_okay=False, callback=writable_file
        ),
    ],
    view: Annotated[View, typer.Option(help="Which jobs: cleaned or strong-filtered.")] = View.jobs_clean,
    where: WhereOption = None,
    profile_type: Annotated[
        DelayProfileType,
        typer.Option(
            help="The delay profile's type as the Batsim version reads it: delay (up to 4) or DelayProfile (5)."
        ),
    ] = DelayProfileType.delay,
    lake: LakeOption = None,
) -> None:
    """Write one log's jobs as a Batsim workload (JSON): nb_res, and per job its id, submission time,
    processors (res), requested time (walltime) and a delay profile of its run time.

    Replay it in Batsim on a platform of nb_res hosts; `lakehouse simulate LOG --jobs-out out.batsim.csv`
    writes lakehouse's own replay as the jobs file Batsim writes, for evalys to compare the two.

    Example: `lakehouse export batsim KTH --view jobs_strong -o kth-workload.json`
    """
    from lakehouse.base.export import export_batsim_workload

    jobs = export_batsim_workload(Lake(lake), log, output, view=view, where=where, profile_type=profile_type)
    stderr.print(f"{jobs:,} jobs -> {output}")
