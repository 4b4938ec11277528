"""Every trace of the lake side by side: one query of aggregates over the common views cluster.*
(its memory does not grow with the traces but through the medians of job sizes and durations, one
value per job), and the jobs' durations and sizes in log bins for the figures."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from lakehouse.base.catalog import named_query
from lakehouse.base.errors import TooLittleDataError
from lakehouse.base.lake import Lake
from lakehouse.base.results import store
from lakehouse.models.compare_traces import TRACE_COMPARISON


@dataclass(frozen=True)
class Comparison:
    table: pl.DataFrame  # one row per trace and cell (TRACE_COMPARISON's columns)
    distributions: pl.DataFrame  # trace, cell, measure (duration_s, size), bin (log10 lower edge), jobs


def compare(lake: Lake) -> Comparison:
    with lake.reading():
        table = lake.query(named_query("trace_comparison", __package__))
        distributions = lake.query(named_query("trace_distributions", __package__))
    if table.is_empty():
        raise TooLittleDataError("no trace in the lake: ingest an SWF log or a cluster trace first")
    return Comparison(table, distributions)


def store_comparison(lake: Lake, result: Comparison) -> None:
    store(lake, TRACE_COMPARISON, result.table)


def label(trace: str, cell: str | None) -> str:
    """How a row is named in a table's caption or a figure's legend: `swf KTH-SP2-...`, `google-2019 a`."""
    return trace if cell is None else f"{trace} {cell}"
