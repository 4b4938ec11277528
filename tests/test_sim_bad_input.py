"""Bad input to the simulator: a clear Python exception that names the offending jobs."""

from __future__ import annotations

import math
import pickle

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from lakehouse import _native
from lakehouse.base.errors import SimulationInputError
from lakehouse.sim import ReplaySettings, simulate

from sim_workloads import jobs

GOOD = jobs((1, 0, 10, 20, 2), (2, 5, 10, 20, 4), (3, 9, 10, 20, 1))


def test_a_good_workload_runs():
    assert simulate(GOOD, 4).summary["jobs"] == 3


@pytest.mark.parametrize("machine_size", [0, -5])
def test_machine_size_must_be_positive(machine_size):
    with pytest.raises(SimulationInputError, match="machine size must be from 1 to"):
        simulate(GOOD, machine_size)


def test_jobs_wider_than_the_machine_are_named():
    with pytest.raises(SimulationInputError, match=r"wider than the machine \(3 processors\): job id 2 \(1 job"):
        simulate(GOOD, 3)


def test_negative_runtimes_are_named():
    bad = GOOD.with_columns(run_time=pl.Series([10, -1, -7]))
    with pytest.raises(SimulationInputError, match=r"negative runtimes: job id 2, 3 \(2 jobs\)"):
        simulate(bad, 4)


def test_nan_runtimes_are_named():
    bad = GOOD.with_columns(run_time=pl.Series([10.0, math.nan, 3.5]))
    with pytest.raises(SimulationInputError, match=r"run_time is NaN or infinite: job id 2 \(1 job\)"):
        simulate(bad, 4)


def test_missing_runtimes_are_named():
    bad = GOOD.with_columns(run_time=pl.Series([10, None, 3]))
    with pytest.raises(SimulationInputError, match=r"missing run values: job id 2"):
        simulate(bad, 4)


def test_unsorted_input_is_named():
    bad = GOOD.with_columns(submit_time=pl.Series([0, 9, 5]))
    with pytest.raises(SimulationInputError, match=r"not sorted by submit time.*job id 3"):
        simulate(bad, 4)


def test_duplicate_ids_are_named():
    bad = GOOD.with_columns(job_id=pl.Series([7, 3, 7]))
    with pytest.raises(SimulationInputError, match=r"duplicate job ids: job id 7 \(1 job\)"):
        simulate(bad, 4)


def test_missing_columns_are_listed():
    with pytest.raises(SimulationInputError, match="lack column.*req_time"):
        simulate(GOOD.drop("req_time"), 4)


def test_unknown_choices_are_explained():
    with pytest.raises(SimulationInputError, match="unknown policy 'fifo'; expected one of: fcfs, lcfs, spf"):
        simulate(GOOD, 4, policy="fifo")
    with pytest.raises(
        SimulationInputError,
        match=r"expected requested, clairvoyant, ave2, eloss\[:KEY=VALUE,...\], hmm\[:KEY=VALUE,...\], "
        r"requested-law or column:NAME",
    ):
        simulate(GOOD, 4, predictor="oracle")
    with pytest.raises(
        SimulationInputError, match=r"unknown eloss weight \"area\"; expected one of: one, log-procs-run"
    ):
        simulate(GOOD, 4, predictor="eloss:weight=area")
    with pytest.raises(SimulationInputError, match=r"eloss parameter \"eta\" is given twice"):
        simulate(GOOD, 4, predictor="eloss:eta=1,eta=2")
    with pytest.raises(SimulationInputError, match="column:NAME"):
        simulate(GOOD, 4, predictor="column:")


def test_conservative_refuses_uncorrected_underpredictions():
    with pytest.raises(SimulationInputError, match="needs a correction rule"):
        simulate(GOOD, 4, algorithm="conservative", predictor="ave2", correction="none")


def test_arrow_tables_are_accepted_and_other_things_are_not():
    assert simulate(GOOD.to_arrow(), 4).summary["jobs"] == 3
    assert isinstance(GOOD.to_arrow(), pa.Table)
    with pytest.raises(SimulationInputError, match="Polars DataFrame or an Arrow table"):
        simulate([1, 2, 3], 4)  # type: ignore[arg-type]


