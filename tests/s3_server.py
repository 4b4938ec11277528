"""An S3-compatible server for a test: s3s-fs, built from the crates registry once per machine by
`make s3-server` (its path in $LAKEHOUSE_S3_SERVER, else where that target puts it), serving a temporary
folder on loopback with keys made for the test.  The clients get the keys as a user's would: from the
environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL)."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

#: Where `make s3-server` installs the server (the Makefile's S3_SERVER_HOME).
DEFAULT_SERVER = Path.home() / ".cache" / "lakehouse" / "s3s-fs-0.14.1" / "bin" / "s3s-fs"


@dataclass(frozen=True)
class ObjectStore:
    endpoint: str
    key: str
    secret: str
    bucket: str

    def environment(self) -> dict[str, str]:
        return {"AWS_ACCESS_KEY_ID": self.key, "AWS_SECRET_ACCESS_KEY": self.secret, "AWS_ENDPOINT_URL": self.endpoint}


def server_binary() -> Path | None:
    path = Path(os.environ.get("LAKEHOUSE_S3_SERVER") or DEFAULT_SERVER)
    return path if path.is_file() and os.access(path, os.X_OK) else None


@contextmanager
def s3_server(folder: Path, bucket: str = "lake") -> Iterator[ObjectStore]:
    binary = server_binary()
    if binary is None:
        pytest.skip("no S3-compatible server built on this machine: `make s3-server` builds it (make faults does)")
    (folder / bucket).mkdir(parents=True)  # s3s-fs keeps a bucket as a folder
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    key, secret = secrets.token_hex(8), secrets.token_hex(16)
    log = (folder.parent / f"{folder.name}.log").open("wb")
    server = subprocess.Popen(
        [str(binary), "--host", "127.0.0.1", "--port", str(port), "--access-key", key, "--secret-key", secret,
         str(folder)],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the S3 server did not start (see {log.name})") from None
                time.sleep(0.05)
        yield ObjectStore(f"http://127.0.0.1:{port}", key, secret, bucket)
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
