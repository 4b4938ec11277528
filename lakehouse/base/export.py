"""Writing the lake back out as SWF: a log's view (`lakehouse export swf`), a cloud trace's jobs through
the common views (`lakehouse export swf --trace`) and the Google 2011 trace's jobs by its own events
(`lakehouse export google-swf`), so that any tool that reads SWF (ours included) can replay them.

Files are written aside and renamed into place, gzipped when the name ends in `.gz`.
"""

from __future__ import annotations

import enum
import gzip
import io
import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow as pa

from lakehouse.base.catalog import named_query, path_literal, sql_literal
from lakehouse.base.datasets import CLOUD_TRACES
from lakehouse.base.errors import LakehouseError, TooLittleDataError
from lakehouse.base.job_views import View, log_jobs, log_machine_size, resolve_log
from lakehouse.base.lake import Lake
from lakehouse.base.outputs import check_file, written_aside
from lakehouse.base.swf_format import FIELDS, comment_line

#: The trace clock's start (its 600 s): 19:00 EDT on Sunday 1 May 2011, as a Unix time.
GOOGLE_TRACE_START = 1_304_290_800


class ExportView(enum.StrEnum):
    jobs = "jobs"  # every job line as ingested
    jobs_clean = "jobs_clean"
    jobs_strong = "jobs_strong"


class Processors(enum.StrEnum):
    tasks = "tasks"  # one processor per task
    cpu = "cpu"  # the tasks' summed CPU request, in cores


def _swf_body(frame: pl.DataFrame) -> str:
    """The job lines: 18 fields separated by spaces, unknown (NULL, or a field the frame lacks) as -1;
    field 6 keeps its decimals (Polars writes the shortest text that reads back as the same number)."""
    fields = frame.select(
        [
            (pl.col(f.name) if f.name in frame.columns else pl.lit(None))
            .cast(pl.Float64 if f.fractional else pl.Int64)
            .fill_null(-1)
            .alias(f.name)
            for f in FIELDS
        ]
    )
    fractional = [f.name for f in FIELDS if f.fractional]
    fields = fields.with_columns(
        pl.when(pl.col(c) == pl.col(c).round(0))
        .then(pl.col(c).cast(pl.Int64).cast(pl.String))
        .otherwise(pl.col(c).cast(pl.String))
        .alias(c)
        for c in fractional
    )
    buffer = io.StringIO()
    fields.write_csv(buffer, separator=" ", include_header=False, quote_style="never")
    return buffer.getvalue()


def _write(path: Path, text: str) -> None:
    check_file(path)
    data = text.encode("utf-8")
    if path.name.endswith(".gz"):
        data = gzip.compress(data, compresslevel=6, mtime=0)
    with written_aside(path) as tmp:
        tmp.write_bytes(data)


def _header(lines: list[str]) -> str:
    return "".join(comment_line(line) + "\n" for line in lines)


def export_swf(lake: Lake, log: str, view: ExportView, path: Path) -> int:
    """Write `swf.<view>` of one log as an SWF file with the log's header; returns the jobs written.

    The original header is kept, but MaxJobs and MaxRecords give the jobs of this file, and a note
    says where it came from (with the machine size the lake used, when the header has no MaxProcs)."""
    log = resolve_log(lake, log)
    view = ExportView(view)
    # A quoted literal (sql_literal), not a parameter: see lakehouse.base.job_views.log_jobs.
    jobs = lake.query(f"SELECT * FROM swf.{view} WHERE log = {sql_literal(log)} ORDER BY submit_time, line")
    raw_header, machine_size, max_procs = lake.query(named_query("swf_export_header"), [log]).row(0)
    kept = []
    for line in (raw_header or "").splitlines():
        text = line.lstrip(";").strip()
        if re.match(r"(MaxJobs|MaxRecords)\s*:", text, re.IGNORECASE):
            continue
        kept.append(text)
    kept += [f"MaxJobs: {jobs.height}", f"MaxRecords: {jobs.height}"]
    if max_procs is None and machine_size is not None:
        kept.append(f"MaxProcs: {machine_size}")
    kept.append(f"Note: exported by lakehouse from log {log}, view swf.{view} ({jobs.height:,} jobs)")
    _write(path, _header(kept) + _swf_body(jobs))
    return jobs.height


