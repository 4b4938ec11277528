"""The tables the analyses store (each read by its view analysis.NAME), declared once, in their topic's
folder: `TABLES` in the `__init__.py` of each topic package of `lakehouse.models`
(models/NAME/__init__.py declares analysis.NAME and its siblings).  The lake's datasets, the catalog's views and
`store` take every table from `stored_tables()`, so the ground floor names no topic, and a new table is
one declaration beside its topic's model.  One table is the lake's own, declared here: the predictions
users import, which no analysis writes and the replays read (`IMPORTED_PREDICTIONS`).

A topic's `__init__.py` imports no model (pyarrow and this module only): every command lists the
tables when it opens a lake and must not pay for numpy, statsmodels or cvxpy.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import dataclass

import pyarrow as pa

#: The package whose topic folders declare the stored tables (found by name: the ground floor imports
#: no layer above it; a topic's declarations import only this module and pyarrow).
TOPICS_PACKAGE = "lakehouse.models"


def fields(kind: pa.DataType, *names: str) -> list[pa.Field]:
    """Columns of one type, for a schema."""
    return [pa.field(name, kind) for name in names]


#: The schema of the tables the views read each dataset of the lake as (`stored.swf_jobs`,
#: `stored.analysis_locality`): the catalog makes them (`lakehouse.base.catalog`).
STORED_SCHEMA = "stored"


@dataclass(frozen=True)
class StoredTable:
    """One table an analysis stores: its files in the lake's `analysis/NAME/` (one per source, or
    `latest`), its Parquet schema, and what its view analysis.NAME holds."""

    name: str  # the view is analysis.NAME; the dataset's key analysis_NAME
    schema: pa.Schema
    #: The view's grain and description (COMMENT ON VIEW and docs/views.md).  Given, the view is made from
    #: this declaration: every file, as stored.  Empty: a view file of sql/ reads the files (one that keeps
    #: each run's newest row, say) and says both.
    grain: str = ""
    description: str = ""
    #: Its files were written by versions that lacked later columns: read by column name, NULL where missing.
    evolves: bool = False

    @property
    def key(self) -> str:
        return f"analysis_{self.name}"

    @property
    def view(self) -> str:
        return f"analysis.{self.name}"

    @property
    def folder(self) -> str:
        return f"analysis/{self.name}"

    @property
    def select(self) -> str:
        """The SELECT of its one-line view: its dataset's stored table (`lakehouse.base.datasets`)."""
        return f"SELECT * FROM {STORED_SCHEMA}.{self.key}"


#: The one table the lake keeps of its users' own making (`lakehouse import predictions`, beside the ingests):
#: run-time predictions made outside lakehouse, one file per name, which the replays read
#: (`--predictor table:NAME`, `lakehouse.base.job_views`).  No analysis writes it, so it is declared here,
#: by the layer that reads it, not in a topic's folder.
IMPORTED_PREDICTIONS = StoredTable(
    "imported_predictions",
    pa.schema(
        [
            *fields(pa.string(), "name", "log"),
            pa.field("job_id", pa.int64()),
            pa.field("predicted", pa.float64()),
            *fields(pa.string(), "source_file", "content_hash"),
            # The SHA-256 of the log file the predictions were imported for (the lake's manifest): a log
            # ingested again from other content makes them refused, since its job ids may name other jobs.
            pa.field("log_content_hash", pa.string()),
        ]
    ),
    grain=(
        "one row per prediction table (name) and job (log, job_id), as `lakehouse import predictions FILE "
        "--name NAME` last stored it"
    ),
    description=(
        "Run-time predictions made outside lakehouse, read by `--predictor table:NAME`: predicted is the "
        "predicted run time in seconds (rounded to the nearest whole second for a replay, halves up; a job "
        "without one uses its requested time). source_file is the file imported, content_hash the SHA-256 of "
        "the rows stored (log, job_id, predicted), which changes whenever the table does."
    ),
    evolves=True,
)


def topic_packages() -> list[str]:
    """The package of every topic folder of models/, by name (lakehouse.models.NAME, ...)."""
    package = importlib.import_module(TOPICS_PACKAGE)
    return [
        f"{TOPICS_PACKAGE}.{m.name}"
        for m in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name)
        if m.ispkg
    ]


@functools.cache
def stored_tables() -> tuple[StoredTable, ...]:
    """The lake's own stored table (`IMPORTED_PREDICTIONS`), then every stored table of every topic, by
    topic folder then as declared; two declaring one name is an error naming both."""
    found: dict[str, tuple[str, StoredTable]] = {IMPORTED_PREDICTIONS.name: ("the lake itself", IMPORTED_PREDICTIONS)}
    for topic in topic_packages():
        name = topic.rsplit(".", 1)[1]
        for table in getattr(importlib.import_module(topic), "TABLES", ()):
            if table.name in found:
                raise ValueError(f"analysis.{table.name} is declared by {found[table.name][0]} and by {name}")
            found[table.name] = (name, table)
    return tuple(table for _, table in found.values())
