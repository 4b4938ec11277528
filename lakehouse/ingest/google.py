"""Ingest the Google cluster trace (clusterdata-2011-2): headerless gzipped CSV parts -> Parquet.

A trace folder holds one folder per table (`job_events/part-00000-of-00500.csv.gz`, ...).  Each part
becomes one Parquet file typed by the official schema: a clean part is parsed by Arrow, any other by
DuckDB, which sets rejected lines aside (wrong column count, a value that does not parse) with their
line numbers.  Parts are independent, run one more at a time than there are cores, and are skipped
when unchanged (content hash in the manifest), so an interrupted ingest resumes and a fixed part is the
only one read again.
"""

from __future__ import annotations

import functools
import mmap
import os
import re
import threading
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from isal import igzip, isal_zlib
from pyarrow import csv as pa_csv

from lakehouse.base.catalog import named_query, path_literal, sql_literal
from lakehouse.base.datasets import DATASETS, PARQUET_OPTIONS, ingest_outputs
from lakehouse.base.errors import BrokenFileError, LakehouseError
from lakehouse.base.google_format import QUARANTINE_SCHEMA, TIME_COLUMN, arrow_schema, tables
from lakehouse.base.lake import Lake, count
from lakehouse.base.writer import fingerprint
from lakehouse.ingest.input_files import not_a_file
from lakehouse.ingest.pipeline import Outcome, Task, ingest_files
from lakehouse.ingest.status import Status

PART_NAME = re.compile(r"^part-(\d{5})-of-(\d{5})\.csv\.gz$")
HASH_CHUNK = 1 << 22
PARQUET_ROW_GROUP = 122_880  # DuckDB's own: its scans parallelise by row group


@dataclass
class PartResult:
    """What became of one file of a Google trace (a 2011 part, a 2019 shard): the pipeline's outcome,
    in the words of a trace."""

    table: str
    part: str
    source: str
    status: Status
    rows: int = 0
    quarantined: int = 0
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @classmethod
    def of(cls, task: Task, outcome: Outcome, prefix: str = "google.") -> PartResult:
        """`prefix`: the datasets' schema, taken off to name the table."""
        table = task.dataset.removeprefix(prefix)
        return cls(
            table,
            task.name,
            str(task.path),
            outcome.status,
            outcome.rows_out,
            outcome.quarantined,
            outcome.error,
            outcome.warnings,
            outcome.seconds,
        )


@dataclass(frozen=True)
class TracePart:
    table: str
    path: Path

    @property
    def part(self) -> str:
        return self.path.name.removesuffix(".csv.gz")


def discover_trace(root: Path) -> tuple[list[TracePart], list[Task], list[str]]:
    """The parts under a trace folder, the entries that cannot be ingested (as tasks with their
    problem), and warnings (gaps)."""
    if not root.is_dir():
        raise LakehouseError(f"{root}: not a folder (expected a trace folder with job_events/, task_usage/, ...)")
    parts: list[TracePart] = []
    problems: list[Task] = []
    warnings: list[str] = []
    known = tables()
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        if folder.name not in known:
            why = f"{folder}: unknown table folder (the trace has {', '.join(known)})"
            problems.append(Task(f"google.{folder.name}", "", folder, problem=why))
            continue
        numbers, totals = [], set()
        for path in sorted(folder.iterdir()):
            match = PART_NAME.match(path.name)
            if not match:
                why = f"{path}: not a part of the trace (expected part-NNNNN-of-MMMMM.csv.gz)"
                problems.append(Task(f"google.{folder.name}", path.name, path, problem=why))
                continue
            unusable = not_a_file(path)
            if unusable:
                problems.append(Task(f"google.{folder.name}", path.name, path, problem=f"{path}: {unusable}"))
                continue
            parts.append(TracePart(folder.name, path))
            numbers.append(int(match.group(1)))
            totals.add(int(match.group(2)))
        if len(totals) > 1:
            warnings.append(f"{folder.name}: parts disagree on the part count ({sorted(totals)})")
        elif totals:
            missing = sorted(set(range(totals.pop())) - set(numbers))
            if missing:
                warnings.append(f"{folder.name}: {len(missing)} part(s) missing, {_ranges(missing)}")
    if not parts and not problems:
        raise LakehouseError(f"{root}: no trace tables found (expected folders such as job_events/)")
    return parts, problems, warnings


