"""Fetching public cluster traces: Google's from their buckets over HTTPS, clusterdata-2011-2 (one
bucket, a SHA256SUM listing) and clusterdata-2019 (a bucket per cell, listed by the storage JSON API
with each object's size, MD5 and CRC-32C); Alibaba's cluster-trace-v2018 (six archives, checked
against the SHA-256 its repository publishes, then extracted).

The bucket holds one folder per table (`job_events/part-00000-of-00500.csv.gz`, ...), `schema.csv` and
`SHA256SUM`, the SHA-256 of every file.  What lands in DEST keeps that layout, so `lakehouse ingest
google DEST` and the nightly inbox take it as it is.

A file is complete only once its bytes hash to the published SHA-256: it is written as `NAME.part`
and renamed then.  A run that stops (a cut connection, Ctrl-C, a kill) leaves `NAME.part`, which the
next run continues with an HTTP range request; a file whose hash differs is deleted and named.

The server is not trusted further than it must be: a listing path that would leave DEST (`..`, an
absolute path, a backslash) refuses the listing; the listing is read up to MAX_LISTING bytes; a file's
body up to the size the server announced for it (its HEAD), or MAX_FILE when it announced none; a
Ctrl-C stops the transfers under way at their next block.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import re
import shutil
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

import google_crc32c

from lakehouse.base.errors import LakehouseError
from lakehouse.base.google_format import tables as trace_tables

#: Where Google publishes the trace (the bucket gs://clusterdata-2011-2, read over HTTPS).
BUCKET_URL = "https://storage.googleapis.com/clusterdata-2011-2"
#: An environment variable that points the download elsewhere (a mirror, or the tests' local server).
URL_ENV = "LAKEHOUSE_GOOGLE_URL"
CHECKSUMS = "SHA256SUM"
#: Tries per file before it is reported as failed (each continues where the previous one stopped).
ATTEMPTS = 4
CHUNK = 1 << 20
HEADS_AT_A_TIME = 16
TIMEOUT = 60.0
#: The most of a listing read (the trace's own SHA256SUM is ~260 KB for its ~2,500 files).
MAX_LISTING = 16 << 20
#: The most of a file read when the server announced no size (the trace's largest part is < 1 GB).
MAX_FILE = 4 << 30
#: Bytes read at a time from a transfer: a Ctrl-C waits for one block at most.
BLOCK = 64 << 10
_PART = re.compile(r"part-(\d{5})-of-(\d{5})\.csv\.gz$")
_LINE = re.compile(r"^([0-9a-fA-F]{64}) [ *](?:\./)?(\S.*)$")


class DownloadError(LakehouseError):
    """A file of the trace that could not be fetched whole, or a listing that cannot be read."""


@dataclass(frozen=True)
class Wanted:
    """One file of the trace to have in DEST: its path in the bucket and the digests its bucket publishes
    for it (2011: SHA-256 in hex; 2019: MD5 and CRC-32C in base64, as the storage API gives them; a
    composed object has a CRC-32C only)."""

    path: str
    sha256: str | None = None
    md5: str | None = None
    crc32c: str | None = None

    def check(self, path: Path) -> str | None:
        """Why the file at `path` is not this one (a digest differs), if it is not."""
        if self.sha256 is not None:
            got = sha256_of(path)
            return None if got == self.sha256 else f"SHA-256 {got[:16]}… is not the published {self.sha256[:16]}…"
        if self.md5 is not None and (got := md5_of(path)) != self.md5:
            return f"MD5 {got} is not the published {self.md5}"
        if self.crc32c is not None and (got := crc32c_of(path)) != self.crc32c:
            return f"CRC-32C {got} is not the published {self.crc32c}"
        return None


def parse_checksums(text: str) -> list[Wanted]:
    """The files of a `SHA256SUM` listing (`sha256sum`'s output: a hash, a space, a space or `*`, the
    path, `./` or not), in its order."""
    wanted = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        found = _LINE.match(line.strip())
        if not found:
            raise DownloadError(f"{CHECKSUMS} line {number}: not `SHA256  PATH`: {line[:80]!r}")
        if problem := _escapes(found.group(2)):
            raise DownloadError(
                f"{CHECKSUMS} line {number}: {found.group(2)[:120]!r} {problem}: the listing is refused"
            )
        if found.group(2) in seen:  # (two transfers would write one .part, each checked against its own hash)
            raise DownloadError(
                f"{CHECKSUMS} line {number}: {found.group(2)[:120]!r} is listed already (line "
                f"{seen[found.group(2)]}): the listing is refused"
            )
        seen[found.group(2)] = number
        wanted.append(Wanted(found.group(2), found.group(1).lower()))
    return wanted


def _escapes(path: str) -> str | None:
    """Why a listing's path would not stay a file below the download folder, if it would not."""
    if path.startswith("/") or "\\" in path or "\x00" in path or re.match(r"^[A-Za-z]:", path):
        return "is not a relative path"
    if any(part in ("", ".", "..") for part in path.split("/")):
        return "has an empty, '.' or '..' component: it would leave the download folder"
    return None


