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


def load(con: duckdb.DuckDBPyConnection, *names: str) -> None:
    """Load the extensions on `con` from their wheels; DuckDB's own downloads are switched off first."""
    con.execute("SET autoinstall_known_extensions = false; SET autoload_known_extensions = false")
    for name in names:
        path = extension_file(name)
        try:
            con.execute(f"LOAD '{str(path).replace(chr(39), chr(39) * 2)}'")
        except duckdb.Error as exc:
            raise ExtensionError(f"{path}: DuckDB could not load it ({str(exc).strip().splitlines()[0]})") from None
