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


def exact_medians(
    con: duckdb.DuckDBPyConnection, relation: str, columns: Sequence[str], subsets: Mapping[str, str]
) -> dict[tuple[str, str], float | None]:
    """{(subset, column): median} of each column over the rows of `relation` where the subset's SQL
    condition holds (NULLs and NaNs left out, as `median` does; None where no value is left)."""
    conditions = " ".join(f"WHEN {_literal(name)} THEN {condition}" for name, condition in subsets.items())
    names = ", ".join(f"({_literal(name)})" for name in subsets)
    unpivoted = (
        f"(SELECT subset, metric, x, {bin_key('x')} AS key FROM (UNPIVOT (SELECT "
        f"{', '.join(f'{c}::DOUBLE AS {c}' for c in columns)}, * EXCLUDE ({', '.join(columns)}) FROM {relation}) "
        f"ON {', '.join(columns)} INTO NAME metric VALUE x), "
        f"(VALUES {names}) AS s(subset) WHERE (CASE subset {conditions} END) AND NOT isnan(x))"
    )
    groups = ["subset", "metric"]
    medians: dict[tuple[str, str], float | None] = {(s, c): None for s in subsets for c in columns}
    wanted = middle_bins(
        con.execute(f"SELECT subset, metric, key, count(*) AS n FROM {unpivoted} GROUP BY ALL").pl(), groups
    )
    if wanted.is_empty():
        return medians
    values = counted_in(con, unpivoted, groups, wanted)
    medians.update(medians_in(values, wanted, groups))  # type: ignore[arg-type]
    return medians


def bin_key(column: str, per_octave: int = BINS_PER_OCTAVE) -> str:
    """A BIGINT that never decreases as `column` grows: the bin of its value (NULL for NULL and NaN), of
    `per_octave` bins per octave of |x| (the values of the bins holding the middle are counted one by
    one: finer bins, fewer of them, where a group has hundreds of millions of values)."""
    magnitude = f"floor(log2(abs({column})) * {per_octave})::BIGINT + {per_octave * _OFFSET // BINS_PER_OCTAVE}"
    return (
        f"CASE WHEN isnan({column}) THEN NULL WHEN {column} > 0 THEN {magnitude} "
        f"WHEN {column} < 0 THEN -({magnitude}) WHEN {column} = 0 THEN 0 END"
    )


def middle_bins(bins: pl.DataFrame, groups: Sequence[str]) -> pl.DataFrame:
    """From counts `n` per group and bin (`groups`..., key), of one partition or several (summed here),
    the bins that hold each group's middle ranks, with the count below them and the group's total."""
    groups = list(groups)
    bins = bins.filter(pl.col("key").is_not_null()).group_by(*groups, "key").agg(pl.col("n").sum())
    bins = bins.sort(*groups, "key").with_columns(
        below=pl.col("n").cum_sum().over(groups) - pl.col("n"), total=pl.col("n").sum().over(groups)
    )
    # The middle ranks (1-based): one for an odd count, two for an even one; the bins that hold them.
    low, high = (pl.col("total") + 1) // 2, pl.col("total") // 2 + 1
    return bins.filter(_holds(low) | _holds(high)).select(*groups, "key", "below", "total")


def _holds(rank: pl.Expr) -> pl.Expr:
    return (pl.col("below") < rank) & (rank <= pl.col("below") + pl.col("n"))


def counted_in(
    con: duckdb.DuckDBPyConnection, unpivoted: str, groups: Sequence[str], wanted: pl.DataFrame
) -> pl.DataFrame:
    """How many times each value of `unpivoted` (groups..., key, x) falls in the `wanted` bins."""
    con.register("median_bins", wanted.select(*groups, "key").to_arrow())
    try:
        return con.execute(
            f"SELECT {', '.join(groups)}, key, x, count(*) AS n FROM {unpivoted} "
            f"SEMI JOIN median_bins USING ({', '.join(groups)}, key) GROUP BY ALL"
        ).pl()
    finally:
        con.unregister("median_bins")


def medians_in(values: pl.DataFrame, wanted: pl.DataFrame, groups: Sequence[str]) -> dict[tuple[object, ...], float]:
    """Each group's median from the values counted in its middle bins (`counted_in`, of one partition or
    several: summed here) and `middle_bins`' counts below them."""
    groups = list(groups)
    values = values.group_by(*groups, "key", "x").agg(pl.col("n").sum()).join(wanted, on=[*groups, "key"])
    medians: dict[tuple[object, ...], float] = {}
    for group, rows in values.sort(*groups, "x").group_by(*groups, maintain_order=True):
        total = int(rows["total"][0])
        low, high = (total + 1) // 2, total // 2 + 1
        medians[tuple(group)] = (_at_rank(rows, low) + _at_rank(rows, high)) / 2
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