def parse_parts(text: str | None, option: str = "--parts") -> tuple[int, int] | None:
    """`--parts 0-9` (both ends included) or `--parts 7` (or `--shards`, named by `option`); None: all."""
    if text is None:
        return None
    found = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", text)
    what = option.removeprefix("--").rstrip("s")
    if not found:
        raise DownloadError(f"{option} {text!r}: give a {what} number or a range such as 0-9")
    first, last = int(found.group(1)), int(found.group(2) or found.group(1))
    if last < first:
        raise DownloadError(f"{option} {text!r}: the range ends before it starts")
    return first, last


def select(wanted: Iterable[Wanted], tables: Sequence[str] | None, parts: tuple[int, int] | None) -> list[Wanted]:
    """The files of `tables` (every table when None) whose part number lies in `parts`; a table of one
    part comes whole whatever `parts` says, and the schema comes always."""
    known = trace_tables()
    unknown = sorted(set(tables or ()) - set(known))
    if unknown:
        raise DownloadError(f"unknown table {', '.join(unknown)}; the tables are: {', '.join(known)}")
    chosen = []
    for item in wanted:
        table, _, name = item.path.partition("/")
        if not name:  # schema.csv, README: beside the tables
            if item.path == "schema.csv":
                chosen.append(item)
            continue
        part = _PART.search(name)
        if table not in known or part is None or (tables and table not in tables):
            continue
        number, count = int(part.group(1)), int(part.group(2))
        if parts is None or count == 1 or parts[0] <= number <= parts[1]:
            chosen.append(item)
    return chosen


def sha256_of(path: Path) -> str:
    return _digest(path, hashlib.sha256()).hexdigest()


def md5_of(path: Path) -> str:
    """The MD5 as Google's storage API writes it (base64 of the 16 bytes)."""
    return base64.b64encode(_digest(path, hashlib.md5()).digest()).decode()  # noqa: S324 - the bucket's own checksum


def crc32c_of(path: Path) -> str:
    """The CRC-32C as Google's storage API writes it (base64 of the 4 bytes, big-endian), computed by
    Google's own library (the standard library has no CRC-32C)."""
    checksum = google_crc32c.Checksum()
    with open(path, "rb") as file:
        while block := file.read(CHUNK):
            checksum.update(block)
    return base64.b64encode(checksum.digest()).decode()


def _digest(path: Path, digest: hashlib._Hash) -> hashlib._Hash:
    with open(path, "rb") as file:
        while block := file.read(CHUNK):
            digest.update(block)
    return digest


@dataclass
class Fetched:
    """What became of one file: fetched, already there, or failed (and why)."""

    path: str
    status: str  # "fetched", "present", "failed"
    bytes: int = 0
    error: str | None = None


