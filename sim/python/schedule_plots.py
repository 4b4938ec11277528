"""Figures of a replay: utilization, queue, a Gantt chart and waits per job class.

They take the schedule in the lake's column names (`schedule_io.schedule_frame`, or a schedule file
read back): `submit_time`, `start_time`, `end_time`, `procs`, `wait`, `bounded_slowdown`,
`backfilled`, and optionally `log_start_time` (when the job started in the log itself, for the log's
own utilization).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import polars as pl

from lakehouse.base.errors import SettingsError
from lakehouse.base.figures import pyplot, save
from lakehouse.base.outputs import written_aside
from lakehouse.sim.metrics import SIZE_CLASSES, job_class
from lakehouse.sim.options import JobClass

PANELS = ("utilization", "queue", "gantt", "waits")
DAY = 86_400.0
HOUR = 3_600.0


def _steps(starts: np.ndarray, ends: np.ndarray, amounts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A step function that adds `amount` on [start, end): instants and the value from each on."""
    times = np.concatenate([starts, ends])
    deltas = np.concatenate([amounts, -amounts]).astype(np.float64)
    order = np.argsort(times, kind="stable")
    times, values = times[order], np.cumsum(deltas[order])
    last = np.r_[times[1:] != times[:-1], True]  # one value per instant: after all its changes
    return times[last], values[last]


def busy(schedule: pl.DataFrame, start: str = "start_time") -> tuple[np.ndarray, np.ndarray]:
    """Busy processors over time."""
    s = schedule.filter(pl.col(start).is_not_null())
    run = (s["end_time"] - s["start_time"]).to_numpy()
    starts = s[start].to_numpy()
    return _steps(starts, starts + run, s["procs"].to_numpy())


