"""`lakehouse plot ...`: figures of a replay."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from lakehouse.base.errors import SettingsError, TooLittleDataError
from lakehouse.base.job_views import View
from lakehouse.base.lake import Lake
from lakehouse.base.log_names import short_log
from lakehouse.base.render import stderr
from lakehouse.base.units import parse_duration
from lakehouse.cli.common import LakeOption, PlotsOption, announce_plots, clear_errors, command_group, writable_file
from lakehouse.cli.replay_options import taking_tunables
from lakehouse.sim.options import variant_name

if TYPE_CHECKING:
    import polars as pl

plot_app = command_group("Figures of a replay.")


@plot_app.command("schedule")
@clear_errors
@taking_tunables(after="machine_size")  # with --log: the replay's settings, as simulate takes them
def plot_schedule(
    schedule: Annotated[
        Path | None,
        typer.Argument(help="A schedule written by `lakehouse simulate --jobs-out FILE.parquet`.", dir_okay=False),
    ] = None,
    log: Annotated[str | None, typer.Option(help="Or replay this log (name or unique prefix) and draw it.")] = None,
    lake: LakeOption = None,
    view: Annotated[View, typer.Option(help="With --log: the cleaned jobs to replay.")] = View.jobs_clean,
    machine_size: Annotated[int | None, typer.Option(help="With --log: processors [default: the view's].")] = None,
    t_from: Annotated[
        str | None,
        typer.Option("--from", help="Gantt window start, after the first submission: seconds or 2d, 12h, ..."),
    ] = None,
    t_to: Annotated[str | None, typer.Option("--to", help="Gantt window end [default: a day after --from].")] = None,
    vs: Annotated[
        Path | None, typer.Option("--vs", help="A second schedule file drawn beside the first.", dir_okay=False)
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="One image with every figure [default: schedule-LOG-VARIANT.png, named after the replay].",
            dir_okay=False,
            callback=writable_file,
        ),
    ] = None,
    plots: PlotsOption = None,
    svg: Annotated[bool, typer.Option("--svg", help="SVG instead of PNG.")] = False,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            help="Also write an interactive page (Plotly, works offline; pip install 'lakehouse[html]').",
            dir_okay=False,
            callback=writable_file,
        ),
    ] = None,
    **tuned: Any,
) -> None:
    """Draw a replay: utilization over time (beside the log's own, when the log is in the lake and
    recorded its waits), waiting jobs and queued processor demand over time, a Gantt chart of a
    window (jobs packed onto processor rows, backfilled jobs hatched) and the waits and bounded
    slowdowns per job size.  `--plots DIR` writes one file per figure; `--vs` draws a second schedule
    beside the first.  With `--log`, the log is replayed first with the settings of the Scheduler and
    Predictions groups, as `lakehouse simulate` takes them.

    Example: `lakehouse simulate KTH --jobs-out kth.parquet && lakehouse plot schedule kth.parquet --from 10d --to 11d`

    Example: `lakehouse plot schedule --log KTH --backfill sjbf --plots figures/ --html figures/kth.html`
    """
    from lakehouse.sim.schedule_plots import draw, file_stem, write, write_html

    if (schedule is None) == (log is None):
        raise SettingsError("give a schedule file or --log LOG (one of them)")
    if schedule is not None:
        frame, size, label = _read(schedule, Lake(lake))
    else:
        frame, size, label = _replay(Lake(lake), log, view, machine_size, tuned)
    other = None
    labels = (label, "")
    if vs is not None:
        other, _, other_label = _read(vs, Lake(lake))
        labels = (label, other_label)
    if frame.is_empty():
        raise TooLittleDataError(f"{schedule}: no jobs to draw")
    origin = float(cast(float, frame["submit_time"].min()))
    lo = None if t_from is None else origin + parse_duration(t_from)
    hi = None if t_to is None else origin + parse_duration(t_to)
    if lo is not None and hi is not None and hi <= lo:
        raise SettingsError(f"--to ({t_to}) must come after --from ({t_from})")
    title = " vs ".join(label for label in labels if label)  # `KTH EASY-SJBF vs KTH EASY`
    figures = draw(frame, size, t_from=lo, t_to=hi, vs=other, labels=labels, title=title)
    paths = write(figures, output, plots, svg, file_stem(title))
    if html is not None:
        paths.append(write_html(frame, size, html, t_from=lo, t_to=hi, vs=other, labels=labels, title=title))
    announce_plots(paths)
    stderr.print(f"{frame.height:,} jobs on {size:,} processors")


#: The settings a variant's name is made of (`variant_name`).
VARIANT_KEYS = ("algorithm", "policy", "backfill", "predictor", "correction")


def _read(path: Path, lake: Lake) -> tuple[pl.DataFrame, int, str]:
    import polars as pl

    from lakehouse.sim.schedule_io import read_provenance

    if not path.exists():
        raise SettingsError(f"{path}: no such file")
    if path.suffix.lower() != ".parquet":
        raise SettingsError(
            f"{path}: plot a Parquet schedule (written by `lakehouse simulate --jobs-out FILE.parquet`)"
        )
    about = read_provenance(path)
    settings = about.get("settings", {})
    size = about.get("machine_size") or (settings.get("machine_size") if isinstance(settings, dict) else None)
    if not size:
        raise SettingsError(f"{path}: its metadata records no machine size")
    frame = pl.read_parquet(path)
    log = about.get("log")
    if isinstance(log, str) and lake.exists() and log in lake.log_names():
        frame = frame.join(
            _log_starts(lake, log, View(str(about.get("view") or View.jobs_clean))), on="job_id", how="left"
        )
    named = {k: str(v) for k, v in settings.items() if k in VARIANT_KEYS} if isinstance(settings, dict) else {}
    who = f"{short_log(log)} {variant_name(**named)}" if isinstance(log, str) else path.stem
    return frame, int(size), who


def _log_starts(lake: Lake, log: str, view: View) -> pl.DataFrame:
    """When each job started in the log itself (submit + its recorded wait), for the log's utilization."""
    import polars as pl

    from lakehouse.base.job_views import log_jobs

    jobs = log_jobs(lake, log, view, columns=["job_id", "submit_time", "wait_time"])
    return jobs.select("job_id", (pl.col("submit_time") + pl.col("wait_time")).alias("log_start_time"))


def _replay(
    lake: Lake, log: str | None, view: View, machine_size: int | None, settings: dict[str, Any]
) -> tuple[pl.DataFrame, int, str]:

    from lakehouse.base.job_views import log_jobs, log_machine_size, resolve_log
    from lakehouse.sim import simulate
    from lakehouse.sim.schedule_io import schedule_frame

    name = resolve_log(lake, str(log))
    size = machine_size if machine_size is not None else log_machine_size(lake, name, view)
    jobs = log_jobs(lake, name, view)
    if jobs.is_empty():
        raise TooLittleDataError(f"no jobs of {name} in swf.{view} to replay and draw")
    result = simulate(jobs, size, **settings)
    frame = schedule_frame(result).join(_log_starts(lake, name, view), on="job_id", how="left")
    named = {key: str(settings[key]) for key in VARIANT_KEYS}
    return frame, size, f"{short_log(name)} {variant_name(**named)}"
