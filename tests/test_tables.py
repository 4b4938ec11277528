"""The tables the analyses store, declared once in their topic's folder (lakehouse.base.tables): the
lake's datasets, the catalog's views, docs/views.md and `store` all follow the declarations."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest

from lakehouse.base.catalog import view_files
from lakehouse.base.datasets import DATASETS
from lakehouse.base.lake import Lake
from lakehouse.base.results import store
from lakehouse.base.tables import StoredTable, stored_tables, topic_packages

from conftest import modules_loaded_by

REPO = Path(__file__).resolve().parents[1]
TABLES = stored_tables()


def test_each_table_has_its_dataset_and_its_view():
    views = {v.name for v in view_files()}
    for table in TABLES:
        assert DATASETS[table.key].schema == table.schema and DATASETS[table.key].folder == table.folder
        assert table.view in views, f"{table.view}: no view reads it (no grain and description, no sql/ file)"
    # The ground floor's only stored datasets are the ingests'; every analysis.* dataset is declared.
    assert {k for k in DATASETS if k.startswith("analysis_")} == {t.key for t in TABLES}


def test_every_declared_table_has_its_row_in_docs_views():
    """docs/views.md lists every view a lake has by family; each analysis table appears in a row."""
    page = (REPO / "docs" / "views.md").read_text()
    listed = set(re.findall(r"`(analysis\.[a-z0-9_]+)`", page))
    assert {t.view for t in TABLES} <= listed, sorted({t.view for t in TABLES} - listed)


def test_an_empty_lake_reads_each_declared_schema(tmp_path):
    lake = Lake(tmp_path / "lake").init()
    for table in TABLES:
        columns = lake.query(f"SELECT * FROM {table.view} LIMIT 0").columns
        assert columns == table.schema.names, table.view


def test_store_writes_the_declared_schema_and_the_view_reads_it(tmp_path):
    """`store` casts a frame to its table's schema: an int column declared float reads back as float."""
    lake = Lake(tmp_path / "lake").init()
    table = next(t for t in TABLES if t.name == "packing")
    row = {name: None for name in table.schema.names} | {"heuristic": "FFD", "machines": 3, "lower_bound": 2}
    with lake.writer():
        store(lake, table, pl.DataFrame([row]))
    back = lake.query(f"SELECT heuristic, machines, lower_bound FROM {table.view}")
    assert back.rows() == [("FFD", 3, 2.0)] and back.schema["lower_bound"] == pl.Float64


def test_the_declarations_load_no_model():
    """Every command lists the tables when it opens a lake: a topic's declarations import no model, and
    no Polars (the ground floor's contract; these imports are found at run time, out of its sight)."""
    statement = "from lakehouse.base.tables import stored_tables; stored_tables()"
    assert modules_loaded_by(statement, ("polars",)) == []


def test_two_topics_declaring_one_name_is_an_error(monkeypatch):
    import lakehouse.models.locality as locality

    stored_tables.cache_clear()
    try:
        twin = StoredTable("packing", pa.schema([pa.field("x", pa.int64())]), grain="g", description="d")
        monkeypatch.setattr(locality, "TABLES", (*locality.TABLES, twin))
        with pytest.raises(ValueError, match="analysis.packing is declared by locality and by packing"):
            stored_tables()
    finally:
        monkeypatch.undo()
        stored_tables.cache_clear()
        assert stored_tables() == TABLES


def test_the_ground_floor_names_no_topic_and_none_of_a_topics_tables():
    """The mechanisms (lakehouse/base, sql/queries) read every topic's tables through the declarations:
    a topic's package or one of its tables named there would tie the floor to that topic."""
    words = list(topic_packages())  # lakehouse.models.NAME
    words += [f"analysis.{table.name}" for topic in topic_packages() for table in _declared(topic)]
    floor = [*(REPO / "lakehouse" / "base").glob("*.py"), *(REPO / "sql" / "queries").glob("*.sql")]
    found = [
        (path.name, word) for path in floor for word in words if re.search(rf"\b{re.escape(word)}\b", path.read_text())
    ]
    assert found == []


def _declared(topic: str) -> tuple[StoredTable, ...]:
    """The tables a topic's folder declares (not the lake's own, which stored_tables() also lists)."""
    return getattr(importlib.import_module(topic), "TABLES", ())
