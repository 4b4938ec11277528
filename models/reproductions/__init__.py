"""Every published number beside ours (`lakehouse reproduce`): its stored table."""

from __future__ import annotations

import pyarrow as pa

from lakehouse.base.tables import StoredTable, fields

#: analysis.reproductions: per study, each published number beside ours (`lakehouse reproduce`).
REPRODUCTIONS_SCHEMA = pa.schema(
    [
        *fields(pa.string(), "study", "source", "trace", "log", "quantity", "setting"),
        *fields(pa.float64(), "published", "ours", "difference", "relative_pct"),
        *fields(pa.string(), "unit", "status", "experiment", "note"),
    ]
)

REPRODUCTIONS = StoredTable(
    "reproductions",
    REPRODUCTIONS_SCHEMA,
    grain="one row per published number of a study, as `lakehouse reproduce STUDY` last computed it",
    description=(
        "The published studies beside our runs: the paper's table (source), the trace as the paper names it, "
        "the lake's log it was compared on (NULL when the lake lacks it), the quantity and the setting the "
        "paper states, the published value, ours, ours minus published (difference), that difference in "
        "percent of the published value (relative_pct), the unit, and a status that says why a row has no "
        "value of ours."
    ),
)

TABLES = (REPRODUCTIONS,)
