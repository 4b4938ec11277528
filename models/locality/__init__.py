"""Runtime locality of submit times and users: its stored table."""

from __future__ import annotations

import pyarrow as pa

from lakehouse.base.tables import StoredTable, fields

LOCALITY_SCHEMA = pa.schema(  # as model.GRID_SCHEMA
    [
        *fields(pa.string(), "log", "variant"),
        *fields(pa.float64(), "t_s", "t_r"),
        pa.field("jobs", pa.int64()),
        *fields(pa.float64(), "mi", "shuffled_mi", "shuffled_sd", "locality"),
        pa.field("best", pa.bool_()),
        *fields(pa.int64(), "shuffles", "seed"),
    ]
)

LOCALITY = StoredTable(
    "locality",
    LOCALITY_SCHEMA,
    grain=(
        "one row per SWF log, variant (time, user, time+user) and cell of the bin grid (t_s, t_r), as "
        "`lakehouse report locality` last measured it"
    ),
    description=(
        "Runtime locality: f = I(S; R) - mean I(S; R shuffled) in bits (locality), with S the submit bin "
        "floor(submit_time / t_s) (variant time), the user (user, t_s null) or both (time+user), and R the "
        "run-time bin floor(ln(max(run_time, 1)) / ln(t_r)). mi = I(S; R), shuffled_mi and shuffled_sd over "
        "`shuffles` seeded permutations of R (the same for every cell of a log). jobs = jobs with a known "
        "submit time, run time and processor count (and user, for the user variants). best marks each log's "
        "and variant's highest f."
    ),
)

TABLES = (LOCALITY,)
