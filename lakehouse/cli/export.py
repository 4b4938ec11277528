"""`lakehouse export swf|google-swf|batsim`: the lake back out as Standard Workload Format files, and as
Batsim workloads."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lakehouse.base.export import (
    CLUSTER_RULES,
    GOOGLE_RULES,
    OPENDC_RULES,
    PROCESSOR_RULES,
    DelayProfileType,
    ExportView,
    Processors,
)
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
    "Write the lake back out as SWF files (gzipped when the name ends in .gz), Batsim workloads (JSON) or "
    "OpenDC workloads (Parquet)."
)

OutputFile = Annotated[
    Path, typer.Option("--output", "-o", help="The SWF file to write.", dir_okay=False, callback=writable_file)
]


# A cloud trace instead of a log (export swf and batsim).
TraceOption = Annotated[
    str | None, typer.Option(help="A cloud trace to convert instead of a log: google-2011, google-2019, alibaba-2018.")
]
CellOption = Annotated[str | None, typer.Option(help="With --trace google-2019: one cell (default: every cell).")]
ProcessorsOption = Annotated[Processors, typer.Option(help="With --trace: how a job's processors are counted.")]
CoresOption = Annotated[
    int, typer.Option(min=1, help="With --trace: cores of a machine (Google's CPU requests are fractions of one).")
]


def _log_or_trace(log: str | None, trace: str | None) -> None:
    from lakehouse.base.errors import SettingsError

    if (log is None) == (trace is None):
        raise SettingsError("give a LOG of the lake or --trace TRACE (a cloud trace to convert), one of them")


_CLUSTER_RULES = "\n\n".join(f"- {line}" for line in CLUSTER_RULES[1:]).format(
    trace="TRACE",
    processors=f"{PROCESSOR_RULES[Processors.tasks]} (--processors tasks) or "
    f"{PROCESSOR_RULES[Processors.cpu].format(cores='C')} (--processors cpu), where C is --cores-per-machine for "
    "Google's traces (a unit of their CPU is the largest machine) and 1 for Alibaba's (its unit is a core)",
    cores_rule="the same C",
)


@export_app.command(
    "swf",
    help=f"""Write one log's jobs (a view of it) as an SWF file with the log's header, or convert a
cloud trace's jobs (--trace) into an SWF file, so that the backfilling simulator replays them.

A log: the header is the original one with MaxJobs/MaxRecords set to the jobs written and a note naming
the log and view; each job is its 18 SWF fields with -1 for unknown values. Ingesting the file again
gives the same rows.

