"""`lakehouse generate google-2019-shape`: a cell at a share of a real cell's size, in the Parquet export,
that the ingest takes whole; its counts follow from its design (every slot of every machine busy in every
window), and its percentiles are those of the Gamma law it states."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import gamma

from lakehouse.base.lake import Lake

from conftest import cli


@pytest.fixture(scope="module")
def cell(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("shape2019")
    cli("generate", "google-2019-shape", root / "gen", "--scale", "0.0002", "--days", "1", "--cell", "e")
    cli("ingest", "google-2019", root / "gen" / "cell_e", "--lake", root / "lake")
    return root / "lake", json.loads((root / "gen" / "truth.json").read_text())


def test_every_slot_of_every_machine_is_a_usage_row_in_every_window(cell: tuple[Path, dict]) -> None:
    lake, truth = cell
    machines = round(0.0002 * 10_001)  # cell a's machines, scaled
    windows = 24 * 12
    ((rows, per_window_min, per_window_max, quarantined),) = (
        Lake(lake)
        .query(
            "SELECT (SELECT count(*) FROM google2019.instance_usage), min(n), max(n), "
            "(SELECT count(*) FROM google2019.quarantine) "
            "FROM (SELECT start_time, count(*) AS n FROM google2019.instance_usage GROUP BY ALL)"
        )
        .rows()
    )
    assert truth["machines"] == machines and rows == machines * 16 * windows == truth["usage_rows"]
    assert per_window_min == per_window_max == machines * 16 and quarantined == 0
    ((orphans,),) = (
        Lake(lake)
        .query(
            "SELECT count(*) FROM google2019.instance_usage AS u ANTI JOIN google2019.collection_events AS c "
            "USING (cell, collection_id)"
        )
        .rows()
    )
    assert orphans == 0  # every job's events are written once, by the shard of its first task


def test_the_percentiles_are_the_stated_gamma_quantiles_of_the_window_mean(cell: tuple[Path, dict]) -> None:
    lake, _ = cell
    rows = (
        Lake(lake)
        .query(
            "SELECT average_usage_cpus, cpu_usage_distribution[6], tail_cpu_usage_distribution[9] "
            "FROM google2019.instance_usage USING SAMPLE 200 ROWS (reservoir, 1)"
        )
        .rows()
    )
    medians = {cv: gamma.median(1 / cv**2, scale=cv**2) for cv in (0.1, 0.3, 0.6)}  # Gamma of mean 1, CV cv
    p99 = {cv: gamma.ppf(0.99, 1 / cv**2, scale=cv**2) for cv in (0.1, 0.3, 0.6)}
    for mean, median, tail in rows:
        (cv,) = [cv for cv, m in medians.items() if np.isclose(median, mean * m, rtol=1e-3, atol=2e-6)]
        assert np.isclose(tail, mean * p99[cv], rtol=1e-3, atol=2e-6)


def test_batch_runs_recur_under_workflow_names_and_services_follow_the_local_day(cell: tuple[Path, dict]) -> None:
    lake, _ = cell
    ((workflows, runs, finished),) = (
        Lake(lake)
        .query(
            "SELECT count(DISTINCT collection_logical_name) FILTER (WHERE type = 0), count(*) FILTER (WHERE type = 0), "
            "count(*) FILTER (WHERE type = 6) "  # SUBMIT, FINISH
            "FROM google2019.collection_events WHERE collection_logical_name LIKE 'workflow%'"
        )
        .rows()
    )
    assert 0 < workflows < runs and finished > 0
    # Cell e runs in Helsinki time (UTC+3 in May); the trace starts at 07:00 UTC, 10:00 local: the services'
    # busiest window is 14:00 local, four hours in.
    ((busiest,),) = (
        Lake(lake)
        .query(
            "SELECT arg_max(start_time, total) FROM (SELECT start_time, sum(average_usage_cpus) AS total "
            "FROM google2019.instance_usage WHERE collection_id < 2000000000 GROUP BY ALL)"
        )
        .rows()
    )
    hours_in = (busiest - 600_000_000) / 3.6e9
    assert 3.5 <= hours_in <= 4.5
