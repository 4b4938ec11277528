"""Ingest SWF job logs into a lake: one Parquet file per log, rejected lines to the quarantine.

The compiled tokenizer (`sim/src/swf.rs`) splits the decompressed bytes into the 18 SWF fields,
range-checks them and gives each rejected line its reason; Python parses the (short) header, sends a
repeated job id's later lines to the quarantine, and DuckDB's COPY writes zstd Parquet aside before
each output is renamed into place.  Several files are tokenized at once (the tokenizer releases the
GIL).
"""

from __future__ import annotations

import glob as globlib
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from lakehouse._native import parse_swf
from lakehouse.base.catalog import sql_literal
from lakehouse.base.datasets import DATASETS, PARQUET_OPTIONS
from lakehouse.base.errors import BrokenFileError, LakehouseError
from lakehouse.base.lake import Lake
from lakehouse.base.log_names import is_glob, logs_named
from lakehouse.base.machine import machine_size_problem
from lakehouse.base.swf_format import FIELDS, LOGS_SCHEMA, SCHEMA_VERSION
from lakehouse.base.writer import fingerprint
from lakehouse.ingest.input_files import gunzip_bounded, not_a_file
from lakehouse.ingest.pipeline import Outcome, Task, ingest_files
from lakehouse.ingest.status import Status
from lakehouse.ingest.swf_header import SwfHeader

DATASET = "swf"
SUFFIXES = (".swf.gz", ".swf")
_LOG_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")

# A file where fewer than this share of the data lines parse is not an SWF log: it is rejected whole
# rather than quarantined line by line.
MIN_GOOD_SHARE = 0.5


@dataclass
class FileResult:
    """What became of one SWF file (the pipeline's outcome, in the words of a log)."""

    source: str
    log: str
    status: Status
    job_lines: int = 0
    jobs: int = 0
    quarantined: int = 0
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0

    @classmethod
    def of(cls, task: Task, outcome: Outcome) -> FileResult:
        return cls(
            str(task.path),
            task.name,
            outcome.status,
            outcome.rows_in,
            outcome.rows_out,
            outcome.quarantined,
            outcome.warnings,
            outcome.error,
            outcome.seconds,
        )


def log_name_for(path: Path) -> str:
    """KTH-SP2-1996-2.1-cln.swf.gz -> KTH-SP2-1996-2.1-cln."""
    name = path.name
    for suffix in SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def check_log_name(name: str) -> str:
    if not _LOG_NAME.match(name):
        raise LakehouseError(f"log name {name!r}: use letters, digits and . _ + - (not starting with a symbol)")
    return name


def discover(paths: Iterable[str]) -> list[Path]:
    """Files, folders (searched recursively for *.swf and *.swf.gz) and glob patterns, in order."""
    found: list[Path] = []
    for raw in paths:
        if is_glob(raw) and not Path(raw).exists():  # (a file or folder named with brackets is itself)
            matches = [Path(p) for p in sorted(globlib.glob(raw, recursive=True))]
        else:
            matches = [Path(raw)]
        if not matches:
            raise LakehouseError(f"{raw}: no file matches")
        for path in matches:
            if path.is_dir():
                found.extend(sorted(p for p in path.rglob("*") if p.is_file() and p.name.lower().endswith(SUFFIXES)))
            elif path.exists():
                found.append(path)
            else:
                raise LakehouseError(f"{path}: no such file or folder")
    unique: dict[Path, None] = {}
    for path in found:
        unique.setdefault(path, None)
    return list(unique)


def _below_minus_one(columns: dict[str, np.ndarray]) -> list[str]:
    """A note per field holding values below -1, which the format does not allow (-1 is its only negative,
    "unknown"): kept as the log has them (the cleaned views drop what they must), but said, with the
    first line, so that nobody reads -5 as a value (Sandia-Ross has status -2 and -4)."""
    notes = []
    for spec in FIELDS:
        values = columns[spec.name]
        if (bad := np.flatnonzero(values < -1)).size:
            first = int(columns["line"][bad[0]])
            notes.append(
                f"{spec.name}: {bad.size} value(s) below -1, which SWF does not allow, kept as they are "
                f"(first on line {first})"
            )
    return notes