def queued(schedule: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Waiting jobs and their processors over time: instants, jobs, processors."""
    submit, start = schedule["submit_time"].to_numpy(), schedule["start_time"].to_numpy()
    times, jobs = _steps(submit, start, np.ones(submit.size))
    _, procs = _steps(submit, start, schedule["procs"].to_numpy())
    return times, jobs, procs


def pack(schedule: pl.DataFrame, machine_size: int) -> list[tuple[int, int, int, int]]:
    """Processor rows for each job, as a rigid-job Gantt is drawn: jobs in start order take the lowest
    block of rows free at their start; a job finding no contiguous block takes the lowest free rows.
    Returns (job index, first row, rows, block) pieces: one per contiguous run of rows."""
    free_at = np.full(machine_size, -np.inf)
    order = np.argsort(schedule["start_time"].to_numpy(), kind="stable")
    start, end, procs = (schedule[c].to_numpy() for c in ("start_time", "end_time", "procs"))
    pieces = []
    for i in order:
        free = free_at <= start[i]
        need = int(procs[i])
        # The lowest window of `need` consecutive free rows, if any.
        window = np.convolve(free.astype(np.int64), np.ones(need, dtype=np.int64), mode="valid") == need
        if window.any():
            first = int(np.argmax(window))
            rows = np.arange(first, first + need)
        else:
            rows = np.flatnonzero(free)[:need]
        free_at[rows] = max(end[i], start[i] + 1e-9)
        # Contiguous runs of the rows the job took.
        breaks = np.flatnonzero(np.diff(rows) != 1) + 1
        for block, run in enumerate(np.split(rows, breaks)):
            pieces.append((int(i), int(run[0]), int(run.size), block))
    return pieces


def gantt(ax: Any, schedule: pl.DataFrame, machine_size: int, t_from: float, t_to: float, origin: float = 0.0) -> None:
    """Jobs running in [t_from, t_to) as rectangles on processor rows; backfilled jobs hatched.  The
    time axis is in hours since `origin` (the first submission), as the other figures count days
    (the log's own clock, 1.097e7 s, says nothing)."""
    shown = schedule.filter((pl.col("start_time") < t_to) & (pl.col("end_time") > t_from))
    start = (shown["start_time"].to_numpy() - origin) / HOUR
    end = (shown["end_time"].to_numpy() - origin) / HOUR
    backfilled = shown["backfilled"].to_numpy() if "backfilled" in shown.columns else np.zeros(shown.height, bool)
    colours = pyplot().get_cmap("tab20")
    for i, first, rows, _ in pack(shown, machine_size):
        ax.add_patch(
            pyplot().Rectangle(
                (start[i], first),
                max(end[i] - start[i], 0),
                rows,
                facecolor=colours(i % 20),
                edgecolor="black" if shown.height <= 200 else "none",
                linewidth=0.3,
                hatch="///" if backfilled[i] else None,
            )
        )
    ax.set_xlim((t_from - origin) / HOUR, (t_to - origin) / HOUR)
    ax.set_ylim(0, machine_size)
    ax.set_xlabel("hours since the first submission")
    ax.set_ylabel("processors")
    ax.set_title(f"Gantt chart, {shown.height:,} jobs (hatched: backfilled)")


def _days(times: np.ndarray, origin: float) -> np.ndarray:
    return (times - origin) / DAY


def binned_mean(times: np.ndarray, values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The time average of a step function (value `values[i]` from `times[i]` on, 0 before) over each
    interval between consecutive `edges`: a year of instants is unreadable, its daily means are not."""
    widths = np.diff(times, append=times[-1])
    area = np.concatenate([[0.0], np.cumsum(values * widths)])  # area up to each instant
    points = np.concatenate([times, [times[-1]]])

    def area_at(t: np.ndarray) -> np.ndarray:
        i = np.clip(np.searchsorted(points, t, side="right") - 1, 0, times.size - 1)
        before = t < times[0]
        return np.where(before, 0.0, area[i] + values[i] * np.clip(t - times[i], 0, None) * (t <= times[-1]))

    return np.diff(area_at(edges)) / np.diff(edges)


def _edges(origin: float, end: float) -> np.ndarray:
    """About 300 intervals: hours, days or weeks, whichever fits the span."""
    span = max(end - origin, 1.0)
    step = next((s for s in (3600.0, DAY, 7 * DAY) if span / s <= 400), 7 * DAY)
    return origin + step * np.arange(int(np.ceil(span / step)) + 1)


def draw(
    schedule: pl.DataFrame,
    machine_size: int,
    panels: Sequence[str] = PANELS,
    t_from: float | None = None,
    t_to: float | None = None,
    vs: pl.DataFrame | None = None,
    labels: tuple[str, str] = ("this run", "other run"),
    title: str | None = None,
) -> dict[str, Any]:
    """One matplotlib figure per panel (a dict by name), each headed by `title` (what was replayed)."""
    plt = pyplot()
    origin = float(cast(float, schedule["submit_time"].min()))
    figures = {}
    runs = [(labels[0], schedule)] + ([(labels[1], vs)] if vs is not None else [])
    end = max(float(cast(float, frame["end_time"].max())) for _, frame in runs)
    edges = _edges(origin, end)
    step_name = {3600.0: "hour", DAY: "day"}.get(float(edges[1] - edges[0]), "week")
    middles = _days((edges[:-1] + edges[1:]) / 2, origin)
    if "utilization" in panels:
        fig, ax = plt.subplots(figsize=(9, 3.4))
        for label, frame in runs:
            t, b = busy(frame)
            ax.plot(middles, binned_mean(t, b, edges) / machine_size, label=label, linewidth=0.9)
        if "log_start_time" in schedule.columns and schedule["log_start_time"].null_count() < schedule.height:
            t, b = busy(schedule, start="log_start_time")
            ax.plot(middles, binned_mean(t, b, edges) / machine_size, label="the log itself", linewidth=0.9)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("days since the first submission")
        ax.set_ylabel(f"utilization (mean per {step_name})")
        ax.legend(fontsize=7)
        figures["utilization"] = fig
    if "queue" in panels:
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 4.6), sharex=True)
        for label, frame in runs:
            t, jobs, procs = queued(frame)
            top.plot(middles, binned_mean(t, jobs, edges), label=label, linewidth=0.9)
            bottom.plot(middles, binned_mean(t, procs, edges) / machine_size, label=label, linewidth=0.9)
        top.set_ylabel(f"waiting jobs\n(mean per {step_name})")
        bottom.set_ylabel("queued demand\n(machines)")
        bottom.set_xlabel("days since the first submission")
        top.legend(fontsize=7)
        figures["queue"] = fig
    if "gantt" in panels:
        first = float(cast(float, schedule["start_time"].min()))
        lo = first if t_from is None else t_from
        hi = lo + DAY if t_to is None else t_to
        fig, ax = plt.subplots(figsize=(9, 4.6))
        gantt(ax, schedule, machine_size, lo, hi, origin)
        figures["gantt"] = fig
    if "waits" in panels:
        fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.8))
        for axis, metric in ((left, "wait"), (right, "bounded_slowdown")):
            data, names = [], []
            for label, frame in runs:
                classes = frame.with_columns(job_class(JobClass.size, machine_size).alias("class"))
                for name in SIZE_CLASSES:
                    values = classes.filter(pl.col("class") == name)[metric].to_numpy()
                    if values.size:
                        data.append(np.maximum(values, 1))
                        names.append(name if vs is None else f"{name}\n{label}")
            axis.boxplot(data, showfliers=False)
            axis.set_xticks(
                range(1, len(names) + 1),
                names,
                fontsize=7,
                rotation=45 if vs is not None else 0,
                ha="right" if vs is not None else "center",
            )
            axis.set_yscale("log")
            axis.set_title(f"{metric.replace('_', ' ')} per job size (>= 1)")
        figures["waits"] = fig
    if title:
        for fig in figures.values():
            fig.suptitle(title, fontsize=9)
    return figures


#: The longest a figure's file name gets from its title (a formula policy can be 1,000 bytes long).
MAX_STEM = 80


def file_stem(title: str) -> str:
    """`schedule-KTH-EASY-SJBF` from what was replayed (`KTH EASY-SJBF`): a second plot into the same
    folder gets a name of its own.  A title whose characters a file name cannot keep (a formula's `*`,
    `/`, `:`) or that is long keeps a digest of the whole, so that `min:r*n` and `min:r/n` never share
    a file."""
    slug = re.sub(r"[^A-Za-z0-9.+=]+", "-", title).strip("-") or "replay"
    digest = hashlib.sha256(title.encode()).hexdigest()[:8]
    if len(slug) > MAX_STEM:
        slug = f"{slug[:MAX_STEM].rstrip('-')}-{digest}"
    elif slug != re.sub(r" +", "-", title.strip()):
        slug = f"{slug}-{digest}"
    return f"schedule-{slug}"


def write(figures: dict[str, Any], output: Path | None, folder: Path | None, svg: bool, stem: str) -> list[Path]:
    """Each figure in `folder` (one file per panel, `STEM-gantt.png`...), and all of them stacked in
    `output` (the default `STEM.png` when no folder is given)."""
    suffix = ".svg" if svg else ".png"
    written = []
    if folder is not None:
        if output is not None:  # first: `save` closes each figure it writes
            written.append(_stacked(figures, output, suffix, close=False))
        return [*written, *(save(fig, folder / f"{stem}-{name}{suffix}") for name, fig in figures.items())]
    return [_stacked(figures, output if output is not None else Path(f"{stem}{suffix}"), suffix)]


def _stacked(figures: dict[str, Any], target: Path, suffix: str, close: bool = True) -> Path:
    """Every figure, one under the other, in one image (matplotlib has no figure-of-figures)."""
    plt = pyplot()
    images = []
    for fig in figures.values():
        fig.tight_layout()
        fig.canvas.draw()
        images.append(np.asarray(fig.canvas.buffer_rgba()))
        if close:
            plt.close(fig)
    width = max(image.shape[1] for image in images)
    padded = [np.pad(img, ((0, 0), (0, width - img.shape[1]), (0, 0)), constant_values=255) for img in images]
    page = np.concatenate(padded, axis=0)
    fig = plt.figure(figsize=(page.shape[1] / 100, page.shape[0] / 100), dpi=100)
    fig.figimage(page, 0, 0)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with written_aside(target) as tmp:
            fig.savefig(tmp, dpi=100, format=suffix[1:])
    finally:
        plt.close(fig)
    return target


def write_html(
    schedule: pl.DataFrame,
    machine_size: int,
    path: Path,
    t_from: float | None = None,
    t_to: float | None = None,
    vs: pl.DataFrame | None = None,
    labels: tuple[str, str] = ("this run", "other run"),
    title: str = "replay",
) -> Path:
    """One interactive page (Plotly, its script inlined: the file works offline): utilization and
    waiting jobs over time (zoomable), and the Gantt chart's window as one bar per job piece."""
    try:
        import plotly.graph_objects as go  # an optional dependency (the html extra)
        from plotly.subplots import make_subplots
    except ImportError:
        raise SettingsError("--html needs Plotly, which is optional: pip install 'lakehouse[html]'") from None
    origin = float(cast(float, schedule["submit_time"].min()))
    runs = [(labels[0], schedule)] + ([(labels[1], vs)] if vs is not None else [])
    end = max(float(cast(float, frame["end_time"].max())) for _, frame in runs)
    edges = _edges(origin, end)
    middles = _days((edges[:-1] + edges[1:]) / 2, origin)
    fig = make_subplots(
        rows=3,
        cols=1,
        subplot_titles=("utilization", "waiting jobs", "Gantt chart (hover: the job)"),
        vertical_spacing=0.08,
    )
    for label, frame in runs:
        t, b = busy(frame)
        fig.add_trace(go.Scatter(x=middles, y=binned_mean(t, b, edges) / machine_size, name=label), row=1, col=1)
        t, jobs, _ = queued(frame)
        fig.add_trace(go.Scatter(x=middles, y=binned_mean(t, jobs, edges), name=f"{label}: waiting"), row=2, col=1)
    first = float(cast(float, schedule["start_time"].min()))
    lo = first if t_from is None else t_from
    hi = lo + DAY if t_to is None else t_to
    shown = schedule.filter((pl.col("start_time") < hi) & (pl.col("end_time") > lo))
    start, stop = shown["start_time"].to_numpy(), shown["end_time"].to_numpy()
    ids = shown["job_id"].to_numpy()
    pieces = pack(shown, machine_size)
    fig.add_trace(
        go.Bar(
            base=[(start[i] - origin) / 3600 for i, *_ in pieces],
            x=[(stop[i] - start[i]) / 3600 for i, *_ in pieces],
            y=[first_row + rows / 2 for _, first_row, rows, _ in pieces],
            width=[rows for _, _, rows, _ in pieces],
            orientation="h",
            hovertext=[f"job {ids[i]}" for i, *_ in pieces],
            name="jobs",
        ),
        row=3,
        col=1,
    )
    fig.update_xaxes(title_text="days since the first submission", row=2, col=1)
    fig.update_xaxes(title_text="hours since the first submission", row=3, col=1)
    fig.update_layout(height=1100, title=title)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.write_html(path, include_plotlyjs=True, full_html=True)
    return path
