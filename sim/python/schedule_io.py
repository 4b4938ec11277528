"""A replay's schedule as a file: Parquet, CSV, SWF or Batsim's jobs CSV, chosen by the file's extension.

The columns keep the lake's names (`job_id`, `submit_time`, `req_time`, `procs`, `user_id`) beside
the simulated ones (`start_time`, `end_time`, `wait`, `run`, `bounded_slowdown`, `backfilled`,
`corrections`, `initial_prediction`, and `policy` with a selector). Parquet records what produced
the schedule in its key-value metadata (`lakehouse.schedule`: the log, view, condition, machine
size, every setting and the engine version); SWF records it in header comments, and is a valid log
that `lakehouse ingest swf` reads back (wait = start − submit, run = the simulated run time).

`.batsim.csv` is the jobs file Batsim writes and evalys reads (its documented columns, in its order),
with each job's processors (`allocated_resources`, an interval set such as `0-3 8`) from
`processor_allocation`: the replay has no topology, so the allocation is one the schedule allows, each
job taking the lowest free processors when it starts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
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
FORMATS = (".parquet", ".csv", ".swf", BATSIM := ".batsim.csv")
#: Batsim's jobs file: its columns in its order (Batsim's documentation, "Jobs" output file).
BATSIM_JOBS_COLUMNS = (
    "job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources", "requested_time",
    "success", "final_state", "starting_time", "execution_time", "finish_time", "waiting_time",
    "turnaround_time", "stretch", "consumed_energy", "allocated_resources", "metadata",
)  # fmt: skip


def check_schedule_path(path: Path) -> Path:
    """The format is the extension's; anything else is refused before the replay runs."""
    if path.suffix.lower() not in FORMATS and not path.name.lower().endswith(BATSIM):
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
        elif path.name.lower().endswith(BATSIM):
            batsim_jobs(frame, result.settings.machine_size, str(where.get("log") or result.log)).write_csv(tmp)
        elif suffix == ".csv":
            frame.write_csv(tmp)
        else:
            tmp.write_text(swf_text(frame, about))


def interval_sets(offsets: np.ndarray, first: np.ndarray, last: np.ndarray) -> list[str]:
    """Each job's processors in Batsim's canonical interval-set text: `0-3 8 10-11`."""
    ranges = [str(a) if a == b else f"{a}-{b}" for a, b in zip(first.tolist(), last.tolist(), strict=True)]
    bounds = offsets.tolist()
    return [" ".join(ranges[bounds[i] : bounds[i + 1]]) for i in range(len(bounds) - 1)]


def batsim_jobs(frame: pl.DataFrame, machine_size: int, workload: str) -> pl.DataFrame:
    """A schedule as Batsim's jobs file: every job completed (a replayed job always ends; one that ran
    to its request was killed at its walltime), no energy, the processors a sweep gave it."""
    start, end, procs = (frame[c].cast(pl.Int64).to_numpy() for c in ("start_time", "end_time", "procs"))
    try:
        allocation = _native.processor_allocation(start, end, procs, machine_size)
    except ValueError as exc:
        raise SettingsError(f"cannot allocate processors to the schedule: {exc}") from None
    killed = pl.col("run") >= pl.col("req_time")
    turnaround = pl.col("end_time") - pl.col("submit_time")
    return frame.select(
        pl.col("job_id").cast(pl.String).alias("job_id"),
        pl.lit(workload).alias("workload_name"),
        pl.col("job_id").cast(pl.String).alias("profile"),
        pl.col("submit_time").alias("submission_time"),
        pl.col("procs").alias("requested_number_of_resources"),
        pl.col("req_time").alias("requested_time"),
        (~killed).cast(pl.Int8).alias("success"),
        pl.when(killed).then(pl.lit("COMPLETED_WALLTIME_REACHED")).otherwise(pl.lit("COMPLETED_SUCCESSFULLY"))
        .alias("final_state"),
        pl.col("start_time").alias("starting_time"),
        pl.col("run").alias("execution_time"),
        pl.col("end_time").alias("finish_time"),
        pl.col("wait").alias("waiting_time"),
        turnaround.alias("turnaround_time"),
        (turnaround / pl.col("run")).alias("stretch"),  # (Batsim's own: infinite for a job of no duration)
        pl.lit(None, dtype=pl.Float64).alias("consumed_energy"),
        pl.Series("allocated_resources", interval_sets(*allocation), dtype=pl.String),
        pl.lit("").alias("metadata"),
    )  # fmt: skip


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
