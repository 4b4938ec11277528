"""What is in the inbox, and what of it is new since the lake last saw it.

An inbox holds SWF logs (``*.swf``, ``*.swf.gz``, at any depth), Google trace folders (a folder with
table folders such as ``job_events/`` or ``task_usage/``) and folders of a cell of Google's 2019 trace
(``cell_a/`` or ``clusterdata_2019_a/``, holding its shards).  Every file is compared with the manifest:
*new* (the lake has no output of that name), *changed* (it has one made from other bytes), *unchanged*,
or *unreadable*.  Hashing a whole Google trace every night would take hours, so a file whose path,
size and modification time equal what an earlier nightly run recorded (meta.nightly_files) takes the
hash recorded then; any difference in size or time means it is hashed again (`verify` hashes all).
"""

from __future__ import annotations

import enum
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl

from lakehouse.base import google2019_format, google_format
from lakehouse.base.catalog import named_query
from lakehouse.base.errors import LakehouseError
from lakehouse.base.lake import Lake
from lakehouse.ingest.google import PART_NAME, file_hash
from lakehouse.ingest.google2019 import CELL_FOLDER, SHARD_NAME
from lakehouse.ingest.input_files import not_a_file
from lakehouse.ingest.swf import DATASET as SWF_DATASET
from lakehouse.ingest.swf import SUFFIXES, check_log_name, log_name_for


class Kind(enum.StrEnum):
    swf = "swf"
    google = "google"
    google2019 = "google2019"


class State(enum.StrEnum):
    new = "new"
    changed = "changed"
    unchanged = "unchanged"
    unreadable = "unreadable"


@dataclass(frozen=True)
class InboxFile:
    """One input file of the inbox and how it compares with the lake."""

    kind: Kind
    dataset: str  # the manifest's dataset: 'swf', 'google.task_usage', ...
    name: str  # the output's name: the log, the part
    path: Path
    trace: Path | None  # the trace folder of a Google part
    size: int
    mtime_ns: int
    content_hash: str | None
    state: State
    problem: str | None = None

    @property
    def label(self) -> str:
        return self.name if self.kind is Kind.swf else f"{self.dataset.split('.', 1)[1]}/{self.name}"


@dataclass(frozen=True)
class Inbox:
    files: list[InboxFile]
    ignored: list[Path]  # neither an SWF log nor part of a trace folder

    def arrived(self) -> list[InboxFile]:
        """New and changed files (unreadable ones are reported apart)."""
        return [f for f in self.files if f.state in (State.new, State.changed)]

    def by_state(self, state: State) -> list[InboxFile]:
        return [f for f in self.files if f.state is state]

    def traces(self) -> list[Path]:
        return sorted({f.trace for f in self.arrived() if f.trace is not None})


def _is_trace(folder: Path) -> bool:
    tables = set(google_format.tables())
    try:
        return any(child.is_dir() and child.name in tables for child in folder.iterdir())
    except OSError:
        return False


def _walk(inbox: Path) -> tuple[list[tuple[Kind, Path, Path | None]], list[Path]]:
    """(kind, file, trace folder) of every input, and the files that are neither; sorted."""
    found: list[tuple[Kind, Path, Path | None]] = []
    ignored: list[Path] = []
    for folder, subfolders, names in os.walk(inbox, followlinks=False):
        here = Path(folder)
        if CELL_FOLDER.match(here.name):  # a cell of the 2019 trace: its shards, nothing below
            for name in sorted(names):
                path, shard = here / name, SHARD_NAME.match(name)
                if shard is not None and shard.group("table") in google2019_format.TABLES:
                    found.append((Kind.google2019, path, here))
                elif not name.startswith("."):
                    ignored.append(path)
            subfolders[:] = []
            continue
        if _is_trace(here):
            tables = set(google_format.tables())
            for table in sorted(subfolders):
                if table not in tables:
                    continue
                for part in sorted((here / table).iterdir()):
                    if PART_NAME.match(part.name) and part.is_file():
                        found.append((Kind.google, part, here))
                    else:
                        ignored.append(part)
            subfolders[:] = [s for s in subfolders if s not in tables]
            continue
        subfolders.sort()
        for name in sorted(names):
            path = here / name
            if name.lower().endswith(SUFFIXES):
                found.append((Kind.swf, path, None))
            elif not name.startswith("."):
                ignored.append(path)
    return found, ignored


