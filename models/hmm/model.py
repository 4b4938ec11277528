"""A hidden Markov model of a workload: hidden states over submit-time bins that emit run-time bins.

Time is cut into submit bins of t_s seconds (15 minutes by default); the observation of a bin is the
vector x_t of its jobs' counts per run-time bin R = floor(ln(max(runtime, 1)) / ln(t_r)) (t_r = 1.8 by
default, the same bins as `lakehouse.models.locality.model`).  State j emits x_t with the multinomial
probability n_t! / Π_k x_tk! · Π_k θ_jk^x_tk (n_t = Σ_k x_tk; an empty bin is an observation too, of
probability 1), optionally times a Poisson probability of the load n_t with a rate λ_j per state.

Baum-Welch fits the start, transition and emission probabilities; its forward-backward and Viterbi
passes are compiled (`lakehouse._native`, scaled so that no likelihood underflows on long logs).  Initial
values are static (uniform start and transitions, each state's emission favouring its own band of
run-time bins) or from k-means over the non-empty bins' run-time mixes.  Training stops after a fixed
number of rounds or when no parameter moves by more than ε/√n (L∞; or the sum of the moves, L1), n the
number of training jobs: the estimates' own sampling error is of order 1/√n, so smaller moves change
nothing a user could measure.

The held-out test follows the published protocol: fit on the first half of the jobs in submit order,
score the second half (its jobs in run-time bins never seen in training removed), and report the gain
in log-likelihood over the single-state model (which knows only the training mix of run times) in bits
per validation job.
"""

from __future__ import annotations

import enum
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import polars as pl
from scipy.cluster.vq import kmeans2
from scipy.special import gammaln

from lakehouse import _native
from lakehouse.base.errors import LakehouseError, TooLittleDataError
from lakehouse.base.lake import Lake
from lakehouse.base.results import store
from lakehouse.models.hmm import HMM_FITS, HMM_STATES
from lakehouse.models.job_bins import check_bins, log_jobs, runtime_bins

SUBMIT_BIN = 900.0
RUNTIME_RATIO = 1.8
STATES = 16
ROUNDS = 200
EPSILON = 1.0
#: Static initial values: how much likelier each state's own band of run-time bins starts than the rest,
#: twice as in the thesis' Static-IV (its Algorithm 3).  (The replay's online predictor keeps 4, which
#: its published results were measured with; `band` there too.  The held-out gains barely depend on it:
#: within 0.012 bit per job on four logs.)
BAND = 2.0
#: The bounds of the work one fit may take: states (as the replay's online HMM), and submit bins from
#: the first job to the last (each a row of every forward-backward array: a million bins of 64 states
#: is half a gigabyte per array; a 1-second bin over a year of a log is 31 million).
MAX_STATES = 64
MAX_BINS = 1_000_000


class HmmError(LakehouseError):
    """HmmSettings or inputs the workload HMM cannot use."""


class Init(enum.StrEnum):
    static = "static"
    kmeans = "kmeans"


class Stop(enum.StrEnum):
    rounds = "rounds"  # exactly `rounds` rounds
    l1 = "l1"
    linf = "linf"


@dataclass(frozen=True)
class HmmSettings:
    states: int = STATES
    submit_bin: float = SUBMIT_BIN
    runtime_ratio: float = RUNTIME_RATIO
    init: Init = Init.static
    stop: Stop = Stop.linf
    rounds: int = ROUNDS
    epsilon: float = EPSILON
    poisson: bool = False
    seed: int = 0
    band: float = BAND
    per_job: bool = True  # the stop's threshold is epsilon/sqrt(jobs); False: epsilon itself (the thesis')

    def __post_init__(self) -> None:
        check_bins([self.submit_bin], [self.runtime_ratio])
        if not (math.isfinite(self.band) and self.band >= 1):
            raise HmmError(f"the static band factor is at least 1 (1: uniform emissions), not {self.band}")
        if not 1 <= self.states <= MAX_STATES:
            raise HmmError(f"an HMM has 1 to {MAX_STATES} states, not {self.states}")
        if self.rounds < 1:
            raise HmmError(f"Baum-Welch needs at least one round, not {self.rounds}")
        if not (math.isfinite(self.epsilon) and self.epsilon > 0):
            raise HmmError(f"epsilon must be a positive number, not {self.epsilon}")