def _ranges(numbers: list[int]) -> str:
    spans, start = [], numbers[0]
    for previous, current in zip(numbers, [*numbers[1:], -1], strict=True):
        if current != previous + 1:  # -1 closes the last span
            spans.append(f"{start:05d}" if start == previous else f"{start:05d}-{previous:05d}")
            start = current
    return ", ".join(spans[:5]) + (" ..." if len(spans) > 5 else "")


def file_hash(path: Path) -> str:
    with path.open("rb") as stream:
        return fingerprint(iter(lambda: stream.read(HASH_CHUNK), b""))


def decompress(path: Path, into: mmap.mmap | None = None) -> tuple[int, int | None]:
    """Decompress a gzip part, checking the whole stream (CRC and length) on the way; returns the text's
    size and its lines.  With `into`, the text is written there while it fits (size <= len(into)) and its
    lines are left to the caller (None: counting them costs a twentieth of the part's time, and the Arrow
    path does without); a longer text, or no `into`, has its lines counted.

    Why: DuckDB reads a truncated gzip file without complaint and silently returns fewer rows, so every
    part is decompressed here, with ISA-L (twice as fast as zlib; it releases the GIL, so this runs
    beside the other worker).
    """
    lines, last, size = 0, b"\n", 0
    keep = into  # the buffer while the text still fits in it
    decompressor, in_member = isal_zlib.decompressobj(wbits=31), False
    with path.open("rb") as stream:
        magic = stream.read(2)
    if magic and magic != b"\x1f\x8b":
        raise BrokenFileError(str(path), "not a gzip file, though its name ends in .gz")
    try:
        with path.open("rb") as stream:
            while chunk := stream.read(HASH_CHUNK):
                while chunk:
                    in_member = True
                    data = decompressor.decompress(chunk)
                    if keep is not None and size + len(data) <= len(keep):
                        keep[size : size + len(data)] = data  # same length: a copy in place
                    else:
                        if keep is not None:  # too long to keep: count what was kept, then go on counting
                            lines, keep = _newlines(keep, size), None
                        lines += data.count(b"\n")
                    last = data[-1:] or last
                    size += len(data)
                    chunk = b""
                    if decompressor.eof:  # a gzip file may hold several members
                        chunk = decompressor.unused_data
                        decompressor, in_member = isal_zlib.decompressobj(wbits=31), False
    except isal_zlib.error as exc:  # type: ignore[misc]  # isal's stub types `error` as a value
        raise BrokenFileError(str(path), f"corrupt gzip stream ({exc})") from None
    if in_member:
        raise BrokenFileError(str(path), "truncated gzip stream (the file ends inside compressed data)")
    if keep is not None:
        return size, None
    return size, lines + (last != b"\n")


#: The longest line a part may hold.  The trace's lines are under 300 bytes; DuckDB's reader, given a
#: line of 300,000 fields, rejects it field by field (one reject per field, each with the line: minutes
#: and gigabytes), and one of 50 MB it reports as a line count that does not add up.  A part with a
#: longer line fails alone, naming the line, before DuckDB reads it.
MAX_LINE_BYTES = 64 << 10


def _chunks_of(text: mmap.mmap, size: int) -> Iterator[memoryview]:
    view = memoryview(text)
    for start in range(0, size, HASH_CHUNK):
        yield view[start : min(start + HASH_CHUNK, size)]


def _stream(path: Path) -> Iterator[bytes]:
    """A part's text in chunks, decompressed again (a part too large to keep in memory)."""
    with igzip.open(path, "rb") as stream:
        yield from iter(lambda: stream.read(HASH_CHUNK), b"")


