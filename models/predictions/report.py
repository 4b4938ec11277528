"""`lakehouse report predictions`: sliding-window predictions of walltime, memory and processors, per
SWF log or for the Google trace (lakehouse.models.predictions.model)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from lakehouse.base.errors import RunSkipped
from lakehouse.base.lake import Lake
from lakehouse.base.partitions import Partitioning
from lakehouse.base.report import PARTITION_OPTIONS, Argument, Call, Option, Report, Shown
from lakehouse.models.predictions import PREDICTIONS_JOBS, PREDICTIONS_SCORES

if TYPE_CHECKING:  # the model loads when the report runs, not when a command lists the reports
    from lakehouse.models.predictions.model import Predictions, PredictionSettings


@dataclass(frozen=True)
class Source:
    """One source to predict: an SWF log (family `swf`), the Google 2011 trace (`google`) or a cell of the
    2019 trace (`google2019`, named `google-2019-a` ...)."""

    family: str
    name: str
    settings: PredictionSettings | None = None  # None: the defaults
    partitioning: Partitioning = Partitioning()  # by a hash of the workflow [default: one, in this process]
    named: bool = True  # the user named it (or its trace): a source without targets is then an error


SUMMARY = """Predict each job's walltime, memory and processors (Google: each task's CPU and memory, mean and
peak) from the jobs of its workflow that had completed before it was submitted, and score the
predictions against the users' own requests.  Google's 2019 trace is predicted per cell (each cell is
its own cluster: source google-2019-a, ...), from its ended tasks, in its units (NCU, normalised memory).

