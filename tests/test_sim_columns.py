"""The replay's input as numpy columns: what `lakehouse simulate` loads, without Polars.

`log_columns` must give what `log_jobs` gives (same jobs, same order), and `simulate` must read a dict
of numpy columns (masked where a value is missing) as it reads the same jobs in a Polars frame or an
Arrow table, refusing the same bad input with the same messages."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from lakehouse.base.errors import SimulationInputError
from lakehouse.base.job_views import View, log_columns, log_jobs
from lakehouse.sim import simulate
from lakehouse.sim.workload import input_columns

from sim_workloads import jobs

GOOD = jobs((1, 0, 10, 20, 2), (2, 5, 10, 20, 4), (3, 9, 10, 20, 1))


def as_numpy(frame: pl.DataFrame) -> dict[str, np.ndarray]:
    """The frame's columns as numpy arrays, masked where null (as DuckDB's fetchnumpy gives them)."""
    return {
        name: np.ma.masked_array(series.fill_null(0).to_numpy(), mask=series.is_null().to_numpy())
        if series.null_count()
        else series.to_numpy()
        for name, series in zip(frame.columns, frame.get_columns(), strict=True)
    }


@pytest.mark.parametrize(
    ("view", "where", "columns"),
    [
        (View.jobs_clean, None, None),
        (View.jobs_strong, None, input_columns(pyss=False, prediction_column=None)),
        (View.jobs_clean, "procs <= 8", input_columns(pyss=True, prediction_column=None)),
        (View.jobs_strong, "submit_offset < 7*86400", ["job_id", "submit_time", "line"]),
    ],
)
def test_log_columns_are_log_jobs_in_the_same_order(kth_lake, view, where, columns):
    log = "KTH-SP2-1996-2.1-cln"
    frame = log_jobs(kth_lake, log, view, where, columns)
    arrays = log_columns(kth_lake, log, view, where, columns)
    assert list(arrays) == frame.columns
    assert len(frame) > 100
    for name, series in zip(frame.columns, frame.get_columns(), strict=True):
        column = arrays[name]
        if isinstance(series.dtype, pl.Datetime):
            series = series.dt.replace_time_zone(None)  # (numpy's datetimes have no time zone)
        assert np.ma.getmaskarray(column).tolist() == series.is_null().to_list(), name
        assert np.ma.asarray(column).tolist() == series.to_list(), name


def test_numpy_columns_replay_as_the_frame_does(kth_lake):
    log = "KTH-SP2-1996-2.1-cln"
    columns = input_columns(pyss=False, prediction_column=None)
    for settings in ({}, {"algorithm": "conservative", "backfill": "sjbf"}, {"compat": "pyss"}):
        wanted = input_columns(pyss="compat" in settings, prediction_column=None)
        frame = log_jobs(kth_lake, log, View.jobs_clean, columns=wanted)
        from_frame = simulate(frame, 100, **settings)
        from_numpy = simulate(log_columns(kth_lake, log, View.jobs_clean, columns=wanted), 100, **settings)
        assert from_numpy.jobs.equals(from_frame.jobs), settings
        assert from_numpy.summary == from_frame.summary
    assert simulate(as_numpy(GOOD), 4).summary == simulate(GOOD, 4).summary == simulate(GOOD.to_arrow(), 4).summary
    assert len(columns) == 6


@pytest.mark.parametrize(
    ("column", "values", "message"),
    [
        ("run_time", [10, None, 3], r"missing run values: job id 2 \(1 job\)"),
        ("submit_time", [0, None, 9], r"missing submit values: job id 2"),
        ("job_id", [1, None, 3], r"missing job ids"),
        ("run_time", [10.0, float("nan"), 3.5], r"run_time is NaN or infinite: job id 2 \(1 job\)"),
        ("req_time", [20, 2**62, 20], r"req_time beyond 2\^53 s .*: job id 2 \(1 job"),
        ("procs", [2.0, 1e30, 1.0], r"procs beyond 2\^63 .*: job id 2 \(1 job"),
    ],
)
def test_bad_numpy_columns_are_named_as_bad_frames_are(column, values, message):
    frame = GOOD.with_columns(pl.Series(column, values))
    for bad in (frame, as_numpy(frame)):
        with pytest.raises(SimulationInputError, match=message):
            simulate(bad, 4)


def test_numpy_columns_that_hold_no_numbers_are_named():
    with pytest.raises(SimulationInputError, match="column run_time must hold numbers, not <U2"):
        simulate({**as_numpy(GOOD), "run_time": np.array(["10", "10", "x"])}, 4)
    with pytest.raises(SimulationInputError, match="column procs must hold numbers, not Boolean"):
        simulate(GOOD.with_columns(procs=pl.Series([True, True, False])), 4)
    with pytest.raises(SimulationInputError, match="columns differ in length"):
        simulate({**as_numpy(GOOD), "procs": np.array([1, 2])}, 4)


def test_missing_requests_and_users_are_filled_in_numpy_columns_too():
    frame = GOOD.with_columns(req_time=pl.Series([None, 20, None]), user_id=pl.Series([None, 1, 1]))
    expected = simulate(GOOD.with_columns(req_time=pl.Series([10, 20, 10]), user_id=pl.Series([-1, 1, 1])), 4)
    for given in (frame, as_numpy(frame)):
        result = simulate(given, 4)
        assert result.jobs.equals(expected.jobs)


def test_dropping_wider_jobs_from_numpy_columns():
    wide = GOOD.with_columns(procs=pl.Series([2, 9, 1]))
    for given in (wide, as_numpy(wide)):
        result = simulate(given, 4, drop_wider=True)
        assert result.jobs["job_id"].to_list() == [1, 3]
        assert result.warnings == ["dropped 1 jobs wider than the machine (4 processors), e.g. job 2 with 9"]


def test_a_result_prints_as_one_line_not_a_frame():
    """What a notebook shows for a replay: the log, jobs, machine, what ran and the headline metrics."""
    jobs = pl.DataFrame(
        {"job_id": [1, 2], "submit_time": [0, 5], "run_time": [10, 20], "req_time": [20, 30], "procs": [1, 2],
         "user_id": [1, 1]}
    )  # fmt: skip
    shown = repr(simulate(jobs, 4, backfill="sjbf"))
    assert "\n" not in shown and len(shown) < 200
    assert shown == (
        "<SimulationResult: 2 jobs on 4 processors; easy, fcfs, sjbf backfilling, requested predictions; "
        "mean wait 0 s, mean bounded slowdown 1, utilization 50.0%>"
    )


def test_simulate_log_from_python_equals_the_command(kth_lake, tmp_path):
    """`simulate_log(lake, "KTH")` is `lakehouse simulate KTH`, and its jobs carry the names of the
    `--jobs-out` file (which adds `run`)."""
    import json

    from typer.testing import CliRunner

    from lakehouse.cli import app
    from lakehouse.sim import simulate_log

    result = simulate_log(kth_lake, "KTH", backfill="sjbf")
    out = tmp_path / "kth.parquet"
    args = ["simulate", "KTH", "--backfill", "sjbf", "--lake", str(kth_lake.root), "-f", "json", "--jobs-out", str(out)]
    command = json.loads(CliRunner().invoke(app, args).stdout)[0]
    settings = {"view": "jobs_clean", "where": None, **result.settings.columns()}  # (every row says what made it)
    assert command == {"log": result.log, "machine_size": result.settings.machine_size, **result.summary, **settings}
    written = pl.read_parquet(out)
    assert set(result.jobs.columns) | {"run"} == set(written.columns)
    assert written["start_time"].to_list() == result.jobs["start_time"].to_list()


def test_the_policy_shares_of_a_selector_are_written_beside_an_output(kth_lake, tmp_path):
    from typer.testing import CliRunner

    from lakehouse.cli import app

    out = tmp_path / "sel.csv"
    args = ["simulate", "KTH", "--selector", "full", "--policies", "fcfs,spf", "--period", "week",
            "--lake", str(kth_lake.root), "-f", "csv", "-o", str(out)]  # fmt: skip
    assert CliRunner().invoke(app, args).exit_code == 0
    shares = pl.read_csv(tmp_path / "sel-periods.csv")
    assert set(shares["policy"]) <= {"fcfs", "spf"} and shares.height >= 1
