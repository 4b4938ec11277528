"""Where each stored dataset lives inside a lake, and its Parquet schema.

SQL files read a dataset as the table `stored.KEY` (``FROM stored.swf_jobs``), whatever holds its rows:
the catalog makes that table of the files its writers committed (`lakehouse.base.catalog`), so no file of
sql/ names a path or a file format.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from lakehouse.base import alibaba2018_format, google2019_format, google_format
from lakehouse.base.swf_format import JOBS_SCHEMA, LOGS_SCHEMA, QUARANTINE_SCHEMA
from lakehouse.base.tables import STORED_SCHEMA, stored_tables
from lakehouse.base.traces import Trace

#: The cloud traces the lake ingests, by name (what --trace names), each declared in its format module.
CLOUD_TRACES: dict[str, Trace] = {
    trace.name: trace for trace in (google_format.TRACE, google2019_format.TRACE, alibaba2018_format.TRACE)
}
TRACE_OF_SCHEMA = {trace.schema: trace for trace in CLOUD_TRACES.values()}
#: The cloud traces a report's `--trace` names (and, on 2019, `--cell`).
TRACES = tuple(CLOUD_TRACES)

# A zero-row file with the dataset's schema sits in every folder, so views bind (and keep their types)
# before anything is ingested.  Its name starts with an underscore, which log names may not.
SCHEMA_FILE = "_schema.parquet"
# How every ingested file is written (DuckDB COPY options): zstd reads as fast as snappy and is smaller.
PARQUET_OPTIONS = "FORMAT parquet, COMPRESSION zstd"


@dataclass(frozen=True)
class Dataset:
    key: str
    folder: str  # relative to the lake root
    schema: pa.Schema
    #: Its files were written by versions that lacked later columns: read by column name, NULL where missing.
    evolves: bool = False

    @property
    def stored(self) -> str:
        """The table the views read it as."""
        return f"{STORED_SCHEMA}.{self.key}"

    @property
    def is_quarantine(self) -> bool:
        """Whether it holds an input's rejected lines (an input without any has no rows in it)."""
        return self.folder.startswith("quarantine/")

    def directory(self, root: Path) -> Path:
        return root / self.folder

    def file(self, root: Path, name: str) -> Path:
        """The one output of a source (SWF: of a log) in this dataset."""
        return self.directory(root) / f"{name}.parquet"

    def glob(self, root: Path) -> str:
        return (self.directory(root) / "*.parquet").as_posix()


def _trace_datasets(trace: Trace) -> Iterator[Dataset]:
    for table in trace.tables:
        yield Dataset(trace.dataset(table), f"parquet/{trace.schema}/{table}", trace.arrow_schema(table))
    yield Dataset(trace.dataset("quarantine"), f"quarantine/{trace.schema}", google_format.QUARANTINE_SCHEMA)


DATASETS: dict[str, Dataset] = {
    d.key: d
    for d in (
        Dataset("swf_jobs", "parquet/swf/jobs", JOBS_SCHEMA),
        Dataset("swf_logs", "parquet/swf/logs", LOGS_SCHEMA),
        Dataset("swf_quarantine", "quarantine/swf", QUARANTINE_SCHEMA),
        # Each cloud trace: one Parquet file per input file (or piece, or shard), one folder per table.
        *(dataset for trace in CLOUD_TRACES.values() for dataset in _trace_datasets(trace)),
        # Results of the models (each rewritten whole by its report) and of campaigns (many files per
        # campaign, one per flush of finished runs): analysis/<table>, read by the view analysis.<table>,
        # each declared in its topic's folder (lakehouse.base.tables).
        *(Dataset(table.key, table.folder, table.schema, table.evolves) for table in stored_tables()),
    )
}


def ingest_outputs(dataset: str, name: str) -> list[tuple[str, str]]:
    """(dataset key, file stem) of every output of one manifest entry (`dataset`: swf, or a trace's
    SCHEMA.TABLE): an SWF log's jobs, header and quarantine; a trace's file's rows, its children's and
    its quarantine."""
    if dataset == "swf":
        return [("swf_jobs", name), ("swf_logs", name), ("swf_quarantine", name)]
    schema, table = dataset.split(".", 1)
    return TRACE_OF_SCHEMA[schema].outputs(table, name)
