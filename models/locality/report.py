"""`lakehouse report locality`: the runtime locality of submit times and users, one SWF log at a time
(lakehouse.models.locality.model)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from lakehouse.base.comma_lists import split_list
from lakehouse.base.errors import SettingsError, TooLittleDataError
from lakehouse.base.lake import Lake
from lakehouse.base.log_names import select_logs
from lakehouse.base.report import Argument, Call, Option, Report, Shown, Tables
from lakehouse.base.units import parse_duration
from lakehouse.models import locality as locality_topic

if TYPE_CHECKING:  # the model loads when the report runs, not when a command lists the reports
    from lakehouse.models.locality.model import LocalitySettings, Measured, Variant

SUMMARY = """How much a job's submit time (or its user) tells about its run time: the runtime locality
f = I(S; R) - mean over shuffles of I(S; R shuffled), in bits.

R = floor(ln(max(run time, 1)) / ln(t_r)) is the job's run-time bin (run times below 1.5 s share the
bin of 1 s); S is its submit bin floor(submit / t_s) (variant time), its user (user) or both
(time+user).  I is the plug-in mutual information over the non-empty cells; the shuffles permute R over
the jobs (the same permutations for every cell of a log) and measure what I would be by chance with
this many bins, so f is the information beyond that.  Every cell of the grid t_s x t_r is measured;
the table shows f per cell for the time variant and each variant's best cell.  Jobs count when their
submit time, run time and one processor count (allocated or requested) are known; the user variants
also need the user.  Stored as analysis.locality, per log and cell: a later run replaces the cells it
computes and keeps the others.

`--plots DIR` writes a heatmap of f per log.  `--format csv|json|parquet` prints the full grid.

Example: `lakehouse report locality SDSC-SP2 CTC-SP2 --plots figures/`

Example: `lakehouse report locality SDSC-SP2 --variant user --runtime-ratios 1.057,1.1,1.2`"""


def _submit_bins(text: str) -> list[float]:
    widths = [parse_duration(x) for x in split_list(text)]
    for width in widths:
        if width <= 0:
            raise SettingsError(f"a submit bin must be a positive number of seconds, not {width:g}")
    return widths


def _runtime_ratios(text: str) -> list[float]:
    try:
        ratios = [float(x) for x in split_list(text)]
    except ValueError:
        ratios = []
    if not ratios or not all(math.isfinite(r) and r > 1 for r in ratios):
        raise SettingsError(f"{text!r}: give numbers above 1, e.g. 1.2,1.49")
    return ratios


def _variants(text: str) -> list[Variant]:
    from lakehouse.models.locality.model import Variant

    try:
        return [Variant(v) for v in split_list(text)]
    except ValueError:
        raise SettingsError(f"{text!r}: choose among time, user, time+user") from None


OPTIONS = (
    Option(
        "submit_bins",
        None,
        "Submit-time bin widths t_s, comma-separated: seconds or with a unit (s, min, h, d, w) "
        "[default: 10 min to 30 d, the study's cells].",
        holds=str,
        reads=_submit_bins,
    ),
    Option(
        "runtime_ratios",
        None,
        "Run-time bin ratios t_r (> 1), comma-separated [default: 1.03 to 2.5, the study's cells].",
        holds=str,
        reads=_runtime_ratios,
    ),
    Option(
        "variant",
        "time,user,time+user",
        "Comma-separated: time (S = submit bin), user (S = user), time+user (S = the pair).",
        reads=_variants,
    ),
    Option("shuffles", 10, "Shuffles of the run-time bins whose mean is subtracted (0 to 1,000)."),
    Option("seed", 0, "Seed of the shuffles."),
)


def _runs(lake: Lake, call: Call) -> tuple[list[tuple[str, LocalitySettings]], list[str]]:
    """One run per log named (every log of the lake when none is), with the same settings."""
    from lakehouse.models.locality.model import RUNTIME_RATIOS, SUBMIT_BINS, LocalitySettings, Variant

    o = call.read(OPTIONS)
    settings = LocalitySettings(
        submit_bins=o["submit_bins"] or list(SUBMIT_BINS),
        runtime_ratios=o["runtime_ratios"] or list(RUNTIME_RATIOS),
        variants=o["variant"] or list(Variant),
        shuffles=o["shuffles"],
        seed=o["seed"],
    )
    chosen = select_logs(call.argument, lake.log_names()) if call.argument else lake.log_names()
    if not chosen:
        raise TooLittleDataError("no SWF log in the lake (run `lakehouse ingest swf FILE` first)")
    return [(log, settings) for log in chosen], []


def _locality(lake: Lake, settings: tuple[str, LocalitySettings]) -> Measured:
    from lakehouse.models.locality.model import measure

    return measure(lake, *settings)


def _notes(result: Measured) -> list[str]:
    """How many of the log's jobs were used, and which rules left the others out."""
    c, log = result.jobs.counts, result.jobs.log
    dropped = ", ".join(
        f"{c[k]:,} {k.replace('_', ' ')}" for k in ("no_submit_time", "no_run_time", "no_processors") if c[k]
    )
    notes = [f"{log}: {c['kept']:,} of {c['in_log']:,} jobs used" + (f" (left out: {dropped})" if dropped else "")]
    if c["unknown_user"] and set(result.grid["variant"]) - {"time"}:
        notes.append(f"{log}: {c['unknown_user']:,} jobs of unknown user left out of the user variants")
    return notes


def _show_locality(result: Measured) -> Tables:
    from lakehouse.models.locality.model import best_cells

    return [(f"{result.jobs.log}: best cell of each variant", best_cells(result.grid))]


def _present(results: list[Measured], terminal: bool) -> list[Shown]:
    """On a terminal: f by t_s and t_r of each log (time variant), then each log's and variant's best
    cell; in a file: every cell."""
    from lakehouse.models.locality.model import Variant, best_cells, pivot

    frame = pl.concat([r.grid for r in results])
    if not terminal:
        return [Shown(f"{frame.height:,} cells", frame)]
    pivots = [
        Shown(f"{r.jobs.log}: f (bits) by t_s and t_r", pivot(frame, r.jobs.log, Variant.time))
        for r in results
        if (r.grid["variant"] == str(Variant.time)).any()
    ]
    return [*pivots, Shown("best cell of each log and variant", best_cells(frame))]


def _plot_locality(lake: Lake, result: Measured, folder: Path) -> list[Path]:
    from lakehouse.models.locality.plots import plot_locality

    return plot_locality(result.grid, folder)


def _store_measured(*args: Any, **kwargs: Any) -> Any:
    from lakehouse.models.locality.model import store_measured

    return store_measured(*args, **kwargs)


REPORT: Report[tuple[str, LocalitySettings], Measured] = Report(
    "locality",
    "Runtime locality of submit times and users (lakehouse report locality)",
    locality_topic.TABLES,
    _locality,
    _store_measured,
    _show_locality,
    _plot_locality,
    options=OPTIONS,
    order=50,
    summary=SUMMARY,
    doing=lambda s: f"measuring locality of {s[0]}...",
    notes=_notes,
    argument=Argument(
        "logs", "SWF logs: names, unique prefixes or globs ('SDSC-*') [default: every log in the lake].", many=True
    ),
    runs=_runs,
    present=_present,
)
