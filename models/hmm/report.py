"""`lakehouse report hmm`: the workload of one SWF log as a hidden Markov model (lakehouse.models.hmm.model)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from lakehouse.base.comma_lists import split_list
from lakehouse.base.errors import SettingsError
from lakehouse.base.lake import Lake
from lakehouse.base.report import Argument, Call, Option, Report, Shown
from lakehouse.base.units import parse_duration
from lakehouse.models import hmm as hmm_topic

if TYPE_CHECKING:  # the model loads when the report runs, not when a command lists the reports
    from lakehouse.models.hmm.model import HmmSettings, LogModels

SUMMARY = """Model the workload as a hidden Markov model over submit-time bins and measure what it predicts
about run times on jobs it has not seen.

Each bin of t_s seconds is one step; its observation is the count of its jobs per run-time bin
floor(ln(max(run time, 1)) / ln(t_r)) (empty bins included), emitted by the hidden state with a
multinomial law (and, with --poisson, a Poisson number of jobs).  Baum-Welch fits the model to the first
half of the jobs in submit order; the second half is scored from the state the training ended in,
without its jobs in run-time bins the training never saw.  The table shows, per number of states, the
held-out gain over the single-state model (the training's run-time mix alone) in bits per job, the
training log-likelihood per job, the rounds and the time per round.  Jobs count when their submit time,
run time and a processor count are known.  Stored as analysis.hmm_fits and analysis.hmm_states (each
state's share, load, median run time, emissions, transitions and its stays on the Viterbi path against
a geometric law).

`--plots DIR` writes the transition matrix of the largest model, its states' stays against their
geometric fits and the gain against the number of states.

Example: `lakehouse report hmm SDSC-SP2 --states 1,4,16 --plots figures/`

Example: `lakehouse report hmm KTH --states 8 --init kmeans --poisson --submit-bin 1h`"""


def _state_counts(text: str) -> list[int]:
    from lakehouse.models.hmm.model import MAX_STATES

    try:
        counts = [int(x) for x in split_list(text)]
    except ValueError:
        raise SettingsError(f"{text!r}: give whole numbers, e.g. 1,4,16") from None
    if not counts:
        raise SettingsError("give at least one number of states")
    for n in counts:
        if not 1 <= n <= MAX_STATES:
            raise SettingsError(f"an HMM has 1 to {MAX_STATES} states, not {n}")
    return counts


def _submit_bin(text: str) -> float:
    seconds = parse_duration(text)
    if seconds <= 0:
        raise SettingsError(f"a submit bin must be a positive number of seconds, not {seconds:g}")
    return seconds


def _one_of(enum: str) -> Callable[[str], str]:
    """A reader of one of the model's enums (Init, Stop): its values asked when a value is checked."""

    def read(text: str) -> str:
        from lakehouse.models.hmm import model

        names = [str(v) for v in getattr(model, enum)]
        if text not in names:
            raise SettingsError(f"{text!r}: {' or '.join([', '.join(names[:-1]), names[-1]])}")
        return text

    return read


OPTIONS = (
    Option(
        "states",
        "1,2,4,8,16",
        "Numbers of hidden states (1 to 64), comma-separated: one model per number.",
        reads=_state_counts,
    ),
    Option("submit_bin", "15min", "Submit-time bin t_s: seconds or with a unit (s, min, h, d, w).", reads=_submit_bin),
    Option("runtime_ratio", 1.8, "Run-time bin ratio t_r (> 1)."),
    Option(
        "init",
        "static",
        "Initial values: static (uniform, each state its band of run times) or kmeans.",
        reads=_one_of("Init"),
    ),
    Option(
        "band",
        2.0,
        "static: how many times likelier each state starts on its own band of run times (2: the thesis' Static-IV).",
        minimum=1.0,
    ),
    Option(
        "stop",
        "linf",
        "linf or l1: stop when the parameters move less than epsilon/sqrt(jobs); rounds: run all.",
        reads=_one_of("Stop"),
    ),
    Option("rounds", 200, "At most this many Baum-Welch rounds.", minimum=1, maximum=10_000),
    Option("epsilon", 1.0, "Convergence threshold, times 1/sqrt(training jobs)."),
    Option("poisson", False, "Also model each bin's load (Poisson per state)."),
    Option("seed", 0, "Seed of k-means."),
)


def _runs(lake: Lake, call: Call) -> tuple[list[tuple[str, list[HmmSettings]]], list[str]]:
    """One run: the log named, with one model per number of states (every setting checked before any
    work)."""
    from lakehouse.base.job_views import resolve_log
    from lakehouse.models.hmm.model import HmmSettings, Init, Stop

    o = call.read(OPTIONS)
    base = {k: o[k] for k in ("runtime_ratio", "rounds", "epsilon", "poisson", "seed", "band")}
    init, stop = Init(o["init"]), Stop(o["stop"])
    settings = [HmmSettings(states=n, submit_bin=o["submit_bin"], init=init, stop=stop, **base) for n in o["states"]]
    return [(resolve_log(lake, call.argument), settings)], []


def _hmm(lake: Lake, settings: tuple[str, Sequence[HmmSettings]]) -> LogModels:
    from lakehouse.models.hmm.model import model_log

    return model_log(lake, *settings)


def _notes(result: LogModels) -> list[str]:
    c = result.counts
    return [f"{result.log}: {c['kept']:,} of {c['in_log']:,} jobs have a submit time, run time and processor count"]


def _present(results: list[LogModels], terminal: bool) -> list[Shown]:
    [result] = results
    fits = result.fits
    first = result.studies[0].settings if result.studies else None
    bins = f", t_s {first.submit_bin:g} s, t_r {first.runtime_ratio:g}" if first else ""
    caption = f"{result.log}: {fits.height} workload HMM(s){bins}"
    if not terminal:
        return [Shown(caption, fits)]
    table = fits.select(
        "states",
        pl.col("gain_bits_per_job").round(4).alias("held-out gain (bits/job)"),
        pl.col("train_bits_per_job").round(3).alias("train log-lik (bits/job)"),
        "rounds",
        "converged",
        (pl.col("seconds_per_round") * 1000).round(1).alias("ms/round"),
        "valid_jobs",
        "valid_removed",
    )
    return [Shown(caption, table)]


def _plot_hmm(lake: Lake, result: LogModels, folder: Path) -> list[Path]:
    from lakehouse.models.hmm.plots import plot_hmm

    return plot_hmm(result.log, result.studies, folder)


def _store_models(*args: Any, **kwargs: Any) -> Any:
    from lakehouse.models.hmm.model import store_models

    return store_models(*args, **kwargs)


REPORT: Report[tuple[str, Sequence[HmmSettings]], LogModels] = Report(
    "hmm",
    "The workload as a hidden Markov model (lakehouse report hmm)",
    hmm_topic.TABLES,
    _hmm,
    _store_models,
    lambda result: [(f"{result.log}: workload HMM", result.fits)],
    _plot_hmm,
    options=OPTIONS,
    order=60,
    summary=SUMMARY,
    doing=lambda s: f"fitting {', '.join(str(x.states) for x in s[1])} state(s) to {s[0]}...",
    notes=_notes,
    argument=Argument("log", "An SWF log: name or unique prefix."),
    runs=_runs,
    present=_present,
)
