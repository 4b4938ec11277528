"""`lakehouse pack`: the periodic services of the Google trace packed onto machines
(lakehouse.models.packing.model); after `report periodicity`, whose fits it packs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lakehouse.base.lake import Lake
from lakehouse.base.report import Report
from lakehouse.base.traces import refuse_unfed
from lakehouse.models import packing as packing_topic

if TYPE_CHECKING:  # the model loads when the report runs, not when a command lists the reports
    from lakehouse.models.packing.model import Packed


@dataclass(frozen=True)
class PackRequest:
    query: str | None = None  # None: the periodic jobs of analysis.job_sinusoids
    capacity: float | None = None  # None: the most common machine's CPU capacity
    order: str = "c"
    clip: bool = False
    trace: str = "google-2011"  # google-2019: the periodic jobs of analysis.periodicity_2019, one cell
    cell: str | None = None  # google-2019: the cell [default: the only one fitted]


def _pack(lake: Lake, request: PackRequest) -> Packed:
    from lakehouse.models.packing.model import DEFAULT_PACK_QUERY, cell_to_pack, pack_lake, periodic_jobs_2019

    refuse_unfed("pack", request.trace, packing_topic.CANNOT_FEED)
    if request.trace == "google-2019":
        cell = cell_to_pack(lake, request.cell)
        query = request.query or periodic_jobs_2019(cell)
        return pack_lake(lake, query, request.capacity, order=request.order, clip=request.clip, cell=cell)
    query = request.query or DEFAULT_PACK_QUERY
    return pack_lake(lake, query, request.capacity, order=request.order, clip=request.clip)


def _store_packing(*args: Any, **kwargs: Any) -> Any:
    from lakehouse.models.packing.model import store_packing

    return store_packing(*args, **kwargs)


REPORT: Report[PackRequest, Packed] = Report(
    "pack",
    "Packing the periodic services onto machines (lakehouse pack)",
    packing_topic.TABLES,
    _pack,
    _store_packing,
    lambda p: [(f"{p.tasks:,} tasks of {p.jobs:,} jobs, machine capacity {p.capacity:g}", p.table)],
    follows="google",
    make=PackRequest,
    order=40,
)
