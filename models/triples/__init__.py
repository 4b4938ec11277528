"""Learned (prediction, correction, backfilling) triples and their leave-one-out selection
(lakehouse.studies.triples): their stored tables."""

from __future__ import annotations

import pyarrow as pa

from lakehouse.base.tables import StoredTable, fields

#: analysis.triples, `lakehouse report triples`: per campaign and log, the mean bounded slowdown of the
#: reference triples and of the best and worst learned triple per backfilling order (with its name).
TRIPLE_BACKFILLS = ("queue", "sjbf")

TRIPLES_SCHEMA = pa.schema(
    [
        *fields(pa.string(), "campaign", "log"),
        pa.field("machine_size", pa.int64()),
        *fields(pa.float64(), "clairvoyant_queue", "clairvoyant_sjbf", "easy", "easy_plus_plus"),
        *[
            field
            for backfill in TRIPLE_BACKFILLS
            for which in ("best", "worst")
            for field in (
                pa.field(f"{which}_learned_{backfill}", pa.float64()),
                pa.field(f"{which}_learned_{backfill}_triple", pa.string()),
            )
        ],
    ]
)

TRIPLES = StoredTable(
    "triples",
    TRIPLES_SCHEMA,
    grain="one row per triple campaign and log, as `lakehouse report triples` last computed it",
    description=(
        "The heuristic-triple study (docs/predictions.md) per log: mean bounded slowdown of EASY with "
        "clairvoyant predictions (queue-order and SJBF backfilling), of EASY (requested times, queue order), "
        "of EASY++ (AVE2 predictions, incremental correction, SJBF), and of the best and worst learned "
        "(E-Loss) triple for each backfilling order, with the triple's name (prediction + correction + "
        "backfilling)."
    ),
)

#: analysis.triples_loo: per campaign and held-out log, the triple leave-one-out selects and how it does.
TRIPLES_LOO_SCHEMA = pa.schema(
    [
        *fields(pa.string(), "campaign", "held_out", "selected"),
        *fields(pa.float64(), "selected_bsld", "easy", "easy_plus_plus"),
        *fields(pa.float64(), "reduction_vs_easy_pct", "reduction_vs_easy_plus_plus_pct"),
    ]
)

TRIPLES_LOO = StoredTable(
    "triples_loo",
    TRIPLES_LOO_SCHEMA,
    grain="one row per triple campaign and held-out log, as `lakehouse report triples` last computed it",
    description=(
        "Leave-one-out selection of a triple: for each log held out, the triple (clairvoyant ones excluded) "
        "with the least sum of mean bounded slowdowns on the other logs of the campaign, its mean bounded "
        "slowdown on the held-out log (selected_bsld), EASY's and EASY++'s there, and the reductions against "
        "them in percent."
    ),
)

TABLES = (
    TRIPLES,
    TRIPLES_LOO,
)
