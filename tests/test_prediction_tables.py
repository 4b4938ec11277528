"""Predictions made outside lakehouse: `lakehouse import predictions FILE --name NAME`, then
`--predictor table:NAME` (docs/your-own-policy.md)."""

from __future__ import annotations

import polars as pl
import pytest
from typer.testing import CliRunner

from lakehouse.base.lake import Lake
from lakehouse.cli import app
from lakehouse.sim import simulate, simulate_log

from conftest import cli as run

runner = CliRunner()
KTH = "KTH-SP2-1996-2.1-cln"


def _user_medians(lake) -> pl.DataFrame:
    """A predictor made outside lakehouse, as a user would in a notebook: each user's median run time."""
    jobs = lake.query(f"select log, job_id, user_id, run_time from swf.jobs_clean where log = '{KTH}'")
    return jobs.select("log", "job_id", pl.col("run_time").cast(pl.Float64).median().over("user_id").alias("predicted"))


def _import(lake, path, name) -> str:
    result = runner.invoke(app, ["import", "predictions", str(path), "--name", name, "--lake", str(lake.root)])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_a_table_made_outside_round_trips_into_a_replay(kth_lake, tmp_path, suffix):
    table = _user_medians(kth_lake)
    path = tmp_path / f"medians.{suffix}"
    table.write_csv(path) if suffix == "csv" else table.write_parquet(path)
    _import(kth_lake, path, f"median-{suffix}")
    stored = kth_lake.query(f"select * from analysis.imported_predictions where name = 'median-{suffix}'")
    assert stored.height == table.height

    # The same predictions given as a column of the jobs (the column predictor): the same schedule.
    jobs = kth_lake.query(f"select * from swf.jobs_clean where log = '{KTH}' order by submit_time, job_id")
    # (Rounded to whole seconds, halves up: the predictions are never negative; a table's prediction is
    # capped at the job's request.)
    rounded = (pl.col("predicted") + 0.5).floor().cast(pl.Int64)
    jobs = jobs.join(table.select("job_id", rounded), on="job_id", how="left")
    jobs = jobs.with_columns(predicted=pl.min_horizontal("predicted", "req_time"))
    by_column = simulate(jobs, 100, predictor="column:predicted", backfill="sjbf")
    by_table = simulate_log(kth_lake, KTH, predictor=f"table:median-{suffix}", backfill="sjbf")
    assert by_table.jobs["start_time"].equals(by_column.jobs["start_time"])
    assert by_table.jobs["initial_prediction"].equals(by_column.jobs["initial_prediction"])
    assert by_table.summary["mean_wait"] != simulate_log(kth_lake, KTH, backfill="sjbf").summary["mean_wait"]


def test_jobs_without_a_prediction_use_their_request_and_are_counted(kth_lake, tmp_path):
    table = _user_medians(kth_lake).head(1000)
    table.write_csv(tmp_path / "some.csv")
    _import(kth_lake, tmp_path / "some.csv", "some")
    result = simulate_log(kth_lake, KTH, predictor="table:some")
    jobs = result.jobs.join(table.select("job_id"), on="job_id", how="anti")
    assert (jobs["initial_prediction"] == jobs["req_time"]).all()
    assert any(f"{result.jobs.height - 1000:,} of {result.jobs.height:,} jobs have no" in w for w in result.warnings)


