"""The jobs of an SWF log as the locality thesis reads them, and their run-time bins: what the
locality and workload-HMM topics both measure (models/locality, models/hmm), kept apart so that neither
topic imports the other."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from lakehouse.base.catalog import named_query
from lakehouse.base.errors import LakehouseError, TooLittleDataError
from lakehouse.base.lake import Lake


class LocalityError(LakehouseError):
    """Bin widths or inputs the metric cannot use."""


def check_bins(submit_bins: Sequence[float], runtime_ratios: Sequence[float]) -> None:
    for t_s in submit_bins:
        if not (math.isfinite(t_s) and t_s > 0):
            raise LocalityError(f"a submit bin must be a positive number of seconds, not {t_s}")
    for t_r in runtime_ratios:
        if not (math.isfinite(t_r) and t_r > 1):
            raise LocalityError(f"a run-time bin ratio must be a number above 1, not {t_r}")


def log_runtimes(runtime: np.ndarray) -> np.ndarray:
    """ln of the run times, those below 1.5 s counted as 1 s: the thesis bins them together as "very
    short jobs" (a run time of 0 has no logarithm, and the logs round to whole seconds)."""
    return np.log(np.where(np.asarray(runtime, dtype=np.float64) < 1.5, 1.0, runtime).astype(np.float64))


def runtime_bins(runtime: np.ndarray, t_r: float) -> np.ndarray:
    """R = floor(ln(max(runtime, 1)) / ln(t_r)); run times below 1.5 s count as 1 s (bin 0)."""
    # The small nudge keeps exact powers of t_r (t_r ** k) in bin k despite rounding in the logarithms.
    return np.floor(log_runtimes(runtime) / math.log(t_r) + 1e-9).astype(np.int64)


@dataclass(frozen=True)
class LogJobs:
    """A log's jobs usable for locality, and how many of its jobs each rule left out."""

    log: str
    jobs: pl.DataFrame  # submit_time, run_time, user_id (null when unknown)
    counts: dict[str, int]


def log_jobs(lake: Lake, log: str) -> LogJobs:
    """Jobs of swf.jobs (not a cleaned view: the metric has its own rules) with a known submit time, a
    known run time and at least one known processor count, allocated or requested.  Jobs of unknown user
    stay for the time variant; the user variants leave them out."""
    every = lake.query(named_query("log_jobs_to_bin"), {"log": log})
    rules = {
        "no_submit_time": pl.col("submit_time").is_null(),
        "no_run_time": pl.col("run_time").is_null(),
        "no_processors": pl.col("procs").is_null(),
    }
    counts = {"in_log": every.height}
    kept = every
    for name, dropped in rules.items():
        counts[name] = kept.filter(dropped).height
        kept = kept.filter(~dropped)
    counts["kept"] = kept.height
    counts["unknown_user"] = kept["user_id"].null_count()
    if kept.is_empty():
        raise TooLittleDataError(
            f"{log}: no job has a known submit time, run time and processor count; locality needs all three"
        )
    return LogJobs(log, kept.select("submit_time", "run_time", "user_id"), counts)
