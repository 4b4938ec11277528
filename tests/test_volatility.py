"""Volatility statistics equal a direct numpy computation on the rows of a generated trace."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from lakehouse.base.lake import Lake
from lakehouse.cli import app
from lakehouse.ingest.google import ingest_google
from lakehouse.models.volatility.model import D_QUANTILES
from lakehouse.reports import VOLATILITY
from lakehouse.synth.google_trace import Settings, generate

from google_raw import raw_cpu_requests, raw_usage


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("volatility")
    generate(out, Settings(machines=15, days=2, seed=21, batch_jobs_per_hour=15, services=6))
    lake = Lake(out / "lake")
    ingest_google(lake, out / "trace")
    result = VOLATILITY.run(lake, None)
    return out, lake, result


@pytest.fixture(scope="module")
def by_numpy(generated):
    """Every window of a measured job with its task's flags, from the CSV text and the planted truth."""
    out, _, _ = generated
    key, mu5m, mu1s = raw_usage(out)
    truth = pl.read_parquet(out / "truth" / "jobs.parquet")
    measured = set(truth.filter(pl.col("measured"))["job_id"])
    klass = dict(zip(truth["job_id"], truth["scheduling_class"], strict=True))
    service = dict(zip(truth["job_id"], truth["service"], strict=True))
    request = raw_cpu_requests(out)
    keep = np.array([job in measured for job in key[:, 0]])
    key, mu5m, mu1s = key[keep], mu5m[keep], mu1s[keep]
    return {
        "key": key,
        "mu5m": mu5m,
        "mu1s": mu1s,
        "high_slo": np.array([klass[job] in (2, 3) for job in key[:, 0]]),
        "long_running": np.array([service[job] for job in key[:, 0]]),
        "request": np.array([request[(job, task)] for job, task in key]),
    }