def test_a_panic_in_the_engine_raises_instead_of_aborting():
    with pytest.raises(RuntimeError, match="internal error in the simulator: deliberate panic"):
        _native._panic_inside_guard()
    assert simulate(GOOD, 4).summary["jobs"] == 3  # the interpreter and the engine still work


@pytest.mark.parametrize("column", ["submit_time", "run_time", "req_time"])
def test_times_that_would_overflow_the_clock_are_named(column):
    bad = GOOD.with_columns(pl.Series(column, [10, 2**62, 20]))
    with pytest.raises(SimulationInputError, match=rf"{column} beyond 2\^53 s .*: job id 2 \(1 job"):
        simulate(bad.sort("submit_time"), 4)


def test_predictions_that_would_overflow_are_named():
    bad = GOOD.with_columns(guess=pl.Series([5, 2**60, 5]))
    with pytest.raises(SimulationInputError, match=r"guess beyond 2\^53 s .*: job id 2"):
        simulate(bad, 4, predictor="column:guess")


def test_a_column_of_text_is_named():
    bad = GOOD.with_columns(run_time=pl.Series(["10", "10", "x"]))
    with pytest.raises(SimulationInputError, match="column run_time must hold numbers, not String"):
        simulate(bad, 4)


@pytest.mark.parametrize("tau", [0, -1, math.inf, math.nan])
def test_tau_must_be_positive_and_finite(tau):
    with pytest.raises(SimulationInputError, match="tau must be a positive finite number"):
        simulate(GOOD, 4, tau=tau)


def test_runtimes_that_add_up_beyond_the_clock_are_refused():
    # Each below 2^53 s, but 600 of them back to back (on a machine of one processor) pass 2^62 s.
    n = 600
    bad = pl.DataFrame({"job_id": range(n), "submit_time": [0] * n, "run_time": [2**53 - 1] * n,
                        "req_time": [2**53 - 1] * n, "procs": [1] * n, "user_id": [1] * n})  # fmt: skip
    with pytest.raises(SimulationInputError, match=r"exceed 2\^62 s: the simulated clock could overflow"):
        simulate(bad, 1)


def test_a_machine_beyond_32_bits_is_refused():
    with pytest.raises(
        SimulationInputError, match="machine size must be from 1 to 2147483646 processors, got 99999999999999999999"
    ):
        simulate(GOOD, 99999999999999999999)


def test_the_learner_never_sees_a_job_without_a_request():
    """A job without a request never reaches the learner: refused in canonical replays (and by the
    engine itself), repaired as the published simulator does in pyss replays."""
    columns = [np.array(v, dtype=np.int64) for v in ((1, 2, 3), (0, 5, 9), (10, 10, 10), (20, 0, 20), (1, 1, 1))]
    with pytest.raises(_native.InputError) as caught:
        _native.simulate(*columns, columns[-1], None, ReplaySettings(4, backfill="sjbf", predictor="eloss"))
    assert caught.value.args == ("the eloss predictor needs requested times of at least 1 s", [2], 1, "needs_request")
    _native.simulate(*columns, columns[-1], None, ReplaySettings(4, backfill="sjbf"))  # other predictors accept it
    no_request = GOOD.with_columns(req_time=pl.Series([20, 20, 0]))
    with pytest.raises(SimulationInputError, match=r"requested times of at least 1 s: job id 3 \(1 job\)"):
        simulate(no_request, 4, predictor="eloss")
    assert simulate(no_request, 4, predictor="eloss", compat="pyss").summary["jobs"] == 3  # pyss repairs it


def test_the_engine_error_carries_the_job_ids_as_data():
    jobs = pl.DataFrame(
        {"job_id": [7, 8, 9], "submit_time": [0, 1, 2], "run_time": [5, 5, 5], "req_time": [9, 9, 9],
         "procs": [4, 9, 9], "user_id": [1, 1, 1]}
    )  # fmt: skip
    with pytest.raises(SimulationInputError) as caught:
        simulate(jobs, 5)  # two jobs wider than the machine, found by the engine
    assert caught.value.job_ids == [8, 9] and caught.value.count == 2
    assert caught.value.what == "jobs wider than the machine (5 processors)"
    assert str(caught.value) == "jobs wider than the machine (5 processors): job id 8, 9 (2 jobs)"