def decompress(path: Path, raw: bytes) -> bytes:
    """The bytes of a log, or a BrokenFileError saying what is wrong with the file."""
    data = gunzip_bounded(path, raw) if raw[:2] == b"\x1f\x8b" else raw
    if not data.strip():
        raise BrokenFileError(str(path), "empty file")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise BrokenFileError(str(path), f"binary file, not SWF text (NUL byte at offset {nul})")
    return data


@dataclass
class ParsedLog:
    """A log split into accepted jobs (Arrow, file order) and quarantined lines."""

    header: SwfHeader
    jobs: pa.Table  # JOBS_SCHEMA without the log column
    quarantine: pa.Table  # line, raw, reason
    job_lines: int
    unsorted_submits: int
    crlf_lines: int
    warnings: list[str]


def parse_log(path: Path, data: bytes) -> ParsedLog:
    """Tokenize (compiled, see sim/src/swf.rs), then check what needs the whole log: duplicates, order."""
    native = parse_swf(data)
    header = SwfHeader.parse([text for _, text in native.comments])
    job_lines = native.data_lines
    rejected = native.rejected
    good = job_lines - len(rejected)
    if job_lines and good < MIN_GOOD_SHARE * job_lines:
        first, _, reason = rejected[0]
        raise BrokenFileError(
            str(path),
            f"not an SWF log: only {good} of {job_lines} data lines are job lines (line {first}: {reason})",
        )
    ints = iter(native.ints)
    columns: dict[str, np.ndarray] = {"line": native.line}
    for spec in FIELDS:
        columns[spec.name] = native.avg_cpu_time if spec.fractional else next(ints)
    # A repeated job id keeps its first line; the later ones are quarantined, never dropped silently.
    job_id, line = columns["job_id"], columns["line"]
    order = np.argsort(job_id, kind="stable")
    repeated = np.zeros(len(job_id), dtype=bool)
    repeated[order[1:]] = job_id[order[1:]] == job_id[order[:-1]]
    quarantine = list(rejected)
    if repeated.any():
        first_line: dict[int, int] = {}
        for i in order:
            first_line.setdefault(int(job_id[i]), int(line[i]))
        raw_lines = data.split(b"\n")
        for i in np.flatnonzero(repeated):
            text = raw_lines[line[i] - 1].decode("utf-8", errors="replace").rstrip("\r")
            first = first_line[int(job_id[i])]
            quarantine.append((int(line[i]), text, f"duplicate job id {job_id[i]} (first on line {first})"))
        keep = ~repeated
        columns = {name: values[keep] for name, values in columns.items()}
    quarantine.sort()
    submit = columns["submit_time"]
    unsorted = int(np.count_nonzero(submit[1:] < submit[:-1]))
    warnings = header.out_of_range()
    if job_lines == 0:
        warnings.append("no job lines (header only)")
    if unsorted:
        warnings.append(f"submit time decreases at {unsorted} places (kept in file order)")
    if native.crlf_lines:
        warnings.append(f"{native.crlf_lines} lines end with CRLF (accepted)")
    if native.cr_lines:
        warnings.append(f"{native.cr_lines} lines end with a lone CR (read as line ends)")
    if native.bom:
        warnings.append("the file begins with a UTF-8 byte-order mark (skipped)")
    if quarantine:
        warnings.append(f"{len(quarantine)} lines quarantined")
    warnings += _below_minus_one(columns)
    return ParsedLog(
        header=header,
        jobs=pa.table(columns),
        quarantine=pa.table(
            {
                "line": pa.array([q[0] for q in quarantine], pa.int64()),
                "raw": pa.array([q[1] for q in quarantine], pa.string()),
                "reason": pa.array([q[2] for q in quarantine], pa.string()),
            }
        ),
        job_lines=job_lines,
        unsorted_submits=unsorted,
        crlf_lines=native.crlf_lines,
        warnings=warnings,
    )