def _refuse_long_lines(part: TracePart, chunks: Iterable[bytes | memoryview]) -> int:
    """Fail the part (one line: the first line longer than MAX_LINE_BYTES, and its length) if it has one;
    else its lines (the last one counted without its newline too), found on the same pass."""
    line, start, offset = 1, 0, 0  # the line being read, where it starts, where the chunk starts
    for data in chunks:
        ends = np.flatnonzero(np.frombuffer(data, np.uint8) == ord("\n")) + offset
        if ends.size:
            lengths = ends - np.concatenate(([start], ends[:-1] + 1))
            if (over := np.flatnonzero(lengths > MAX_LINE_BYTES)).size:
                _too_long(part, line + int(over[0]), int(lengths[over[0]]))
            line, start = line + ends.size, int(ends[-1]) + 1
        offset += len(data)
        if offset - start > MAX_LINE_BYTES:  # (a line that has not ended yet, already too long)
            _too_long(part, line, offset - start, more=True)
    return line - 1 + (offset > start)


def _too_long(part: TracePart, line: int, length: int, more: bool = False) -> NoReturn:
    raise BrokenFileError(
        str(part.path),
        f"line {line:,} is {'over ' * more}{length:,} bytes long, more than any line of the trace can be "
        f"({MAX_LINE_BYTES:,}): the part is not ingested",
    )


def _newlines(text: mmap.mmap, size: int) -> int:
    """The newlines among the first `size` bytes of a kept text (numpy: mmap has no count)."""
    return int(np.count_nonzero(np.frombuffer(text, np.uint8, size) == ord("\n")))


# Parts up to this size (uncompressed) are parsed by Arrow in memory; larger ones stream through DuckDB.
# A real task_usage part is about 450 MB: its text and its table take ~1 GB, three workers ~3 GB.
IN_MEMORY_PART = 512 << 20
_worker = threading.local()


def _text_buffer() -> mmap.mmap:
    """This worker's buffer for a part's text, kept from part to part: a fresh one per part is fresh
    memory from the kernel each time, whose page faults measured a tenth of the part's time.  (An
    anonymous mapping: its pages cost nothing until written; it is never resized, so Arrow may read it
    in place.)"""
    if not hasattr(_worker, "text"):
        _worker.text = mmap.mmap(-1, IN_MEMORY_PART)
    return _worker.text


def write_part(
    lake: Lake, part: TracePart, fast: bool = True, share: float = 1.0, parse_threads: bool = False
) -> Outcome:
    """Read one part, write its rows and its rejected lines aside; the outcome lists the renames that
    commit them (`commit_outputs`, done by the pipeline before it records the part).

    The fast path parses the part with Arrow, strictly, and writes it with pyarrow; any line it does not
    take as is (wrong column count, a value that does not parse, blank lines) sends the whole part
    to DuckDB's reader instead, which quarantines the bad lines with their reasons.  Measured on
    generated task_usage parts (`make bench`): about 1.5x the throughput of DuckDB's own COPY; Parquet
    about the size of its zstd output on the real trace (`dictionary_columns`).
    `share`: the part of the lake's memory budget DuckDB's path may take (one of several workers);
    `parse_threads`: parse the CSV on Arrow's threads (a part that has the machine to itself).
    """
    text = _text_buffer() if fast else None
    size, lines = decompress(part.path, text)
    out = DATASETS[f"google_{part.table}"].file(lake.root, part.part)
    (_, rows_stem), (_, quarantine_stem) = ingest_outputs(f"google.{part.table}", part.part)
    quarantine = DATASETS["google_quarantine"].file(lake.root, quarantine_stem)
    tmp_out, tmp_quarantine = out.with_name(f".{out.name}.tmp"), quarantine.with_name(f".{quarantine.name}.tmp")
    try:
        table = _parse_strictly(pa.py_buffer(text)[:size], part, parse_threads) if lines is None and size else None
        if table is not None:
            rows, quarantined, backwards = _write_arrow(table, tmp_out, tmp_quarantine, part)
        else:
            del table
            if lines is None:  # the text was kept in `text`
                assert text is not None
                lines = _refuse_long_lines(part, _chunks_of(text, size))  # (one pass: the lines and their lengths)
            else:
                _refuse_long_lines(part, _stream(part.path))
            with lake.scratch("google", share, threads=1) as con:
                rows, quarantined, backwards = _write_duckdb(con, part, lines, tmp_out, tmp_quarantine)
    except BaseException:
        tmp_out.unlink(missing_ok=True)
        tmp_quarantine.unlink(missing_ok=True)
        raise
    result = Outcome(
        rows_in=rows + quarantined,
        rows_out=rows,
        quarantined=quarantined,
        renames=[(tmp_quarantine, quarantine), (tmp_out, out)],
    )
    if backwards:
        time_column = TIME_COLUMN[part.table]
        result.warnings.append(f"{backwards} row(s) earlier than the row before ({time_column} out of order)")
    return result