def scan(lake: Lake, inbox: Path, verify: bool = False) -> Inbox:
    """Every input under `inbox` with its state against the lake's manifest."""
    entries, ignored = _walk(inbox)
    manifest, seen = _known(lake)
    clashes = _clashes(entries)
    twins = _twins(entries)
    files = []
    for kind, path, trace in entries:
        if kind is Kind.swf:
            dataset, name = SWF_DATASET, log_name_for(path)
            # A file that cannot become a log of its own fails alone (and is counted); the rest go on.
            if problem := _log_name_problem(name) or clashes.get(name) or _not_a_log_file(path):
                files.append(InboxFile(kind, dataset, name, path, trace, 0, 0, None, State.unreadable, problem))
                continue
        elif kind is Kind.google2019:
            shard = SHARD_NAME.match(path.name)
            assert shard is not None and trace is not None  # (found so by _walk)
            cell = CELL_FOLDER.match(trace.name).group("cell")  # type: ignore[union-attr]
            dataset, name = f"google2019.{shard.group('table')}", f"{cell}.{shard.group('number')}"
            if problem := twins.get((dataset, name), {}).get(path):
                files.append(InboxFile(kind, dataset, name, path, trace, 0, 0, None, State.unreadable, problem))
                continue
        else:
            dataset, name = f"google.{path.parent.name}", path.name.removesuffix(".csv.gz")
        try:
            stat = path.stat()
            cached = seen.get(str(path.absolute()))
            quick = not verify and cached is not None and cached[:2] == (stat.st_size, stat.st_mtime_ns)
            content_hash = cached[2] if quick and cached else file_hash(path)
        except OSError as exc:
            problem = f"{path}: {exc.strerror or exc}"
            files.append(InboxFile(kind, dataset, name, path, trace, 0, 0, None, State.unreadable, problem))
            continue
        previous = manifest.get((dataset, name))
        if previous is None:
            state = State.new
        elif previous[:2] == (content_hash, "ok"):
            state = State.unchanged
        elif problem := _other_source(kind, path, name, previous[2]):
            files.append(InboxFile(kind, dataset, name, path, trace, 0, 0, None, State.unreadable, problem))
            continue
        else:
            state = State.changed
        files.append(InboxFile(kind, dataset, name, path, trace, stat.st_size, stat.st_mtime_ns, content_hash, state))
    return Inbox(files, ignored)


def _not_a_log_file(path: Path) -> str | None:
    """A FIFO or a device named *.swf would block (or never end) the night: it fails alone."""
    return f"{path}: {problem}" if (problem := not_a_file(path)) else None


def _log_name_problem(name: str) -> str | None:
    try:
        check_log_name(name)
    except LakehouseError as exc:
        return f"{exc}: rename the file"
    return None


def _other_source(kind: Kind, path: Path, name: str, source: str) -> str | None:
    """A log the lake took from another file that is still there (another inbox, a hand-made ingest):
    taking this one would replace it, and the other the next night, in turn; refused until one goes."""
    other = Path(source)
    if kind is not Kind.swf or other.absolute() == path.absolute() or not other.is_file():
        return None
    return f"{path}: log {name!r} was ingested from {other}, still there; rename one, or remove {other}"


def _clashes(entries: list[tuple[Kind, Path, Path | None]]) -> dict[str, str]:
    """The log names that several SWF files of the inbox would take, each with the problem: refused
    every night until one is renamed (taking them in turn would flip the log from night to night)."""
    paths: dict[str, list[Path]] = {}
    for kind, path, _ in entries:
        if kind is Kind.swf:
            paths.setdefault(log_name_for(path), []).append(path)
    return {
        name: f"{' and '.join(map(str, found))} would both become log {name!r}: rename one"
        for name, found in paths.items()
        if len(found) > 1
    }


def _twins(entries: list[tuple[Kind, Path, Path | None]]) -> dict[tuple[str, str], dict[Path, str]]:
    """2019 shards of the inbox that are one shard twice (its JSON and its Parquet export): every one
    after the first fails, naming the first (the lake keeps one copy of a shard's rows)."""
    first: dict[tuple[str, str], Path] = {}
    problems: dict[tuple[str, str], dict[Path, str]] = {}
    for kind, path, trace in entries:
        shard = SHARD_NAME.match(path.name)
        cell = CELL_FOLDER.match(trace.name) if trace is not None else None
        if kind is not Kind.google2019 or shard is None or cell is None:
            continue
        key = (f"google2019.{shard.group('table')}", f"{cell.group('cell')}.{shard.group('number')}")
        if key in first:
            why = f"{path}: the same shard as {first[key]} (a JSON and a Parquet export of it): keep one of them"
            problems.setdefault(key, {})[path] = why
        else:
            first[key] = path
    return problems


def _known(lake: Lake) -> tuple[dict[tuple[str, str], tuple[str, str, str]], dict[str, tuple[int, int, str]]]:
    """The manifest's (hash, status, source) by (dataset, name), and the files earlier nightly runs saw."""
    if not lake.exists():
        return {}, {}
    with lake.cursor() as con:
        manifest = {(d, n): (h, s, source) for d, n, h, s, source in con.sql(named_query("manifest_hashes")).fetchall()}
        try:
            seen = {p: (size, mtime, h) for p, size, mtime, h in con.sql(named_query("nightly_files")).fetchall()}
        except duckdb.CatalogException:  # a lake made before the nightly run existed
            seen = {}
    return manifest, seen


def files_frame(files: Iterable[InboxFile]) -> pl.DataFrame:
    """One row per file: what `lakehouse nightly --dry-run` prints."""
    rows = [
        {"kind": str(f.kind), "file": f.label, "state": str(f.state), "bytes": f.size, "path": str(f.path)}
        for f in files
    ]
    return pl.DataFrame(
        rows, schema={"kind": pl.String, "file": pl.String, "state": pl.String, "bytes": pl.Int64, "path": pl.String}
    )