# -- observations ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Observations:
    """Job counts per submit bin (rows, consecutive from `first_bin`) and run-time bin (columns)."""

    counts: np.ndarray  # int64, steps x columns
    columns: np.ndarray  # the run-time bin R of each column
    first_bin: int
    dropped: int = 0  # jobs in run-time bins outside `columns`

    @property
    def jobs(self) -> int:
        return int(self.counts.sum())

    @property
    def totals(self) -> np.ndarray:
        return self.counts.sum(axis=1)


def observations(
    submit: np.ndarray,
    runtime: np.ndarray,
    submit_bin: float,
    runtime_ratio: float,
    columns: np.ndarray | None = None,
) -> Observations:
    """The count matrix of some jobs, one row per submit bin from their first to their last (empty bins
    included).  `columns`: the run-time bins to keep (those of the training jobs); jobs in others are
    dropped and counted."""
    if len(submit) == 0:
        raise TooLittleDataError("no jobs to build observations from")
    s = np.floor(np.asarray(submit, dtype=np.float64) / submit_bin).astype(np.int64)
    r = runtime_bins(runtime, runtime_ratio)
    if columns is None:
        columns = np.unique(r)
    index = np.searchsorted(columns, r)
    known = (index < columns.size) & (columns[np.minimum(index, columns.size - 1)] == r)
    first = int(s.min())
    steps = int(s.max()) - first + 1
    if steps > MAX_BINS:
        raise HmmError(
            f"{steps:,} submit bins of {submit_bin:g} s from the first job to the last: at most {MAX_BINS:,} "
            f"(give a submit bin of at least {math.ceil(steps * submit_bin / MAX_BINS):,} s)"
        )
    counts = np.zeros((steps, columns.size), dtype=np.int64)
    np.add.at(counts, (s[known] - first, index[known]), 1)
    return Observations(counts, columns, first, int((~known).sum()))


# -- the model -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Params:
    start: np.ndarray  # states
    transitions: np.ndarray  # states x states, rows sum to 1
    emissions: np.ndarray  # states x columns, rows sum to 1
    rates: np.ndarray | None = None  # Poisson load rate per state, or None

    @property
    def states(self) -> int:
        return self.start.size

    def vector(self) -> np.ndarray:
        parts = [self.start, self.transitions.ravel(), self.emissions.ravel()]
        return np.concatenate(parts + ([self.rates] if self.rates is not None else []))

    def log_emissions(self, obs: Observations) -> np.ndarray:
        """ln P(x_t | state j), steps x states, with the multinomial coefficient (and the Poisson load)."""
        counts = obs.counts.astype(np.float64)
        theta = self.emissions
        log_theta = np.log(np.where(theta > 0, theta, 1.0))
        log_b = counts @ log_theta.T
        # A count in a column a state never emits: probability zero (not 0 x -inf = nan).
        impossible = (obs.counts > 0).astype(np.float64) @ (theta <= 0).T.astype(np.float64) > 0
        log_b[impossible] = -np.inf
        totals = obs.totals.astype(np.float64)
        log_b += (gammaln(totals + 1) - gammaln(counts + 1).sum(axis=1))[:, None]
        if self.rates is not None:
            rates = np.maximum(self.rates, 1e-300)
            log_b += totals[:, None] * np.log(rates)[None, :] - rates[None, :] - gammaln(totals + 1)[:, None]
        return np.ascontiguousarray(log_b)