def test_more_offenders_than_shown_are_counted():
    error = SimulationInputError("negative runtimes", list(range(10)), 25)
    assert str(error).endswith("job id 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 15 more (25 jobs)")
    assert pickle.loads(pickle.dumps(error)).job_ids == list(range(10))  # as campaign workers send it


def test_a_prediction_column_with_nothing_in_it_is_refused_with_what_to_run():
    empty = GOOD.with_columns(predicted_walltime=pl.Series([None, None, None], dtype=pl.Int64))
    with pytest.raises(SimulationInputError, match=r"run `lakehouse report predictions LOG` first"):
        simulate(empty, 4, predictor="column:predicted_walltime")
    with pytest.raises(SimulationInputError, match=r"column mine holds no prediction for any of the 3 jobs$"):
        simulate(GOOD.with_columns(mine=pl.lit(None, pl.Int64)), 4, predictor="column:mine")


def test_missing_predictions_fall_back_to_the_request_and_are_counted():
    partial = GOOD.with_columns(p=pl.Series([5, None, 7]))
    result = simulate(partial, 4, predictor="column:p", backfill="sjbf")
    assert result.warnings == ["1 of 3 jobs have no p: they use their requested time"]
    filled = simulate(GOOD.with_columns(p=pl.Series([5, 20, 7])), 4, predictor="column:p", backfill="sjbf")
    assert result.jobs.equals(filled.jobs) and filled.warnings == []


def test_errors_carry_a_kind_and_keep_it_through_pickling():
    """Callers branch on `kind`, never on the text; campaign workers pickle the error."""
    wide = GOOD.with_columns(procs=pl.Series([1, 9, 1]))
    with pytest.raises(SimulationInputError) as caught:
        simulate(wide, 4)
    assert caught.value.kind == "wider_than_machine"
    assert pickle.loads(pickle.dumps(caught.value)).kind == "wider_than_machine"
    for settings, kind in (
        ({"machine_size": 0}, "machine_size"),
        ({"machine_size": 4, "threshold": -1}, "threshold"),
        ({"machine_size": 4, "backfill_confidence": 1.0}, "confidence"),
        ({"machine_size": 4, "algorithm": "conservative", "predictor": "hmm"}, "combination"),
        ({"machine_size": 4, "policy": "nope"}, "order"),
    ):
        with pytest.raises(SimulationInputError) as caught:
            ReplaySettings(**settings)
        assert caught.value.kind == kind
        assert kind in (*_native.INPUT_ERROR_KINDS, "setting")


@pytest.mark.parametrize("size", [-1, 0, 1, 2**31 - 2, 2**31 - 1, 2**63 - 1, 2**63, 10**20])
def test_every_entry_point_accepts_and_refuses_the_same_machine_sizes(size, tmp_path):
    """The machine size's range has one rule (the engine's): ingest, campaign grids, the nightly
    configuration and the replay settings agree on every size, with the same words."""
    from lakehouse.base.errors import LakehouseError
    from lakehouse.base.lake import Lake
    from lakehouse.campaigns.grid import Grid
    from lakehouse.ingest.swf import ingest_swf
    from lakehouse.nightly.config import load

    answers = []
    for attempt in (
        lambda: ReplaySettings(size),
        lambda: Grid("g", ("KTH",), machine_size=size),
        lambda: ingest_swf(Lake(tmp_path / "lake"), [str(tmp_path / "none.swf")], machine_size=size),
        lambda: load(_nightly_config(tmp_path, size)),
    ):
        try:
            attempt()
            answers.append(None)
        except LakehouseError as exc:
            answers.append(str(exc).rsplit(": ", 1)[-1] if "machine size" in str(exc) else None)
    valid = 1 <= size <= 2**31 - 2
    assert answers == [None if valid else f"machine size must be from 1 to 2147483646 processors, got {size}"] * 4


def _nightly_config(folder, size):
    path = folder / "nightly.toml"
    path.write_text(f'[machine_size]\n"KTH-*" = {size}\n')
    return path
