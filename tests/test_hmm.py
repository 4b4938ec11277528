"""The workload HMM: likelihoods and Baum-Welch rounds against hmmlearn, the
likelihood never decreasing, no underflow on long logs, a planted two-regime workload recovered, and
the command."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from lakehouse.base.testing import planted_regimes
from lakehouse.cli import app
from lakehouse.models.hmm import model as hmm

# hmmlearn logs a notice about its MultinomialHMM's history at every construction.
logging.getLogger("hmmlearn").setLevel(logging.ERROR)


def random_case(seed: int, states: int, columns: int, steps: int) -> tuple[hmm.Observations, hmm.Params]:
    rng = np.random.default_rng(seed)
    counts = rng.poisson(rng.uniform(0.2, 3.0), (steps, columns))
    counts[rng.random(steps) < 0.3] = 0  # empty bins are observations too
    params = hmm.Params(
        rng.dirichlet(np.ones(states)), rng.dirichlet(np.ones(states), states), rng.dirichlet(np.ones(columns), states)
    )
    return hmm.Observations(counts.astype(np.int64), np.arange(columns), 0), params


def reference(params: hmm.Params, obs: hmm.Observations, n_iter: int = 1):
    # Imported by the tests that use it (scikit-learn under it takes 3.5 s to load, which every worker
    # paid to collect the suite).
    hmmlearn = pytest.importorskip("hmmlearn.hmm")
    model = hmmlearn.MultinomialHMM(
        n_components=params.states, n_trials=obs.totals, init_params="", params="ste", n_iter=n_iter
    )
    model.startprob_, model.transmat_, model.emissionprob_ = params.start, params.transitions, params.emissions
    return model


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.integers(2, 8), st.integers(2, 400))
def test_likelihood_equals_hmmlearn(seed, states, columns, steps):
    obs, params = random_case(seed, states, columns, steps)
    ours = hmm.score(params, obs)
    theirs = reference(params, obs).score(obs.counts)
    assert ours == pytest.approx(theirs, rel=1e-9)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 4), st.integers(2, 6))
def test_one_baum_welch_round_equals_hmmlearn(seed, states, columns):
    obs, params = random_case(seed, states, columns, 300)
    _, gamma, xi = hmm.e_step(params, obs)
    ours = hmm.m_step(params, obs, gamma, xi)
    theirs = reference(params, obs).fit(obs.counts)
    np.testing.assert_allclose(ours.start, theirs.startprob_, atol=1e-9)
    np.testing.assert_allclose(ours.transitions, theirs.transmat_, atol=1e-9)
    np.testing.assert_allclose(ours.emissions, theirs.emissionprob_, atol=1e-9)


@settings(max_examples=20, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(1, 5),
    st.sampled_from(list(hmm.Init)),
    st.booleans(),
)
def test_baum_welch_never_decreases_the_training_likelihood(seed, states, init, poisson):
    obs, _ = random_case(seed, 2, 6, 500)
    fit = hmm.baum_welch(
        obs,
        hmm.HmmSettings(states=states, init=init, poisson=poisson, stop=hmm.Stop.rounds, rounds=15, seed=seed % 1000),
    )
    steps = np.diff(fit.log_likelihoods)
    assert (steps >= -1e-9 * abs(fit.log_likelihoods[0])).all(), fit.log_likelihoods
    assert all(math.isfinite(x) for x in fit.log_likelihoods)


def test_a_year_of_busy_bins_never_underflows():
    # 35,000 bins with up to ~40 jobs each: the product of the emission probabilities is far below
    # the smallest double (e^-700); the scaled passes keep every number finite.
    rng = np.random.default_rng(3)
    counts = rng.poisson(rng.choice([0.1, 5.0], 35_000)[:, None], (35_000, 12)).astype(np.int64)
    obs = hmm.Observations(counts, np.arange(12), 0)
    fit = hmm.baum_welch(obs, hmm.HmmSettings(states=8, stop=hmm.Stop.rounds, rounds=3))
    assert all(math.isfinite(x) for x in fit.log_likelihoods) and fit.log_likelihood < -700 * 100
    path = hmm.viterbi(fit.params, obs)
    assert path.shape == (35_000,) and path.min() >= 0 and path.max() < 8


def planted_workload(seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Two regimes alternating every 1-3 days: short jobs (about 1 min) or long ones (about 3 h)."""
    rng = np.random.default_rng(seed)
    submit, runtime, now, regime = [], [], 0.0, 0
    while now < 120 * 86400:
        length = rng.uniform(1, 3) * 86400
        n = rng.poisson(length / 900)
        times = now + np.sort(rng.uniform(0, length, n))
        typical = 60.0 if regime == 0 else 10800.0
        submit.append(times)
        runtime.append(typical * np.exp(rng.normal(0, 0.3, n)))
        now += length
        regime = 1 - regime
    return np.concatenate(submit), np.round(np.concatenate(runtime))