def choose_machine_size(
    max_procs: int | None,
    max_nodes: int | None,
    default: int | None = None,
    override: int | None = None,
    kept: int | None = None,
) -> tuple[int | None, str | None]:
    """The machine size stored with a log, and a note for the user: a size given for this log
    (`LOG=N`, over its header, said so), else the size for logs without MaxProcs (`N`) when the header
    has none, else a size given at an earlier ingest (`kept`), else MaxProcs, else MaxNodes (a node is
    then one processor)."""
    if override is not None:
        if max_procs is not None and max_procs != override:
            note = f"machine size {override:,} as given for this log, over its header's MaxProcs {max_procs:,}"
            return override, note
        return override, None
    if default is not None and max_procs is None:
        return default, None
    if kept is not None:
        return kept, f"machine size {kept:,} as given at an earlier ingest (--machine-size LOG=N changes it)"
    if max_procs is not None:
        if default is not None and default != max_procs:
            return max_procs, (
                f"machine size {max_procs:,} from the header's MaxProcs: --machine-size N is for logs without "
                "one (LOG=N sets a log's size over its header)"
            )
        return max_procs, None
    if max_nodes is not None:
        return max_nodes, f"no MaxProcs in the header: machine size {max_nodes:,} taken from MaxNodes"
    return None, (
        "no MaxProcs or MaxNodes in the header: the log has no machine size "
        "(re-ingest with --machine-size N, or give --machine-size to simulate it)"
    )


def write_log(
    lake: Lake,
    parsed: ParsedLog,
    log: str,
    source: str,
    content_hash: str,
    machine_size: int | None,
    share: float = 1.0,
) -> list[tuple[Path, Path]]:
    """Write the three outputs of a log aside (`machine_size`: as `choose_machine_size` chose it);
    returns the renames (written, final) that commit them, in the order a reader needs
    (`lakehouse.ingest.pipeline` does them, then records the log).  `share`: of the lake's memory
    budget, for one of several workers (as a Google part's)."""
    root = lake.root
    jobs_final = DATASETS["swf_jobs"].file(root, log)
    logs_final = DATASETS["swf_logs"].file(root, log)
    quarantine_final = DATASETS["swf_quarantine"].file(root, log)
    tmp = {p: p.with_name(f".{p.name}.tmp") for p in (jobs_final, logs_final, quarantine_final)}
    columns = ", ".join(spec.name for spec in FIELDS)
    try:
        with lake.scratch("swf", share=share) as con:
            con.register("jobs", parsed.jobs)
            con.register("quarantine", parsed.quarantine)
            con.execute(
                f"COPY (SELECT {sql_literal(log)} AS log, line, {columns} FROM jobs) "
                f"TO {sql_literal(str(tmp[jobs_final]))} ({PARQUET_OPTIONS})"
            )
            con.execute(
                f"COPY (SELECT {sql_literal(log)} AS log, {sql_literal(source)} AS source, line, raw, reason "
                f"FROM quarantine) TO {sql_literal(str(tmp[quarantine_final]))} (FORMAT parquet)"
            )
        row = parsed.header.row()
        row.update(
            log=log,
            source=source,
            content_hash=content_hash,
            schema_version=SCHEMA_VERSION,
            job_lines=parsed.job_lines,
            jobs=parsed.jobs.num_rows,
            quarantined=parsed.quarantine.num_rows,
            unsorted_submits=parsed.unsorted_submits,
            crlf_lines=parsed.crlf_lines,
            machine_size=machine_size,
            ingested_at=datetime.now(UTC),
        )
        pq.write_table(pa.Table.from_pylist([row], schema=LOGS_SCHEMA), tmp[logs_final])
    except BaseException:
        for path in tmp.values():  # nothing half-written stays behind (a full disk, a Ctrl-C)
            path.unlink(missing_ok=True)
        raise
    # Jobs last: a reader that sees a log's jobs also sees its header and quarantine.
    return [(tmp[final], final) for final in (quarantine_final, logs_final, jobs_final)]


