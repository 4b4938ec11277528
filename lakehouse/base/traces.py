"""The cloud traces by name, in one place: what the exports need to know of each (its clock, its units),
and the one-line refusal of a report a trace cannot feed yet (each topic says which and why)."""

from __future__ import annotations

from collections.abc import Mapping

from lakehouse.base.errors import TooLittleDataError

#: The cloud traces `export swf|batsim|opendc --trace` convert (through the common views, cluster.*): the
#: seconds their clock runs before the trace starts, and whether a unit of their CPU is a whole (largest)
#: machine, which --cores-per-machine turns into cores, or already a core.
CLUSTER_TRACES = {"google-2011": (600, "machine"), "google-2019": (600, "machine"), "alibaba-2018": (0, "core")}
#: Units of each trace's memory in a whole machine (Google: the largest machine is 1; Alibaba: 0-100).
MEMORY_UNITS_PER_MACHINE = {"google-2011": 1, "google-2019": 1, "alibaba-2018": 100}

#: The cloud traces a report's `--trace` names (and, on 2019, `--cell`).
TRACES = tuple(CLUSTER_TRACES)


def refuse_unfed(report: str, trace: str, cannot_feed: Mapping[str, str]) -> None:
    """A clear refusal (TooLittleDataError) when `trace` cannot feed `report`: `cannot_feed`, the traces
    the report's topic says it cannot read, each with why in one line (its `CANNOT_FEED`)."""
    if reason := cannot_feed.get(trace):
        raise TooLittleDataError(f"{trace} cannot feed {report}: {reason}")
