"""Medians selected by counting equal DuckDB's own median to the last bit, and numpy's."""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from lakehouse.models.order_statistics import exact_medians

values = st.one_of(
    st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_subnormal=False),
    st.sampled_from([0.0, 1.0, 2.0, -3.0, 1e-300]),  # atoms: many equal values, as per-task counts have
)


def table(con: duckdb.DuckDBPyConnection, columns: dict[str, list[float | None]], flag: list[bool]) -> None:
    con.register("t", pl.DataFrame(columns | {"flag": flag}).to_arrow())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(values, st.one_of(st.none(), values), st.booleans()), min_size=0, max_size=300))
def test_equal_to_duckdbs_median(rows):
    a = [r[0] for r in rows]
    b = [r[1] for r in rows]
    con = duckdb.connect()
    table(con, {"a": a, "b": b}, [r[2] for r in rows])
    got = exact_medians(con, "t", ["a", "b"], {"all": "true", "flagged": "flag"})
    for subset, condition in (("all", "true"), ("flagged", "flag")):
        for column in "ab":
            want = con.execute(f"SELECT median({column}::DOUBLE) FROM t WHERE {condition}").fetchone()[0]
            assert got[(subset, column)] == want, (subset, column)


def test_equal_to_numpy_on_a_heavy_tail_with_atoms():
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.lognormal(0, 3, 100_001), np.zeros(40_000), np.ones(10_000)])
    con = duckdb.connect()
    table(con, {"x": x.tolist()}, (rng.random(x.size) < 0.3).tolist())
    got = exact_medians(con, "t", ["x"], {"all": "true", "flagged": "flag"})
    flagged = con.execute("SELECT x FROM t WHERE flag").pl()["x"].to_numpy()
    assert got[("all", "x")] == np.median(x)
    assert got[("flagged", "x")] == np.median(flagged)


def test_nothing_left_gives_none():
    con = duckdb.connect()
    table(con, {"x": [None, None]}, [True, False])
    assert exact_medians(con, "t", ["x"], {"all": "true"}) == {("all", "x"): None}