@dataclass(frozen=True)
class StoredSize:
    """A log's machine size as the lake holds it, and whether a user gave it (it differs from what its
    header says): a given size is kept when the log is ingested again."""

    size: int | None
    max_procs: int | None
    given: bool


class StoredLogs:
    """What the lake holds of each log (its header's row in swf_logs and its jobs): read from the log's
    files in a lake of the DuckDB catalog's format; from a DuckLake lake's table at once, on first use,
    for the whole ingest (a query per log took 0.13 s: a connection to the catalog each).  Used from the
    parsing threads: the table is read under a lock."""

    COLUMNS = ("machine_size", "max_procs", "max_nodes", "jobs")

    def __init__(self, lake: Lake):
        self.lake = lake
        self._table: dict[str, dict[str, Any]] | None = None
        self._lock = threading.Lock()

    def row(self, log: str) -> dict[str, Any] | None:
        if self.lake.ducklake is None:
            path = DATASETS["swf_logs"].file(self.lake.root, log)
            if not path.exists():
                return None
            return pq.read_table(path, columns=list(self.COLUMNS)).to_pylist()[0]
        with self._lock:
            if self._table is None:
                rows = self.lake.rows(f"SELECT log, {', '.join(self.COLUMNS)} FROM stored.swf_logs")
                self._table = {row[0]: dict(zip(self.COLUMNS, row[1:], strict=True)) for row in rows}
            return self._table.get(log)

    def machine_size(self, log: str) -> StoredSize | None:
        row = self.row(log)
        if row is None:
            return None
        from_header = row["max_procs"] if row["max_procs"] is not None else row["max_nodes"]
        given = row["machine_size"] is not None and row["machine_size"] != from_header
        return StoredSize(row["machine_size"], row["max_procs"], given)

    def jobs(self, log: str) -> int | None:
        """How many jobs of the log the lake holds, if it holds the log."""
        row = self.row(log)
        return None if row is None else int(row["jobs"])


class SwfSource:
    """How the pipeline reads SWF logs: each file is read once, its bytes hashed, then parsed.
    `machine_size`: for the logs whose header has no MaxProcs; `overrides`: per log, over its header."""

    def __init__(self, lake: Lake, machine_size: int | None, overrides: dict[str, int] | None = None, workers: int = 1):
        self.lake, self.machine_size, self.overrides = lake, machine_size, overrides or {}
        self.workers = workers  # each worker's DuckDB takes its share of the memory budget
        self.raw: dict[str, tuple[bytes, str]] = {}  # read, not yet parsed: the bytes and their hash
        self.stored = StoredLogs(lake)

    def fingerprint(self, task: Task) -> tuple[str, int]:
        if problem := not_a_file(task.path):  # a FIFO would block the read, /dev/zero never end it
            raise BrokenFileError(str(task.path), problem)
        raw = task.path.read_bytes()
        self.raw[task.name] = raw, fingerprint([raw])
        return self.raw[task.name][1], len(raw)

    def committed(self, task: Task) -> bool:
        """Whether the log is in the lake as this command would write it (then it is skipped)."""
        stored = self.stored.machine_size(task.name)
        wanted = self.overrides.get(task.name)
        if wanted is None and stored is not None and stored.max_procs is None:
            wanted = self.machine_size  # N applies to a log without MaxProcs
        same = (
            self.lake.committing.has_output("swf_jobs", task.name)
            and stored is not None
            and (wanted is None or wanted == stored.size)
        )
        if same:
            del self.raw[task.name]  # skipped: its bytes are not needed
        return same

    def process(self, task: Task) -> Outcome:
        """Parse and write one log (runs in a worker thread: the tokenizer, zlib and DuckDB release the GIL)."""
        raw, content_hash = self.raw.pop(task.name)
        parsed = parse_log(task.path, decompress(task.path, raw))
        header = parsed.header.row()
        stored = self.stored.machine_size(task.name)
        size, note = choose_machine_size(
            header["max_procs"],
            header["max_nodes"],
            default=self.machine_size,
            override=self.overrides.get(task.name),
            kept=stored.size if stored is not None and stored.given else None,
        )
        renames = write_log(self.lake, parsed, task.name, str(task.path), content_hash, size, share=1 / self.workers)
        return Outcome(
            rows_in=parsed.job_lines,
            rows_out=parsed.jobs.num_rows,
            quarantined=parsed.quarantine.num_rows,
            warnings=[*parsed.warnings, *([note] if note else [])],
            renames=renames,
        )

    def failed(self, task: Task, outcome: Outcome) -> None:
        self.raw.pop(task.name, None)
        previous = self.stored.jobs(task.name)
        if previous is not None:
            # A changed file that now fails does not take the log's earlier rows with it: say so.
            outcome.error = (
                f"{outcome.error} (the log's previous version, {previous:,} jobs, stays in the lake until the "
                "file ingests)"
            )