def static_init(states: int, columns: int, poisson_rate: float | None = None, band: float = BAND) -> Params:
    """Uniform start and transitions; state j's emission `band` times as likely on its own band of
    run-time bins (the columns cut into `states` consecutive bands, shortest first) as elsewhere."""
    weights = np.ones((states, columns))
    for j in range(states):
        low = j * columns // states
        high = max((j + 1) * columns // states, low + 1)
        weights[j, low:high] = band
    return Params(
        np.full(states, 1.0 / states),
        np.full((states, states), 1.0 / states),
        weights / weights.sum(axis=1, keepdims=True),
        None if poisson_rate is None else np.full(states, poisson_rate),
    )


def kmeans_init(obs: Observations, states: int, seed: int, poisson: bool) -> Params:
    """Emissions from k-means over the run-time mixes of the non-empty bins (a little of the overall mix
    mixed in, so no run-time bin starts impossible), transitions counted along the clusters' sequence
    (plus one everywhere), uniform start; Poisson rates from each cluster's mean load."""

    busy = obs.totals > 0
    mixes = obs.counts[busy] / obs.totals[busy, None]
    overall = obs.counts.sum(axis=0) / obs.jobs
    if busy.sum() < states:
        raise TooLittleDataError(f"k-means needs at least {states} non-empty submit bins, the data have {busy.sum()}")
    centroids, labels = kmeans2(mixes, states, seed=seed, minit="++")
    emissions = 0.95 * np.clip(centroids, 0, None) + 0.05 * overall
    emissions /= emissions.sum(axis=1, keepdims=True)
    transitions = np.ones((states, states))
    np.add.at(transitions, (labels[:-1], labels[1:]), 1)
    transitions /= transitions.sum(axis=1, keepdims=True)
    rates = None
    if poisson:
        load = obs.totals[busy].astype(np.float64)
        rates = np.array([load[labels == j].mean() if (labels == j).any() else load.mean() for j in range(states)])
    return Params(np.full(states, 1.0 / states), transitions, emissions, rates)


def initial_params(obs: Observations, settings: HmmSettings) -> Params:
    if settings.init is Init.kmeans and settings.states > 1:
        return kmeans_init(obs, settings.states, settings.seed, settings.poisson)
    mean_load = float(obs.totals.mean()) if settings.poisson else None
    return static_init(settings.states, obs.columns.size, mean_load, settings.band)


def _compiled(pass_: Any, params: Params, obs: Observations, start: np.ndarray | None = None) -> Any:
    """A compiled pass over the observations (forward-backward, forward or Viterbi); an observation no
    state can emit is an HmmError."""
    first = params.start if start is None else start
    try:
        return pass_(params.log_emissions(obs), np.ascontiguousarray(first), np.ascontiguousarray(params.transitions))
    except ValueError as exc:
        raise HmmError(f"the model cannot explain the observations: {exc}") from None


def e_step(params: Params, obs: Observations) -> tuple[float, np.ndarray, np.ndarray]:
    """ln P(observations), the state posteriors (steps x states) and the summed transition posteriors."""
    return _compiled(_native.hmm_forward_backward, params, obs)


def m_step(params: Params, obs: Observations, gamma: np.ndarray, xi: np.ndarray) -> Params:
    """The maximum-likelihood parameters given the posteriors (Baum-Welch's re-estimation)."""
    start = gamma[0] / gamma[0].sum()
    rows = xi.sum(axis=1, keepdims=True)
    # A state never left (no mass on any transition out of it) keeps its old row.
    transitions = np.where(rows > 0, xi / np.where(rows > 0, rows, 1), params.transitions)
    expected = gamma.T @ obs.counts.astype(np.float64)
    totals = expected.sum(axis=1, keepdims=True)
    emissions = np.where(totals > 0, expected / np.where(totals > 0, totals, 1), params.emissions)
    rates = None
    if params.rates is not None:
        weight = gamma.sum(axis=0)
        rates = np.where(weight > 0, gamma.T @ obs.totals.astype(np.float64) / np.where(weight > 0, weight, 1), 0)
    return Params(start, transitions, emissions, rates)


@dataclass(frozen=True)
class Fit:
    params: Params
    log_likelihoods: list[float]  # of the training data before each round's update, then after the last
    rounds: int
    converged: bool
    seconds_per_round: float
    last_state: np.ndarray  # P(state at the last step | the training observations), under `params`

    @property
    def log_likelihood(self) -> float:
        return self.log_likelihoods[-1]


def baum_welch(obs: Observations, settings: HmmSettings, params: Params | None = None) -> Fit:
    """Fit by Baum-Welch from `params` (default: the settings' initial values)."""
    params = params if params is not None else initial_params(obs, settings)
    tolerance = settings.epsilon / math.sqrt(max(obs.jobs, 1)) if settings.per_job else settings.epsilon
    history = []
    converged = False
    started = time.perf_counter()
    rounds = 0
    while rounds < settings.rounds:
        rounds += 1
        log_likelihood, gamma, xi = e_step(params, obs)
        history.append(log_likelihood)
        updated = m_step(params, obs, gamma, xi)
        change = np.abs(updated.vector() - params.vector())
        params = updated
        moved = change.sum() if settings.stop is Stop.l1 else change.max()
        if settings.stop is not Stop.rounds and moved < tolerance:
            converged = True
            break
    elapsed = time.perf_counter() - started
    log_likelihood, last_state = forward(params, obs)
    history.append(log_likelihood)
    return Fit(params, history, rounds, converged, elapsed / max(rounds, 1), last_state)


def forward(params: Params, obs: Observations, start: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """ln P(observations) and P(state at the last step | observations), from `start` (default: the
    model's start distribution)."""
    return _compiled(_native.hmm_score, params, obs, start)


def score(params: Params, obs: Observations, start: np.ndarray | None = None) -> float:
    """ln P(observations) under the model, from `start` (default: the model's start distribution)."""
    return forward(params, obs, start)[0]


def viterbi(params: Params, obs: Observations) -> np.ndarray:
    return _compiled(_native.hmm_viterbi, params, obs)[0]


def single_state(obs: Observations, poisson: bool) -> Params:
    """The one-state model: the training mix of run times (and mean load)."""
    mix = obs.counts.sum(axis=0) / obs.jobs
    rates = np.array([obs.totals.mean()]) if poisson else None
    return Params(np.ones(1), np.ones((1, 1)), mix[None, :], rates)


# -- durations -------------------------------------------------------------------------------------------


def durations(path: np.ndarray) -> pl.DataFrame:
    """The runs of the Viterbi path: one row per stay in a state (state, bins)."""
    change = np.flatnonzero(np.diff(path)) + 1
    starts = np.concatenate(([0], change))
    lengths = np.diff(np.concatenate((starts, [path.size])))
    return pl.DataFrame({"state": path[starts].astype(np.int64), "bins": lengths.astype(np.int64)})


def stay_divergences(stays: pl.DataFrame, states: int) -> pl.DataFrame:
    """Per state, how far its stays on the Viterbi path are from a geometric law (the thesis' Table 3.1).

    The law is the one that explains the stays best (on 1, 2, ... bins, p = 1 / mean stay); the
    divergence KL(stays || law) is in bits, three ways: the plug-in estimate (`kl_mle`), and that
    estimate less the Miller-Madow bias (m - 1) / (2 N ln 2) of the plug-in entropy, N the stays and m
    the number of distinct lengths expected: as counted (`kl_simple`), or as the law predicts for N
    draws (`kl_geometric`), the sum over lengths of 1 - (1 - P(length))^N.  A state without stays has
    no divergence (nulls)."""
    rows = []
    for state in range(states):
        lengths = stays.filter(pl.col("state") == state)["bins"].to_numpy()
        row: dict[str, float | int | None] = {"state": state, "stays": int(lengths.size), "mean_stay": None}
        row |= dict.fromkeys(("kl_mle", "kl_simple", "kl_geometric"))
        if lengths.size:
            row |= _geometric_divergence(lengths.astype(np.float64))
        rows.append(row)
    schema = {"state": pl.Int64, "stays": pl.Int64} | dict.fromkeys(
        ("mean_stay", "kl_mle", "kl_simple", "kl_geometric"), pl.Float64
    )
    return pl.DataFrame(rows, schema=schema)


def _geometric_divergence(lengths: np.ndarray) -> dict[str, float]:
    n = lengths.size
    mean = float(lengths.mean())
    p = 1 / mean
    values, counts = np.unique(lengths, return_counts=True)
    observed = counts / n
    # ln P(length) = ln p + (length - 1) ln(1 - p); when every stay is one bin, p = 1 and the law is
    # the stays' own (0 x ln 0 is 0 there).
    log_law = math.log(p) + (values - 1) * (math.log1p(-p) if p < 1 else 0.0)
    kl = float(np.sum(observed * (np.log(observed) - log_law))) / math.log(2)
    bias = 2 * n * math.log(2)
    return {
        "mean_stay": mean,
        "kl_mle": kl,
        "kl_simple": kl - (values.size - 1) / bias,
        "kl_geometric": kl - (_expected_lengths(p, n) - 1) / bias,
    }


def _expected_lengths(p: float, n: int) -> float:
    """How many distinct lengths n draws of the geometric law p show, on average: the sum over lengths
    k = 1, 2, ... of 1 - (1 - p q^(k-1))^n, q = 1 - p, summed until the terms (about n p q^(k-1)) fall
    below 1e-12."""
    if p >= 1:
        return 1.0
    q = 1 - p
    last = max(math.ceil(math.log(1e-12 / (n * p)) / math.log(q)), 1) + 1
    probabilities = p * q ** np.arange(last, dtype=np.float64)
    return float(-np.expm1(n * np.log1p(-probabilities)).sum())


@dataclass(frozen=True)
class WholeTrace:
    """A model fitted to every job of a log (no held-out half) and its Viterbi path's stays."""

    settings: HmmSettings
    fit: Fit
    obs: Observations
    stays: pl.DataFrame

    def divergences(self) -> pl.DataFrame:
        return stay_divergences(self.stays, self.settings.states)


def whole_trace(submit: np.ndarray, runtime: np.ndarray, settings: HmmSettings) -> WholeTrace:
    """Fit the model to the whole log and cut its Viterbi path into stays (the thesis' section 3.5)."""
    obs = observations(np.asarray(submit), np.asarray(runtime), settings.submit_bin, settings.runtime_ratio)
    if obs.jobs < max(settings.states, 2):
        raise TooLittleDataError(f"{obs.jobs} jobs: too few to fit {settings.states} states")
    fit = baum_welch(obs, settings)
    return WholeTrace(settings, fit, obs, durations(viterbi(fit.params, obs)))


# -- the held-out test -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class HeldOut:
    """One log's fit and held-out test."""

    settings: HmmSettings
    fit: Fit
    train: Observations
    valid: Observations
    gain_bits_per_job: float
    valid_log_likelihood: float
    baseline_log_likelihood: float
    stays: pl.DataFrame = field(repr=False)

    def summary(self, log: str) -> dict[str, object]:
        s, f = self.settings, self.fit
        return {
            "log": log,
            "states": s.states,
            "init": str(s.init),
            "poisson": s.poisson,
            "t_s": s.submit_bin,
            "t_r": s.runtime_ratio,
            "train_jobs": self.train.jobs,
            "valid_jobs": self.valid.jobs,
            "valid_removed": self.valid.dropped,
            "rounds": f.rounds,
            "converged": f.converged,
            "train_bits_per_job": f.log_likelihood / math.log(2) / self.train.jobs,
            "gain_bits_per_job": self.gain_bits_per_job,
            "seconds_per_round": f.seconds_per_round,
        }

    def states_table(self, log: str) -> pl.DataFrame:
        """Per state: its share of the bins, mean load, median run time, self-transition and stays."""
        p = self.fit.params
        gamma = e_step(p, self.train)[1]
        share = gamma.mean(axis=0)
        load = (gamma * self.train.totals[:, None]).sum(axis=0) / np.maximum(gamma.sum(axis=0), 1e-300)
        cumulative = np.cumsum(p.emissions, axis=1)
        median_bin = self.train.columns[np.argmax(cumulative >= 0.5, axis=1)]
        stays = self.stays.group_by("state").agg(pl.len().alias("stays"), pl.col("bins").mean().alias("mean_stay"))
        frame = pl.DataFrame(
            {
                "log": log,
                "states": p.states,
                "state": np.arange(p.states, dtype=np.int64),
                "share": share,
                "mean_jobs_per_bin": load,
                "median_runtime": self.settings.runtime_ratio ** median_bin.astype(np.float64),
                "self_transition": np.diag(p.transitions).copy(),
                "emissions": [list(row) for row in p.emissions],
                "transitions": [list(row) for row in p.transitions],
            }
        )
        frame = frame.join(stays, on="state", how="left").with_columns(
            pl.col("stays").fill_null(0).cast(pl.Int64),
            # The geometric law that fits the stays by maximum likelihood has p = 1 / mean stay; the
            # model's own implied law has p = 1 - a_jj.
            (1 / pl.col("mean_stay")).alias("geometric_p"),
            (1 - pl.col("self_transition")).alias("model_p"),
        )
        return frame


def study(submit: np.ndarray, runtime: np.ndarray, settings: HmmSettings) -> HeldOut:
    """Fit on the first half of the jobs (in submit order), test on the second half."""
    order = np.argsort(submit, kind="stable")
    submit, runtime = np.asarray(submit)[order], np.asarray(runtime)[order]
    half = submit.size // 2
    if half < max(settings.states, 2):
        raise TooLittleDataError(
            f"{submit.size} jobs: too few to train {settings.states} states on half of them and test on the rest"
        )
    train = observations(submit[:half], runtime[:half], settings.submit_bin, settings.runtime_ratio)
    valid = observations(submit[half:], runtime[half:], settings.submit_bin, settings.runtime_ratio, train.columns)
    if valid.jobs == 0:
        raise TooLittleDataError("no validation job falls in a run-time bin seen in training")
    fit = baum_welch(train, settings)
    # The validation bins follow the training ones: start from the state distribution filtered at the
    # end of training, carried over the bins between the two halves.
    gap = valid.first_bin - (train.first_bin + train.counts.shape[0] - 1)
    carried = fit.last_state @ np.linalg.matrix_power(fit.params.transitions, max(gap, 0))
    valid_ll = score(fit.params, valid, carried / carried.sum())
    base = single_state(train, settings.poisson)
    base_ll = score(base, valid)
    gain = (valid_ll - base_ll) / math.log(2) / valid.jobs
    stays = durations(viterbi(fit.params, train))
    return HeldOut(settings, fit, train, valid, gain, valid_ll, base_ll, stays)


def studies(submit: np.ndarray, runtime: np.ndarray, settings: HmmSettings, states: Sequence[int]) -> list[HeldOut]:
    return [study(submit, runtime, replace(settings, states=n)) for n in states]


# -- the lake --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LogModels:
    """`lakehouse report hmm` on one log: how many of its jobs were usable, one study per number of
    states, and the two tables stored."""

    log: str
    counts: dict[str, int]  # as `locality.LogJobs.counts`
    studies: list[HeldOut]
    fits: pl.DataFrame  # analysis.hmm_fits: one row per study
    states: pl.DataFrame  # analysis.hmm_states: one row per state of each study


def model_log(lake: Lake, log: str, settings: Sequence[HmmSettings]) -> LogModels:
    """Fit one model per setting to the log's jobs (those with a submit time, run time and processors)."""
    jobs = log_jobs(lake, log)
    submit, runtime = jobs.jobs["submit_time"].to_numpy(), jobs.jobs["run_time"].to_numpy()
    fitted = [study(submit, runtime, one) for one in settings]
    fits = pl.DataFrame([s.summary(log) for s in fitted])
    states = pl.concat([s.states_table(log) for s in fitted], how="vertical_relaxed")
    return LogModels(log, jobs.counts, fitted, fits, states)


def store_models(lake: Lake, result: LogModels) -> None:
    """Store one log's fits and states where analysis.hmm_fits and analysis.hmm_states read them."""
    store(lake, HMM_FITS, result.fits, name=result.log)
    store(lake, HMM_STATES, result.states, name=result.log)
