"""The trace recipe of docs/contributing.md, followed by a test: in a copy of the package's layout, a
toy trace is its format module declaring `TRACE` (lakehouse/base/toy2020_format.py), one line in
`CLOUD_TRACES` and a folder of views (sql/toy2020/); with no other edit the lake keeps its datasets
(an empty file of each schema, a quarantine), its view binds, and every `--trace` names it.  (Its
reader and commands are the trace's own code: the recipe's steps 2 and 3, tried by each trace's tests.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from package_tree import build, lakehouse_in, links_of

from lakehouse.base.datasets import CLOUD_TRACES

TOY_FORMAT = '''"""A toy trace: one table of jobs."""

from __future__ import annotations

import pyarrow as pa

from lakehouse.base.traces import Trace

JOBS = [pa.field("job", pa.string()), pa.field("submit", pa.int64()), pa.field("part", pa.string())]
SCHEMAS = {"jobs": pa.schema(JOBS)}

TRACE = Trace("toy-2020", "toy2020", tuple(SCHEMAS), SCHEMAS.__getitem__, 0, "core", 100)
'''

TOY_VIEW = """-- name: toy2020.jobs
-- grain: one row per job of the toy trace
-- description: The toy trace's jobs, as ingested: a view of its format module's declared table.
SELECT job, submit FROM stored.toy2020_jobs
"""


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("toy-trace")
    package = build(folder)
    base = links_of(package / "base")
    (base / "toy2020_format.py").write_text(TOY_FORMAT)
    datasets = (base / "datasets.py").resolve().read_text()
    one_line = "google2019_format.TRACE, alibaba2018_format.TRACE)"
    assert datasets.count(one_line) == 1
    (base / "datasets.py").unlink()
    (base / "datasets.py").write_text(
        datasets.replace(one_line, "google2019_format.TRACE, alibaba2018_format.TRACE, toy2020_format.TRACE)").replace(
            "from lakehouse.base import alibaba2018_format,",
            "from lakehouse.base import toy2020_format, alibaba2018_format,",
        )
    )
    sql = links_of(package / "sql")
    (sql / "toy2020").mkdir()
    (sql / "toy2020" / "jobs.sql").write_text(TOY_VIEW)
    return folder


def test_a_declared_trace_has_its_datasets_its_view_and_its_trace_option(tree, tmp_path):
    lake = tmp_path / "lake"
    made = lakehouse_in(tree, "init", "--lake", lake)
    assert made.returncode == 0, made.stderr
    for folder in ("parquet/toy2020/jobs", "quarantine/toy2020"):  # where its ingest writes aside
        assert (lake / folder).is_dir(), folder
    described = lakehouse_in(tree, "sql", "SELECT * FROM stored.toy2020_jobs", "--lake", lake, "--format", "csv")
    assert described.stdout.split() == ["job,submit,part"], described.stderr  # its table, of its schema
    views = lakehouse_in(tree, "views", "--lake", lake, "--format", "json")
    assert views.returncode == 0, views.stderr
    assert "toy2020.jobs" in {row["view"] for row in json.loads(views.stdout)}
    counted = lakehouse_in(tree, "sql", "SELECT count(*) AS n FROM toy2020.jobs", "--lake", lake, "--format", "csv")
    assert counted.stdout.split() == ["n", "0"], counted.stderr
    refused = lakehouse_in(tree, "report", "volatility", "--trace", "nope", "--lake", lake)
    assert "expected one of google-2011, google-2019, alibaba-2018, toy-2020" in refused.stderr  # --trace's choices
    exported = lakehouse_in(tree, "export", "swf", "--trace", "toy-2020", "--lake", lake, "-o", tmp_path / "t.swf")
    assert "the cloud traces are" not in exported.stderr  # known to the exports (which then find no job)


def test_the_package_itself_declares_each_cloud_trace_once():
    assert list(CLOUD_TRACES) == ["google-2011", "google-2019", "alibaba-2018"]
    schemas = [trace.schema for trace in CLOUD_TRACES.values()]
    assert len(set(schemas)) == len(schemas)