class Download:
    """The files of one run, fetched `jobs` at a time into `dest`; `advance(n)` hears every n bytes
    received (a progress bar)."""

    def __init__(self, dest: Path, base_url: str | None = None, jobs: int = 4) -> None:
        self.dest = dest
        self.base_url = (base_url or os.environ.get(URL_ENV) or BUCKET_URL).rstrip("/")
        self.jobs = jobs
        #: Each file's size as the server announced it (`sizes`): a body is read up to it.
        self.announced: dict[str, int | None] = {}
        #: Set by a Ctrl-C: every transfer stops at its next block.
        self.stopping = threading.Event()

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path}"

    def listing(self) -> list[Wanted]:
        """The bucket's `SHA256SUM`, also kept in DEST (what the files were checked against)."""
        try:
            with urllib.request.urlopen(self.url(CHECKSUMS), timeout=TIMEOUT) as response:
                data = response.read(MAX_LISTING + 1)
        except (urllib.error.URLError, OSError) as exc:
            raise DownloadError(f"{self.url(CHECKSUMS)}: {_reason(exc)}") from None
        if len(data) > MAX_LISTING:
            raise DownloadError(
                f"{self.url(CHECKSUMS)}: longer than {MAX_LISTING >> 20} MB: not a listing of the trace"
            )
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise DownloadError(f"{self.url(CHECKSUMS)}: not text (UTF-8): not a listing of the trace") from None
        self.dest.mkdir(parents=True, exist_ok=True)
        (self.dest / CHECKSUMS).write_text(text, encoding="utf-8")
        return parse_checksums(text)

    def sizes(self, files: Sequence[Wanted]) -> dict[str, int | None]:
        """Each file's size from the server (HEAD), for the total the progress bar counts down."""

        def size(item: Wanted) -> int | None:
            request = urllib.request.Request(self.url(item.path), method="HEAD")
            try:
                with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                    length = response.headers.get("Content-Length")
                    return int(length) if length is not None else None
            except (urllib.error.URLError, OSError, ValueError):
                return None  # the GET says why, file by file

        # (A HEAD is a round trip and no transfer: more at a time than the downloads.)
        with ThreadPoolExecutor(max_workers=max(self.jobs, HEADS_AT_A_TIME)) as pool:
            self.announced = dict(zip((item.path for item in files), pool.map(size, files), strict=True))
        return dict(self.announced)

    def run(self, files: Sequence[Wanted], advance: Callable[[int], None] = lambda _: None) -> list[Fetched]:
        """Fetch the files `jobs` at a time.  A Ctrl-C stops every transfer at its next block (what came
        stays as `.part`, for the next run) instead of waiting for them to end."""
        pool = ThreadPoolExecutor(max_workers=self.jobs)
        try:
            futures = [pool.submit(self.fetch, item, advance) for item in files]
            # Waited for in short steps: the kernel may hand SIGINT to a transfer's thread, and Python runs
            # its handler only when the main thread wakes (a wait without a timeout waited for the files).
            while wait(futures, timeout=0.2).not_done:
                pass
            return [future.result() for future in futures]
        except KeyboardInterrupt:
            self.stopping.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            pool.shutdown(wait=not self.stopping.is_set())

    def fetch(self, item: Wanted, advance: Callable[[int], None]) -> Fetched:
        """One file: already whole, or fetched (continuing a `.part`) and checked."""
        final = self.dest / item.path
        if _escapes(item.path) or not final.resolve().is_relative_to(self.dest.resolve()):
            return Fetched(item.path, "failed", error=f"{item.path}: not a file below {self.dest}: not fetched")
        if final.exists() and item.check(final) is None:
            advance(final.stat().st_size)
            return Fetched(item.path, "present")
        final.parent.mkdir(parents=True, exist_ok=True)
        partial = final.with_name(final.name + ".part")
        error = "no attempt"
        for attempt in range(ATTEMPTS):
            try:
                received = self._get(item.path, partial, advance)
                break
            except DownloadError as exc:  # the server broke its word: no retry, nothing kept
                partial.unlink(missing_ok=True)
                return Fetched(item.path, "failed", error=str(exc))
            except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
                error = _reason(exc)
                if isinstance(exc, urllib.error.HTTPError) and exc.code not in (408, 429, 500, 502, 503, 504):
                    return Fetched(item.path, "failed", error=f"{self.url(item.path)}: {error}")
                time.sleep(min(2.0**attempt, 30.0) * 0.25)
        else:
            return Fetched(item.path, "failed", error=f"{self.url(item.path)}: {error} ({ATTEMPTS} tries; run again)")
        if (differs := item.check(partial)) is not None:
            partial.unlink(missing_ok=True)
            return Fetched(item.path, "failed", error=f"{item.path}: {differs}: deleted; run again to fetch it anew")
        os.replace(partial, final)
        return Fetched(item.path, "fetched", bytes=received)

    def _get(self, path: str, partial: Path, advance: Callable[[int], None]) -> int:
        """Fetch into `partial`, from where it ends (a range request); the bytes received."""
        offset = partial.stat().st_size if partial.exists() else 0
        request = urllib.request.Request(self.url(path))
        if offset:
            request.add_header("Range", f"bytes={offset}-")
        try:
            response = urllib.request.urlopen(request, timeout=TIMEOUT)
        except urllib.error.HTTPError as exc:
            if exc.code == 416:  # nothing after `offset`: the part is whole (or too long, and the hash says so)
                return 0
            raise
        with response:
            if offset and response.status != 206:  # the server sends it whole again: start over
                offset = 0
            advance(offset)
            received = 0
            announced = self.announced.get(path)
            limit = MAX_FILE if announced is None else announced
            with open(partial, "ab" if offset else "wb") as out:
                while True:
                    if self.stopping.is_set():
                        raise KeyboardInterrupt
                    try:
                        block = response.read(BLOCK)
                    except http.client.IncompleteRead as exc:  # keep what came: the next try goes on from it
                        out.write(exc.partial)
                        advance(len(exc.partial))
                        raise
                    if not block:
                        break
                    if offset + received + len(block) > limit:
                        said = f"announced {announced:,} bytes" if announced is not None else "announced no size"
                        raise DownloadError(f"{self.url(path)}: the server {said} and sends more: not fetched")
                    out.write(block)
                    received += len(block)
                    advance(len(block))
            expected = response.headers.get("Content-Length")
            if expected is not None and received < int(expected):
                raise OSError(f"the connection closed after {offset + received:,} bytes")
        return received