Scenarios: the users' requests; each workflow grouping with the maximum of its whole history; then for
one grouping a sliding window over the last k completed jobs (k chosen per user and resource on the
first 80 % of the user's jobs), + cold-start profiles, and the mean, median, 90 % quantile and mean of
the last two over the same window for comparison.  Scores, on the last 20 % of each user's jobs: loss =
sum of w |predicted - used| x walltime (resource units x hours; w: --under, --over), the loss relative
to the requests, accuracy min(p, u) / max(p, u), the share under-estimated and the share of reserved
resource-time freed.  Stored as analysis.predictions_scores and analysis.predictions_jobs; `lakehouse
simulate LOG --predictor column:predicted_walltime` schedules with the walltime predictions.

The workflows may be split into partitions by a hash of the workflow (`--partitions N`, default one:
what spans workflows -- the train/evaluation split, the profiles, each user's window -- is computed
once or summed), and the partitions run as Ray tasks on a cluster (`--ray auto|HOST:PORT`,
docs/scale-out.md); the predictions do not depend on either.

Example: `lakehouse report predictions HPC2N-2002-2.2-cln --plots figures/`, or on 2019: `lakehouse report
predictions google-2019 --grouping "logical name"`"""


def _grouping_names(*args: Any, **kwargs: Any) -> Any:
    from lakehouse.models.predictions.model import grouping_names

    return grouping_names(*args, **kwargs)


def _write_report(*args: Any, **kwargs: Any) -> Any:
    from lakehouse.models.predictions.model import write_report

    return write_report(*args, **kwargs)


OPTIONS = (
    Option(
        "grouping",
        None,
        "Workflow grouping of the sliding-window scenarios (SWF: user, user+group, application, queue, request "
        "signature; Google: job, user, logical name, request signature) [default: the one with the least loss "
        "among the 'max of all history' rows].",
        holds=str,
        choices=_grouping_names,
    ),
    Option(
        "window",
        None,
        "Window of k completed jobs [default: chosen per user on their first 80 %].",
        minimum=1,
        maximum=1_000_000_000,
        holds=int,
    ),
    Option("local_profile", True, "Cold start from the user's used/requested ratio."),
    Option("global_profile", True, "Cold start from everyone's used/requested ratio."),
    Option("under", 1.0, "Loss weight of an under-estimate.", minimum=0, maximum=1e6),
    Option("over", 0.5, "Loss weight of an over-estimate.", minimum=0, maximum=1e6),
)


def _settings(options: Mapping[str, Any]) -> PredictionSettings:
    from lakehouse.models.predictions.model import PredictionSettings

    return PredictionSettings(**{o.name: options[o.name] for o in OPTIONS})


def _runs(lake: Lake, call: Call) -> tuple[list[Source], list[str]]:
    """One run per source named (when none is, every one the lake may predict), and the logs left out."""
    from lakehouse.models.predictions.model import choose_sources

    settings = _settings(call.options)  # checked before the lake is read
    partitioning = _partitioning(call.options)
    found, skipped = choose_sources(lake, call.argument)
    named = bool(call.argument)
    runs = [Source(family, name, settings, partitioning, named) for family, name in found]
    return runs, [f"skipped {reason}" for reason in skipped]


def _partitioning(options: Mapping[str, Any]) -> Partitioning:
    return Partitioning(options["partitions"], options["ray"])


def _predictions(lake: Lake, source: Source) -> Predictions:
    from lakehouse.models.predictions.model import NoTargetsError, PredictionSettings, report

    try:
        return report(lake, source.family, source.name, source.settings or PredictionSettings(), source.partitioning)
    except NoTargetsError as exc:
        if source.named:
            raise
        raise RunSkipped(str(exc)) from None


def _plot_predictions(lake: Lake, result: Predictions, folder: Path) -> list[Path]:
    from lakehouse.models.predictions.plots import plot_predictions

    source = str(result.table["source"][0])
    if result.frame is None and result.final is None:  # stored on a team lake's object store: read it there
        jobs = lake.query("SELECT * FROM analysis.predictions_jobs WHERE source = $1 AND NOT train", [source])
    else:
        jobs = result.jobs_where(~pl.col("train"))
    return plot_predictions(jobs, source, folder)


def _glance(result: Predictions) -> pl.DataFrame:
    from lakehouse.models.predictions.model import glance

    return glance(result.table)


def _nightly(lake: Lake, logs: Sequence[str], options: Mapping[str, Any]) -> tuple[list[Any], list[str]]:
    """Each changed SWF log that has targets to predict; a note for each that has none."""
    from lakehouse.models.predictions.model import log_sources, no_targets

    with_targets = set(log_sources(lake))
    notes = [f"skipped {no_targets(log)}" for log in logs if log not in with_targets]
    settings, partitioning = _settings(options), _partitioning(options)
    return [Source("swf", log, settings, partitioning) for log in logs if log in with_targets], notes


def _present(results: list[Predictions], terminal: bool) -> list[Shown]:
    return [Shown(f"{len(results)} source(s) scored", pl.concat([r.table for r in results]))]


REPORT: Report[Source, Predictions] = Report(
    "predictions",
    "Walltime, memory and processor predictions (lakehouse report predictions)",
    (PREDICTIONS_SCORES, PREDICTIONS_JOBS),
    _predictions,
    _write_report,
    lambda r: [(f"{r.table['source'][0]}: sliding windows over the {r.grouping!r} grouping", _glance(r))],
    _plot_predictions,
    follows="swf",
    options=OPTIONS + PARTITION_OPTIONS,
    nightly=_nightly,
    order=10,
    summary=SUMMARY,
    doing=lambda source: f"predicting {source.name}...",
    notes=lambda r: [f"{r.table['source'][0]}: sliding windows over the {r.grouping!r} grouping"],
    argument=Argument(
        "sources",
        "SWF log names, `google` (the 2011 trace), `google-2019` (each ingested cell of the 2019 trace) or one "
        "cell (`google-2019-a`) [default: every SWF log with something to predict and every cloud trace or cell "
        "ingested; one without anything to predict is skipped, saying so].",
        many=True,
    ),
    runs=_runs,
    present=_present,
)
