"""The cloud traces, each declared once (`Trace`, in its format module: its name, the schema of its
views and datasets, its tables, its clock and its units), and the one-line refusal of a report a trace
cannot feed yet (each topic says which and why).  The lake's datasets, the ingest's outputs, the
exports and every `--trace` follow the declarations (lakehouse.base.datasets gathers them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from lakehouse.base.errors import TooLittleDataError

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class Trace:
    """A cloud trace the lake ingests.  Its datasets are `<schema>_<table>` in `parquet/<schema>/<table>`
    and `<schema>_quarantine` in `quarantine/<schema>`; the manifest names an ingested file's dataset
    `<schema>.<table>`."""

    #: What `--trace` names: google-2011.
    name: str
    #: The schema of its views, and its datasets' prefix and folder: google.
    schema: str
    #: The tables it stores, and the Parquet schema of each.
    tables: tuple[str, ...]
    arrow_schema: Callable[[str], pa.Schema]
    #: The seconds its clock runs before the trace starts (the exports start at 0).
    clock_offset: int
    #: A unit of its CPU: a whole (largest) machine, which --cores-per-machine turns into cores, or a core.
    cpu_unit: Literal["machine", "core"]
    #: Units of its memory in a whole machine (Google: the largest machine is 1; Alibaba: 0-100).
    memory_units_per_machine: int
    #: The tables a file of a table also writes (2019's instance_events: their constraints).
    children: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Whether a file's quarantine is named TABLE.NAME (False: its name begins with its table already).
    quarantine_by_table: bool = True

    def dataset(self, table: str) -> str:
        return f"{self.schema}_{table}"

    def outputs(self, table: str, name: str) -> list[tuple[str, str]]:
        """(dataset key, file stem) of every output of an ingested file `name` of `table`."""
        children = [(self.dataset(child), name) for child in self.children.get(table, ())]
        quarantine = f"{table}.{name}" if self.quarantine_by_table else name
        return [(self.dataset(table), name), *children, (self.dataset("quarantine"), quarantine)]


def refuse_unfed(report: str, trace: str, cannot_feed: Mapping[str, str]) -> None:
    """A clear refusal (TooLittleDataError) when `trace` cannot feed `report`: `cannot_feed`, the traces
    the report's topic says it cannot read, each with why in one line (its `CANNOT_FEED`)."""
    if reason := cannot_feed.get(trace):
        raise TooLittleDataError(f"{trace} cannot feed {report}: {reason}")
