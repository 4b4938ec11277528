"""The summary's distribution metrics, by hand."""

from __future__ import annotations

import math

import polars as pl
import pytest

from lakehouse.models.schemas import DISTRIBUTION_METRICS
from lakehouse.sim.metrics import summary


def test_geometric_mean_and_percentiles_by_hand():
    waits = [0, 10, 20, 30, 100]
    jobs = pl.DataFrame(
        {
            "submit": [0] * 5,
            "start": waits,
            "end": [w + 10 for w in waits],
            "procs": [1] * 5,
            "wait": waits,
            "bounded_slowdown": [1.0, 2.0, 3.0, 4.0, 11.0],
        }
    )
    row = summary(jobs, 4)
    # Waits below 10 s count as 10 s: (10 * 10 * 20 * 30 * 100) ** (1/5).
    assert row["geomean_wait"] == pytest.approx((10 * 10 * 20 * 30 * 100) ** 0.2)
    # Linear interpolation between order statistics: p90 sits 60 % of the way from 30 to 100.
    assert row["p50_wait"] == 20 and row["p90_wait"] == pytest.approx(72.0) and row["p99_wait"] == pytest.approx(97.2)
    assert row["p90_bounded_slowdown"] == pytest.approx(4 + 0.6 * 7)
    assert math.isclose(row["mean_wait"], 32.0)


def test_an_empty_replay_has_every_metric_empty():
    row = summary(pl.DataFrame(schema={"submit": pl.Int64, "start": pl.Int64, "end": pl.Int64}), 4)
    assert row["jobs"] == 0 and all(row[k] is None for k in DISTRIBUTION_METRICS)
