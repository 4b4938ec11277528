"""The recipe of docs/contributing.md, followed by a test: a toy report is its topic's folder,
`models/toy/` (in a copy of the package's layout): `__init__.py` declaring the table it stores and
`report.py` declaring the report, and without any other edit it is a command (`lakehouse report toy`,
with its option), a table the lake stores and a view with its description, a report the nightly
configuration accepts (with its option's range) and a section of the nightly page.  A second toy declares
what a command may need beyond options (logs as its argument, one run per log, a table written beside
--output), still in its folder alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from package_tree import build, lakehouse_in, links_of

from nightly_inbox import put_log

TOY = '''"""A toy report: each log's jobs, times a factor."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from lakehouse.base.lake import Lake
from lakehouse.base.results import store
from lakehouse.models.toy import TOY
from lakehouse.base.report import Option, Report


@dataclass(frozen=True)
class ToySettings:
    factor: int = 2


def _compute(lake: Lake, settings: ToySettings) -> pl.DataFrame:
    jobs = lake.query("SELECT log, count(*) AS jobs FROM swf.jobs GROUP BY log ORDER BY log")
    return jobs.with_columns(scaled=pl.col("jobs") * settings.factor)


REPORT = Report(
    "toy",
    "Jobs times a factor (lakehouse report toy)",
    (TOY,),
    _compute,
    lambda lake, result: store(lake, TOY, result),
    lambda result: [("each log's jobs, scaled", result)],
    follows="swf",
    options=(Option("factor", 2, "What each log's jobs are multiplied by.", minimum=1, maximum=10),),
    make=ToySettings,
    summary="Each log's jobs, multiplied by --factor: a toy.",
)
'''

#: The toy's topic folder, models/toy/: the table it stores, declared once.
TOY_TOPIC = '''"""A toy topic: the table its report stores."""

from __future__ import annotations

import pyarrow as pa

from lakehouse.base.tables import StoredTable, fields

TOY = StoredTable(
    "toy",
    pa.schema([pa.field("log", pa.string()), *fields(pa.int64(), "jobs", "scaled")]),
    grain="one row per SWF log, as `lakehouse report toy` last scaled it",
    description="Each log's jobs times the factor: a toy report's table, declared in its topic's folder alone.",
)

TABLES = (TOY,)
'''

TOY_LOGS = '''"""A toy report with an argument: the longest job of each log named."""

from __future__ import annotations

import polars as pl

from lakehouse.base.lake import Lake
from lakehouse.base.log_names import select_logs
from lakehouse.base.report import Argument, Call, Option, Report, Shown


def _runs(lake: Lake, call: Call) -> tuple[list[tuple[str, str]], list[str]]:
    logs = select_logs(call.argument, lake.log_names()) if call.argument else lake.log_names()
    return [(log, call.options["unit"]) for log in logs], [f"{len(logs)} log(s)"]


def _compute(lake: Lake, settings: tuple[str, str]) -> pl.DataFrame:
    log, unit = settings
    divisor = 3600 if unit == "h" else 1
    longest = lake.rows(f"SELECT max(run_time) FROM swf.jobs WHERE log = '{log}'")[0][0]
    return pl.DataFrame({"log": [log], "longest": [longest / divisor]})


