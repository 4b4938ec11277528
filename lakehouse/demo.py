"""`lakehouse demo`: the main job on the embedded sample, from an empty folder to answers."""

from __future__ import annotations

import polars as pl

from lakehouse.data import sample_swf_paths
from lakehouse.ingest.swf import FileResult, ingest_swf
from lakehouse.lake import Lake


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
    return {"Embedded sample logs": summary, "Cleaning rules that fired": cleaning, "Jobs kept": kept}