BAD = {
    "negative": ("log,job_id,predicted\n{kth},1,100\n{kth},2,-5\n", "line 3: has a negative prediction"),
    "twice": ("log,job_id,predicted\n{kth},1,100\n{kth},1,50\n", "line 3: job 1 of {kth} is listed twice"),
    "no column": ("log,job_id\n{kth},1\n", "no column predicted"),
    "not a number": ("log,job_id,predicted\n{kth},1,100\n{kth},2,soon\n", "line 3: has no prediction"),
    "no job id": ("log,job_id,predicted\n{kth},,100\n", "line 2: has no job_id"),
    "another log": ("log,job_id,predicted\n{kth},1,100\nCTC-SP2-1996-3.1-cln,1,5\n", "line 3: the lake has no log"),
    "unknown job": ("log,job_id,predicted\n{kth},99999999,5\n", "line 2: {kth} has no job 99999999"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_table_is_refused_with_its_row_and_nothing_reaches_the_lake(kth_lake, tmp_path, case):
    text, message = BAD[case]
    path = tmp_path / f"{case.replace(' ', '-')}.csv"
    path.write_text(text.format(kth=KTH))
    before = kth_lake.query("select count(*) as n from analysis.imported_predictions")["n"][0]
    result = runner.invoke(app, ["import", "predictions", str(path), "--name", "bad", "--lake", str(kth_lake.root)])
    output = result.stdout + result.stderr
    assert result.exit_code == 1 and "Traceback" not in output, output
    assert output.count("error:") == 1 and f"{path}, " in output or f"{path}:" in output, output
    assert message.format(kth=KTH) in output, output
    assert kth_lake.query("select count(*) as n from analysis.imported_predictions")["n"][0] == before
    assert not kth_lake.query("select * from analysis.imported_predictions where name = 'bad'").height


def test_a_non_finite_prediction_in_parquet_is_refused(kth_lake, tmp_path):
    path = tmp_path / "inf.parquet"
    pl.DataFrame({"log": [KTH], "job_id": [1], "predicted": [float("inf")]}).write_parquet(path)
    result = runner.invoke(app, ["import", "predictions", str(path), "--name", "inf", "--lake", str(kth_lake.root)])
    assert result.exit_code == 1 and "row 1: has a prediction that is not a finite number" in result.output


def test_a_changed_table_makes_new_campaign_runs(kth_lake, tmp_path):
    table = _user_medians(kth_lake)
    path = tmp_path / "t.csv"
    table.write_csv(path)
    _import(kth_lake, path, "changing")
    args = ["campaign", "run", "--name", "table-keys", "--log", KTH, "--lake", str(kth_lake.root)]
    first = runner.invoke(app, [*args, "--predictor", "table:changing", "--backfill", "sjbf"])
    assert first.exit_code == 0 and "1 runs ok" in first.output.replace("\n", " "), first.output
    same = runner.invoke(app, [*args, "--predictor", "table:changing", "--backfill", "sjbf"])
    assert "1 already stored" in same.output, same.output
    table.with_columns(pl.col("predicted") * 2).write_csv(path)
    _import(kth_lake, path, "changing")
    changed = runner.invoke(app, [*args, "--predictor", "table:changing", "--backfill", "sjbf"])
    assert "1 runs ok" in changed.output.replace("\n", " "), changed.output


def test_a_missing_table_says_how_to_import_it(kth_lake):
    result = runner.invoke(app, ["simulate", KTH, "--lake", str(kth_lake.root), "--predictor", "table:absent"])
    assert result.exit_code == 1
    assert "import the table first (lakehouse import predictions FILE --name absent)" in result.output


# -- inputs that passed but should not (the researcher's round) -------------------------------------

MORE_BAD = {
    "header only": ("log,job_id,predicted\n", "the table has no rows"),
    "fractional job id": (
        "log,job_id,predicted\n{kth},1,100\n{kth},1.5,50\n",
        "line 3: has a job_id that is not a whole number (1.5)",
    ),
    "true/false prediction": (
        "log,job_id,predicted\n{kth},1,true\n{kth},2,false\n",
        "column predicted holds true/false",
    ),
}


@pytest.mark.parametrize("case", sorted(MORE_BAD))
def test_a_table_that_passed_before_is_refused_with_its_reason(kth_lake, tmp_path, case):
    text, message = MORE_BAD[case]
    path = tmp_path / f"{case.replace(' ', '-').replace('/', '-')}.csv"
    path.write_text(text.format(kth=KTH))
    result = runner.invoke(app, ["import", "predictions", str(path), "--name", "bad", "--lake", str(kth_lake.root)])
    output = " ".join((result.stdout + result.stderr).split())
    assert result.exit_code == 1 and message.format(kth=KTH) in output and "Traceback" not in output, output
    assert not kth_lake.query("select * from analysis.imported_predictions where name = 'bad'").height


def test_a_parquet_duration_is_read_as_its_seconds(kth_lake, tmp_path):
    from datetime import timedelta

    first, second = sorted(kth_lake.query(f"select job_id from swf.jobs where log = '{KTH}' limit 2")["job_id"])
    path = tmp_path / "durations.parquet"
    durations = [timedelta(days=1), timedelta(minutes=1)]
    pl.DataFrame({"log": [KTH, KTH], "job_id": [first, second], "predicted": durations}).write_parquet(path)
    _import(kth_lake, path, "durations")
    stored = kth_lake.query("select job_id, predicted from analysis.imported_predictions where name = 'durations'")
    assert stored.sort("job_id")["predicted"].to_list() == [86_400.0, 60.0]


def test_a_prediction_beyond_the_request_is_capped_at_it_and_counted(kth_lake, tmp_path):
    jobs = kth_lake.query(f"select log, job_id, req_time from swf.jobs_clean where log = '{KTH}' order by job_id")
    # Every job predicted far beyond its request, one of them beyond what a 64-bit integer holds.
    huge = jobs.select("log", "job_id", predicted=pl.lit(1e12)).with_columns(
        predicted=pl.when(pl.col("job_id") == jobs["job_id"][0]).then(1e300).otherwise(pl.col("predicted"))
    )
    huge.write_csv(tmp_path / "huge.csv")
    _import(kth_lake, tmp_path / "huge.csv", "huge")
    capped = simulate_log(kth_lake, KTH, predictor="table:huge")
    # Capped at the request, the replay is the one of the requested times (the default predictor).
    requested = simulate_log(kth_lake, KTH)
    assert capped.jobs["start_time"].equals(requested.jobs["start_time"])
    assert any(f"{jobs.height:,} of {jobs.height:,} predictions of table:huge exceed" in w for w in capped.warnings)


def test_predictions_list_and_drop_and_an_unknown_table_names_the_imported_ones(kth_lake, tmp_path):
    _user_medians(kth_lake).write_csv(tmp_path / "m.csv")
    _import(kth_lake, tmp_path / "m.csv", "to-drop")
    listed = runner.invoke(app, ["predictions", "list", "--lake", str(kth_lake.root), "--format", "csv"])
    assert listed.exit_code == 0 and "\nto-drop," in listed.stdout, listed.output
    unknown = runner.invoke(app, ["simulate", KTH, "--lake", str(kth_lake.root), "--predictor", "table:to-dorp"])
    message = " ".join(unknown.output.split())
    assert unknown.exit_code == 1 and "no prediction table named 'to-dorp'" in message and "to-drop" in message, message
    assert "predicted_by_" not in message
    dropped = runner.invoke(app, ["predictions", "drop", "to-drop", "--lake", str(kth_lake.root)])
    assert dropped.exit_code == 0, dropped.output
    assert not kth_lake.query("select * from analysis.imported_predictions where name = 'to-drop'").height
    again = runner.invoke(app, ["predictions", "drop", "to-drop", "--lake", str(kth_lake.root)])
    assert again.exit_code == 1 and "no prediction table named 'to-drop'" in again.output


def test_an_imported_file_name_with_glob_characters_is_that_file(kth_lake, tmp_path):
    first = kth_lake.query(f"select job_id from swf.jobs where log = '{KTH}' order by job_id limit 1")["job_id"][0]
    (tmp_path / "m1.csv").write_text(f"log,job_id,predicted\n{KTH},{first},111\n")
    (tmp_path / "m[1].csv").write_text(f"log,job_id,predicted\n{KTH},{first},999\n")
    run("import", "predictions", tmp_path / "m[1].csv", "--name", "bracket", "--lake", kth_lake.root)
    stored = kth_lake.query("select predicted from analysis.imported_predictions where name = 'bracket'")
    assert stored["predicted"].to_list() == [999.0]
    star = run("import", "predictions", tmp_path / "m*.csv", "--name", "star", "--lake", kth_lake.root, code=1)
    assert "no such file" in star.stderr


def test_a_prediction_table_is_bound_to_the_content_its_log_had(tmp_path):
    from lakehouse.base.testing import small_log, write_swf

    jobs, header = small_log(8)
    log = write_swf(tmp_path / "mini.swf", jobs, header)
    lake = Lake(tmp_path / "lake")
    run("ingest", "swf", log, "--lake", lake.root)
    ids = lake.query("select job_id from swf.jobs where log = 'mini'")["job_id"].to_list()
    pl.DataFrame({"log": "mini", "job_id": ids, "predicted": 60.0}).write_csv(tmp_path / "p.csv")
    run("import", "predictions", tmp_path / "p.csv", "--name", "minute", "--lake", lake.root)
    run("simulate", "mini", "--predictor", "table:minute", "--lake", lake.root)
    assert run("audit", "--lake", lake.root).exit_code == 0
    # The log ingested again from another version of its file: the same ids, other jobs.
    write_swf(log, [{**job, "run_time": job["run_time"] + 1} for job in jobs], header)
    run("ingest", "swf", log, "--lake", lake.root)
    refused = run("simulate", "mini", "--predictor", "table:minute", "--lake", lake.root, code=1)
    said = " ".join(refused.stderr.split())
    assert "table:minute was imported for mini as its file was then" in said and "import the table again" in said
    audit = run("audit", "--lake", lake.root, code=1)
    assert "analysis.imported_predictions" in audit.stdout + audit.stderr
    run("import", "predictions", tmp_path / "p.csv", "--name", "minute", "--lake", lake.root)  # bound anew
    run("simulate", "mini", "--predictor", "table:minute", "--lake", lake.root)


def test_an_import_names_the_line_an_editor_shows_and_leaves_special_files_alone(kth_lake, tmp_path):
    import os

    first = kth_lake.query(f"select job_id from swf.jobs where log = '{KTH}' order by job_id limit 3")["job_id"]
    a, b, c = first.to_list()
    # A blank line and a quoted field over two lines before the bad record: it is on line 7.
    (tmp_path / "t.csv").write_text(
        f'log,job_id,predicted,note\n{KTH},{a},10,\n\n{KTH},{b},20,\n{KTH},{c},30,"two\nlines"\n{KTH},{a + 1},-5,\n'
    )
    result = run("import", "predictions", tmp_path / "t.csv", "--name", "lines", "--lake", kth_lake.root, code=1)
    assert f"{tmp_path / 't.csv'}, line 7: has a negative prediction" in " ".join(result.stderr.split())
    os.mkfifo(tmp_path / "fifo.csv")
    (tmp_path / "zero.csv").symlink_to("/dev/zero")
    for special in ("fifo.csv", "zero.csv"):
        refused = run("import", "predictions", tmp_path / special, "--name", "x", "--lake", kth_lake.root, code=1)
        assert "not a regular file" in refused.stderr, refused.stderr
