"""`lakehouse generate`: synthetic data in the published formats, with its planted truth."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lakehouse.cli.common import clear_errors, command_group
from lakehouse.errors import SettingsError
from lakehouse.render import stderr

generate_app = command_group("Write synthetic data in the published formats, with its planted truth.")


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
