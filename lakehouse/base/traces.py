"""The cloud traces by name, in one place: what the exports need to know of each (its clock, its units)
and which reports each cannot feed yet, with the reason said in one line."""

from __future__ import annotations

from lakehouse.base.errors import TooLittleDataError

#: The cloud traces `export swf|batsim|opendc --trace` convert (through the common views, cluster.*): the
#: seconds their clock runs before the trace starts, and whether a unit of their CPU is a whole (largest)
#: machine, which --cores-per-machine turns into cores, or already a core.
CLUSTER_TRACES = {"google-2011": (600, "machine"), "google-2019": (600, "machine"), "alibaba-2018": (0, "core")}
#: Units of each trace's memory in a whole machine (Google: the largest machine is 1; Alibaba: 0-100).
MEMORY_UNITS_PER_MACHINE = {"google-2011": 1, "google-2019": 1, "alibaba-2018": 100}

#: The cloud traces a report's `--trace` names (and, on 2019, `--cell`).
TRACES = tuple(CLUSTER_TRACES)

#: Why a trace cannot feed a report, in one line: the reports read Google's traces so far.
CANNOT_FEED = {
    ("volatility", "alibaba-2018"): (
        "the method compares each 5-minute window's mean CPU with one random second of it (Google's traces); "
        "Alibaba 2018 gives a batch instance's mean and maximum over its whole life, and a machine's CPU "
        "every ten seconds or so, never a window's random second"
    ),
    ("periodicity", "alibaba-2018"): (
        "the fits need services running through the trace with usage windows (Google's long-running jobs); "
        "Alibaba 2018's services are its containers, whose usage (container_usage) the report does not read "
        "yet, and its 8 days hold one week at most: no weekly component"
    ),
    ("pack", "alibaba-2018"): "pack packs the periodic jobs that report periodicity fits, and it fits none on it",
    ("predictions", "alibaba-2018"): (
        "the predictions need each job's request and its measured use: Alibaba 2018 has them (batch_task and "
        "batch_instance), but the report does not read them yet"
    ),
}


def refuse_unfed(report: str, trace: str) -> None:
    """A clear refusal (TooLittleDataError) when `trace` cannot feed `report` (CANNOT_FEED)."""
    if reason := CANNOT_FEED.get((report, trace)):
        raise TooLittleDataError(f"{trace} cannot feed {report}: {reason}")