#: The conversion's rules, as the file's header notes and `--help` give them.
GOOGLE_RULES = [
    "converted by lakehouse export google-swf from the Google cluster trace (clusterdata-2011-2):",
    "one SWF job per Google job id, numbered 1.. in submit order;",
    "times in seconds from the trace's start (its clock's 600 s; events 'before the trace' count as 0);",
    "submit = the job's first SUBMIT; wait = its first SCHEDULE - submit (-1: never scheduled);",
    "run time = its tasks' last end (FINISH, FAIL, KILL, LOST or EVICT) - first SCHEDULE "
    "(-1: still running at the trace's end);",
    "processors (requested = allocated) = {processors};",
    "status from the job's last end event: FINISH 1, KILL 5, FAIL/LOST/EVICT 0, none -1;",
    "user = rank of the user hash, executable = rank of the logical job name, queue = scheduling class;",
    "requested time, memory, group, partition, preceding job and think time unknown (-1).",
]


PROCESSOR_RULES = {
    Processors.tasks: "the number of tasks",
    Processors.cpu: "ceil(summed CPU request x {cores} cores per machine)",
}


def google_jobs(lake: Lake, processors: Processors = Processors.tasks, cores_per_machine: int = 1) -> pl.DataFrame:
    """The Google lake's jobs as SWF fields (plus google_job_id), by the rules of GOOGLE_RULES."""
    if cores_per_machine < 1:
        raise LakehouseError(f"--cores-per-machine must be at least 1, got {cores_per_machine}")
    jobs = lake.query(named_query("export_google_swf"), [str(Processors(processors)), cores_per_machine])
    if jobs.is_empty():
        raise TooLittleDataError(
            f"no Google job with a SUBMIT event and tasks in {lake.root} (ingest job_events and task_events)"
        )
    return jobs


def export_google_swf(
    lake: Lake, path: Path, processors: Processors = Processors.tasks, cores_per_machine: int = 1
) -> int:
    """Write the Google lake's jobs as an SWF file; returns the jobs written."""
    jobs = google_jobs(lake, processors, cores_per_machine)
    machines = int(lake.query(named_query("google_machine_count"))["machines"][0])
    rule = PROCESSOR_RULES[Processors(processors)].format(cores=cores_per_machine)
    header = [
        "Version: 2.2",
        "Computer: Google cluster (clusterdata-2011-2)",
        f"UnixStartTime: {GOOGLE_TRACE_START}",
        "TimeZoneString: US/Eastern",
        f"MaxJobs: {jobs.height}",
        f"MaxRecords: {jobs.height}",
        *([f"MaxProcs: {machines * cores_per_machine}", f"MaxNodes: {machines}"] if machines else []),
        *(f"Note: {line.format(processors=rule)}" for line in GOOGLE_RULES),
    ]
    _write(path, _header(header) + _swf_body(jobs))
    return jobs.height


CLUSTER_RULES = [
    "converted by lakehouse export swf --trace {trace} from the common views cluster.jobs and cluster.tasks:",
    "one SWF job per job of the trace (of every cell, or of --cell) that has tasks and a submission or a start "
    "inside the trace, numbered 1.. in submit order;",
    "times in seconds from the trace's start; submit = the job's submission (Alibaba, which gives none: its "
    "first task's start); wait = its first start - submit; run time = its last task's end - its first start "
    "(-1: not ended inside the trace);",
    "processors (requested = allocated) = {processors}, a task of n instances counting n times;",
    "MaxProcs = the machines' largest CPU capacities in cores, summed ({cores_rule});",
    "user = rank of the user name (-1 where the trace gives none); status unknown (-1: cluster.jobs keeps no "
    "final state); requested time, memory, executable, queue, group, partition, preceding job and think "
    "time unknown (-1).",
]


@dataclass(frozen=True)
class ClusterJobs:
    """A cloud trace's jobs as SWF fields (CLUSTER_RULES), with its machines and their cores."""

    trace: str
    cell: str | None
    jobs: pl.DataFrame
    machines: int
    cores: int
    notes: list[str]


def cluster_jobs(
    lake: Lake,
    trace: str,
    cell: str | None = None,
    processors: Processors = Processors.tasks,
    cores_per_machine: int = 1,
) -> ClusterJobs:
    """A cloud trace's jobs (from cluster.*) as SWF fields, by CLUSTER_RULES."""
    offset, per_unit = cluster_units(trace, cores_per_machine)
    rule = PROCESSOR_RULES[Processors(processors)].format(cores=per_unit)
    jobs = lake.query(named_query("export_cluster_swf"), [trace, cell, str(Processors(processors)), per_unit, offset])
    if jobs.is_empty():
        where = f"cell {cell} of {trace}" if cell else trace
        raise TooLittleDataError(f"no job of {where} with tasks in {lake.root} (ingest {trace} first)")
    machines, cores = lake.query(named_query("cluster_machine_cores"), [trace, cell, per_unit]).row(0)
    machine_unit = CLOUD_TRACES[trace].cpu_unit == "machine"
    cores_rule = f"x {per_unit} per unit of the trace's CPU" if machine_unit else "the trace gives cores"
    notes = [line.format(trace=trace, processors=rule, cores_rule=cores_rule) for line in CLUSTER_RULES]
    return ClusterJobs(trace, cell, jobs, int(machines or 0), int(cores or 0), notes)