def test_a_planted_two_regime_workload_is_found_and_predicts_the_second_half():
    submit, runtime = planted_workload()
    one, two = (hmm.study(submit, runtime, hmm.HmmSettings(states=n, submit_bin=900)) for n in (1, 2))
    assert one.gain_bits_per_job == pytest.approx(0.0, abs=1e-12)
    # Knowing the regime halves the run-time bins a job can fall in: about one bit per job, less the
    # cost of the switches the model must discover.
    assert two.gain_bits_per_job > 0.7
    medians = sorted(two.states_table("planted")["median_runtime"].to_list())
    assert 20 < medians[0] < 120 and 3600 < medians[1] < 20000
    # Regimes last 1-3 days = 96-288 bins of 15 minutes; the fitted self-transitions imply that much.
    stay = 1 / (1 - np.diag(two.fit.params.transitions))
    assert ((stay > 40) & (stay < 600)).all()


def test_observations_by_hand():
    # Bins of 100 s, run-time bins of ratio 10: 5 s -> 0, 50 s -> 1, 500 s -> 2.
    obs = hmm.observations(np.array([10, 20, 350, 390]), np.array([5, 50, 50, 500]), 100, 10)
    assert obs.first_bin == 0 and obs.columns.tolist() == [0, 1, 2]
    assert obs.counts.tolist() == [[1, 1, 0], [0, 0, 0], [0, 0, 0], [0, 1, 1]]
    # Validation keeps the training's columns: a job in an unseen run-time bin is dropped and counted.
    valid = hmm.observations(np.array([400, 420]), np.array([5, 50_000]), 100, 10, obs.columns)
    assert valid.counts.tolist() == [[1, 0, 0]] and valid.dropped == 1 and valid.first_bin == 4


def test_stays_by_hand():
    stays = hmm.durations(np.array([0, 0, 1, 1, 1, 0, 2]))
    assert stays.rows() == [(0, 2), (1, 3), (0, 1), (2, 1)]


def test_stay_divergences_by_hand():
    """Stays of 1, 1 and 2 bins: mean 4/3, so the geometric law has p = 3/4, P(1) = 3/4, P(2) = 3/16;
    seen: 2/3 and 1/3.  The expected number of distinct lengths in 3 draws is the thesis' closed form,
    -sum_k C(3, k) (-p)^k / (1 - q^k)."""
    table = hmm.stay_divergences(pl.DataFrame({"state": [0, 0, 0, 1], "bins": [1, 1, 2, 5]}), 3)
    zero, one, two = table.iter_rows(named=True)
    kl = (2 / 3) * math.log2((2 / 3) / (3 / 4)) + (1 / 3) * math.log2((1 / 3) / (3 / 16))
    assert zero["kl_mle"] == pytest.approx(kl, rel=1e-12)
    assert zero["kl_simple"] == pytest.approx(kl - (2 - 1) / (2 * 3 * math.log(2)), rel=1e-12)
    p, q = 3 / 4, 1 / 4
    expected = -sum(math.comb(3, k) * (-p) ** k / (1 - q**k) for k in range(1, 4))
    assert zero["kl_geometric"] == pytest.approx(kl - (expected - 1) / (2 * 3 * math.log(2)), rel=1e-9)
    # One stay of 5 bins: p = 1/5, P(5) = (1/5)(4/5)^4; one length seen, so no correction.
    assert one["kl_mle"] == one["kl_simple"] == pytest.approx(-math.log2(0.2 * 0.8**4), rel=1e-12)
    assert two["stays"] == 0 and two["kl_mle"] is None


