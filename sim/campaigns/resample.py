"""Week resampling: a log's weeks in a random order, each week's jobs keeping their offsets.

Weeks count from the first submission: week w holds the jobs submitted in [t0 + w W, t0 + (w + 1) W).
Resample k draws a permutation of the weeks (numpy's generator seeded with [seed, k]) and moves the
jobs of the i-th drawn week to week i, so that every job keeps its offset within its week, its
runtime, request and size.  Every job appears once per resample.  Used to evaluate policy selection
on many plausible orderings of one log's weeks (docs/selection.md).
"""

from __future__ import annotations

from typing import cast

import numpy as np
import polars as pl

from lakehouse.base.errors import LakehouseError
from lakehouse.sim.options import WEEK

SUBMIT = "submit_time"


def week_count(jobs: pl.DataFrame, week: int = WEEK) -> int:
    """How many weeks the jobs' submissions span (from the first one)."""
    if jobs.is_empty():
        return 0
    first, last = cast(float, jobs[SUBMIT].min()), cast(float, jobs[SUBMIT].max())
    return int((last - first) // week) + 1


def resample_weeks(jobs: pl.DataFrame, index: int, seed: int = 0, week: int = WEEK) -> pl.DataFrame:
    """The `index`-th resample of `jobs` (a frame with submit_time), sorted by submit time and job id."""
    weeks = week_count(jobs, week)
    if weeks < 2:
        raise LakehouseError(f"resampling weeks needs jobs spanning at least 2 weeks, these span {weeks}")
    order = np.random.default_rng([seed, index]).permutation(weeks)
    # The drawn week order[i] goes to position i: each original week's new position.
    position = np.empty(weeks, dtype=np.int64)
    position[order] = np.arange(weeks, dtype=np.int64)
    submit = jobs[SUBMIT].to_numpy().astype(np.int64)
    offset = submit - submit.min()
    moved = submit.min() + position[offset // week] * week + offset % week
    order_by = [SUBMIT, "job_id"] if "job_id" in jobs.columns else [SUBMIT]
    return jobs.with_columns(pl.Series(SUBMIT, moved, dtype=jobs[SUBMIT].dtype)).sort(order_by, maintain_order=True)
