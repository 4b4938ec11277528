"""`lakehouse reproduce STUDY`: a published study beside our run of it, number by number."""

from __future__ import annotations

from typing import Annotated

import polars as pl
import typer

from lakehouse.base.lake import Lake
from lakehouse.base.render import OutputFormat, emit, stderr
from lakehouse.cli.common import (
    AsOfOption,
    FormatOption,
    LakeOption,
    MemoryLimitOption,
    OutputOption,
    PlotsOption,
    ThreadsOption,
    announce_plots,
    clear_errors,
    workers_option,
)
from lakehouse.cli.root import app
from lakehouse.reproduce import STUDIES

#: What names a row of `reproduce`'s table: the trace as the paper calls it and the quantity.
TABLE_KEYS = ("trace", "quantity")


def table_view(table: pl.DataFrame) -> pl.DataFrame:
    """The reproduction as a terminal shows it: after the keys, the paper's number, ours and their
    difference side by side (in the first block of columns at 80 columns), then the rest."""
    return table.select(
        *TABLE_KEYS, "published", pl.col("ours").round(3), pl.col("relative_pct").round(1).alias("diff %"),
        "status", "unit", pl.col("difference").round(3), "source", "log", "setting", "experiment", "note",
    )  # fmt: skip


@app.command()
@clear_errors
def reproduce(
    study: Annotated[str, typer.Argument(help=", ".join(STUDIES) + ".")],
    lake: LakeOption = None,
    campaign: Annotated[
        str | None,
        typer.Option(help="eloss-triples, selection: the campaign that keeps its runs [default: reproduce-STUDY]."),
    ] = None,
    workers: Annotated[int | None, workers_option("Processes of the studies' campaigns.")] = None,
    quick: Annotated[
        bool,
        typer.Option(
            help="selection: 10 week resamples per log instead of the paper's 100 (minutes instead of half an "
            "hour on five logs); the other studies run in minutes already and ignore it."
        ),
    ] = False,
    plots: PlotsOption = None,
    memory_limit: MemoryLimitOption = None,
    threads: ThreadsOption = None,
    fmt: FormatOption = OutputFormat.table,
    output: OutputOption = None,
    as_of: AsOfOption = None,
) -> None:
    """Every number a published study reports that public logs allow, beside ours: the paper's table,
    the trace, the lake's log it was compared on, the quantity and the setting the paper states, the
    published value, ours, their difference (ours - published) and the difference in percent, and the
    row's status: within 5 %, explained (beyond, with a cause an experiment found), unknown (beyond,
    without), not measured (the note says what the lake lacks) or ours alone (the paper leaves it
    blank); a row beyond 5 % names the experiment run on it, as docs/reproductions.md names it.

    {studies}  The studies' campaigns
    keep their runs: a second call only reads them.  A row whose log the lake lacks says so and has a
    value once the log is ingested; a row we do not compute says why.  Stored as
    analysis.reproductions, one set of rows per study; docs/reproductions.md explains the differences.

    On a DuckLake lake, --as-of N computes the study on the lake as snapshot N left it (listed by
    lakehouse snapshots), so a published number can be recomputed after later ingests; those rows are
    shown, not stored. The studies that run campaigns (eloss-triples, selection) cannot: a campaign stores
    its runs.

    Example: `lakehouse reproduce locality`

    Example: `lakehouse reproduce eloss-triples --format csv -o triples.csv`

    Example: `lakehouse reproduce selection --quick`
    """
    from lakehouse.reproduce import REPRODUCE, Request, cite, counts

    target = Lake(lake, memory_limit, threads, snapshot=as_of)  # (volatility groups the Google trace's usage)
    with stderr.status(f"reproducing {study}..."):
        result = REPRODUCE.run(target, Request(study, campaign, workers, quick))
    table = result.table
    if fmt is OutputFormat.table:
        emit(table_view(table), fmt, output, title=f"{study}: {cite(study)}", keys=TABLE_KEYS)
    else:
        emit(table, fmt, output, title=f"{study}: {cite(study)}")
    published = result.table["published"].is_not_null()
    ours = result.table["ours"].is_not_null()
    said = f"{(ours & published).sum()} of {published.sum()} published numbers measured"
    if not published.all():  # (quantities the paper names but leaves blank: ours alone)
        said += f", and {(ours & ~published).sum()} of {(~published).sum()} the paper leaves blank"
    statuses = ", ".join(f"{n} {status}" for status, n in counts(table).items() if n)
    stored = REPRODUCE.stored if as_of is None else f"(as of snapshot {as_of}; not stored)"
    stderr.print(f"{said} ({statuses}) {stored}")
    if plots is not None:
        announce_plots(REPRODUCE.plots(target, result, plots))


# The studies of the help are those of the package, each as its module says it (lakehouse.reproduce).
reproduce.__doc__ = (reproduce.__doc__ or "").replace(
    "{studies}", "Studies: " + "; ".join(f"`{s.name}` ({s.summary})" for s in STUDIES.values()) + "."
)