@functools.cache
def _table_pool() -> pa.MemoryPool:
    """Where the parsed tables live: jemalloc, told to keep freed memory for 10 s (a part takes ~3 s).
    Arrow's default (mimalloc) returns a part's memory to the kernel at once and faults in fresh zeroed
    huge pages for the next part: 12 % of the ingest's CPU spent in the kernel (perf); with this pool the
    ingest's system time halved."""
    try:
        pool = pa.jemalloc_memory_pool()
    except NotImplementedError:  # a pyarrow built without jemalloc
        return pa.default_memory_pool()
    pa.jemalloc_set_decay_ms(10_000)
    return pool


def _parse_strictly(text: pa.Buffer, part: TracePart, threads: bool = False) -> pa.Table | None:
    """The part as an Arrow table typed by the schema, or None if any line is not clean.  A blank line
    reads as a row of NULLs (ignore_empty_lines=False), and any NULL in the first column (a time, never
    empty in the trace) sends the part to DuckDB's path, which counts its lines against its rows."""
    schema = arrow_schema(part.table)
    try:
        table = pa_csv.read_csv(
            pa.BufferReader(text),
            # One thread per part while the other workers keep the other cores busy (measured faster than
            # Arrow's threads then); the parts at the end of an ingest, alone, take all of them.
            read_options=pa_csv.ReadOptions(column_names=schema.names[:-1], use_threads=threads),
            memory_pool=_table_pool(),
            # The trace never quotes (its strings are base64 hashes): a quote is data, so a quoted newline
            # splits its line in two, each rejected for its column count, as DuckDB's path does.
            parse_options=pa_csv.ParseOptions(delimiter=",", quote_char=False, ignore_empty_lines=False),
            # As DuckDB reads them: an empty field is NULL.
            convert_options=pa_csv.ConvertOptions(
                column_types={f.name: f.type for f in schema if f.name != "part"},
                null_values=[""],
                strings_can_be_null=True,
            ),
        )
    except pa.ArrowInvalid:
        return None
    if table.column(0).null_count:
        return None
    return table.append_column("part", pa.repeat(pa.scalar(part.part, pa.string()), table.num_rows))


def dictionary_columns(table: pa.Table) -> list[str]:
    """Every column but the times gets a dictionary: identifiers (ids, indexes, hashes, codes) have few
    distinct values, and so have the measurements, which the trace prints to four significant digits.
    Measured on the real sample's parts, this writes about DuckDB's own zstd output (0.96-1.10x; byte-
    stream-split floats, tried before, wrote 1.3-2.1x).  The times are nearly all distinct."""
    return [name for name in table.column_names if not name.endswith("time")]


def _write_arrow(table: pa.Table, tmp_out: Path, tmp_quarantine: Path, part: TracePart) -> tuple[int, int, int]:
    pq.write_table(
        table,
        tmp_out,
        compression="zstd",
        row_group_size=PARQUET_ROW_GROUP,
        use_dictionary=dictionary_columns(table),
    )
    pq.write_table(QUARANTINE_SCHEMA.empty_table(), tmp_quarantine)
    times = table.column(TIME_COLUMN[part.table]).to_numpy(zero_copy_only=False)
    backwards = int(np.count_nonzero(times[1:] < times[:-1]))  # NaN (a NULL time) compares false, as in SQL
    return table.num_rows, 0, backwards


