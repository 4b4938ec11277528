"""A PostgreSQL server of the machine's installation, started for a test in a temporary folder on
loopback, with a password (the clients get it from PGPASSWORD, as a user's would), and stopped after.

PostgreSQL refuses to run as root: where the tests run as root (CI), the server runs as the `postgres`
account the installation made, through runuser, in a folder of the system's temporary folder (pytest's
own are private to root)."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class Server:
    host: str
    port: int
    user: str
    password: str
    database: str

    def url(self, database: str | None = None) -> str:
        """The catalog URL a user gives: no password in it."""
        return f"postgresql://{self.user}@{self.host}:{self.port}/{database or self.database}"

    def create_database(self, name: str) -> None:
        subprocess.run(
            ["psql", "-h", self.host, "-p", str(self.port), "-U", self.user, "-d", "postgres", "-c",
             f"CREATE DATABASE {name}"],
            env={**os.environ, "PGPASSWORD": self.password}, check=True, capture_output=True, timeout=60,
        )  # fmt: skip


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_server_account(folder: Path) -> list[str]:
    if os.geteuid() != 0:
        return []
    shutil.chown(folder, "postgres")
    for path in folder.rglob("*"):
        shutil.chown(path, "postgres")
    return ["runuser", "-u", "postgres", "--"]


@contextmanager
def postgres_server() -> Iterator[Server]:
    if shutil.which("initdb") is None or shutil.which("pg_ctl") is None:
        pytest.skip("PostgreSQL's initdb and pg_ctl are not on PATH")
    folder = Path(tempfile.mkdtemp(prefix="lakehouse-postgres-"))
    password = secrets.token_hex(12)
    (folder / "password").write_text(password)
    (folder / "socket").mkdir()
    prefix = _as_server_account(folder)
    data, port = folder / "data", _free_port()
    run = {"check": True, "capture_output": True, "timeout": 120}
    subprocess.run([*prefix, "initdb", "-D", str(data), "-U", "lakehouse", "--auth=scram-sha-256",
                    f"--pwfile={folder / 'password'}", "--no-sync", "-E", "UTF8"], **run)  # fmt: skip
    options = f"-p {port} -k {folder / 'socket'} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run([*prefix, "pg_ctl", "-D", str(data), "-l", str(folder / "server.log"), "-w", "-o", options,
                    "start"], **run)  # fmt: skip
    try:
        server = Server("127.0.0.1", port, "lakehouse", password, "lake")
        server.create_database(server.database)
        yield server
    finally:
        subprocess.run([*prefix, "pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop"], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)
