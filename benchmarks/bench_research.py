"""`make bench`, the research models.

Locality: the full grid of `report locality` (8 submit bins x 6 run-time ratios x 10 shuffles, time
variant) on SDSC-BLUE (about 233 k jobs), jobs already loaded; target <= 10 s.  Baseline, in the same
run: one plug-in mutual information of one cell computed the plain way (np.unique over the (S, R)
pairs); the grid is 48 x 11 = 528 of them.

Workload HMM: `report hmm` training of 16 states on the first half of SDSC-SP2 (15-minute bins, t_r
1.8), the time per Baum-Welch round and the rounds to convergence; baseline in the same run: one
Baum-Welch round of hmmlearn's MultinomialHMM (a test dependency, compiled forward-backward) from the
same initial values.  No target: shown so that its cost stays in sight.

EASY with distributions: `simulate --predictor hmm` (online workload HMM, confidence 0.05) of SDSC-BLUE
after the strong filter, jobs per second and the ratio to plain EASY on the same jobs in the same run,
and `requested-law` (the same backfilling rule with one event at each request, which schedules as EASY)
to show the rule's own cost.  No target.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from lakehouse.base.lake import Lake
from lakehouse.ingest.swf import ingest_swf


@contextlib.contextmanager
def one_log_lake(folder: Path, log: str) -> Iterator[Lake]:
    """A fresh lake holding one shared log, removed afterwards."""
    with tempfile.TemporaryDirectory() as tmp:
        lake = Lake(Path(tmp) / "lake")
        ingest_swf(lake, [str(folder / f"{log}.swf.gz")])
        yield lake


def _plain_mutual_information(s: np.ndarray, r: np.ndarray) -> float:
    n = s.size
    _, joint = np.unique(np.stack([s, r], axis=1), axis=0, return_counts=True)
    _, cs = np.unique(s, return_counts=True)
    _, cr = np.unique(r, return_counts=True)

    def h(c: np.ndarray) -> float:
        return float(np.log2(n) - np.sum(c * np.log2(c)) / n)

    return h(cs) + h(cr) - h(joint)


def bench_locality(folder: Path) -> bool:
    from lakehouse.models.locality import model as locality

    log = "SDSC-BLUE-2000-4.2-cln"
    with one_log_lake(folder, log) as lake:
        jobs = locality.log_jobs(lake, log).jobs
    settings = locality.LocalitySettings(variants=[locality.Variant.time])
    started = time.perf_counter()
    frame = locality.grid(jobs, log, settings)
    elapsed = time.perf_counter() - started
    s = locality.submit_bins(jobs["submit_time"].to_numpy(), 3600)
    r = locality.runtime_bins(jobs["run_time"].to_numpy(), 1.2)
    started = time.perf_counter()
    plain = _plain_mutual_information(s, r)
    one = time.perf_counter() - started
    cells = frame.height * (settings.shuffles + 1)
    ok = elapsed <= 10
    best = frame.filter("best").row(0, named=True)
    print(
        f"locality grid: {log}, {jobs.height:,} jobs, {frame.height} cells x {settings.shuffles + 1} "
        f"(log + shuffles) in {elapsed:.2f} s (target <= 10 s): {'PASS' if ok else 'FAIL'}; "
        f"{elapsed / cells * 1000:.1f} ms per mutual information vs {one * 1000:.1f} ms the plain way "
        f"(ratio {one * cells / elapsed:.1f}x); best f {best['locality']:.3f} bits at t_s {best['t_s']:g} s, "
        f"t_r {best['t_r']} (plain I at 1 h / 1.2: {plain:.3f})"
    )
    return ok


def bench_hmm(folder: Path) -> bool:
    import logging

    from lakehouse.models.hmm import model as hmm
    from lakehouse.models.locality import model as locality

    log = "SDSC-SP2-1998-4.2-cln"
    with one_log_lake(folder, log) as lake:
        jobs = locality.log_jobs(lake, log).jobs
    settings = hmm.HmmSettings(states=16)
    started = time.perf_counter()
    result = hmm.study(jobs["submit_time"].to_numpy(), jobs["run_time"].to_numpy(), settings)
    elapsed = time.perf_counter() - started
    fit = result.fit
    line = (
        f"workload HMM: {log}, 16 states, {result.train.counts.shape[0]:,} training bins of "
        f"{result.train.jobs:,} jobs: {fit.rounds} rounds at {fit.seconds_per_round * 1000:.1f} ms "
        f"(whole study {elapsed:.1f} s), held-out gain {result.gain_bits_per_job:.3f} bits/job"
    )
    try:
        from hmmlearn.hmm import MultinomialHMM
    except ImportError:
        print(line + "; hmmlearn not installed, no baseline")
        return True
    logging.getLogger("hmmlearn").setLevel(logging.ERROR)
    start = hmm.initial_params(result.train, settings)
    model = MultinomialHMM(16, n_trials=result.train.totals, init_params="", params="ste", n_iter=1)
    model.startprob_, model.transmat_, model.emissionprob_ = start.start, start.transitions, start.emissions
    started = time.perf_counter()
    model.fit(result.train.counts)
    theirs = time.perf_counter() - started
    print(f"{line}; hmmlearn round {theirs * 1000:.0f} ms (ratio {theirs / fit.seconds_per_round:.1f}x)")
    return True


def bench_hmm_backfilling(folder: Path) -> bool:
    from lakehouse.base.job_views import log_jobs, log_machine_size
    from lakehouse.sim import simulate

    log = "SDSC-BLUE-2000-4.2-cln"
    with one_log_lake(folder, log) as lake:
        jobs = log_jobs(lake, log, "jobs_strong")
        size = log_machine_size(lake, log, "jobs_strong")
    timed = {}
    for predictor in ("requested", "requested-law", "hmm"):
        started = time.perf_counter()
        result = simulate(jobs, size, predictor=predictor)
        timed[predictor] = (time.perf_counter() - started, result.summary)
    easy = timed["requested"][0]
    parts = [
        f"{p}: {t:.2f} s = {jobs.height / t:,.0f} jobs/s ({t / easy:.0f}x EASY), mean wait {s['mean_wait']:,.0f} s"
        for p, (t, s) in timed.items()
    ]
    print(f"EASY with distributions, {log} ({jobs.height:,} jobs, {size} processors): " + "; ".join(parts))
    return True


def bench_research(folder: Path) -> bool:
    ok = bench_locality(folder)
    ok &= bench_hmm(folder)
    ok &= bench_hmm_backfilling(folder)
    return ok