def _reason(exc: BaseException) -> str:
    if isinstance(exc, http.client.IncompleteRead):
        return f"the connection closed after {len(exc.partial):,} more bytes"
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return str(exc.reason)
    return str(exc) or type(exc).__name__


def disk_problem(dest: Path, needed: int) -> str | None:
    """Why DEST cannot take `needed` more bytes, if it cannot."""
    folder = dest
    while not folder.exists():
        folder = folder.parent
    free = shutil.disk_usage(folder).free
    if needed > free:
        return f"{dest}: the files need {needed / 1e9:,.1f} GB and the disk has {free / 1e9:,.1f} GB free"
    return None


# --- clusterdata-2019: a bucket per cell, listed by the storage JSON API ---------------------------

#: Where Google publishes the 2019 trace: buckets clusterdata_2019_a .. _h on this host.
HOST_2019 = "https://storage.googleapis.com"
#: An environment variable that points the 2019 download elsewhere (a mirror, the tests' local server).
URL_2019_ENV = "LAKEHOUSE_GOOGLE_2019_URL"
#: Objects asked per page of a listing (the API's own maximum is 1,000).
PAGE = 1000
_SHARD = re.compile(r"^(?P<table>[a-z_]+)-(?P<number>\d{12})\.(?P<format>json|parquet)\.gz$")


