"""Exact medians of large columns in bounded memory.

DuckDB's `median` keeps every value of a group in memory, outside its memory limit, so over the
per-task table of the whole Google trace (tens of millions of tasks, several columns and subsets) it
could take gigabytes the limit knows nothing of.  Here the median is selected by counting instead, in
two passes of fixed-size aggregates (which DuckDB spills when it must):

1. count the values per coarse bin of an order-preserving key (16 bins per octave of |x|), and find
   the bin holding each middle rank;
2. count the distinct values inside those bins only, and walk them to the middle ranks.

The answer is `quantile_cont(x, 0.5)` to the last bit: the middle value, or the mean of the two middle
values for an even count.  Memory is the bins and the distinct values of a few of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import duckdb
import polars as pl

BINS_PER_OCTAVE = 16
_OFFSET = 10**6  # above the largest |floor(log2|x| * 16)| of a double (~17,200)


def _key(column: str) -> str:
    """A BIGINT that never decreases as `column` grows: the bin of its value."""
    magnitude = f"floor(log2(abs({column})) * {BINS_PER_OCTAVE})::BIGINT + {_OFFSET}"
    return f"CASE WHEN {column} > 0 THEN {magnitude} WHEN {column} < 0 THEN -({magnitude}) ELSE 0 END"


def exact_medians(
    con: duckdb.DuckDBPyConnection, relation: str, columns: Sequence[str], subsets: Mapping[str, str]
) -> dict[tuple[str, str], float | None]:
    """{(subset, column): median} of each column over the rows of `relation` where the subset's SQL
    condition holds (NULLs and NaNs left out, as `median` does; None where no value is left)."""
    conditions = " ".join(f"WHEN {_literal(name)} THEN {condition}" for name, condition in subsets.items())
    names = ", ".join(f"({_literal(name)})" for name in subsets)
    unpivoted = (
        f"(SELECT subset, metric, x FROM (UNPIVOT (SELECT {', '.join(f'{c}::DOUBLE AS {c}' for c in columns)}, * "
        f"EXCLUDE ({', '.join(columns)}) FROM {relation}) ON {', '.join(columns)} INTO NAME metric VALUE x), "
        f"(VALUES {names}) AS s(subset) WHERE (CASE subset {conditions} END) AND NOT isnan(x))"
    )
    bins = con.execute(f"SELECT subset, metric, {_key('x')} AS key, count(*) AS n FROM {unpivoted} GROUP BY ALL").pl()
    bins = bins.sort("subset", "metric", "key").with_columns(
        below=pl.col("n").cum_sum().over("subset", "metric") - pl.col("n"),
        total=pl.col("n").sum().over("subset", "metric"),
    )
    # The middle ranks (1-based): one for an odd count, two for an even one; the bins that hold them.
    wanted = bins.with_columns(low=(pl.col("total") + 1) // 2, high=pl.col("total") // 2 + 1).filter(
        ((pl.col("below") < pl.col("low")) & (pl.col("low") <= pl.col("below") + pl.col("n")))
        | ((pl.col("below") < pl.col("high")) & (pl.col("high") <= pl.col("below") + pl.col("n")))
    )
    medians: dict[tuple[str, str], float | None] = {(s, c): None for s in subsets for c in columns}
    if wanted.is_empty():
        return medians
    con.register("median_bins", wanted.select("subset", "metric", "key", "below").to_arrow())
    try:
        values = con.execute(
            f"SELECT subset, metric, x, count(*) AS n, any_value(below) AS below FROM "
            f"(SELECT *, {_key('x')} AS key FROM {unpivoted}) JOIN median_bins USING (subset, metric, key) "
            "GROUP BY subset, metric, key, x"
        ).pl()
    finally:
        con.unregister("median_bins")
    totals = {(s, m): t for s, m, t in bins.select("subset", "metric", "total").unique().iter_rows()}
    for (subset, metric), group in values.sort("subset", "metric", "x").group_by(
        "subset", "metric", maintain_order=True
    ):
        total = totals[(subset, metric)]
        low, high = (total + 1) // 2, total // 2 + 1
        medians[(subset, metric)] = (_at_rank(group, low) + _at_rank(group, high)) / 2
    return medians


def _at_rank(group: pl.DataFrame, rank: int) -> float:
    """The value of 1-based rank `rank` among the counted values of the bins holding it."""
    for key_rows in group.partition_by("below", maintain_order=True):
        below = int(key_rows["below"][0])
        counts = key_rows["n"].cum_sum() + below
        position = int((counts >= rank).arg_max())  # type: ignore[arg-type]
        if counts[position] >= rank and below < rank:
            return float(key_rows["x"][position])
    raise AssertionError(f"rank {rank} is in none of the bins selected for it")


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
