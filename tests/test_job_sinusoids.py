"""analysis.job_sinusoids recovers the services planted by the Google generator."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from lakehouse.base.lake import Lake
from lakehouse.cli import app
from lakehouse.ingest.google import ingest_google
from lakehouse.models import periodicity
from lakehouse.models.periodicity import spectral
from lakehouse.models.periodicity.job_sinusoids import fit_long_running_jobs, summary
from lakehouse.reports import PERIODICITY, PeriodicitySettings
from lakehouse.synth.google_trace import Settings, generate, generate_lake

from conftest import cli as run
from conftest import unboxed


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Lake, pl.DataFrame]:
    out = tmp_path_factory.mktemp("services")
    generate(out, Settings(machines=10, days=14, seed=3, services=8, batch_jobs_per_hour=0.5))
    lake = Lake(out / "lake")
    ingest_google(lake, out / "trace")
    return out, lake, PERIODICITY.run(lake, PeriodicitySettings(noise_trials=0, overlays=False)).fits


def test_planted_cycles_are_recovered(fitted):
    out, lake, fits = fitted
    truth = pl.read_parquet(out / "truth" / "services.parquet")
    joined = fits.join(truth, on="job_id", suffix="_planted")
    assert joined.height == truth.height == 8
    for row in joined.iter_rows(named=True):
        for name in ("daily", "weekly"):
            if row[f"{name}_ratio_planted"] >= 0.1:
                assert abs(row[f"{name}_ratio"] - row[f"{name}_ratio_planted"]) <= 0.02
                error = np.angle(np.exp(1j * (row[f"{name}_phase"] - row[f"{name}_phase_planted"])))
                assert abs(np.degrees(error)) <= 5
                assert row[f"{name}_p"] < spectral.ALPHA
        assert row["rho"] == pytest.approx(row["daily_ratio"] * row["c"])
        assert row["c"] == pytest.approx(row["level"], rel=0.02)  # per-task level
    assert lake.query("SELECT count(*) AS n FROM analysis.job_sinusoids")["n"][0] == 8


def test_summary_reports_every_component(fitted):
    _, _, fits = fitted
    table = summary(fits)
    assert table["component"].to_list() == ["hourly", "daily", "weekly", "trend", "noise"]
    daily = table.row(1, named=True)
    assert daily["jobs"] == 8 and daily["min"] <= daily["median"] <= daily["max"]


def test_schema_names_the_fitted_periods():
    assert list(periodicity.PERIOD_NAMES) == list(spectral.PERIODS)


def test_report_prints_spread_and_false_positives_and_writes_the_plots(fitted, tmp_path):
    _, lake, _ = fitted
    run = CliRunner().invoke(
        app,
        ["report", "periodicity", "--lake", str(lake.root), "--plots", str(tmp_path), "--noise-trials", "40"],
        env={"COLUMNS": "250"},
    )
    assert run.exit_code == 0, run.output
    assert sorted(p.name for p in tmp_path.glob("*.png")) == [
        "periodicity_daily_phases.png",
        "periodicity_fits.png",
        "periodicity_ratios.png",
    ]
    table = CliRunner().invoke(app, ["report", "periodicity", "--lake", str(lake.root), "--format", "json"])
    daily = next(row for row in json.loads(table.stdout) if row["component"] == "daily")
    assert 0 <= daily["false_positive_rate"] <= 0.15
    assert 0 <= daily["peak_resultant"] <= 1 and daily["peak_spread_h"] >= 0


def test_the_daily_test_on_generated_services_with_and_without_cycles(tmp_path):
    # 300 services without any cycle (level + 10 % noise) and ~100 with planted cycles, 10 % of windows
    # missing, 8 days, written straight into a lake: the daily test (Wald, HAC, at its stated 1 %) must flag at most
    # 5 % of the acyclic ones and at least 95 % of those with a planted daily ratio >= 0.1.
    settings = Settings(machines=50, days=8, seed=9, services=400, batch_jobs_per_hour=0, acyclic_service_share=0.75)
    Lake(tmp_path).init()
    generate_lake(tmp_path, settings)
    fits = fit_long_running_jobs(Lake(tmp_path))
    truth = pl.read_parquet(tmp_path / "truth" / "services.parquet")
    joined = fits.join(truth, on="job_id", suffix="_planted")
    assert joined.height == 400
    flagged = pl.col("daily_p") < spectral.ALPHA
    acyclic = joined.filter(pl.col("daily_ratio_planted") == 0)
    cyclic = joined.filter(pl.col("daily_ratio_planted") >= 0.1)
    assert acyclic.height >= 250 and cyclic.height >= 70
    assert acyclic.select(flagged.mean()).item() <= 0.05
    assert cyclic.select(flagged.mean()).item() >= 0.95


def test_periodicity_on_the_embedded_google_sample_says_what_to_ingest(tmp_path):
    from lakehouse.data import sample_google_trace

    run("ingest", "google", sample_google_trace(), "--lake", tmp_path / "l")
    result = run("report", "periodicity", "--lake", tmp_path / "l", "--noise-trials", 5, code=1)
    assert result.stdout == ""  # no empty table
    message = unboxed(result.stderr)
    assert "nothing to fit: no long-running task in cluster.tasks (ingest the trace's task_events" in message