def cluster_units(trace: str, cores_per_machine: int) -> tuple[int, int]:
    """(seconds of the trace's clock before its start, cores per unit of its CPU), or a clear refusal."""
    if trace not in CLOUD_TRACES:
        raise LakehouseError(f"--trace {trace!r}: the cloud traces are {', '.join(CLOUD_TRACES)}")
    if cores_per_machine < 1:
        raise LakehouseError(f"--cores-per-machine must be at least 1, got {cores_per_machine}")
    declared = CLOUD_TRACES[trace]
    return declared.clock_offset, cores_per_machine if declared.cpu_unit == "machine" else 1


def cluster_swf(found: ClusterJobs, path: Path) -> int:
    """Write a cloud trace's jobs (`cluster_jobs`) as an SWF file; returns the jobs written."""
    header = [
        "Version: 2.2",
        f"Computer: {found.trace}" + (f", cell {found.cell}" if found.cell else ""),
        f"MaxJobs: {found.jobs.height}",
        f"MaxRecords: {found.jobs.height}",
        *([f"MaxProcs: {found.cores}", f"MaxNodes: {found.machines}"] if found.machines else []),
        *(f"Note: {line}" for line in found.notes),
    ]
    _write(path, _header(header) + _swf_body(found.jobs))
    return found.jobs.height


OPENDC_RULES = [
    "one OpenDC task per task of the trace (every cell, or --cell) that started and ended inside the trace, "
    "one per instance where a task has several (Alibaba's instance_num), with a CPU request; its id "
    "cell/job/task[/instance];",
    "submission_time: its start, in Unix milliseconds where the trace gives its clock's instant "
    "(cluster.traces.start_at), else in milliseconds of the trace's clock (Alibaba); duration: its run, in "
    "milliseconds;",
    "cpu_count: its CPU request in cores, rounded up; cpu_capacity: the request in MHz (cores x --mhz-per-core); "
    "mem_capacity: its memory request in MB (a whole machine's memory is --memory-mb-per-machine);",
    "fragments: each usage window of the task (Google's 5 minutes), clipped to its run, with the window's mean "
    "CPU in MHz; a task without usage windows (Alibaba measures instances, not tasks) is one fragment of its "
    "whole run at its request.",
]

#: OpenDC's workload files, as its documentation gives them (Input/Workload: tasks and fragments).
OPENDC_TASKS = pa.schema(
    [
        ("id", pa.string()),
        ("submission_time", pa.int64()),
        ("duration", pa.int64()),
        ("cpu_count", pa.int32()),
        ("cpu_capacity", pa.float64()),
        ("mem_capacity", pa.int64()),
    ]
)
OPENDC_FRAGMENTS = pa.schema(
    [("id", pa.string()), ("duration", pa.int64()), ("cpu_count", pa.int32()), ("cpu_usage", pa.float64())]
)


def export_opendc(
    lake: Lake,
    trace: str,
    folder: Path,
    cell: str | None = None,
    cores_per_machine: int = 1,
    mhz_per_core: float = 2500.0,
    memory_mb_per_machine: int = 65536,
) -> tuple[int, int]:
    """Write a cloud trace's tasks as OpenDC's workload (folder/tasks.parquet, folder/fragments.parquet),
    by OPENDC_RULES; returns (tasks, fragments)."""
    offset, per_unit = cluster_units(trace, cores_per_machine)
    if mhz_per_core <= 0 or memory_mb_per_machine <= 0:
        raise LakehouseError("--mhz-per-core and --memory-mb-per-machine must be more than 0")
    start = lake.query("SELECT epoch_ms(start_at) AS ms FROM cluster.traces WHERE trace = $1", [trace])["ms"]
    start_ms = int(start[0]) if len(start) and start[0] is not None else 0
    memory_mb = memory_mb_per_machine / CLOUD_TRACES[trace].memory_units_per_machine
    params: list[object] = [trace, cell, per_unit, mhz_per_core, memory_mb, offset, start_ms]
    fragments = f"({named_query('export_opendc')})"
    files = {  # each written by DuckDB as it reads: no row passes through Python
        "tasks": (
            f"SELECT DISTINCT ON (id) id, submission_time, task_duration AS duration, cpu_count, cpu_capacity, "
            f"mem_capacity FROM {fragments} ORDER BY id",
            OPENDC_TASKS,
        ),
        "fragments": (
            f"SELECT id, fragment_duration AS duration, cpu_count, cpu_usage FROM {fragments} "
            "ORDER BY id, fragment_start",
            OPENDC_FRAGMENTS,
        ),
    }
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, (query, schema) in files.items():
        path = folder / f"{name}.parquet"
        check_file(path)
        columns = ", ".join(f"{f.name}::{_DUCKDB_TYPES[f.type]} AS {f.name}" for f in schema)
        # The usage windows stream past their tasks (the query's joins hold the tasks, as written).
        with written_aside(path) as tmp, lake.joins_as_written():
            copy = f"COPY (SELECT {columns} FROM ({query})) TO {path_literal(tmp)} (FORMAT parquet)"
            written[name] = lake.copy(copy, params)
    if not written["tasks"]:
        for name in files:
            (folder / f"{name}.parquet").unlink()
        where = f"cell {cell} of {trace}" if cell else trace
        raise TooLittleDataError(f"no task of {where} started and ended inside the trace in {lake.root}")
    return written["tasks"], written["fragments"]


