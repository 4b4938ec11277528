"""SQL as code: every file has a header, parses, and its view is made after the views it uses."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import sqlglot
from sqlglot import exp

from lakehouse.base.catalog import view_files
from lakehouse.base.datasets import DATASETS
from lakehouse.base.ducklake import ALIAS, DuckLake
from lakehouse.base.lake import Lake

BUILTIN_SCHEMAS = {"meta", "stored"}  # what the catalog code creates before the views of sql/


def test_every_view_file_has_a_header_and_a_unique_name():
    views = view_files()
    assert views, "no SQL files packaged"
    names = [v.name for v in views]
    assert len(names) == len(set(names))
    for v in views:
        assert v.grain and len(v.description) > 40, v.file_name
        # A view's schema is a family of stored datasets (swf_jobs: swf), or predict and cluster (views over
        # the others).
        assert v.schema in {key.split("_")[0] for key in DATASETS} | {"predict", "cluster"}, v.file_name


def test_views_are_made_after_the_views_they_read():
    defined: set[str] = set()
    for v in view_files():
        tree = sqlglot.parse_one(v.body, read="duckdb")
        ctes = {cte.alias for cte in tree.find_all(exp.CTE)}
        for table in tree.find_all(exp.Table):
            if not table.name or table.name in ctes or not table.db:
                continue  # CTEs and table functions (read_parquet)
            ref = f"{table.db}.{table.name}"
            assert ref in defined or table.db in BUILTIN_SCHEMAS, f"{v.file_name} uses {ref} before it is defined"
        defined.add(v.name)


def test_views_carry_their_comment(pwa_lake):
    lake, _ = pwa_lake
    comments = dict(
        lake.query("SELECT schema_name || '.' || view_name, comment FROM duckdb_views() WHERE NOT internal").rows()
    )
    for v in view_files():
        assert comments[v.name].startswith(v.description[:30])


def _writable_copy(lake: Lake, folder: Path) -> duckdb.DuckDBPyConnection:
    """A connection that may write a copy of the lake's catalog, in use as the lake's readers use it."""
    shutil.copytree(lake.root, folder)
    if lake.ducklake is None:
        return duckdb.connect(str(folder / "lake.duckdb"))
    con = DuckLake.of_folder(folder).connect()
    con.execute(f"USE {ALIAS}")
    return con


def test_every_named_query_loads_and_binds_on_a_lake(tmp_path):
    """sql/queries/ and the topic folders hold the package's fixed queries: each has its header and binds
    on a new lake."""
    from lakehouse.base.catalog import named_queries, named_query

    lake = Lake(tmp_path / "lake").init()
    queries = named_queries()
    assert len(queries) >= 15 and ("trace_comparison", "lakehouse.models.compare_traces") in queries
    # A MERGE cannot be PREPAREd in SQL: it is explained, its parameters NULL, on a copy of the lake
    # it may write (explained, it writes nothing either).
    with lake.connect() as con, _writable_copy(lake, tmp_path / "writable") as writable:
        for name, topic in queries:
            sql = named_query(name, topic)
            if (statement := con.extract_statements(sql)[0]).type.name == "MERGE_INTO":
                writable.execute(f"EXPLAIN {sql}", [None] * len(statement.named_parameters))
                continue
            con.execute(f"PREPARE q AS {sql}")  # binds every name and type, runs nothing
            con.execute("DEALLOCATE q")
