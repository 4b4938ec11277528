"""What every input file must be before a byte of it is read: a regular file (not a FIFO, a device,
a folder or a link to one, which would block a reader or never end), and, gzipped, no larger once
decompressed than a bound (a gzip bomb must fail alone, in bounded memory and time)."""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from pathlib import Path

from lakehouse.base.errors import BrokenFileError, LakehouseError
from lakehouse.base.readable import not_a_file

__all__ = ["not_a_file", "gunzip_bounded", "files_under"]

#: A gzipped log may expand to at most this many times its compressed size, or MIN_EXPANDED bytes if
#: that is more.  Real logs compress 4 to 15 times (the Parallel Workloads Archive's largest, 11 MB
#: gzipped, is 80 MB of text); a gzip bomb, a thousand times and more.
MAX_RATIO = 200
MIN_EXPANDED = 256 * 2**20
_CHUNK = 4 * 2**20


def gunzip_bounded(path: Path, raw: bytes) -> bytes:
    """The text of gzip data (one member or several), decompressed chunk by chunk; BrokenFileError
    once it passes max(MAX_RATIO x its compressed size, MIN_EXPANDED), or for a corrupt or truncated
    stream."""
    limit = max(MAX_RATIO * len(raw), MIN_EXPANDED)
    out = bytearray()
    data = raw
    try:
        while data:
            member = zlib.decompressobj(16 + zlib.MAX_WBITS)
            while not member.eof:
                chunk = member.decompress(data, _CHUNK)
                out += chunk
                if len(out) > limit:
                    raise BrokenFileError(
                        str(path),
                        f"expands past {limit:,} bytes ({MAX_RATIO}x its size, or {MIN_EXPANDED // 2**20} MB): "
                        "not a log (a gzip bomb?); nothing of it was kept",
                    )
                data = member.unconsumed_tail
                if not data and not chunk and not member.eof:
                    raise BrokenFileError(str(path), "corrupt or truncated gzip (the stream ends early)")
            data = member.unused_data
            if data and data[:2] != b"\x1f\x8b":
                if data.strip(b"\x00"):  # (zero padding after the last member is allowed, as gzip does)
                    raise BrokenFileError(str(path), "corrupt gzip (bytes after the last member)")
                break
    except zlib.error as exc:
        raise BrokenFileError(str(path), f"corrupt or truncated gzip ({exc})") from None
    return bytes(out)


def files_under(paths: Iterable[Path], pattern: str = "*") -> list[Path]:
    """The files named, and those under the folders named (to any depth, `pattern` matching their names,
    hidden ones left out, in path order); a path that does not exist is an error naming it."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.rglob(pattern) if p.is_file() and not p.name.startswith("."))
        elif path.exists():
            files.append(path)
        else:
            raise LakehouseError(f"{path}: no such file or folder")
    return files