_DUCKDB_TYPES = {pa.string(): "VARCHAR", pa.int64(): "BIGINT", pa.int32(): "INTEGER", pa.float64(): "DOUBLE"}


class DelayProfileType(enum.StrEnum):
    """The name Batsim gives the profile of a job that holds its processors for a fixed time."""

    delay = "delay"  # Batsim up to version 4 (and pybatsim's workloads)
    DelayProfile = "DelayProfile"  # Batsim 5


def batsim_workload(
    lake: Lake,
    log: str,
    view: View = View.jobs_clean,
    where: str | None = None,
    profile_type: DelayProfileType = DelayProfileType.delay,
) -> dict[str, object]:
    """A log's jobs as a Batsim workload: `nb_res` the machine size the view was filtered with; each job
    its id (a string), submission time, processors (`res`), requested time (`walltime`: Batsim kills the
    job there, as the replay does) and a delay profile of its run time (one profile per distinct run
    time, named `delay-<seconds>`)."""
    name = resolve_log(lake, log)
    jobs = log_jobs(lake, name, view, where, columns=["job_id", "submit_time", "run_time", "req_time", "procs"])
    if jobs.is_empty():
        raise TooLittleDataError(f"no jobs of {name} in swf.{view}" + (f" where {where}" if where else ""))
    description = f"{name}, swf.{view}" + (f" where {where}" if where else "") + ", written by lakehouse"
    return _batsim(jobs, log_machine_size(lake, name, view), description, profile_type)


def cluster_batsim_workload(
    found: ClusterJobs, profile_type: DelayProfileType = DelayProfileType.delay
) -> dict[str, object]:
    """A cloud trace's jobs (`cluster_jobs`) as a Batsim workload: those that ended inside the trace (a
    delay profile needs a run time), without a walltime (the trace gives none); nb_res the machines'
    cores."""
    ended = found.jobs.filter(pl.col("run_time") >= 0).select(
        "job_id", "submit_time", "run_time", pl.lit(None).alias("req_time"), pl.col("req_procs").alias("procs")
    )
    if ended.is_empty():
        raise TooLittleDataError(f"no job of {found.trace} ended inside the trace: a Batsim job needs a run time")
    description = (
        found.trace
        + (f", cell {found.cell}" if found.cell else "")
        + ", written by lakehouse: "
        + " ".join(found.notes)
    )
    return _batsim(ended, found.cores, description, profile_type)


def _batsim(jobs: pl.DataFrame, nb_res: int, description: str, profile_type: DelayProfileType) -> dict[str, object]:
    """The workload of jobs (job_id, submit_time, run_time, req_time, procs): a walltime only where the
    requested time is known."""
    runs = sorted(set(jobs["run_time"].to_list()))
    return {
        "description": description,
        "nb_res": nb_res,
        "jobs": [
            {
                "id": str(job),
                "subtime": float(submit),
                "res": int(procs),
                **({"walltime": float(requested)} if requested is not None else {}),
                "profile": f"delay-{run}",
            }
            for job, submit, run, requested, procs in jobs.select(
                "job_id", "submit_time", "run_time", "req_time", "procs"
            ).iter_rows()
        ],  # fmt: skip
        "profiles": {f"delay-{run}": {"type": str(profile_type), "delay": float(run)} for run in runs},
    }


def export_batsim_workload(path: Path, workload: dict[str, object]) -> int:
    """Write a Batsim workload as JSON at `path` (checked writable first); the number of jobs."""
    import json

    check_file(path)
    with written_aside(path) as tmp:
        tmp.write_text(json.dumps(workload, indent=1))
    return len(workload["jobs"])  # type: ignore[arg-type]