def _write_duckdb(
    con: duckdb.DuckDBPyConnection, part: TracePart, lines: int, tmp_out: Path, tmp_quarantine: Path
) -> tuple[int, int, int]:
    """DuckDB's path of `write_part`."""
    columns = tables()[part.table]
    spec = "{" + ", ".join(f"{sql_literal(c.name)}: {sql_literal(c.duckdb_type)}" for c in columns) + "}"
    try:
        con.execute(
            f"COPY (SELECT *, {sql_literal(part.part)} AS part FROM read_csv({path_literal(part.path)}, "
            f"columns = {spec}, header = false, delim = ',', quote = '', escape = '', "
            f"auto_detect = false, compression = 'gzip', store_rejects = true, "
            f"rejects_scan = 'scan', rejects_table = 'rejects')) "
            f"TO {sql_literal(str(tmp_out))} ({PARQUET_OPTIONS})"
        )
    except duckdb.Error as exc:
        raise BrokenFileError(str(part.path), _first_line(exc)) from None
    empty_lines = _drop_empty_records(con, part, tmp_out, [c.name for c in columns])
    rows = count(con, f"SELECT count(*) FROM read_parquet({sql_literal(str(tmp_out))})")
    # DuckDB reports one reject per problem (a short line: one per missing column): one row per line.
    con.execute(
        f"COPY (SELECT {sql_literal(part.table)} AS table_name, {sql_literal(part.part)} AS part, "
        f"{sql_literal(str(part.path))} AS source, line, raw, reason FROM ("
        "SELECT line::BIGINT AS line, any_value(csv_line) AS raw, "
        "string_agg(DISTINCT error_message, '; ') AS reason FROM rejects GROUP BY line "
        f"UNION ALL SELECT line, raw, {sql_literal(EMPTY_RECORD)} FROM empty_lines) ORDER BY line) "
        f"TO {sql_literal(str(tmp_quarantine))} (FORMAT parquet)"
    )
    quarantined = count(con, "SELECT count(DISTINCT line) FROM rejects") + empty_lines.num_rows
    if rows + quarantined == 0:
        raise BrokenFileError(str(part.path), "empty part (no lines)")
    if rows + quarantined != lines:
        raise BrokenFileError(
            str(part.path), f"{lines} lines but {rows} rows and {quarantined} rejected lines (blank lines?)"
        )
    time_column = TIME_COLUMN[part.table]
    backwards = count(
        con,
        f"SELECT count(*) FROM (SELECT {time_column} < lag({time_column}) OVER () AS back "
        f"FROM read_parquet({sql_literal(str(tmp_out))})) WHERE back",
    )
    return rows, quarantined, backwards


EMPTY_RECORD = "an empty record: every field is empty (only commas)"


def _drop_empty_records(con: duckdb.DuckDBPyConnection, part: TracePart, written: Path, names: list[str]) -> pa.Table:
    """Take the rows whose every field is empty (lines of only commas, which read as a row of NULLs)
    out of the written part; returns their lines (line, raw), registered as `empty_lines`."""
    every_null = " AND ".join(f'"{name}" IS NULL' for name in names)
    source = f"read_parquet({sql_literal(str(written))})"
    found = count(con, f"SELECT count(*) FROM {source} WHERE {every_null}")
    lines: list[int] = []
    raws: list[str] = []
    if found:
        kept = written.with_name(f"{written.name}.kept")
        con.execute(f"COPY (SELECT * FROM {source} WHERE NOT ({every_null})) TO {sql_literal(str(kept))} "
                    f"({PARQUET_OPTIONS})")  # fmt: skip
        os.replace(kept, written)
        # Rare (only parts already on this slow path, with such lines): find their line numbers.
        commas = b"," * (len(names) - 1)
        with igzip.open(part.path, "rb") as text:
            for number, line in enumerate(text, 1):
                if line.rstrip(b"\r\n") == commas:
                    lines.append(number)
                    raws.append(line.rstrip(b"\r\n").decode())
    empty = pa.table({"line": pa.array(lines, pa.int64()), "raw": pa.array(raws, pa.string())})
    con.register("empty_lines", empty)
    return empty


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0]