def bucket_2019(cell: str) -> str:
    return f"clusterdata_2019_{cell}"


class Download2019(Download):
    """The shards of one cell into DEST/clusterdata_2019_<cell>/ (the folder names the cell for
    `lakehouse ingest google-2019`)."""

    def __init__(self, dest: Path, cell: str, host: str | None = None, jobs: int = 4) -> None:
        self.host = (host or os.environ.get(URL_2019_ENV) or HOST_2019).rstrip("/")
        self.bucket = bucket_2019(cell)
        super().__init__(dest / self.bucket, f"{self.host}/{self.bucket}", jobs)

    def listing_url(self, prefix: str, token: str | None) -> str:
        query = {"prefix": prefix, "maxResults": str(PAGE), "fields": "items(name,size,md5Hash,crc32c),nextPageToken"}
        if token:
            query["pageToken"] = token
        return f"{self.host}/storage/v1/b/{self.bucket}/o?{urllib.parse.urlencode(query)}"

    def objects(self, prefix: str) -> list[tuple[Wanted, int | None]]:
        """The bucket's objects whose names start with `prefix` (page by page), each with its MD5,
        CRC-32C and size as the listing gives them; a name that is not a shard, or would leave DEST, refuses it."""
        found: list[tuple[Wanted, int | None]] = []
        token: str | None = None
        while True:
            url = self.listing_url(prefix, token)
            try:
                with urllib.request.urlopen(url, timeout=TIMEOUT) as response:
                    data = response.read(MAX_LISTING + 1)
            except (urllib.error.URLError, OSError) as exc:
                raise DownloadError(f"{url}: {_reason(exc)}") from None
            if len(data) > MAX_LISTING:
                raise DownloadError(f"{url}: longer than {MAX_LISTING >> 20} MB: not a listing of the bucket")
            try:
                page = json.loads(data)
                items = page.get("items", [])
                for item in items:
                    name, size, md5, crc = item["name"], item.get("size"), item.get("md5Hash"), item.get("crc32c")
                    if not isinstance(name, str) or _escapes(name) or "/" in name:
                        raise DownloadError(f"{url}: the object {str(name)[:120]!r} would leave the download folder")
                    digests = {
                        "md5": md5 if isinstance(md5, str) else None,
                        "crc32c": crc if isinstance(crc, str) else None,
                    }
                    found.append((Wanted(name, **digests), _size(size)))
                token = page.get("nextPageToken")
            except (ValueError, AttributeError, KeyError, TypeError):
                raise DownloadError(f"{url}: not a listing of the storage API (JSON with items)") from None
            if not token:
                return found


def _size(value: object) -> int | None:
    try:
        return int(value)  # type: ignore[call-overload]  # (the API writes sizes as text)
    except (TypeError, ValueError):
        return None


def select_2019(
    objects: Iterable[tuple[Wanted, int | None]],
    tables: Sequence[str],
    shards: tuple[int, int] | None,
    fmt: str,
) -> list[tuple[Wanted, int | None]]:
    """The shards of `tables` in format `fmt` whose number lies in `shards` (all when None)."""
    chosen = []
    for item, size in objects:
        shard = _SHARD.match(item.path)
        if shard is None or shard.group("table") not in tables or shard.group("format") != fmt:
            continue
        if shards is None or shards[0] <= int(shard.group("number")) <= shards[1]:
            chosen.append((item, size))
    return chosen


# --- Alibaba cluster-trace-v2018: six archives on Alibaba's object store -----------------------------

