"""Storing a model's result where its analysis.* view reads it."""

from __future__ import annotations

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from lakehouse.base.datasets import DATASETS
from lakehouse.base.lake import Lake


def store(lake: Lake, dataset: str, frame: pl.DataFrame, schema: pa.Schema, name: str = "latest") -> None:
    """Replace one output of the dataset (`latest.parquet`, or one per source) under the lake's writer:
    readers see the old or the new file, whole, from the writer's next commit."""
    writer = lake.committing  # before anything is written: a table is stored only under the writer lock
    final = DATASETS[dataset].file(lake.root, name)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}.tmp")
    pq.write_table(frame.to_arrow().cast(schema), tmp)
    writer.place(dataset, tmp, name, frame.height)
