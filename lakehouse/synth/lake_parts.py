"""Generated Google trace parts written straight into a lake's Parquet datasets, as `lakehouse ingest
google` would leave them: for benchmarks and tests of the analyses at scales where writing and
re-reading gzip CSV would dominate (the ingest has its own benchmark)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa

from lakehouse.base.catalog import sql_literal
from lakehouse.base.datasets import DATASETS, PARQUET_OPTIONS
from lakehouse.base.lake import Lake
from lakehouse.base.writer import pending_path

SOURCE = "generated (lakehouse.synth)"


def part_name(part: int, parts: int) -> str:
    return f"part-{part:05d}-of-{parts:05d}"


class LakeParts:
    """Writes parts of the trace's tables into the lake under `root`, then records them all in its
    manifest (without a content hash: do not ingest into this lake afterwards), so that the views, which
    read the files the manifest names, read them."""

    def __init__(self, root: Path, on_part: Callable[[str], None] | None = None):
        self.lake = Lake(root)
        self.on_part = on_part
        self._scratch = self.lake.scratch("generate")
        self.con = self._scratch.__enter__()
        self.written: list[tuple[str, str, int]] = []
        self.renames: list[tuple[Path, Path]] = []

    def write(self, table: str, part: int, parts: int, rows: pa.Table) -> None:
        """One part of a table, in the table's published columns (the `part` column is added here)."""
        dataset = DATASETS[f"google_{table}"]
        name = part_name(part, parts)
        rows = rows.append_column("part", pa.repeat(pa.scalar(name, pa.string()), rows.num_rows))
        target = dataset.file(self.lake.root, name)
        target.parent.mkdir(parents=True, exist_ok=True)
        aside = pending_path(target)  # put in place by the writer (`commit`), as an ingest's outputs
        self.con.register("part_rows", rows.cast(dataset.schema))
        try:
            self.con.execute(f"COPY part_rows TO {sql_literal(str(aside))} ({PARQUET_OPTIONS})")
        finally:
            self.con.unregister("part_rows")
        self.written.append((table, name, rows.num_rows))
        self.renames.append((aside, target))
        if self.on_part is not None:
            self.on_part(f"{table} {part + 1}/{parts}")

    def commit(self) -> None:
        self._scratch.__exit__(None, None, None)
        with self.lake.writer(create=True) as writer:
            writer.commit_outputs(self.renames)
            for table, name, rows in self.written:
                writer.record(
                    dataset=f"google.{table}",
                    name=name,
                    source=SOURCE,
                    size=None,
                    content_hash=None,
                    rows_in=rows,
                    rows_out=rows,
                    rows_quarantined=0,
                    status="ok",
                    message=None,
                )