REPORT = Report(
    "toy-logs",
    "The longest job of each log (lakehouse report toy-logs)",
    (),
    _compute,
    None,
    lambda result: [("longest job", result)],
    options=(Option("unit", "s", "Seconds (s) or hours (h)."),),
    argument=Argument("logs", "Logs: names or unique prefixes [default: every log].", many=True),
    runs=_runs,
    present=lambda results, terminal: [
        Shown("longest job of each log", pl.concat(results)),
        Shown("logs", pl.DataFrame({"logs": [len(results)]}), aside="count"),
    ],
    summary="The longest job of each log named: a toy.",
)
'''


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """The package's layout with the toys' topic folders added to models/ (its other files are the
    repository's)."""
    folder = tmp_path_factory.mktemp("toy-tree")
    package = build(folder)
    links_of(package / "models")
    for topic, declared, report in (("toy", TOY_TOPIC, TOY), ("toy_logs", '"""A toy with an argument."""\n', TOY_LOGS)):
        (package / "models" / topic).mkdir()
        (package / "models" / topic / "__init__.py").write_text(declared)
        (package / "models" / topic / "report.py").write_text(report)
    return folder


lakehouse = lakehouse_in


def test_a_toy_report_is_a_command_with_its_option(tree, tmp_path):
    listed = lakehouse(tree, "report", "--help")
    assert listed.returncode == 0, listed.stderr
    assert "toy" in listed.stdout and "multiplied by --factor: a toy." in listed.stdout
    helped = lakehouse(tree, "report", "toy", "--help")
    assert "--factor" in helped.stdout and "What each log's jobs are multiplied by." in helped.stdout
    inbox = tmp_path / "logs"
    inbox.mkdir()
    put_log(inbox, "alpha", 30)
    assert lakehouse(tree, "ingest", "swf", inbox, "--lake", tmp_path / "lake").returncode == 0
    ran = lakehouse(tree, "report", "toy", "--lake", tmp_path / "lake", "--factor", "3", "-f", "csv")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == ["log,jobs,scaled", "alpha,30,90"]
    refused = lakehouse(tree, "report", "toy", "--lake", tmp_path / "lake", "--factor", "11")
    assert refused.returncode == 2 and "11" in refused.stderr
    # Its table: stored where its view reads it, the view described as declared.
    stored = lakehouse(tree, "sql", "SELECT * FROM analysis.toy", "--lake", tmp_path / "lake", "-f", "csv")
    assert stored.returncode == 0, stored.stderr
    assert stored.stdout.splitlines() == ["log,jobs,scaled", "alpha,30,90"]
    views = lakehouse(tree, "views", "--lake", tmp_path / "lake", "-f", "csv")
    assert "analysis.toy" in views.stdout and "declared in its topic's folder alone" in views.stdout


def test_a_toy_report_is_in_the_nightly_configuration_and_page(tree, tmp_path):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    put_log(inbox, "alpha", 40)
    config = tmp_path / "nightly.toml"
    config.write_text('reports = ["logs", "toy"]\nworkers = 1\n[toy]\nfactor = 5\n')
    lake = tmp_path / "lake"
    night = lakehouse(tree, "nightly", "--inbox", inbox, "--lake", lake, "--config", config)
    assert night.returncode == 0, night.stderr
    pages = list((lake / "reports").glob("*/index.html"))
    assert len(pages) == 1
    page = pages[0].read_text()
    assert "Jobs times a factor (lakehouse report toy)" in page and ">200<" in page  # 40 jobs x 5
    config.write_text('reports = ["toy"]\n[toy]\nfactor = 50\n')
    refused = lakehouse(tree, "nightly", "--inbox", inbox, "--lake", lake, "--config", config, "--dry-run")
    assert refused.returncode != 0 and "toy.factor: expected a whole number from 1 to 10, got 50" in refused.stderr


def test_a_toy_report_with_an_argument_runs_once_per_log_and_writes_beside_its_output(tree, tmp_path):
    inbox = tmp_path / "logs"
    inbox.mkdir()
    put_log(inbox, "alpha", 30)
    put_log(inbox, "beta", 20)
    assert lakehouse(tree, "ingest", "swf", inbox, "--lake", tmp_path / "lake").returncode == 0
    helped = lakehouse(tree, "report", "toy-logs", "--help")
    assert "Logs: names or unique prefixes [default: every log]." in helped.stdout and "--unit" in helped.stdout
    out = tmp_path / "longest.csv"
    ran = lakehouse(tree, "report", "toy-logs", "al", "beta", "--lake", tmp_path / "lake", "-f", "csv", "-o", out)
    assert ran.returncode == 0, ran.stderr
    assert "2 log(s)" in ran.stderr
    rows = out.read_text().splitlines()
    assert rows[0] == "log,longest" and [r.split(",")[0] for r in rows[1:]] == ["alpha", "beta"]
    assert (tmp_path / "longest-count.csv").read_text().splitlines() == ["logs", "2"]
    hours = lakehouse(tree, "report", "toy-logs", "alpha", "--lake", tmp_path / "lake", "--unit", "h", "-f", "csv")
    seconds = float(rows[1].split(",")[1])
    assert float(hours.stdout.splitlines()[1].split(",")[1]) == pytest.approx(seconds / 3600)
    unknown = lakehouse(tree, "report", "toy-logs", "gamma", "--lake", tmp_path / "lake")
    assert unknown.returncode == 1 and "gamma" in unknown.stderr and "Traceback" not in unknown.stderr
