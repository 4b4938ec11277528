"""The report registry: every report's tables exist as views, and a report's output computed outside
the writer lock is kept while its process lives and swept by the next writer once it is gone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from lakehouse.base.catalog import view_files
from lakehouse.base.datasets import DATASETS
from lakehouse.base.errors import LakehouseError
from lakehouse.base.lake import Lake
from lakehouse.nightly.config import GOOGLE_REPORTS, REPORTS, SWF_REPORTS
from lakehouse.reports import REPORTS as REGISTRY


def test_every_report_names_views_the_catalog_has():
    views = {v.name for v in view_files()}
    for report in REGISTRY.values():
        assert report.tables, report.name
        missing = {t.view for t in report.tables} - views
        assert not missing, f"{report.name} stores tables no view reads: {missing}"


def test_the_nightly_run_knows_the_registry_reports_that_follow_a_family():
    following = {name for name, r in REGISTRY.items() if r.follows}
    assert following <= set(REPORTS)
    assert {"predictions"} <= set(SWF_REPORTS) and {"volatility", "periodicity", "pack"} <= set(GOOGLE_REPORTS)
    assert not following & {"locality", "hmm", "triples", "selection"}  # on demand only


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_report_output_left_by_a_dead_process_is_swept_and_a_living_ones_kept(lake: Lake):
    with lake.writer(create=True):
        pass
    folder = DATASETS["analysis_task_volatility"].directory(lake.root)
    folder.mkdir(parents=True, exist_ok=True)
    dead = folder / f".latest.parquet.{_dead_pid()}.tmp"
    mine = folder / f".latest.parquet.{os.getpid()}.tmp"
    living = folder / f".latest.parquet.{os.getppid()}.tmp"
    unowned = folder / ".latest.parquet.tmp"  # the writer's own, left by a killed writer
    for path in (dead, mine, living, unowned):
        path.write_bytes(b"PAR1")
    with lake.writer():
        pass
    assert not dead.exists() and not unowned.exists()
    assert mine.exists() and living.exists()
    for path in (mine, living):
        path.unlink()


def test_a_report_is_stored_only_through_the_registry_lock():
    """No model or study takes the writer lock itself: `Report.run` is the one place for reports (the
    campaign runner commits its own flushes of finished runs), and a table stored outside it is refused."""
    root = Path(__file__).resolve().parents[1]
    takers = [
        str(path.relative_to(root))
        for folder in ("models", "sim/python", "sim/campaigns", "sim/studies")
        for path in (root / folder).rglob("*.py")
        if ".writer(" in path.read_text()
    ]
    assert takers == ["sim/campaigns/runner.py"]


def test_a_table_stored_outside_the_writer_is_refused(tmp_path):
    from lakehouse.base.results import store
    from lakehouse.models.reproductions import REPRODUCTIONS_SCHEMA

    lake = Lake(tmp_path / "lake").init()
    with pytest.raises(LakehouseError, match="writer lock"):
        store(lake, "analysis_reproductions", pl.DataFrame(), REPRODUCTIONS_SCHEMA)


#: Every text option that checks its own value (a list, a duration, a name among a model's), by report.
CHECKED_TEXTS = [
    pytest.param(report, option, id=f"{report.name} --{option.name}")
    for report in REGISTRY.values()
    for option in report.options
    if option.kind is str and (option.reads is not None or option.choices is not None)
]


@pytest.mark.parametrize(("report", "option"), CHECKED_TEXTS)
def test_a_text_option_refuses_a_bad_value_before_any_work_with_its_own_words(report, option, tmp_path):
    """The command line refuses it as a usage error (exit 2), in the words of `Option.problem`, which the
    nightly configuration and --dry-run give too; no lake is needed to find out."""
    from typer.testing import CliRunner

    from lakehouse.cli import app

    problem = option.problem("bogus!")
    assert problem, f"{report.name} --{option.name} takes 'bogus!'"
    flag = "--" + option.name.replace("_", "-")
    argument = ["KTH"] if report.argument is not None else []
    result = CliRunner().invoke(app, ["report", report.name, flag, "bogus!", *argument, "--lake", str(tmp_path)])
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert " ".join(problem.split()) in " ".join(result.stderr.replace("│", " ").split()), result.stderr
    if option.default is not None:
        assert option.problem(option.default) is None  # and its default passes
