"""Hostile input through the CLI: one clear message, a non-zero exit, never a traceback, nothing changed."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from lakehouse.base.testing import small_log, swf_job, swf_text, write_swf
from lakehouse.cli import app

from conftest import stored_files

runner = CliRunner()


def refused(*args) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    output = result.stdout + result.stderr
    assert result.exit_code != 0, output
    assert "Traceback" not in output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    # One message: our one-line error, or click's usage error (in its box).
    assert output.count("error:") + output.count("─ Error ─") == 1, output
    return " ".join(output.replace("│", " ").split())  # (usage errors come in a box, wrapped)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["simulate", "mini", "--machine-size", "99999999999999999999"], "machine size must be from 1 to 2147483646"),
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
        # The rest of the corpus: every command group, bad names, values, files and folders.
        (["simulate", "nosuchlog"], "no log matches 'nosuchlog'"),
        (["simulate", "mini", "--policy", "fastest"], "fastest"),
        (["simulate", "mini", "--algorithm", "greedy"], "greedy"),
        (["simulate", "mini", "--predictor", "oracle9"], "oracle9"),
        (["simulate", "mini", "--correction", "sometimes"], "sometimes"),
        (["simulate", "mini", "--compat", "slurm"], "slurm"),
        (["simulate", "mini", "--where", "no_such_column > 1"], "no_such_column"),
        (["simulate", "mini", "--policy", "fcfs", "--policy", "spf"], "given twice"),
        (["campaign", "run", "--log", "nosuchlog"], "nosuchlog"),
        (["campaign", "run", "--log", "mini", "--policy", "fcfs,fastest"], "fastest"),
        (["campaign", "run", "{tmp}/missing.toml"], "missing.toml"),
        (["campaign", "show", "nosuchcampaign"], "no campaign named 'nosuchcampaign'"),
        (["report", "locality", "mini", "--runtime-ratios", "1.2,x"], "give numbers above 1"),
        (["report", "locality", "mini", "--variant", "weekday"], "choose among time, user, time+user"),
        (["report", "locality", "nosuchlog"], "nosuchlog"),
        # Knobs that scale the work: each has its range.
        (["report", "locality", "mini", "--shuffles", "100000000"], "the shuffles are 0 to 1,000"),
        (["report", "locality", "mini", "--shuffles", "-1"], "the shuffles are 0 to 1,000"),
        (["report", "hmm", "mini", "--states", "1000"], "an HMM has 1 to 64 states"),
        (["report", "hmm", "mini", "--states", "0"], "an HMM has 1 to 64 states"),
        (["report", "predictions", "nosuchlog"], "nothing to predict for nosuchlog"),
        (["report", "predictions", "mini", "--over", "nan"], "expected a finite number from 0 to 1e+06, got nan"),
        (["report", "predictions", "mini", "--under", "-1"], "expected a number from 0 to 1e+06, got -1.0"),
        (["report", "predictions", "mini", "--under", "0", "--over", "0"], "both 0"),
        (["report", "volatility", "--lake", "{tmp}/nowhere"], "no lake at"),
        (["report", "periodicity", "--lake", "{tmp}/nowhere"], "no lake at"),
        (["pack", "--lake", "{tmp}/nowhere"], "no lake at"),
        (["pack", "--synthetic", "--seeds", "0"], "is not in the range 1<=x<=1000"),
        (["campaign", "run", "--log", "mini", "--workers", "100000"], "is not in the range 1<=x<="),
        # (A report's options say their ranges in the nightly configuration's words.)
        (["report", "periodicity", "--noise-trials", "1000000000"], "expected a whole number from 0 to 10,000"),
        (["report", "hmm", "mini", "--rounds", "100000000"], "expected a whole number from 1 to 10,000"),
        (["report", "selection", "mini", "--resamples", "1000000"], "expected a whole number from 1 to 1,000"),
        (["plot", "schedule", "{tmp}/missing.parquet"], "missing.parquet"),
        (["ingest", "swf", "{tmp}/missing.swf"], "no such file or folder"),
        (["ingest", "swf", "{tmp}/*.nothing"], "no file matches"),
        (["ingest", "google", "{tmp}/missing-trace"], "not a folder"),
        (["ingest", "swf", "{tmp}/mini.swf", "--machine-size", "99999999999999999999"], "machine size"),
        (["logs", "--lake", "{tmp}/mini.swf"], "is a file: a lake is a folder"),
        (["sql", "SELEC 1"], "syntax error"),
        (["sql", "SELECT * FROM swf.no_such_view"], "no_such_view"),
        (["views", "-o", "{tmp}/missing/views.csv"], "does not exist"),
        (["export", "swf", "nosuchlog", "-o", "{tmp}/x.swf"], "no log matches 'nosuchlog'"),
        (["export", "swf", "mini", "-o", "{tmp}/missing/x.swf"], "does not exist"),
        (["export", "google-swf", "-o", "{tmp}/g.swf"], "no Google job"),
        (["export", "google-swf", "-o", "{tmp}/g.swf", "--cores-per-machine", "0"], "is not in the range x>=1"),
        (["nightly", "--inbox", "{tmp}/missing-inbox", "--dry-run"], "not a folder"),
        (["nightly", "--inbox", "{tmp}", "--config", "{tmp}/missing.toml", "--dry-run"], "missing.toml"),
        (["nightly", "--inbox", "{tmp}", "--print-systemd", "--at", "24:61"], "give a time of day as HH:MM"),
        (["nightly", "--dry-run"], "give the folder new traces arrive in"),
        # A Ray address that is no address, or where nothing listens: refused before any work.
        (["campaign", "run", "--log", "mini", "--executor", "ray", "--ray-address", "not a host"], "expected auto"),
        (["campaign", "run", "--log", "mini", "--executor", "ray", "--ray-address", "localhost:99999"], "expected"),
        (["campaign", "run", "--log", "mini", "--executor", "ray", "--ray-address", "127.0.0.1:1"], "nothing answers"),
    ],
)
def test_bad_options_get_one_clear_message(cli_lake, tmp_path, args, message):
    args = [a.format(tmp=tmp_path, lake=cli_lake) for a in args]
    if "--lake" not in args:
        args += ["--lake", str(cli_lake)]
    wanted = "".join(message.format(tmp=tmp_path).split())
    assert wanted in "".join(refused(*args).split())  # rich wraps long lines anywhere
    assert not (tmp_path / "missing").exists()
    assert list(stored_files(cli_lake, "swf_jobs")) == ["mini"]
    assert not (tmp_path / "nowhere").exists()  # only init and ingest create a lake


def test_a_log_without_jobs_in_the_view_is_one_line_for_plot_schedule(tmp_path):
    jobs = [swf_job(i + 1, i * 10, -1, 1, req_time=100) for i in range(5)]  # no runtime: none is replayable
    write_swf(tmp_path / "unknown-runtimes.swf", jobs, small_log(1)[1])
    root = str(tmp_path / "lake")
    assert runner.invoke(app, ["ingest", "swf", str(tmp_path / "unknown-runtimes.swf"), "--lake", root]).exit_code == 0
    assert "no jobs of unknown-runtimes in swf.jobs_clean" in refused(
        "plot", "schedule", "--log", "unknown", "--lake", root
    )


def test_statements_without_rows_print_ok_and_writes_need_a_flag(cli_lake, tmp_path):
    for statement in ("SET VARIABLE x = 1", "", "  ;  "):
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


@pytest.mark.today_format  # (a DuckLake lake names its files relative to its folder: test_ducklake_lake moves one)
def test_a_lake_moved_without_a_rebuild_is_named_and_not_read_from_its_old_place(cli_lake, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(cli_lake, copy)  # the original stays: its views would silently read it
    message = refused("logs", "--lake", copy)
    assert f"was built at {cli_lake}" in message and "lakehouse catalog rebuild --lake" in message
    assert runner.invoke(app, ["catalog", "rebuild", "--lake", str(copy)]).exit_code == 0
    assert "mini" in runner.invoke(app, ["logs", "--lake", str(copy), "-f", "csv"]).stdout


def test_a_report_given_a_mistyped_lake_leaves_nothing_there(cli_lake, tmp_path):
    for args in (["report", "volatility"], ["report", "periodicity"], ["pack"], ["report", "triples"]):
        assert "no lake at" in refused(*args, "--lake", tmp_path / "lakee")
    assert not (tmp_path / "lakee").exists()
