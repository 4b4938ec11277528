"""What every study of `lakehouse reproduce` shares: the request, a study's declaration (`Study`), the
row of one published number beside ours, and the lake's log for an archive log name."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from lakehouse.base.errors import LakehouseError
from lakehouse.base.lake import Lake
from lakehouse.base.log_names import LogNameError, logs_named
from lakehouse.base.published import Published

if TYPE_CHECKING:
    from lakehouse.campaigns.grid import Grid

COLUMNS = ["study", "source", "trace", "log", "quantity", "setting", "published", "ours", "unit", "note"]
MEASURED = "measured"
#: The cleaned jobs the studies built on campaigns replay.
STUDY_VIEW = "jobs_strong"


@dataclass(frozen=True)
class Request:
    study: str
    campaign: str | None = None  # eloss-triples, selection: the campaign that keeps its runs [default: reproduce-STUDY]
    workers: int | None = None  # campaigns: processes [default: cores]
    quick: bool = False  # selection: 10 resamples instead of the paper's 100


#: A study's rows: one per published number (`row`), in the order of the numbers given.
Rows = Callable[[Lake, list[Published], Request], list[dict[str, object]]]


@dataclass(frozen=True)
class Study:
    """One published study: its name (the data file's `study`), how our numbers are made, and what
    `lakehouse reproduce --help` says of it.  A module of this package whose `STUDY` is one is a study
    of `reproduce`, with no list to edit; `order` places it in the help and in the errors."""

    name: str
    rows: Rows
    summary: str
    order: int
    #: The paper, as the output cites it (the data file names the study only).
    citation: str
    #: The lake its record (docs/reproduced, `make reproductions`) is made on: the archive's logs, or
    #: the Google trace's sample.
    lake: Literal["swf", "google"] = "swf"
    #: Whether a number is within only half the paper's last printed digit, not 5 % of it
    #: (lakehouse.base.published.within_tolerance): the workload HMM's stays, whole bits near zero.
    last_digit_only: bool = False


def row(p: Published, log: str | None, ours: float | None, note: str) -> dict[str, object]:
    return {
        "study": p.study,
        "source": p.source,
        "trace": p.trace,
        "log": log,
        "quantity": p.quantity,
        "setting": p.setting,
        "published": p.value,
        "ours": ours,
        "unit": p.unit,
        "note": note,
    }


def lake_log(prefix: str, known: Sequence[str]) -> str | None:
    """The lake's log for an archive log name (one rule: lakehouse.base.log_names), None if it has none."""
    if not prefix:
        return None
    try:
        return logs_named(prefix, known)[0]
    except LogNameError:
        return None


def study_logs(rows: list[Published], known: Sequence[str]) -> tuple[dict[str, str | None], list[str]]:
    """The lake's log for each archive log the rows name (None: the lake lacks it), and those present,
    each once, in the data file's order."""
    logs = {p.log: lake_log(p.log, known) for p in rows if p.log}
    return logs, [log for log in dict.fromkeys(logs.values()) if log is not None]


def by_log(rows: list[Published], known: Sequence[str]) -> Iterator[tuple[str | None, list[Published]]]:
    """The rows grouped by the archive log they belong to, in the data file's order, each group with the
    lake's log for it (None: the lake lacks it)."""
    for prefix in dict.fromkeys(p.log for p in rows):
        yield lake_log(prefix, known), [p for p in rows if p.log == prefix]


def lacking(p: Published) -> str:
    if not p.log:
        return "no log: a total over the study's logs, computed when all of them are in the lake"
    return f"the lake has no {p.log} log (ingest it from the Parallel Workloads Archive: `lakehouse ingest swf FILE`)"


def run_campaign_of(lake: Lake, grid: Grid, request: Request) -> None:
    """A study's campaign: the runs it lacks (a second call only reads)."""
    from lakehouse.campaigns.executors import local_executor
    from lakehouse.campaigns.runner import run_campaign

    executor = local_executor(request.workers or os.cpu_count() or 1, grid.name, grid.view, grid.tau)
    with lake.scratch_folder("reproduce") as scratch:
        outcome = run_campaign(lake, grid, executor, scratch=scratch)
    if outcome.failed:
        raise LakehouseError(f"{outcome.failed} replay(s) of the study failed (lakehouse campaign show {grid.name})")
