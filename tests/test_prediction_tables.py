"""Predictions made outside lakehouse: `lakehouse import predictions FILE --name NAME`, then
`--predictor table:NAME` (docs/your-own-policy.md)."""

from __future__ import annotations

import polars as pl
import pytest
from typer.testing import CliRunner

from lakehouse.cli import app
from lakehouse.sim import simulate, simulate_log

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
    # (Rounded to whole seconds, halves up: the predictions are never negative.)
    rounded = (pl.col("predicted") + 0.5).floor().cast(pl.Int64)
    jobs = jobs.join(table.select("job_id", rounded), on="job_id", how="left")
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
