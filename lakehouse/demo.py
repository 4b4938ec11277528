"""`lakehouse demo`: the main job on the embedded sample, from an empty folder to answers."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import polars as pl

from lakehouse.base.catalog import named_query
from lakehouse.base.job_views import log_jobs, log_machine_size
from lakehouse.base.lake import Lake
from lakehouse.campaigns.grid import EASY_VARIANTS, RunSettings
from lakehouse.data import sample_alibaba2018, sample_google_trace, sample_swf_paths
from lakehouse.ingest.alibaba2018 import ingest_alibaba2018
from lakehouse.ingest.google import ingest_google
from lakehouse.ingest.swf import FileResult, ingest_swf
from lakehouse.models.compare_traces.report import REPORT as COMPARE_TRACES
from lakehouse.models.periodicity.job_sinusoids import summary
from lakehouse.models.volatility.report import run_2011
from lakehouse.nightly import history
from lakehouse.nightly.run import run as nightly_run
from lakehouse.reports import PERIODICITY, PeriodicitySettings
from lakehouse.sim import replay
from lakehouse.synth.google_trace import Settings, generate

#: The demo's generated trace: long enough (8 days) for the daily and weekly fits.
DEMO_TRACE = Settings(machines=10, days=8, seed=1, services=6, batch_jobs_per_hour=4)
GENERATED_FOLDER = "demo-generated"  # inside the demo lake: trace/, truth/ and its own lake/


def google_part(lake: Lake) -> dict[str, pl.DataFrame]:
    """The embedded Google slice in the demo lake, and a small generated trace (in its own lake next
    to it) checked against its planted truth and run through both Google reports."""
    ingest_google(lake, sample_google_trace())
    counts = lake.query(named_query("demo_google_counts"))
    sampling = lake.query(named_query("demo_sampling")).with_columns(trace=pl.lit("real slice"))
    folder = generated_folder(lake)
    if not (folder / "truth" / "summary.json").exists():
        generate(folder, DEMO_TRACE)
    generated = Lake(folder / "lake")
    ingest_google(generated, folder / "trace")
    planted = pl.read_parquet(folder / "truth" / "jobs.parquet")
    found = generated.query(named_query("demo_sampling")).with_columns(
        trace=pl.lit("generated"), planted_measured=pl.lit(int(planted["measured"].sum()))
    )
    sampling = pl.concat([sampling, found], how="diagonal").select(
        "trace", "jobs", "measured", "samples_never_recorded", "inconsistent", "planted_measured"
    )
    fits = PERIODICITY.run(generated, PeriodicitySettings(noise_trials=0, overlays=False)).fits
    volatility = run_2011(generated)
    real_volatility = run_2011(lake)
    wanted = ["tasks", "median_cv_mu1s", "median_cv_mu5m", "share_of_windows_with_zero_mu1s", "mean_abs_d"]
    real, synthetic = (
        table.summary.filter(pl.col("metric").is_in(wanted)).select("metric", pl.col("all").alias(name))
        for name, table in (("real slice", real_volatility), ("generated", volatility))
    )
    volatility_table = real.join(synthetic, on="metric", maintain_order="left")
    periodic = summary(fits).filter(pl.col("component").is_in(["daily", "weekly"]))
    return {
        "Google trace sample (rows)": counts,
        "1-second CPU sampling per job (google.job_sampling)": sampling,
        "CPU volatility of measured tasks (lakehouse report volatility)": volatility_table,
        "Daily and weekly cycles of the generated services (lakehouse report periodicity)": periodic.select(
            "component", "jobs", "mean", "min", "max", "significant_share", "peak_spread_h"
        ),
    }


#: The columns of the cross-trace table the demo prints (the report stores them all).
COMPARED = ("trace", "cell", "jobs", "machines", "days", "median_job_size", "median_duration_h", "median_wait_s")


def every_trace_part(lake: Lake) -> dict[str, pl.DataFrame]:
    """The embedded Alibaba 2018 slice beside the SWF log and the Google slice already in the demo lake,
    and the three side by side through the common views cluster.*."""
    ingest_alibaba2018(lake, [sample_alibaba2018()])
    comparison = COMPARE_TRACES.run(lake, None)
    return {"Every trace side by side (lakehouse report compare-traces)": comparison.table.select(COMPARED)}


def generated_folder(lake: Lake) -> Path:
    return lake.root / GENERATED_FOLDER


NIGHTLY_FOLDER = "demo-nightly"  # inside the demo lake: inbox/ and the nightly run's own lake/


def nightly_part(lake: Lake) -> tuple[pl.DataFrame, Path | None]:
    """Two nights of `lakehouse nightly` over an inbox made from the embedded samples: the first night
    brings the first half of the KTH-SP2 log, the second its whole (a new half-year arrived) and the
    Google slice.  Returns the runs' history and the second night's HTML page."""
    folder = lake.root / NIGHTLY_FOLDER
    shutil.rmtree(folder, ignore_errors=True)  # the demo's own folder: each demo shows its two nights
    inbox = folder / "inbox"
    inbox.mkdir(parents=True)
    target = Lake(folder / "lake")
    log = sample_swf_paths()[0]
    text = gzip.decompress(log.read_bytes()).decode()
    lines = text.splitlines(keepends=True)
    jobs = [i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith(";")]
    first_half = "".join(lines[: jobs[len(jobs) // 2]])
    (inbox / log.name).write_bytes(gzip.compress(first_half.encode(), mtime=0))
    nightly_run(target, inbox)
    (inbox / log.name).write_bytes(log.read_bytes())
    shutil.copytree(sample_google_trace(), inbox / "google-trace")
    second = nightly_run(target, inbox)
    runs = (
        history.runs(target)
        .sort("started_at")
        .select("run", "status", "files_seen", "files_ingested", "files_skipped", "files_failed", "reports_run")
    )
    return runs, second.page


def run_demo(lake: Lake) -> dict[str, pl.DataFrame]:
    """Ingest the embedded logs and return the frames the demo prints, by title."""
    results: list[FileResult] = ingest_swf(lake, [str(p) for p in sample_swf_paths()])
    logs = [r.log for r in results]
    summary = lake.query(named_query("demo_log_summary"), [logs])
    cleaning = lake.query(named_query("demo_cleaning"), [logs])
    kept = lake.query(named_query("demo_kept_jobs"), [logs])
    return {
        "Embedded sample logs": summary,
        "Cleaning rules that fired": cleaning,
        "Jobs kept": kept,
        "Backfilling variants on the cleaned jobs": compare_schedulers(lake, logs[0]),
        **google_part(lake),
        **every_trace_part(lake),
    }


def run_demo_with_nightly(lake: Lake) -> tuple[dict[str, pl.DataFrame], Path | None]:
    """The demo's frames, then two nightly runs; returns the frames and the last run's HTML page."""
    frames = run_demo(lake)
    runs, page = nightly_part(lake)
    frames["Two nightly runs over an inbox (lakehouse nightly): a new log, then its next half-year"] = runs
    return frames, page


#: The variants of the demo's comparison table: EASY and its best-known refinements, and the bound
#: exact run times give.
SCHEDULERS = {
    **EASY_VARIANTS,
    "EASY, clairvoyant": RunSettings(predictor="clairvoyant"),
}


def compare_schedulers(lake: Lake, log: str) -> pl.DataFrame:
    """One row of metrics per variant of `SCHEDULERS`, on the log's canonically cleaned jobs."""
    jobs = log_jobs(lake, log)
    size = log_machine_size(lake, log)
    rows = [replay(jobs, s.replay_settings(size)).summary_frame(scheduler=name) for name, s in SCHEDULERS.items()]
    return pl.concat(rows).select("scheduler", "jobs", "mean_wait", "mean_bounded_slowdown", "max_wait", "utilization")
