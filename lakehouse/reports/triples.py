"""`lakehouse report triples`: the heuristic triples of a stored campaign (lakehouse.studies.triples)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lakehouse.base.lake import Lake
from lakehouse.base.report import Argument, Call, Report, Shown
from lakehouse.models import triples as triples_topic

if TYPE_CHECKING:  # the study loads when the report runs, not when a command lists the reports
    from lakehouse.studies.triples import TripleTables

SUMMARY = """The SC'15 heuristic-triple tables from a campaign's stored runs (mean bounded slowdown), kept
in the lake as analysis.triples and analysis.triples_loo; the initial predictions of every run are
scored in analysis.prediction_errors.

Per log: clairvoyant predictions with queue-order and SJBF backfilling, EASY, EASY++, and the best and
worst learned (E-Loss) triple for each backfilling order.  Then leave-one-out: for each log held out,
the triple with the least sum over the other logs, its value on the held-out log and its reduction
against EASY and EASY++, and Pearson's correlation of the triples' results between every two logs
(mean, least, greatest).  --plots replays each log with AVE2, a squared-loss regression and the E-Loss
(EASY-SJBF) and draws the ECDFs of their prediction errors and predicted values, and a scatter of every
triple's result on one log against another.

Example: `lakehouse campaign run --preset triples --name triples --view jobs_strong --log KTH --log CTC
--log SDSC-SP2 --machine-size CEA-Curie=80640` then `lakehouse report triples triples --plots figures`"""


def _runs(lake: Lake, call: Call) -> tuple[list[str], list[str]]:
    return [call.argument], []


def _notes(result: TripleTables) -> list[str]:
    """Pearson's correlation of the triples' results between two logs, or why there is none."""
    if result.per_log.height < 2:
        return ["one log only: leave-one-out needs at least two"]
    from lakehouse.studies.triples import log_correlations

    pearson = log_correlations(result.rows).drop_nulls("pearson")["pearson"].to_numpy()
    return [
        f"Pearson correlation of the triples' results between two logs, over {len(pearson)} couples: "
        f"mean {pearson.mean():.2f}, least {pearson.min():.2f}, greatest {pearson.max():.2f}"
    ]


def _present(results: list[TripleTables], terminal: bool) -> list[Shown]:
    [result] = results
    shown = [Shown(f"triples of campaign {result.campaign}: mean bounded slowdown per log", result.per_log)]
    if result.per_log.height >= 2:
        shown.append(Shown("leave-one-out selection", result.loo, aside="loo"))
    return shown


def _plot_triples(lake: Lake, result: TripleTables, folder: Path) -> list[Path]:
    from lakehouse.studies.triples_plots import triples_plots

    return triples_plots(lake, result.rows, folder)


def _triple_tables(*args: Any, **kwargs: Any) -> Any:
    from lakehouse.studies.triples import triple_tables

    return triple_tables(*args, **kwargs)


def _store_tables(*args: Any, **kwargs: Any) -> Any:
    from lakehouse.studies.triples import store_tables

    return store_tables(*args, **kwargs)


REPORT: Report[str, TripleTables] = Report(
    "triples",
    "Heuristic triples of a campaign (lakehouse report triples)",
    triples_topic.TABLES,
    _triple_tables,
    _store_tables,
    lambda result: [("mean bounded slowdown per log", result.per_log), ("leave-one-out selection", result.loo)],
    _plot_triples,
    order=70,
    summary=SUMMARY,
    doing=lambda campaign: f"reading the runs of campaign {campaign}...",
    notes=_notes,
    argument=Argument("campaign", "A campaign run with `lakehouse campaign run --preset triples`.", default="triples"),
    runs=_runs,
    present=_present,
    drawing="replaying each log with three predictors for the figures...",
    output="Write the per-log table here and, in csv, json or parquet, the leave-one-out table to FILE-loo.EXT.",
)