A cloud trace (--trace google-2011|google-2019|alibaba-2018, read through the common views cluster.*;
the header's notes repeat these rules):

{_CLUSTER_RULES}

Example: `lakehouse export swf SDSC-SP2 --view jobs_strong -o SDSC-SP2-strong.swf.gz`

Example: `lakehouse export swf --trace google-2019 --cell a --processors cpu --cores-per-machine 32 -o
google-2019-a.swf`
""",
)
@clear_errors
def export_swf_command(
    output: OutputFile,
    log: Annotated[
        str | None, typer.Argument(help="A log of the lake: its name or a unique prefix (not with --trace).")
    ] = None,
    view: Annotated[ExportView, typer.Option(help="Which jobs of a log: as ingested, cleaned or strong-filtered.")] = (
        ExportView.jobs_clean
    ),
    trace: TraceOption = None,
    cell: CellOption = None,
    processors: ProcessorsOption = Processors.tasks,
    cores_per_machine: CoresOption = 1,
    lake: LakeOption = None,
) -> None:
    from lakehouse.base.export import cluster_jobs, cluster_swf, export_swf

    _log_or_trace(log, trace)
    if trace is None:
        jobs = export_swf(Lake(lake), log, view, output)  # type: ignore[arg-type]
    else:
        jobs = cluster_swf(cluster_jobs(Lake(lake), trace, cell, processors, cores_per_machine), output)
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
    output: Annotated[
        Path,
        typer.Option(
            "--output", "-o", help="The workload file to write (JSON).", dir_okay=False, callback=writable_file
        ),
    ],
    log: Annotated[
        str | None, typer.Argument(help="A log of the lake: its name or a unique prefix (not with --trace).")
    ] = None,
    view: Annotated[View, typer.Option(help="Which jobs of a log: cleaned or strong-filtered.")] = View.jobs_clean,
    where: WhereOption = None,
    profile_type: Annotated[
        DelayProfileType,
        typer.Option(
            help="The delay profile's type as the Batsim version reads it: delay (up to 4) or DelayProfile (5)."
        ),
    ] = DelayProfileType.delay,
    trace: TraceOption = None,
    cell: CellOption = None,
    processors: ProcessorsOption = Processors.tasks,
    cores_per_machine: CoresOption = 1,
    lake: LakeOption = None,
) -> None:
    """Write one log's jobs, or a cloud trace's (--trace), as a Batsim workload (JSON): nb_res, and per
    job its id, submission time, processors (res), requested time (walltime) and a delay profile of its
    run time.

    A cloud trace's jobs are those of `lakehouse export swf --trace` (the same rules, in the workload's
    description) that ended inside the trace, without a walltime (the trace gives none); nb_res is the
    machines' cores.

    Replay it in Batsim on a platform of nb_res hosts; `lakehouse simulate LOG --jobs-out out.batsim.csv`
    writes lakehouse's own replay as the jobs file Batsim writes, for evalys to compare the two.

    Example: `lakehouse export batsim KTH --view jobs_strong -o kth-workload.json`
    """
    from lakehouse.base.export import batsim_workload, cluster_batsim_workload, cluster_jobs, export_batsim_workload

    _log_or_trace(log, trace)
    if trace is None:
        workload = batsim_workload(Lake(lake), log, view, where, profile_type)  # type: ignore[arg-type]
    else:
        found = cluster_jobs(Lake(lake), trace, cell, processors, cores_per_machine)
        workload = cluster_batsim_workload(found, profile_type)
    jobs = export_batsim_workload(output, workload)
    stderr.print(f"{jobs:,} jobs -> {output}")


_OPENDC_RULES = "\n\n".join(f"- {line}" for line in OPENDC_RULES)


@export_app.command(
    "opendc",
    help=f"""Write a cloud trace's tasks as an OpenDC workload: FOLDER/tasks.parquet and
FOLDER/fragments.parquet, with the columns and types of OpenDC's workload format (Input/Workload in its
documentation), read through the common views cluster.*.

Rules:

{_OPENDC_RULES}

Example: `lakehouse export opendc --trace google-2019 --cores-per-machine 32 -o opendc-workload`
""",
)
@clear_errors
def export_opendc_command(
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The folder to write tasks.parquet and fragments.parquet to.")
    ],
    trace: Annotated[str, typer.Option(help="The cloud trace: google-2011, google-2019 or alibaba-2018.")],
    cell: CellOption = None,
    cores_per_machine: CoresOption = 1,
    mhz_per_core: Annotated[float, typer.Option(min=1, help="MHz of one core (OpenDC counts CPU in MHz).")] = 2500.0,
    memory_mb_per_machine: Annotated[
        int, typer.Option(min=1, help="MB of memory of a whole machine (the traces normalise memory).")
    ] = 65536,
    lake: LakeOption = None,
    memory_limit: MemoryLimitOption = None,
    threads: ThreadsOption = None,
) -> None:
    from lakehouse.base.export import export_opendc

    tasks, fragments = export_opendc(
        Lake(lake, memory_limit, threads), trace, output, cell, cores_per_machine, mhz_per_core, memory_mb_per_machine
    )
    stderr.print(f"{tasks:,} tasks, {fragments:,} fragments -> {output}")
