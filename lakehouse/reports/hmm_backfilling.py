"""`lakehouse report hmm-backfilling`: EASY against EASY with run-time distributions from the online
workload HMM, a campaign on the published study's logs (lakehouse.studies.hmm_backfilling)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from lakehouse.base.comma_lists import fractions
from lakehouse.base.errors import TooLittleDataError
from lakehouse.base.lake import Lake
from lakehouse.base.report import Argument, Call, Option, Report, Tables, campaign_option, view_option
from lakehouse.models.campaigns import CAMPAIGN_RUNS

if TYPE_CHECKING:  # the study loads when the report runs, not when a command lists the reports
    from lakehouse.campaigns.grid import Grid

SUMMARY = """EASY against EASY with run-time distributions from the online workload HMM (which also backfills
jobs EASY refuses when they delay the head with probability below the confidence), on the published
study's logs: mean wait, geometric mean wait (waits below 10 s counted as 10 s) and mean bounded
slowdown, each with its change against EASY on the same log, and the published figures beside.  CTC-SP2
is replayed on 512 processors, the whole machine, as the study did (its header gives the 338 of the
batch partition; with 338, EASY waits ten times the published figure).

The runs are a campaign (stored in analysis.campaign_runs under --name, with their schedules, so a
second call only prints); `--plots DIR` draws each log's CDF of waits.

Example: `lakehouse report hmm-backfilling KTH CTC-SP2 --backfill-confidence 0.05,0.2 --plots figures/`

Example: `lakehouse report hmm-backfilling --as-published`"""


def _confidences(text: str) -> list[str]:
    """The confidences as written (the grid keys runs by the text), each a number in (0, 1)."""
    return fractions(text, inclusive=False)


OPTIONS = (
    view_option("jobs_strong"),
    Option("predictor", "hmm", "The distribution predictor: hmm or hmm:KEY=VALUE,... (docs/hmm.md)."),
    Option(
        "backfill_confidence",
        "0.05",
        "Confidences to replay it with, comma-separated, each in (0, 1).",
        reads=_confidences,
    ),
    campaign_option("hmm-backfilling", "The campaign that keeps the runs (re-runs skip stored ones)."),
    Option(
        "as_published",
        False,
        "The model as the thesis sets it (16 states, Static-IV, uniform initial transitions, Baum-Welch on terminated "
        "jobs to L1 convergence, re-estimated by the thesis' rule, a week of warm-up, the whole history) instead of "
        "--predictor; ours is the default: faster, and within 3 points of it on each log's change of mean wait.",
    ),
)


@dataclass(frozen=True)
class Replayed:
    """The study's stored runs on the logs asked for, each on the machine it was replayed on."""

    grid: Grid
    rows: pl.DataFrame


def _chosen(lake: Lake, call: Call) -> list[str]:
    """The logs named, else those of the study the lake holds."""
    from lakehouse.base.log_names import select_logs
    from lakehouse.studies.hmm_backfilling import STUDY_LOGS

    known = lake.log_names()
    if call.argument:
        return select_logs(call.argument, known)
    chosen = [log for prefix in STUDY_LOGS for log in known if log.startswith(prefix)]
    if not chosen:
        raise TooLittleDataError(
            "none of the study's logs (KTH-SP2, CTC-SP2, SDSC-SP2, SDSC-BLUE) is in the lake: "
            "ingest them with `lakehouse ingest swf FILE...`, or name the logs to replay"
        )
    return chosen


def _campaign(lake: Lake, call: Call) -> Grid:
    from lakehouse.studies.hmm_backfilling import AS_PUBLISHED, study_grid

    o = call.read(OPTIONS)
    predictor = AS_PUBLISHED if o["as_published"] else o["predictor"]
    return study_grid(o["name"], _chosen(lake, call), o["view"], predictor, o["backfill_confidence"])


def _runs(lake: Lake, call: Call) -> tuple[list[tuple[Grid, list[str]]], list[str]]:
    """The campaign's runs on the logs it replayed (the logs are chosen once, for the campaign)."""
    grid = call.grid or _campaign(lake, call)
    return [(grid, list(grid.logs))], []


def _replayed(lake: Lake, settings: tuple[Grid, list[str]]) -> Replayed:
    from lakehouse.campaigns.runner import campaign_rows

    grid, chosen = settings
    rows = campaign_rows(lake, grid.name).filter(pl.col("log").is_in(chosen))
    return Replayed(grid, grid.on_its_machines(rows, lake.log_names()))


def _show(result: Replayed) -> Tables:
    from lakehouse.studies.hmm_backfilling import study_table

    return [(f"EASY vs EASY+HMM ({result.grid.view})", study_table(result.rows))]


def _plot(lake: Lake, result: Replayed, folder: Path) -> list[Path]:
    from lakehouse.campaigns.runner import JOBS_FOLDER
    from lakehouse.studies.hmm_backfilling import wait_cdfs

    return wait_cdfs(lake, result.rows, folder, lake.root / JOBS_FOLDER / result.grid.name)


REPORT: Report[tuple[Grid, list[str]], Replayed] = Report(
    "hmm-backfilling",
    "EASY against EASY with the workload HMM's run-time distributions (lakehouse report hmm-backfilling)",
    (CAMPAIGN_RUNS,),
    _replayed,
    None,  # the campaign stored its runs as each ended
    _show,
    _plot,
    options=OPTIONS,
    order=90,
    summary=SUMMARY,
    doing=lambda settings: f"reading the runs of campaign {settings[0].name}...",
    argument=Argument(
        "logs", "SWF logs: names, unique prefixes or globs [default: KTH-SP2, CTC-SP2, SDSC-SP2, SDSC-BLUE].", many=True
    ),
    runs=_runs,
    campaign=_campaign,
    keep_schedules=True,
)