def test_planted_geometric_stays_diverge_little_and_fixed_ones_much():
    """The thesis' Table 3.1 measure on planted ground truths.  Stays drawn from a geometric law (mean
    10 bins) come out of the fitted model's Viterbi path as planted (the static initial values number
    the short-job state 0), so their divergences are the planted stays' own: small, within the
    sampling noise of 300 stays (the bias correction is a first-order one).  Stays of exactly 10 bins
    are far from any geometric law: the plug-in divergence of a point mass at the mean is -log2 P(10),
    4.2 bits."""
    settings = hmm.HmmSettings(states=2, submit_bin=5400, band=2, epsilon=1e-5, per_job=False, rounds=2000)
    submit, runtime, planted = planted_regimes(lambda rng: int(rng.geometric(0.1)))
    fitted = hmm.whole_trace(submit, runtime, settings).divergences()
    truth = hmm.stay_divergences(planted, 2)
    assert fitted["stays"].to_list() == truth["stays"].to_list()
    assert fitted["mean_stay"].to_list() == pytest.approx(truth["mean_stay"].to_list(), rel=0.01)
    for column in ("kl_mle", "kl_simple", "kl_geometric"):
        assert fitted[column].to_list() == pytest.approx(truth[column].to_list(), abs=0.01)
    assert (fitted["kl_simple"].abs() < 0.15).all()
    fixed = hmm.whole_trace(*planted_regimes(lambda rng: 10)[:2], settings).divergences()
    assert fixed["kl_mle"].to_list() == pytest.approx([-math.log2(0.1 * 0.9**9)] * 2, abs=0.05)
    assert (fixed["kl_simple"] > 3).all()


@pytest.mark.parametrize(
    "kwargs",
    [{"submit_bin": 0}, {"runtime_ratio": 1.0}, {"states": 0}, {"rounds": 0}, {"epsilon": -1}, {"band": 0.5}],
)
def test_settings_the_model_cannot_use_are_refused(kwargs):
    with pytest.raises(hmm.LakehouseError):
        hmm.HmmSettings(**kwargs)


def test_too_few_jobs_for_the_states_is_a_clear_error():
    with pytest.raises(hmm.TooLittleDataError, match="too few"):
        hmm.study(np.arange(10.0), np.full(10, 60.0), hmm.HmmSettings(states=16))


# -- the command ------------------------------------------------------------------------------------------


def test_report_stores_fits_and_states_and_draws_them(kth_lake, tmp_path: Path):
    run = CliRunner().invoke(
        app, ["report", "hmm", "KTH", "--states", "1,4", "--lake", str(kth_lake.root), "--plots", str(tmp_path)]
    )
    assert run.exit_code == 0, run.output
    fits = kth_lake.query("SELECT * FROM analysis.hmm_fits ORDER BY states")
    assert fits["states"].to_list() == [1, 4] and fits["gain_bits_per_job"][0] == pytest.approx(0, abs=1e-12)
    assert fits["gain_bits_per_job"][1] > 0.1
    states = kth_lake.query("SELECT * FROM analysis.hmm_states WHERE states = 4 ORDER BY state")
    assert states.height == 4 and states["share"].sum() == pytest.approx(1.0)
    assert all(sum(row) == pytest.approx(1.0) for row in states["emissions"])
    assert sorted(p.name for p in tmp_path.glob("*.png")) == [
        "hmm-gain-KTH-SP2-1996-2.1-cln.png",
        "hmm-stays-KTH-SP2-1996-2.1-cln.png",
        "hmm-transitions-KTH-SP2-1996-2.1-cln.png",
    ]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--submit-bin", "0"], "positive number of seconds"),
        (["--runtime-ratio", "0.5"], "above 1"),
        (["--states", "0"], "an HMM has 1 to 64 states"),
        (["--states", "four"], "whole numbers"),
        (["--init", "random"], "static or kmeans"),
    ],
)
def test_bad_options_get_one_clear_line(kth_lake, options, message):
    run = CliRunner().invoke(app, ["report", "hmm", "KTH", "--lake", str(kth_lake.root), *options])
    assert run.exit_code in (1, 2) and message in run.output and "Traceback" not in run.output


def test_a_log_without_run_times_is_a_clear_error(no_runtime_lake):
    lake = no_runtime_lake
    run = CliRunner().invoke(app, ["report", "hmm", "norun", "--lake", str(lake.root)])
    assert run.exit_code == 1 and "no job has a known submit time, run time and processor count" in run.output


def test_the_stored_tables_have_the_schema_the_views_promise(kth_lake):
    frame = kth_lake.query("SELECT * FROM analysis.hmm_states LIMIT 1")
    assert isinstance(frame.schema["emissions"], pl.List)


def test_submit_bins_beyond_the_bound_are_refused_before_any_array_is_made():
    """A 1-second bin over four months is 10 million rows of every forward-backward array: refused, with
    the smallest bin that fits."""
    from lakehouse.models.hmm.model import MAX_BINS, HmmError, observations

    submit, runtime = np.array([0.0, 1e7]), np.array([60.0, 600.0])
    with pytest.raises(HmmError, match=r"10,000,001 submit bins of 1 s .* at least 11 s"):
        observations(submit, runtime, 1.0, 1.8)
    assert observations(submit, runtime, 1e7 / (MAX_BINS - 1), 1.8).counts.shape[0] == MAX_BINS
