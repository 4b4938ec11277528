"""A replay's schedule as a file: Parquet, CSV or SWF, chosen by the file's extension.

The columns keep the lake's names (`job_id`, `submit_time`, `req_time`, `procs`, `user_id`) beside
the simulated ones (`start_time`, `end_time`, `wait`, `run`, `bounded_slowdown`, `backfilled`,
`corrections`, `initial_prediction`, and `policy` with a selector). Parquet records what produced
the schedule in its key-value metadata (`lakehouse.schedule`: the log, view, condition, machine
size, every setting and the engine version); SWF records it in header comments, and is a valid log
that `lakehouse ingest swf` reads back (wait = start − submit, run = the simulated run time).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
import pyarrow.parquet as pq

from lakehouse import _native
from lakehouse.base.errors import SettingsError
from lakehouse.base.outputs import written_aside
from lakehouse.base.swf_format import comment_line

if TYPE_CHECKING:  # (the result imports this module to draw and write itself)
    from lakehouse.sim.result import SimulationResult

#: Bumped when a column of the schedule file changes meaning or name.
SCHEDULE_VERSION = 1
METADATA_KEY = b"lakehouse.schedule"
FORMATS = (".parquet", ".csv", ".swf")


def check_schedule_path(path: Path) -> Path:
    """The format is the extension's; anything else is refused before the replay runs."""
    if path.suffix.lower() not in FORMATS:
        raise SettingsError(
            f"{path}: a schedule is written as {', '.join(FORMATS)} (by extension), not {path.suffix!r}"
        )
    return path


def schedule_frame(result: SimulationResult) -> pl.DataFrame:
    """The per-job schedule in the lake's column names."""
    jobs = result.jobs
    first = ["job_id", "submit_time", "start_time", "end_time", "wait"]
    jobs = jobs.with_columns(run=pl.col("end_time") - pl.col("start_time"))
    return jobs.select(*first, "run", *(c for c in jobs.columns if c not in {*first, "run"}))


def provenance(result: SimulationResult, **where: object) -> dict[str, object]:
    """What produced a schedule: the file's version, where the jobs came from, every setting."""
    settings = {**result.settings.record(), **({"log": result.log} if result.log is not None else {})}
    return {"schedule_version": SCHEDULE_VERSION, "engine_version": _native.ENGINE_BUILD, **where, "settings": settings}


def write_schedule(result: SimulationResult, path: Path, **where: object) -> None:
    """Write the schedule to `path` in the format of its extension; `where`: the log, view, condition."""
    check_schedule_path(path)
    frame = schedule_frame(result)
    about = provenance(result, **where)
    suffix = path.suffix.lower()
    with written_aside(path) as tmp:
        if suffix == ".parquet":
            table = frame.to_arrow()
            table = table.replace_schema_metadata(
                {**(table.schema.metadata or {}), METADATA_KEY: json.dumps(about).encode()}
            )
            pq.write_table(table, tmp)
        elif suffix == ".csv":
            frame.write_csv(tmp)
        else:
            tmp.write_text(swf_text(frame, about))


def read_provenance(path: Path) -> dict[str, Any]:
    """The metadata a Parquet schedule was written with."""
    metadata = pq.read_schema(path).metadata or {}
    if METADATA_KEY not in metadata:
        raise SettingsError(f"{path}: not a schedule written by lakehouse (no {METADATA_KEY.decode()} metadata)")
    return json.loads(metadata[METADATA_KEY])


def swf_text(frame: pl.DataFrame, about: dict[str, object]) -> str:
    """The schedule as an SWF log: the 18 fields of each job (unknown ones -1, status 1 = completed)."""
    settings = about["settings"]
    assert isinstance(settings, dict)
    engine, version = about["engine_version"], about["schedule_version"]
    header = [
        comment_line(text)
        for text in (
            "Version: 2.2",
            f"Computer: simulated by lakehouse {engine} (schedule version {version})",
            f"MaxProcs: {settings.get('machine_size')}",
            *(f"Note: {key} = {value}" for key, value in about.items() if key not in {"settings", "engine_version"}),
            *(f"Note: setting {key} = {value}" for key, value in settings.items()),
        )
    ]
    lines = frame.select(
        pl.concat_str(
            [
                pl.col("job_id"),
                pl.col("submit_time"),
                pl.col("wait"),
                pl.col("run"),
                pl.col("procs"),
                pl.lit("-1 -1"),
                pl.col("procs"),
                pl.col("req_time"),
                pl.lit("-1 1"),
                pl.col("user_id"),
                pl.lit("-1 -1 -1 -1 -1 -1"),
            ],
            separator=" ",
        )
    ).to_series()
    return "\n".join([*header, *lines.to_list()]) + "\n"