#: Where alibaba/clusterdata's fetchData.sh fetches cluster-trace-v2018 (plain HTTP: the SHA-256 below is
#: what vouches for the bytes).
ALIBABA_2018_URL = "http://aliopentrace.oss-cn-beijing.aliyuncs.com/v2018Traces"
#: An environment variable that points the Alibaba download elsewhere (a mirror, the tests' local server).
ALIBABA_2018_URL_ENV = "LAKEHOUSE_ALIBABA_2018_URL"
#: Each table's archive's SHA-256 as alibaba/clusterdata publishes it (cluster-trace-v2018/trace_2018.md,
#: "Checksum"; the sizes there: machine_meta 92 KB, machine_usage 1.7 GB, container_meta 2.4 MB,
#: container_usage 28 GB, batch_task 125 MB, batch_instance 20 GB).
ALIBABA_2018_SHA256 = {
    "machine_meta": "b5b1b786b22cd413a3674b8f2ebfb2f02fac991c95df537f363ef2797c8f6d55",
    "machine_usage": "3e6ee87fd204bb85b9e234c5c75a5096580fdabc8f085b224033080090753a7a",
    "container_meta": "febd75e693d1f208a8941395e7faa7e466e50d21c256eff12a815b7e2fa2053f",
    "container_usage": "b4bd3b1b82f5407c1b0dd47fe736ff5152c4b016a9c30cb26f988e2d1c5e5031",
    "batch_task": "7c4b32361bd1ec2083647a8f52a6854a03bc125ca5c202652316c499fbf978c6",
    "batch_instance": "e73e5a9326669aa079ba20048ddd759383cabe1fe3e58620aa75bd034e2450c6",
}
#: How much larger a table's CSV is than its archive, about (280 GB extracted from 49 GB, trace_2018.md).
ALIBABA_2018_EXTRACTED_RATIO = 6


class DownloadAlibaba2018(Download):
    """The archives of cluster-trace-v2018 (`<table>.tar.gz`) into DEST, each checked against its published
    SHA-256; `extract` then writes its table's CSV beside it (`<table>.csv`, which `lakehouse ingest
    alibaba-2018 DEST` takes)."""

    def __init__(self, dest: Path, base_url: str | None = None, jobs: int = 2) -> None:
        super().__init__(dest, base_url or os.environ.get(ALIBABA_2018_URL_ENV) or ALIBABA_2018_URL, jobs)

    @staticmethod
    def wanted(tables: Sequence[str]) -> list[Wanted]:
        return [Wanted(f"{table}.tar.gz", ALIBABA_2018_SHA256[table]) for table in tables]

    def extracted(self, table: str) -> Path:
        return self.dest / f"{table}.csv"

    def extract(self, table: str, advance: Callable[[int], None] = lambda _: None) -> Path:
        """The archive's CSV (`<table>.csv`, at any depth inside it) into DEST/<table>.csv, streamed, written
        under a temporary name and renamed whole.  An archive without it is refused, naming what it holds."""
        import tarfile

        archive, final = self.dest / f"{table}.tar.gz", self.extracted(table)
        partial = final.with_name(final.name + ".part")
        try:
            with tarfile.open(archive, "r|gz") as tar:
                members = []
                for member in tar:
                    members.append(member.name)
                    if not (member.isfile() and Path(member.name).name == f"{table}.csv"):
                        continue
                    source = tar.extractfile(member)
                    assert source is not None  # (a regular file has its bytes)
                    with source, open(partial, "wb") as out:
                        while block := source.read(CHUNK):
                            if self.stopping.is_set():
                                raise KeyboardInterrupt
                            out.write(block)
                            advance(len(block))
                    os.replace(partial, final)
                    return final
        except (tarfile.TarError, EOFError, OSError) as exc:
            partial.unlink(missing_ok=True)
            raise DownloadError(f"{archive}: cannot extract {table}.csv ({_reason(exc)})") from None
        held = ", ".join(members[:5]) + (", ..." if len(members) > 5 else "") if members else "nothing"
        raise DownloadError(f"{archive}: holds no {table}.csv (it holds {held})")
