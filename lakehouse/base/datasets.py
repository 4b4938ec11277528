"""Where each stored dataset lives inside a lake, and its Parquet schema.

SQL files refer to a dataset by its key in braces (``read_parquet({swf_jobs})``); the catalog
substitutes the absolute glob of the dataset's folder, because DuckDB resolves relative paths
against the reader's working directory, not against the database file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from lakehouse.base import alibaba2018_format, google2019_format, google_format
from lakehouse.base.swf_format import JOBS_SCHEMA, LOGS_SCHEMA, QUARANTINE_SCHEMA
from lakehouse.base.tables import stored_tables

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

    def directory(self, root: Path) -> Path:
        return root / self.folder

    def file(self, root: Path, name: str) -> Path:
        """The one output of a source (SWF: of a log) in this dataset."""
        return self.directory(root) / f"{name}.parquet"

    def glob(self, root: Path) -> str:
        return (self.directory(root) / "*.parquet").as_posix()


DATASETS: dict[str, Dataset] = {
    d.key: d
    for d in (
        Dataset("swf_jobs", "parquet/swf/jobs", JOBS_SCHEMA),
        Dataset("swf_logs", "parquet/swf/logs", LOGS_SCHEMA),
        Dataset("swf_quarantine", "quarantine/swf", QUARANTINE_SCHEMA),
        # The Google trace: one Parquet file per input part, one folder per table.
        *(
            Dataset(f"google_{table}", f"parquet/google/{table}", google_format.arrow_schema(table))
            for table in google_format.tables()
        ),
        Dataset("google_quarantine", "quarantine/google", google_format.QUARANTINE_SCHEMA),
        # Google's 2019 trace: one Parquet file per shard of a cell (`a.000000000000.parquet`), whether the
        # shard came as JSON or as Parquet (its twin replaces it), one folder per table.
        *(
            Dataset(f"google2019_{table}", f"parquet/google2019/{table}", google2019_format.arrow_schema(table))
            for table in google2019_format.STORED_TABLES
        ),
        Dataset("google2019_quarantine", "quarantine/google2019", google_format.QUARANTINE_SCHEMA),
        # Alibaba's 2018 trace: one Parquet file per input file (or piece of one), one folder per table.
        *(
            Dataset(f"alibaba2018_{table}", f"parquet/alibaba2018/{table}", alibaba2018_format.arrow_schema(table))
            for table in alibaba2018_format.TABLES
        ),
        Dataset("alibaba2018_quarantine", "quarantine/alibaba2018", google_format.QUARANTINE_SCHEMA),
        # Results of the models (each rewritten whole by its report) and of campaigns (many files per
        # campaign, one per flush of finished runs): analysis/<table>, read by the view analysis.<table>,
        # each declared in its topic's folder (lakehouse.base.tables).
        *(Dataset(table.key, table.folder, table.schema) for table in stored_tables()),
    )
}


def ingest_outputs(dataset: str, name: str) -> list[tuple[str, str]]:
    """(dataset key, file stem) of every output of one manifest entry: an SWF log's jobs, header and
    quarantine; a Google part's rows and quarantine; a 2019 shard's rows (and instance_events' constraints)
    and quarantine; an Alibaba 2018 file's rows and quarantine."""
    if dataset == "swf":
        return [("swf_jobs", name), ("swf_logs", name), ("swf_quarantine", name)]
    if dataset.startswith("google2019."):
        table = dataset.removeprefix("google2019.")
        children = [("google2019_instance_constraints", name)] if table == "instance_events" else []
        return [(f"google2019_{table}", name), *children, ("google2019_quarantine", f"{table}.{name}")]
    if dataset.startswith("alibaba2018."):
        table = dataset.removeprefix("alibaba2018.")
        return [(f"alibaba2018_{table}", name), ("alibaba2018_quarantine", name)]  # (the name begins with the table)
    table = dataset.removeprefix("google.")
    return [(f"google_{table}", name), ("google_quarantine", f"{table}.{name}")]
