"""The DuckDB catalog of a lake: the views defined by the files in ``sql/`` and the ingest manifest.

Each SQL file holds one SELECT and a header::

    -- name: swf.jobs
    -- grain: one row per job
    -- description: what the view is for (becomes COMMENT ON VIEW)

Files are applied in file-name order, so a view may only use views of earlier files (a test checks
this).  Dataset placeholders such as ``{swf_jobs}`` become absolute Parquet globs of the lake.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import duckdb

from lakehouse.datasets import DATASETS

_HEADER = re.compile(r"^--\s*(name|grain|description)\s*:\s*(.*)$")

MANIFEST_DDL = """
CREATE SCHEMA IF NOT EXISTS meta;
CREATE TABLE IF NOT EXISTS meta.manifest (
    dataset VARCHAR NOT NULL,          -- 'swf', later 'google.task_usage', ...
    name VARCHAR NOT NULL,             -- the output's name inside its dataset (SWF: the log name)
    source VARCHAR NOT NULL,           -- the input file as given
    size BIGINT,                       -- bytes of the input file
    content_hash VARCHAR,              -- SHA-256 of the input file's bytes
    rows_in BIGINT,                    -- data lines read
    rows_out BIGINT,                   -- rows written
    rows_quarantined BIGINT,           -- lines sent to the quarantine
    status VARCHAR NOT NULL,           -- 'ok' or 'failed'
    message VARCHAR,                   -- warnings, or the error of a failed file
    ingested_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (dataset, name)
);
"""


# The Google trace's codes, one place for every google.* view.  Its clock: microseconds from 600 s
# before the trace start (19:00 EDT, Sunday 1 May 2011, per google/cluster-data ClusterData2011_2.md),
# with two special values, 0 (before the trace window) and 2^63-1 (after it), for which seconds and
# instants are NULL.  Job and task events share one list of event types.
TRACE_MACROS = """
CREATE SCHEMA IF NOT EXISTS google;
CREATE OR REPLACE MACRO google.special_time(t) AS t IN (0, 9223372036854775807);
CREATE OR REPLACE MACRO google.seconds(t) AS CASE WHEN NOT google.special_time(t) THEN t / 1e6 END;
CREATE OR REPLACE MACRO google.instant(t) AS
    CASE WHEN NOT google.special_time(t)
         THEN TIMESTAMPTZ '2011-05-01 19:00:00-04:00' + to_microseconds(t - 600000000) END;
CREATE OR REPLACE MACRO google.event_name(e) AS
    ['SUBMIT', 'SCHEDULE', 'EVICT', 'FAIL', 'FINISH', 'KILL', 'LOST', 'UPDATE_PENDING', 'UPDATE_RUNNING'][e + 1];
CREATE OR REPLACE MACRO google.missing_info_name(m) AS
    ['SNAPSHOT_BUT_NO_TRANSITION', 'NO_SNAPSHOT_OR_TRANSITION', 'EXISTS_BUT_NO_CREATION'][m + 1];
-- Volatility: the normalized deviation of a window's 1-second sample from its 5-minute mean.
CREATE OR REPLACE MACRO google.deviation(mu5m, mu1s) AS (mu5m - mu1s) / nullif(mu5m, 0);
"""


@dataclass(frozen=True)
class ViewFile:
    file_name: str
    name: str  # schema.view
    grain: str
    description: str
    body: str  # the SELECT, with dataset placeholders

    @property
    def schema(self) -> str:
        return self.name.split(".", 1)[0]

    def select_sql(self, root: Path) -> str:
        return substitute_datasets(self.body, root)

    def ddl(self, root: Path) -> str:
        comment = sql_literal(f"{self.description} Grain: {self.grain}.")
        return (
            f"CREATE OR REPLACE VIEW {self.name} AS\n{self.select_sql(root)};\n"
            f"COMMENT ON VIEW {self.name} IS {comment};"
        )


def sql_literal(text: str) -> str:
    """A SQL string literal (for paths and names DuckDB cannot take as bound parameters)."""
    return "'" + text.replace("'", "''") + "'"


def substitute_datasets(sql: str, root: Path) -> str:
    def replace(m: re.Match[str]) -> str:
        key = m.group(1)
        if key not in DATASETS:
            raise KeyError(f"unknown dataset placeholder {{{key}}}")
        return sql_literal(DATASETS[key].glob(root))

    return re.sub(r"\{([a-z_]+)\}", replace, sql)


def parse_view_file(file_name: str, text: str) -> ViewFile:
    meta: dict[str, str] = {}
    body_lines = []
    for line in text.splitlines():
        m = _HEADER.match(line)
        if m and not body_lines:
            meta[m.group(1)] = m.group(2).strip()
        else:
            body_lines.append(line)
    missing = {"name", "grain", "description"} - meta.keys()
    if missing:
        raise ValueError(f"sql/{file_name}: header lacks {', '.join(sorted(missing))}")
    body = "\n".join(body_lines).strip().rstrip(";")
    return ViewFile(file_name, meta["name"], meta["grain"], meta["description"], body)


def view_files() -> list[ViewFile]:
    """Every view of the package, in the order it must be created."""
    folder = resources.files("lakehouse.sql")
    files = sorted(p for p in folder.iterdir() if p.name.endswith(".sql"))
    return [parse_view_file(p.name, p.read_text(encoding="utf-8")) for p in files]


def apply_catalog(con: duckdb.DuckDBPyConnection, root: Path) -> None:
    """Create the manifest (if new) and (re)create every view with the lake's absolute paths."""
    con.execute(MANIFEST_DDL)
    con.execute(TRACE_MACROS)
    for view in view_files():
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {view.schema}")
        try:
            con.execute(view.ddl(root))
        except duckdb.Error as exc:
            raise RuntimeError(f"sql/{view.file_name} ({view.name}): {exc}") from exc
