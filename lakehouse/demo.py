"""`lakehouse demo`: the main job on the embedded sample, from an empty folder to answers."""

from __future__ import annotations

import tempfile
from pathlib import Path

import polars as pl

from lakehouse.data import sample_google_trace, sample_swf_paths
from lakehouse.ingest.google import ingest_google
from lakehouse.ingest.swf import FileResult, ingest_swf
from lakehouse.lake import Lake
from lakehouse.sim import simulate
from lakehouse.sim.source import log_jobs, log_machine_size
from lakehouse.synth.google_trace import Settings, generate

SAMPLING_SUMMARY = (
    "SELECT count(*) AS jobs, count(*) FILTER (measured) AS measured, "
    "count(*) FILTER (NOT measured) AS samples_never_recorded, "
    "count(*) FILTER (NOT consistent) AS inconsistent FROM google.job_sampling"
)


def google_part(lake: Lake) -> dict[str, pl.DataFrame]:
    """The embedded Google slice in the demo lake, and a small generated trace checked against its truth."""
    ingest_google(lake, sample_google_trace())
    counts = lake.query(
        "SELECT 'job_events' AS table_name, count(*) AS rows FROM google.job_events "
        "UNION ALL SELECT 'machine_events', count(*) FROM google.machine_events "
        "UNION ALL SELECT 'task_usage', count(*) FROM google.task_usage"
    )
    sampling = lake.query(SAMPLING_SUMMARY).with_columns(trace=pl.lit("real slice"))
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp), Settings(machines=10, days=0.5, seed=1, services=3))
        generated = Lake(Path(tmp) / "lake")
        ingest_google(generated, Path(tmp) / "trace")
        planted = pl.read_parquet(Path(tmp) / "truth" / "jobs.parquet")
        found = generated.query(SAMPLING_SUMMARY).with_columns(
            trace=pl.lit("generated"),
            planted_measured=pl.lit(int(planted["measured"].sum())),
        )
    sampling = pl.concat([sampling, found], how="diagonal").select(
        "trace", "jobs", "measured", "samples_never_recorded", "inconsistent", "planted_measured"
    )
    return {"Google trace sample (rows)": counts, "1-second CPU sampling per job (google.job_sampling)": sampling}


def run_demo(lake: Lake) -> dict[str, pl.DataFrame]:
    """Ingest the embedded logs and return the frames the demo prints, by title."""
    results: list[FileResult] = ingest_swf(lake, [str(p) for p in sample_swf_paths()])
    logs = [r.log for r in results]
    summary = lake.query("SELECT * FROM swf.log_summary WHERE list_contains(?, log)", [logs])
    cleaning = lake.query(
        "SELECT log, filter, step, rule, action, jobs FROM swf.clean_report "
        "WHERE list_contains(?, log) AND jobs > 0 ORDER BY log, filter, step",
        [logs],
    )
    kept = lake.query(
        "SELECT log, (SELECT count(*) FROM swf.jobs_clean c WHERE c.log = l.log) AS jobs_clean, "
        "(SELECT count(*) FROM swf.jobs_strong s WHERE s.log = l.log) AS jobs_strong "
        "FROM swf.logs l WHERE list_contains(?, log) ORDER BY log",
        [logs],
    )
    return {
        "Embedded sample logs": summary,
        "Cleaning rules that fired": cleaning,
        "Jobs kept": kept,
        "Backfilling variants on the cleaned jobs": compare_schedulers(lake, logs[0]),
        **google_part(lake),
    }


#: The variants of the demo's comparison table: EASY and its best-known refinements.
SCHEDULERS = {
    "EASY": {},
    "EASY-SJBF": {"backfill": "sjbf"},
    "EASY++ (AVE2, SJBF, incremental)": {"predictor": "ave2", "backfill": "sjbf", "correction": "incremental"},
    "EASY, clairvoyant": {"predictor": "clairvoyant"},
}


def compare_schedulers(lake: Lake, log: str) -> pl.DataFrame:
    """One row of metrics per variant of `SCHEDULERS`, on the log's canonically cleaned jobs."""
    jobs = log_jobs(lake, log)
    size = log_machine_size(lake, log)
    rows = [simulate(jobs, size, **settings).summary_frame(scheduler=name) for name, settings in SCHEDULERS.items()]
    return pl.concat(rows).select("scheduler", "jobs", "mean_wait", "mean_bounded_slowdown", "max_wait", "utilization")