def tasks_of(windows: dict, mask: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    key = windows["key"][mask]
    groups: dict[tuple[int, int], list[int]] = {}
    for i, (job, task) in enumerate(map(tuple, key)):
        groups.setdefault((job, task), []).append(i)
    return [(windows["mu5m"][mask][rows], windows["mu1s"][mask][rows]) for rows in groups.values()]


def mad_ratio(x):
    median = np.median(x)
    return np.median(np.abs(x - median)) / median if median > 0 else np.nan


def cv(x):
    return x.std(ddof=1) / x.mean() if x.size > 1 and x.mean() > 0 else np.nan


@pytest.mark.parametrize("subset", ["all", "high_slo", "long_running", "high_slo_long_running"])
def test_trace_wide_numbers_equal_numpy(generated, by_numpy, subset):
    _, _, result = generated
    summary = dict(zip(result.summary["metric"], result.summary[subset], strict=True))
    everything = np.ones(by_numpy["key"].shape[0], bool)
    mask = {"all": everything, "high_slo_long_running": by_numpy["high_slo"] & by_numpy["long_running"]}.get(
        subset, by_numpy.get(subset)
    )
    assert mask.any()
    tasks = tasks_of(by_numpy, mask)
    nonzero = np.array([(s > 0).sum() for _, s in tasks])
    assert summary["tasks"] == len(tasks)
    assert summary["tasks_with_all_zero_samples"] == (nonzero == 0).sum()
    for k in range(1, 5):
        assert summary[f"tasks_with_{k}_nonzero_samples"] == (nonzero == k).sum()
    assert summary["median_samples_per_task"] == np.median([a.size for a, _ in tasks])
    assert summary["median_nonzero_samples_per_task"] == np.median(nonzero)

    def median_of(values):
        values = np.array(values)
        return np.median(values[np.isfinite(values)])

    assert summary["median_cv_mu1s"] == pytest.approx(median_of([cv(s) for _, s in tasks]), rel=1e-9)
    assert summary["median_cv_mu5m"] == pytest.approx(median_of([cv(a) for a, _ in tasks]), rel=1e-9)
    assert summary["median_robust_cv_mu1s"] == pytest.approx(median_of([mad_ratio(s) for _, s in tasks]), rel=1e-9)
    assert summary["median_robust_cv_mu5m"] == pytest.approx(median_of([mad_ratio(a) for a, _ in tasks]), rel=1e-9)
    per_task_abs_d = [np.mean(np.abs((a - s)[a > 0] / a[a > 0])) if (a > 0).any() else np.nan for a, s in tasks]
    assert summary["median_task_mean_abs_d"] == pytest.approx(median_of(per_task_abs_d), rel=1e-9)

    mu5m, mu1s = by_numpy["mu5m"][mask], by_numpy["mu1s"][mask]
    d = (mu5m - mu1s)[mu5m > 0] / mu5m[mu5m > 0]
    assert summary["windows"] == mask.sum()
    assert summary["share_of_windows_with_zero_mu1s"] == pytest.approx(np.mean(mu1s == 0), rel=1e-12)
    assert summary["mean_d"] == pytest.approx(d.mean(), rel=1e-9)
    assert summary["mean_abs_d"] == pytest.approx(np.abs(d).mean(), rel=1e-9)
    for q in D_QUANTILES:
        # The quantile to the bin: the lower edge of the 0.001-wide bin holding numpy's inverted-CDF quantile.
        exact = np.quantile(d, q, method="inverted_cdf")
        assert summary[f"d_p{round(q * 100):02d}"] == pytest.approx(max(np.floor(exact / 0.001) * 0.001, -4))


def test_the_two_histograms_equal_numpy(generated, by_numpy):
    _, _, result = generated
    mu5m, mu1s, request = by_numpy["mu5m"], by_numpy["mu1s"], by_numpy["request"]
    d = (mu5m - mu1s)[mu5m > 0] / mu5m[mu5m > 0]
    edges, counts = np.unique(np.maximum(np.floor(d / 0.001) * 0.001, -4), return_counts=True)
    distribution = result.d_distribution()
    assert distribution["d_bin"].to_numpy() == pytest.approx(edges)
    assert distribution["windows"].to_list() == counts.tolist()

    def rate_bin(x):
        with np.errstate(divide="ignore"):
            edge = np.clip(np.floor(np.log10(x) * 4) / 4, -5, 1)
        return np.where(x > 0, edge, np.nan)

    cells = pl.DataFrame({"a": rate_bin(mu5m / request), "b": rate_bin(mu1s / request)}, nan_to_null=True)
    expected = cells.group_by("a", "b").len().sort("a", "b", nulls_last=False)
    joint = result.joint().sort("mu5m_bin", "mu1s_bin", nulls_last=False)
    assert joint["windows"].to_list() == expected["len"].to_list()
    assert joint["mu5m_bin"].to_list() == pytest.approx(expected["a"].to_list(), nan_ok=True)
    assert joint["mu1s_bin"].to_list() == pytest.approx(expected["b"].to_list(), nan_ok=True)


def test_per_task_values_equal_numpy(generated, by_numpy):
    _, lake, result = generated
    stored = lake.query("SELECT * FROM analysis.task_volatility ORDER BY job_id, task_index")
    assert stored.height == result.tasks
    key = by_numpy["key"]
    for row in stored.sample(40, seed=2).iter_rows(named=True):
        mine = (key[:, 0] == row["job_id"]) & (key[:, 1] == row["task_index"])
        a, s = by_numpy["mu5m"][mine], by_numpy["mu1s"][mine]
        assert row["windows"] == mine.sum() and row["nonzero_samples"] == (s > 0).sum()
        assert row["high_slo"] == by_numpy["high_slo"][mine][0]
        assert row["long_running"] == by_numpy["long_running"][mine][0]
        if mine.sum() > 1:
            assert row["cv_mu5m"] == pytest.approx(a.std(ddof=1) / a.mean(), rel=1e-9)
            assert row["cv_mu1s"] == pytest.approx(s.std(ddof=1) / s.mean(), rel=1e-9)
        assert row["robust_cv_mu5m"] == pytest.approx(mad_ratio(a), rel=1e-9)
        if np.median(s) > 0:
            assert row["robust_cv_mu1s"] == pytest.approx(mad_ratio(s), rel=1e-9)
        else:
            assert row["robust_cv_mu1s"] is None
        positive = a > 0
        assert row["mean_abs_d"] == pytest.approx(np.mean(np.abs((a - s)[positive] / a[positive])), rel=1e-9)


def test_unmeasured_jobs_are_left_out(generated):
    out, lake, _ = generated
    truth = pl.read_parquet(out / "truth" / "jobs.parquet")
    stored = lake.query("SELECT DISTINCT job_id FROM analysis.task_volatility")
    assert set(stored["job_id"]) == set(truth.filter(pl.col("measured"))["job_id"])


def test_report_prints_the_table_and_writes_every_plot(generated, tmp_path: Path):
    _, lake, _ = generated
    run = CliRunner().invoke(
        app, ["report", "volatility", "--lake", str(lake.root), "--plots", str(tmp_path), "--format", "csv"]
    )
    assert run.exit_code == 0, run.output
    assert run.stdout.splitlines()[0] == "metric,all,high_slo,long_running,high_slo_long_running"
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert len(pngs) == 5 and all((tmp_path / p).stat().st_size > 10_000 for p in pngs)
    for view in ("task_volatility", "volatility_summary", "volatility_d_histogram", "volatility_rate_histogram"):
        assert lake.query(f"SELECT count(*) AS n FROM analysis.{view}")["n"][0] > 0
    assert "—:" not in run.stderr  # the generated trace fills every cell


def test_an_empty_cell_of_the_summary_says_why(tmp_path: Path):
    """The embedded sample's tasks each have one 5-minute window, and none is high-SLO or long-running:
    the blanks are explained, not left as "—"."""
    from lakehouse.data import sample_google_trace

    lake = Lake(tmp_path / "lake")
    ingest_google(lake, sample_google_trace())
    run = CliRunner().invoke(app, ["report", "volatility", "--lake", str(lake.root)])
    assert run.exit_code == 0, run.output
    said = " ".join(run.stderr.split())
    assert "—: high_slo: no task of the measured jobs is of scheduling class 2 or 3" in said
    assert "—: median_cv_mu1s (all): no task has two 5-minute windows with a non-zero mean" in said