def ingest_swf(
    lake: Lake,
    paths: Iterable[str],
    name: str | None = None,
    machine_size: int | None = None,
    machine_sizes: Sequence[tuple[str, int]] = (),
    force: bool = False,
    on_file: Callable[[FileResult, int], None] | None = None,
    workers: int = 2,
) -> list[FileResult]:
    """Ingest SWF logs (files, folders or globs).  Broken files are reported, the rest go on.

    ``machine_size``: the processors of the logs whose header gives no MaxProcs; ``machine_sizes``:
    (LOG, N) pairs giving the logs LOG names N processors over their header (with a warning).  A size
    given once stays with the log when it is ingested again, until another is given.
    Unchanged logs (same content hash as recorded in the manifest) are skipped unless ``force``.
    ``on_file(result, size)`` is called after each file, for progress bars.
    """
    for size in [machine_size, *(size for _, size in machine_sizes)]:
        if size is not None and (problem := machine_size_problem(size)):
            raise LakehouseError(problem)
    files = discover(paths)
    if name is not None and len(files) != 1:
        raise LakehouseError(f"--name needs exactly one input file, got {len(files)}")
    names = [check_log_name(name) if name is not None else check_log_name(log_name_for(p)) for p in files]
    clashes = sorted({n for n in names if names.count(n) > 1})
    if clashes:
        raise LakehouseError(f"two input files would become the same log: {', '.join(clashes)}")
    tasks = [Task(DATASET, log, path) for path, log in zip(files, names, strict=True)]

    def done(task: Task, outcome: Outcome) -> None:
        if on_file is not None:
            on_file(FileResult.of(task, outcome), outcome.size)

    overrides: dict[str, int] = {}
    for pattern, size in machine_sizes:
        for log in logs_named(pattern, names):  # the batch's logs (lakehouse.base.log_names' rule)
            overrides[log] = size
    source = SwfSource(lake, machine_size, overrides, workers)
    outcomes = ingest_files(lake, tasks, source, force=force, workers=workers, on_done=done)
    return [FileResult.of(task, outcome) for task, outcome in outcomes]


def results_frame(results: list[FileResult]) -> pl.DataFrame:
    """One row per file: what `lakehouse ingest swf` prints (an unchanged file was not read: its counts
    are unknown here, not 0, and its note says where they are)."""

    def read(r: FileResult, value: int) -> int | None:
        return None if r.status is Status.unchanged else value

    return pl.DataFrame(
        {
            "log": [r.log for r in results],
            "status": [str(r.status) for r in results],
            "job_lines": [read(r, r.job_lines) for r in results],
            "jobs": [read(r, r.jobs) for r in results],
            "quarantined": [read(r, r.quarantined) for r in results],
            "note": [
                "already in the lake, not read again (`lakehouse logs` counts its jobs)"
                if r.status is Status.unchanged
                else r.error or "; ".join(r.warnings)
                for r in results
            ],
        },
        schema={
            "log": pl.String,
            "status": pl.String,
            "job_lines": pl.Int64,
            "jobs": pl.Int64,
            "quarantined": pl.Int64,
            "note": pl.String,
        },
    )