class TraceSource:
    """How the pipeline reads Google trace parts: hashed while streamed, parsed from a fresh read."""

    def __init__(self, lake: Lake, workers: int = 1):
        self.lake = lake
        self.workers = workers
        self._busy = 0  # parts being processed now
        self._busy_lock = threading.Lock()
        # Each part's content, by table: committed ones from the manifest, then those of this ingest.
        self.seen: dict[tuple[str, str], str] = {}
        if lake.exists():
            for dataset, name, content_hash, status, _ in lake.query(named_query("manifest_hashes")).iter_rows():
                if dataset.startswith("google.") and status == Status.ok:
                    self.seen[(dataset, content_hash)] = name

    def fingerprint(self, task: Task) -> tuple[str, int]:
        content_hash = file_hash(task.path)
        first = self.seen.setdefault((task.dataset, content_hash), task.name)
        if first != task.name:
            raise BrokenFileError(
                str(task.path),
                f"the same content as part {first} of {task.dataset.removeprefix('google.')} "
                "(a copy under another name): not ingested twice",
            )
        return content_hash, task.path.stat().st_size

    def committed(self, task: Task) -> bool:
        return self.lake.committing.has_output(task.dataset.replace(".", "_"), task.name)

    def process(self, task: Task) -> Outcome:
        part = TracePart(task.dataset.removeprefix("google."), task.path)
        with self._busy_lock:
            self._busy += 1
            alone = self._busy < (os.cpu_count() or 1)  # fewer parts than cores at work: the ingest's end
        try:
            return write_part(self.lake, part, share=1 / self.workers, parse_threads=alone)
        finally:
            with self._busy_lock:
                self._busy -= 1

    def failed(self, task: Task, outcome: Outcome) -> None:
        pass


def ingest_google(
    lake: Lake,
    root: Path,
    force: bool = False,
    on_part: Callable[[PartResult, int], None] | None = None,
    workers: int | None = None,
    only: Collection[Path] | None = None,
) -> tuple[list[PartResult], list[str]]:
    """Ingest a trace folder; returns one result per part (and per unusable entry) and warnings.

    `only`: ingest just these parts (the nightly run's new and changed ones, found without hashing the
    rest again); the folder's unusable entries are then left to the caller.

    Parts are read by `workers` threads, by default one more than the cores: each part's work has
    single-threaded stretches (reading, the GIL between library calls) another part can fill
    (measured 5-8 % faster than one per core on two cores).  A part that starts while fewer parts than
    cores are at work (the end of an ingest) is parsed on all of them."""
    workers = workers or (os.cpu_count() or 1) + 1
    parts, problems, warnings = discover_trace(root)
    tasks = [*problems, *(Task(f"google.{part.table}", part.part, part.path) for part in parts)]
    if only is not None:
        wanted = {Path(p).absolute() for p in only}
        tasks = [t for t in tasks if t.problem is None and t.path.absolute() in wanted]

    def done(task: Task, outcome: Outcome) -> None:
        if on_part is not None:
            on_part(PartResult.of(task, outcome), outcome.size)

    outcomes = ingest_files(lake, tasks, TraceSource(lake, workers), force=force, workers=workers, on_done=done)
    return [PartResult.of(task, outcome) for task, outcome in outcomes], warnings


def results_frame(results: list[PartResult]) -> pl.DataFrame:
    """One row per file of an ingest: table, part, status, rows, quarantined."""
    return pl.DataFrame(
        {
            "table": [r.table for r in results],
            "part": [r.part for r in results],
            "status": [str(r.status) for r in results],
            "rows": [r.rows for r in results],
            "quarantined": [r.quarantined for r in results],
        },
        schema={"table": pl.String, "part": pl.String, "status": pl.String, "rows": pl.Int64, "quarantined": pl.Int64},
    )


def tables_frame(results: list[PartResult]) -> pl.DataFrame:
    """One row per table (parts ok, unchanged and failed; rows and quarantined lines): what `lakehouse
    ingest google` prints."""
    return outcome_counts(results_frame(results), ["table"], "parts")


def outcome_counts(files: pl.DataFrame, keys: list[str], unit: str) -> pl.DataFrame:
    """Per group of `keys`, the files of an ingest (one row each: status, rows, quarantined) counted: how
    many (`unit`), ok, unchanged and failed, and their rows and quarantined rows."""
    return files.group_by(*keys, maintain_order=True).agg(
        pl.len().alias(unit),
        ok=(pl.col("status") == Status.ok).sum(),
        unchanged=(pl.col("status") == Status.unchanged).sum(),
        failed=(pl.col("status") == Status.failed).sum(),
        rows=pl.col("rows").sum(),
        quarantined=pl.col("quarantined").sum(),
    )
