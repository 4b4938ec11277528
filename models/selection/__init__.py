"""Online policy selection on week resamples (lakehouse.studies.selection): its stored tables."""

from __future__ import annotations

import pyarrow as pa

from lakehouse.base.tables import StoredTable, fields

#: analysis.selection_runs, `lakehouse report selection`: per campaign, log and strategy, the ratio of
#: the average wait to EASY-FCFS's on the same week resample, over the resamples.
SELECTION_RUNS_SCHEMA = pa.schema(
    [
        *fields(pa.string(), "campaign", "log", "strategy"),
        pa.field("resamples", pa.int64()),
        *fields(pa.float64(), "mean_ratio", "p10_ratio", "p90_ratio", "mean_wait"),
    ]
)

SELECTION_RUNS = StoredTable(
    "selection_runs",
    SELECTION_RUNS_SCHEMA,
    grain="one row per selection campaign, log and strategy, as `lakehouse report selection` last computed it",
    description=(
        "The online policy-selection study (docs/selection.md) per log: for every fixed queue policy of EASY "
        "and every selector (full, noisy, egreedy at a period of a week or a day), the ratio of its average "
        "wait to EASY-FCFS's on the same week resample, averaged over the resamples (mean_ratio) with its "
        "10th and 90th percentiles, and the mean of its average waits in seconds."
    ),
)

#: analysis.selection_curves: the same ratio on the jobs submitted up to the end of each week.
SELECTION_CURVES_SCHEMA = pa.schema(
    [
        *fields(pa.string(), "campaign", "log", "strategy"),
        pa.field("week", pa.int64()),
        *fields(pa.float64(), "mean_ratio", "p10_ratio", "p90_ratio"),
    ]
)

SELECTION_CURVES = StoredTable(
    "selection_curves",
    SELECTION_CURVES_SCHEMA,
    grain="one row per selection campaign, log, strategy and week",
    description=(
        "The policy-selection study over time: for the jobs submitted up to the end of each week of a "
        "resample, the ratio of a strategy's average wait to EASY-FCFS's on the same resample, averaged over "
        "the resamples (mean_ratio) with its 10th and 90th percentiles."
    ),
)

TABLES = (
    SELECTION_RUNS,
    SELECTION_CURVES,
)
