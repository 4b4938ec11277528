"""The recipe of docs/contributing.md, followed by a test: a toy report is one new module in
`lakehouse/reports/` (in a copy of the package's layout), and without any other edit it is a command
(`lakehouse report toy`, with its option), a report the nightly configuration accepts (with its
option's range) and a section of the nightly page."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from package_tree import REPO, build

from nightly_inbox import put_log

TOY = '''"""A toy report: each log's jobs, times a factor."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from lakehouse.base.lake import Lake
from lakehouse.reports.base import Option, Report


@dataclass(frozen=True)
class ToySettings:
    factor: int = 2


def _compute(lake: Lake, settings: ToySettings) -> pl.DataFrame:
    jobs = lake.query("SELECT log, count(*) AS jobs FROM swf.jobs GROUP BY log ORDER BY log")
    return jobs.with_columns(scaled=pl.col("jobs") * settings.factor)


REPORT = Report(
    "toy",
    "Jobs times a factor (lakehouse report toy)",
    (),
    _compute,
    lambda lake, result: None,
    lambda result: [("each log's jobs, scaled", result)],
    follows="swf",
    options=(Option("factor", 2, "What each log's jobs are multiplied by.", minimum=1, maximum=10),),
    make=ToySettings,
    summary="Each log's jobs, multiplied by --factor: a toy.",
)
'''


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """The package's layout with `lakehouse/reports/toy.py` added (its other files are the repository's)."""
    folder = tmp_path_factory.mktemp("toy-tree")
    package = build(folder)
    (package / "reports").unlink()
    (package / "reports").mkdir()
    for entry in (REPO / "lakehouse" / "reports").iterdir():
        if entry.suffix == ".py":
            (package / "reports" / entry.name).symlink_to(entry)
    (package / "reports" / "toy.py").write_text(TOY)
    return folder


def lakehouse(tree: Path, *args: object) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(tree), "COLUMNS": "200"}
    command = [sys.executable, "-m", "lakehouse.cli", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=tree, timeout=300)


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
