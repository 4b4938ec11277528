"""The nightly run's HTML: `reports/<run>/index.html` and `reports/index.html`, from Jinja2 templates.

Pages are self-contained: the CSS is inlined, figures are PNG files next to the page (relative links),
and nothing needs JavaScript.  Every value goes through the template's autoescaping.
"""

from __future__ import annotations

import datetime as dt
import math
import os
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import jinja2
import polars as pl

from lakehouse.base.outputs import written_aside
from lakehouse.nightly.history import RunRecord
from lakehouse.nightly.reports import Section

#: Rows of a table shown in a page (the lake keeps them all).
MAX_ROWS = 60


@dataclass(frozen=True)
class Cell:
    text: str
    numeric: bool


@dataclass(frozen=True)
class Table:
    columns: list[str]
    rows: list[list[Cell]]
    hidden: int


@dataclass(frozen=True)
class Figure:
    src: str
    caption: str
    width: int
    height: int


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("lakehouse.nightly", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _css() -> str:
    return resources.files("lakehouse.nightly").joinpath("templates", "style.css").read_text(encoding="utf-8")


def _cell(value: object) -> Cell:
    if value is None:
        return Cell("", False)
    if isinstance(value, bool):
        return Cell("yes" if value else "no", False)
    if isinstance(value, int):
        return Cell(f"{value:,}", True)
    if isinstance(value, float):
        if math.isnan(value):
            return Cell("", True)
        if value != 0 and abs(value) < 1e-3:
            return Cell(f"{value:.3g}", True)
        return Cell(f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}", True)
    if isinstance(value, dt.datetime):
        return Cell(value.strftime("%Y-%m-%d %H:%M:%S"), False)
    if isinstance(value, list | tuple):
        return Cell(", ".join(str(v) for v in value), False)
    return Cell(str(value), False)


def table(frame: pl.DataFrame) -> Table:
    shown = frame.head(MAX_ROWS)
    rows = [[_cell(v) for v in row] for row in shown.iter_rows()]
    return Table(list(frame.columns), rows, frame.height - shown.height)


def _figure(path: Path, page_folder: Path) -> Figure:
    from PIL import Image  # (matplotlib's dependency) only a page with figures needs it

    with Image.open(path) as image:
        width, height = image.size
    scale = min(1.0, 540 / width)
    return Figure(
        os.path.relpath(path, page_folder),
        path.stem.replace("_", " "),
        round(width * scale),
        round(height * scale),
    )


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 90:
        return f"{seconds:.1f} s"
    return f"{seconds / 60:.1f} min"


def _write(path: Path, text: str) -> None:
    """Whole or not at all: a reader opening the page while the run writes it sees the old one."""
    with written_aside(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


#: A change of the mean bounded slowdown smaller than this (%) is "about the same" in the headline.
NOTICEABLE = 1.0


def headline(record: RunRecord, arrived: pl.DataFrame, ingested: Collection[str], sections: list[Section]) -> dict:
    """What the top of the page says at a glance: what changed (each log that arrived and went in, by
    name, with its EASY numbers; a file that failed is a failure, not a change), what got better or
    worse, what failed and what was skipped (the details follow, folded)."""
    came = arrived.filter(pl.col("file").is_in(list(ingested)))
    replayed = next((s.replayed for s in sections if s.replayed is not None), None)
    changed = [
        f"SWF log {row['file']} {row['state']}{_easy_numbers(replayed, row['file'])}"
        for row in came.filter(pl.col("kind") == "swf").iter_rows(named=True)
    ]
    parts = came.filter(pl.col("kind") == "google").group_by("state").len().sort("state").rows()
    changed += [f"{n:,} trace part{'s' * (n != 1)} {state}" for state, n in parts]
    better: list[str] = []
    worse: list[str] = []
    same: list[str] = []
    for section in sections:
        if section.changes is None:
            continue
        for row in section.changes.iter_rows(named=True):
            line = (
                f"{row['log']} {row['scheduler']}: mean bounded slowdown {row['bsld before']:,.3g} → "
                f"{row['bsld now']:,.3g} ({row['change %']:+.0f} %)"
            )
            if row["jobs before"] != row["jobs now"]:
                line += f", on {row['jobs now']:,} jobs instead of {row['jobs before']:,} (the log changed)"
            if row["engine"] != "same":
                line += f" (engine {row['engine']})"
            change = row["change %"]
            (better if change < -NOTICEABLE else worse if change > NOTICEABLE else same).append(line)
    return {
        "changed": changed,
        "better": better,
        "worse": worse,
        "same": same,
        "failures": list(record.errors),
        "skipped": [f"{s.title}: {s.skipped}" for s in sections if s.skipped],
    }


def _easy_numbers(replayed: pl.DataFrame | None, log: str) -> str:
    """`: mean bounded slowdown EASY 3.1, EASY-SJBF 2.8, EASY++ 2.5 on 1,500 jobs` for a log replayed
    tonight (nothing when it was not)."""
    if replayed is None:
        return ""
    rows = replayed.filter(pl.col("log") == log, pl.col("status") == "ok")
    if rows.is_empty():
        return ""
    values = ", ".join(f"{r['scheduler']} {r['mean_bounded_slowdown']:,.3g}" for r in rows.iter_rows(named=True))
    jobs = int(rows["jobs"].max())  # type: ignore[arg-type]
    return f": mean bounded slowdown {values} on {jobs:,} jobs"


def arrivals(arrived: pl.DataFrame) -> pl.DataFrame:
    """The files that arrived, a trace's parts summed per table (a night of 60 parts is 6 lines)."""
    if arrived.is_empty():
        return arrived
    table = pl.col("file").str.split("/").list.first()
    return (
        arrived.with_columns(pl.when(pl.col("kind") == "google").then(table).otherwise(pl.col("file")).alias("file"))
        .group_by("kind", "file", maintain_order=True)
        .agg(
            pl.len().alias("files"),
            pl.col("state").unique(maintain_order=True).str.join(", ").alias("state"),
            pl.col("bytes").sum(),
        )
    )


def render_run(
    folder: Path,
    record: RunRecord,
    lake_root: Path,
    arrived: pl.DataFrame,
    ignored: list[str],
    quarantine: pl.DataFrame,
    sections: list[Section],
    counts: dict[str, int],
    ingested: Collection[str],
    snapshot: int | None = None,
) -> Path:
    """Write the run's page into `folder` (which holds its figures); returns the page.  `snapshot`: the
    DuckLake lake's snapshot that holds what the page shows (None: a lake of the DuckDB-catalog format)."""
    folder.mkdir(parents=True, exist_ok=True)
    elapsed = (record.finished_at - record.started_at).total_seconds() if record.finished_at else None
    page = (
        _environment()
        .get_template("run.html.j2")
        .render(
            css=_css(),
            run=record,
            lake=str(lake_root),
            snapshot=snapshot,
            started=record.started_at.strftime("%Y-%m-%d %H:%M:%S %Z"),
            duration=f"took {_duration(elapsed)}" if elapsed is not None else "still running",
            counts=counts,
            headline=headline(record, arrived, ingested, sections),
            arrived=table(arrivals(arrived)) if not arrived.is_empty() else None,
            ignored=ignored,
            quarantine=table(quarantine) if not quarantine.is_empty() else None,
            sections=[
                {
                    "key": s.key,
                    "title": s.title,
                    "seconds": s.seconds,
                    "error": s.error,
                    "skipped": s.skipped,
                    "notes": s.notes,
                    "tables": [(caption, table(frame)) for caption, frame in s.tables],
                    "figures": [_figure(path, folder) for path in s.figures if path.exists()],
                }
                for s in sections
            ],
        )
    )
    target = folder / "index.html"
    _write(target, page)
    return target


def _reports_cell(row: dict) -> str:
    """The reports a run ran, those it skipped for too little data marked so."""
    skipped, failed = set(row.get("reports_skipped") or []), set(row["reports_failed"] or [])
    marks = {**{key: " (skipped)" for key in skipped}, **{key: " (failed)" for key in failed}}
    return ", ".join(key + marks.get(key, "") for key in row["reports_run"] or [])


def render_index(reports: Path, lake_root: Path, history: pl.DataFrame) -> Path:
    """`reports/index.html`: every recorded run, newest first, linked to its page when it has one."""
    reports.mkdir(parents=True, exist_ok=True)
    runs = []
    for row in history.iter_rows(named=True):
        page = reports / row["run"] / "index.html"
        finished, started = row["finished_at"], row["started_at"]
        runs.append(
            {
                "run": row["run"],
                "link": f"{row['run']}/index.html" if page.exists() else None,
                "status": row["status"],
                "started": started.strftime("%Y-%m-%d %H:%M") if started else "",
                "duration": _duration((finished - started).total_seconds()) if finished and started else "",
                "files_ingested": row["files_ingested"] or 0,
                "files_skipped": row["files_skipped"] or 0,
                "files_failed": row["files_failed"] or 0,
                "reports": _reports_cell(row),
                "problems": "; ".join(row["errors"] or []),
            }
        )
    page = _environment().get_template("index.html.j2").render(css=_css(), lake=str(lake_root), runs=runs)
    target = reports / "index.html"
    _write(target, page)
    return target
