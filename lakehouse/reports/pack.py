"""`lakehouse pack`: the periodic services of the Google trace packed onto machines
(lakehouse.models.packing); after `report periodicity`, whose fits it packs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from lakehouse.base.lake import Lake
from lakehouse.reports.base import Report, lazy

if TYPE_CHECKING:  # the model loads when the report runs, not when a command lists the reports
    from lakehouse.models.packing import Packed


@dataclass(frozen=True)
class PackRequest:
    query: str | None = None  # None: the periodic jobs of analysis.job_sinusoids
    capacity: float | None = None  # None: the most common machine's CPU capacity
    order: str = "c"
    clip: bool = False


def _pack(lake: Lake, request: PackRequest) -> Packed:
    from lakehouse.models.packing import DEFAULT_PACK_QUERY, pack_lake

    query = request.query or DEFAULT_PACK_QUERY
    return pack_lake(lake, query, request.capacity, order=request.order, clip=request.clip)


REPORT: Report[PackRequest, Packed] = Report(
    "pack",
    "Packing the periodic services onto machines (lakehouse pack)",
    ("analysis.packing",),
    _pack,
    lazy("lakehouse.models.packing:store_packing"),
    lambda p: [(f"{p.tasks:,} tasks of {p.jobs:,} jobs, machine capacity {p.capacity:g}", p.table)],
    follows="google",
    make=PackRequest,
    order=40,
)
