"""Hostile input through the CLI: one clear message, a non-zero exit, never a traceback, nothing changed."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from lakehouse.cli import app
from lakehouse.testing import small_log, swf_text, write_swf

runner = CliRunner()


@pytest.fixture
def cli_lake(tmp_path):
    jobs, header = small_log(6)
    write_swf(tmp_path / "mini.swf", jobs, header)
    root = tmp_path / "lake"
    assert runner.invoke(app, ["ingest", "swf", str(tmp_path / "mini.swf"), "--lake", str(root)]).exit_code == 0
    return root


def refused(*args) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    output = result.stdout + result.stderr
    assert result.exit_code != 0, output
    assert "Traceback" not in output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return " ".join(output.replace("│", " ").split())  # (usage errors come in a box, wrapped)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["simulate", "mini", "--machine-size", "99999999999999999999"], "beyond the engine's 2,147,483,647"),
        (["simulate", "mini", "--threshold", "99999999999999999999"], "threshold must be from 0 to"),
        (["simulate", "mini", "--threshold", "-1"], "threshold must be from 0 to"),
        (["campaign", "run", "--log", "mini", "--threshold", "99999999999999999999"], "threshold must be from 0"),
        (["campaign", "run", "--log", "mini", "--machine-size", "99999999999999999999"], "machine size must be"),
        (["simulate", "mini", "--tau", "nan"], "tau must be a positive finite number"),
        (["simulate", "mini", "--jobs-out", "{tmp}/missing/out.parquet"], "does not exist"),
        (["logs", "-o", "{tmp}/missing/logs.csv"], "does not exist"),
        (["sql", "COPY (SELECT 1) TO '{lake}/parquet/swf/jobs/evil.parquet'"], "refusing COPY"),
        (["sql", "EXPORT DATABASE '{tmp}/dump'"], "refusing EXPORT"),
        (["sql", "PREPARE p AS COPY (SELECT 1) TO '{tmp}/x.csv'"], "refusing PREPARE"),
        (["logs", "--lake", "{tmp}/nowhere"], "no lake at"),
    ],
)
def test_bad_options_get_one_clear_message(cli_lake, tmp_path, args, message):
    args = [a.format(tmp=tmp_path, lake=cli_lake) for a in args]
    if "--lake" not in args:
        args += ["--lake", str(cli_lake)]
    assert message.format(tmp=tmp_path) in refused(*args)
    assert sorted(p.name for p in (cli_lake / "parquet" / "swf" / "jobs").iterdir()) == [
        "_schema.parquet",
        "mini.parquet",
    ]
    assert not (tmp_path / "nowhere").exists()  # only init and ingest create a lake


def test_statements_without_rows_print_ok_and_writes_need_a_flag(cli_lake, tmp_path):
    for statement in ("SET threads = 1", "", "  ;  "):
        result = runner.invoke(app, ["sql", statement, "--lake", str(cli_lake)])
        assert result.exit_code == 0 and result.stdout.strip() == "ok", result.output
    result = runner.invoke(app, ["sql", "SELECT 1 AS a; SELECT 2 AS b", "--lake", str(cli_lake), "-f", "csv"])
    assert result.stdout == "b\n2\n"
    target = tmp_path / "out.csv"
    copy = f"COPY (SELECT count(*) AS n FROM swf.jobs) TO '{target}'"
    result = runner.invoke(app, ["sql", copy, "--allow-writes", "--lake", str(cli_lake)])
    assert result.exit_code == 0 and target.read_text() == "n\n6\n"


def test_a_lake_path_with_glob_characters_is_refused(tmp_path):
    message = refused("init", "--lake", tmp_path / "odd[1]" / "lake")
    assert "contains one of * ? [ ] { }" in message
    assert not (tmp_path / "odd[1]").exists()


def test_a_changed_file_that_fails_says_its_old_rows_stay(cli_lake, tmp_path):
    jobs, header = small_log(6)
    (tmp_path / "mini.swf").write_text("<html>moved</html>\n")
    message = refused("ingest", "swf", tmp_path / "mini.swf", "--lake", cli_lake)
    assert "not an SWF log" in message and "previous version, 6 jobs, stays in the lake" in message
    result = runner.invoke(
        app, ["sql", "SELECT status, message FROM meta.manifest", "--lake", str(cli_lake), "-f", "csv"]
    )
    assert "failed" in result.stdout and "stays in the lake" in result.stdout
    (tmp_path / "mini.swf").write_text(swf_text(jobs, header))  # fixed: ingests again
    assert runner.invoke(app, ["ingest", "swf", str(tmp_path / "mini.swf"), "--lake", str(cli_lake)]).exit_code == 0
