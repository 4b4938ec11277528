"""DuckDB's extensions, loaded from the wheels the project installs, never downloaded.

DuckDB fetches an extension from its own site the first time a query needs one.  A lake must not: a
machine without that network (a cluster node, this project's CI) would fail at the first `ATTACH
'ducklake:…'`, and an extension of another build could load behind the pinned one.  Each extension the
lake uses comes as a PyPI wheel (`duckdb-extension-<name>`) holding one file,
`extensions/v<DuckDB version>/<name>.duckdb_extension`, built for exactly that DuckDB release;
pyproject.toml pins DuckDB and the wheels together.  `load` turns DuckDB's own fetching and
auto-loading off on the connection and loads each file by its path.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import duckdb

from lakehouse.base.errors import LakehouseError

#: The extensions the lake uses: the DuckLake format, its SQLite and PostgreSQL catalogs, object storage.
EXTENSIONS = ("ducklake", "sqlite_scanner", "postgres_scanner", "httpfs")


class ExtensionError(LakehouseError, RuntimeError):
    """An extension the command needs is not installed for this DuckDB; the message says what to install."""


def _wheel(name: str) -> str:
    return f"duckdb-extension-{name.replace('_', '-')}=={duckdb.__version__}"


def extension_file(name: str) -> Path:
    """The extension's file in its installed wheel, built for the DuckDB this process runs."""
    if name not in EXTENSIONS:
        raise ExtensionError(f"unknown extension {name!r} (the lake uses {', '.join(EXTENSIONS)})")
    spec = importlib.util.find_spec(f"duckdb_extension_{name}")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    wanted = f"extensions/v{duckdb.__version__}/{name}.duckdb_extension"
    for folder in folders:
        if (found := Path(folder) / wanted).is_file():
            return found
    built = sorted(str(p.relative_to(folder)) for folder in folders for p in Path(folder).glob("extensions/*/*"))
    have = f" (installed: {', '.join(built)})" if built else ""
    raise ExtensionError(
        f"DuckDB's {name} extension for DuckDB {duckdb.__version__} is not installed{have}: "
        f"pip install '{_wheel(name)}' (make install does)"
    )


def database(*names: str) -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB with the extensions loaded from their wheels.

    DuckDB checks an extension's signature at each LOAD, in each database: 0.25 s for DuckLake's and
    SQLite's (36 and 35 MB) in every database a command opened (measured here), which made a query of a
    DuckLake lake 1.4 times as long as one of a DuckDB catalog.  The database is made to take the files
    unsigned (15 ms): they are loaded only by the path of the wheel that pip installed (and checked against
    the wheel's recorded hashes), and whoever can replace that file can replace DuckDB itself.  A user's
    SQL cannot LOAD another: `lakehouse sql` refuses LOAD (`lakehouse.base.read_only`) and its sealed
    connection reaches no file outside the lake's data."""
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    try:
        load(con, *names)
    except BaseException:
        con.close()
        raise
    return con


def opening_statements(*names: str) -> list[str]:
    """The statements that switch DuckDB's own downloads off and load the extensions from their wheels
    (a connection's, or the `duckdb` command line's before its prompt)."""
    loads = [f"LOAD '{str(extension_file(name)).replace(chr(39), chr(39) * 2)}'" for name in names]
    return ["SET autoinstall_known_extensions = false", "SET autoload_known_extensions = false", *loads]


def load(con: duckdb.DuckDBPyConnection, *names: str) -> None:
    """Load the extensions on `con` from their wheels; DuckDB's own downloads are switched off first."""
    for statement in opening_statements(*names):
        try:
            con.execute(statement)
        except duckdb.Error as exc:
            reason = str(exc).strip().splitlines()[0]
            raise ExtensionError(f"{statement}: DuckDB could not run it ({reason})") from None
