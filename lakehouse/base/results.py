"""Storing a model's result where its analysis.* view reads it."""

from __future__ import annotations

import polars as pl
import pyarrow.parquet as pq

from lakehouse.base.datasets import DATASETS
from lakehouse.base.lake import Lake
from lakehouse.base.tables import StoredTable


def store(lake: Lake, table: StoredTable, frame: pl.DataFrame, name: str = "latest") -> None:
    """Replace one output of the table (`latest.parquet`, or one per source) under the lake's writer:
    readers see the old or the new file, whole, from the writer's next commit."""
    writer = lake.committing  # before anything is written: a table is stored only under the writer lock
    final = DATASETS[table.key].file(lake.root, name)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}.tmp")
    pq.write_table(frame.to_arrow().cast(table.schema), tmp)
    writer.place(table.key, tmp, name, frame.height)
