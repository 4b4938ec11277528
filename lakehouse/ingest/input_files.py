"""What every input file must be before a byte of it is read: a regular file (not a FIFO, a device,
a folder or a link to one, which would block a reader or never end), and, gzipped, no larger once
decompressed than a bound (a gzip bomb must fail alone, in bounded memory and time)."""

from __future__ import annotations

import zlib
from pathlib import Path

from lakehouse.base.errors import BrokenFileError
from lakehouse.base.readable import not_a_file

__all__ = ["not_a_file", "gunzip_bounded"]

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
