"""A local stand-in for the Google trace's bucket: the embedded sample's parts (and a few copies under
other part numbers) with a SHA256SUM, served over HTTP with range requests, and faults on demand: a
connection cut in the middle of a file, bytes that are not the published ones."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import shutil
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from lakehouse.data import sample_google_trace


def make_bucket(folder: Path) -> Path:
    """The sample's parts in the bucket's layout, its job_events cut in three parts (0-2) in time order,
    and SHA256SUM."""
    shutil.copytree(sample_google_trace(), folder)
    first = folder / "job_events" / "part-00000-of-00500.csv.gz"
    lines = gzip.decompress(first.read_bytes()).splitlines(keepends=True)
    third = len(lines) // 3 + 1
    for number in range(3):
        part = first.with_name(f"part-{number:05d}-of-00500.csv.gz")
        part.write_bytes(gzip.compress(b"".join(lines[number * third : (number + 1) * third]), mtime=0))
    (folder / "schema.csv").write_text("file pattern,field number,content,format,mandatory\n")
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    lines = [f"{hashlib.sha256(p.read_bytes()).hexdigest()}  ./{p.relative_to(folder).as_posix()}" for p in files]
    (folder / "SHA256SUM").write_text("\n".join(lines) + "\n")
    return folder


def _crc32c_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1  # the Castagnoli polynomial, reflected
        table.append(crc)
    return table


_CRC32C = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C written here from its definition (RFC 3720, appendix B.4), independent of the library the
    download uses; its check value, of b"123456789", is 0xE3069283."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = (crc >> 8) ^ _CRC32C[(crc ^ byte) & 0xFF]
    return crc ^ 0xFFFFFFFF


@dataclass
class Faults:
    """What the server does wrong: files whose first transfer stops after `cut_after` bytes, files
    served with one byte changed; and every request it saw (path, Range header)."""

    cut_once: set[str] = field(default_factory=set)
    cut_after: int = 1000
    corrupt: set[str] = field(default_factory=set)
    #: Files sent without a Content-Length and followed by `grow_by` bytes more than their HEAD said.
    grow: set[str] = field(default_factory=set)
    grow_by: int = 3 << 20
    #: Files sent slowly: 16 KB every `slow_pause` seconds.
    slow: set[str] = field(default_factory=set)
    slow_pause: float = 0.1
    seen: list[tuple[str, str | None]] = field(default_factory=list)
    page: int = 3  # objects per page of a storage API listing (the real one: up to 1,000)
    #: Objects whose listing gives a CRC-32C that is not theirs (their bytes and MD5 are right).
    wrong_crc32c: set[str] = field(default_factory=set)
    #: Objects listed without an MD5, as composed objects are (their CRC-32C only).
    no_md5: set[str] = field(default_factory=set)


@contextmanager
def serve(bucket: Path, faults: Faults | None = None) -> Iterator[str]:
    """Serve `bucket` on a free local port; yields its base URL."""
    faults = faults or Faults()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # (quiet)
            pass

        def _list_objects(self) -> None:
            """`GET /storage/v1/b/BUCKET/o?prefix=P&pageToken=T`: the bucket folder's files whose names
            start with P, `faults.page` at a time, with size, MD5 and CRC-32C (base64) as the API gives
            them."""
            url = urllib.parse.urlparse(self.path)
            name = url.path.removeprefix("/storage/v1/b/").removesuffix("/o")
            query = urllib.parse.parse_qs(url.query)
            prefix, start = query.get("prefix", [""])[0], int(query.get("pageToken", ["0"])[0])
            faults.seen.append((self.path, None))
            files = sorted(p for p in (bucket / name).glob(f"{prefix}*") if p.is_file())
            page = files[start : start + faults.page]
            items = []
            for p in page:
                data, key = p.read_bytes(), f"{name}/{p.name}"
                crc = crc32c(data) ^ (1 if key in faults.wrong_crc32c else 0)
                item = {"name": p.name, "size": str(p.stat().st_size),
                        "md5Hash": base64.b64encode(hashlib.md5(data).digest()).decode(),
                        "crc32c": base64.b64encode(crc.to_bytes(4, "big")).decode()}  # fmt: skip
                if key in faults.no_md5:
                    del item["md5Hash"]
                items.append(item)
            body: dict[str, object] = {"items": items}
            if start + faults.page < len(files):
                body["nextPageToken"] = str(start + faults.page)
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> bytes | None:
            path = bucket / self.path.lstrip("/")
            if not path.is_file():
                self.send_error(404)
                return None
            data = path.read_bytes()
            if self.path.lstrip("/") in faults.corrupt:
                data = data[:-1] + bytes([data[-1] ^ 0xFF])
            return data

        def do_HEAD(self) -> None:
            data = self._body()
            if data is not None:
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()

        def do_GET(self) -> None:
            if self.path.startswith("/storage/v1/b/"):  # the storage JSON API's listing of a bucket
                self._list_objects()
                return
            name = self.path.lstrip("/")
            faults.seen.append((name, self.headers.get("Range")))
            data = self._body()
            if data is None:
                return
            if name in faults.grow:  # no length, and more bytes than announced
                self.send_response(200)
                self.end_headers()
                self.wfile.write(data + bytes(faults.grow_by))
                self.close_connection = True
                return
            start = 0
            if (wanted := self.headers.get("Range")) and wanted.startswith("bytes="):
                start = int(wanted.removeprefix("bytes=").split("-")[0])
                if start >= len(data):
                    self.send_error(416)
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            else:
                self.send_response(200)
            self.send_header("Content-Length", str(len(data) - start))
            self.end_headers()
            if name in faults.cut_once:  # the connection drops part way through, once
                faults.cut_once.discard(name)
                self.wfile.write(data[start : start + faults.cut_after])
                self.wfile.flush()
                self.close_connection = True
                return
            if name in faults.slow:
                try:
                    for at in range(start, len(data), 16 << 10):
                        self.wfile.write(data[at : at + (16 << 10)])
                        self.wfile.flush()
                        time.sleep(faults.slow_pause)
                except (BrokenPipeError, ConnectionResetError):  # the client stopped: what a client may do
                    pass
                return
            self.wfile.write(data[start:])

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def alibaba_archive(folder: Path, table: str, lines: int | None = None, member: str | None = None) -> bytes:
    """`<table>.tar.gz` in `folder` as Alibaba's object store holds it (one CSV inside), made from the
    embedded sample's table (its first `lines` lines); the CSV's bytes."""
    import io
    import tarfile

    from lakehouse.data import sample_alibaba2018

    with gzip.open(sample_alibaba2018() / f"{table}.csv.gz", "rb") as sample:
        csv = b"".join(sample.readlines() if lines is None else (sample.readline() for _ in range(lines)))
    with tarfile.open(folder / f"{table}.tar.gz", "w:gz") as tar:
        info = tarfile.TarInfo(member or f"{table}.csv")
        info.size = len(csv)
        tar.addfile(info, io.BytesIO(csv))
    return csv


def alibaba_digests(folder: Path) -> dict[str, str]:
    """The SHA-256 of each archive in `folder`, by table (what the tests publish in place of Alibaba's)."""
    return {p.name.removesuffix(".tar.gz"): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.glob("*.tar.gz")}
