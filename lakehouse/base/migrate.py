"""`lakehouse migrate OLD NEW`: a lake of the DuckDB-catalog format made again as a DuckLake lake.

The new lake holds the same rows under the same names: each dataset's committed files become the files
of the DuckLake table `stored.KEY` (linked into NEW/data/stored/KEY/, named relative to it, so the new
lake can be moved as a folder), the catalog's own tables (`meta.manifest`, `meta.outputs`, the nightly
history) are copied, and the macros and views of sql/ are made in the DuckLake catalog, all in one
snapshot whose message names the old lake.  Before that snapshot is kept, every view is counted in both
lakes; a difference, or any error, leaves no new lake behind.  The old lake is only read.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from lakehouse.base.catalog import META_TABLES, committed_files, sql_literal, view_files
from lakehouse.base.datasets import DATASETS, SCHEMA_FILE
from lakehouse.base.duckdb_lake import opening_catalog
from lakehouse.base.ducklake import ALIAS, DuckLake
from lakehouse.base.ducklake_lake import making_catalog, register, stored_name
from lakehouse.base.errors import LakehouseError
from lakehouse.base.lake import Lake, count

#: The alias of the old lake's catalog while it is copied.
OLD = "old"


@dataclass(frozen=True)
class Migrated:
    """What a migration copied: rows per stored table and per view (the same in both lakes), and the
    snapshot that holds them."""

    stored_rows: dict[str, int]
    view_rows: dict[str, int]
    snapshot: int


def migrate(old: Lake, new_root: Path, progress: Callable[[str], None] = lambda _: None) -> Migrated:
    """Make the DuckLake lake `new_root` from the lake `old` (which is only read); see the module."""
    old.require()
    if old.root.resolve() == new_root.resolve():
        raise LakehouseError(f"{new_root}: the new lake must be another folder than the old one")
    if new_root.exists() and (not new_root.is_dir() or any(new_root.iterdir())):
        raise LakehouseError(f"{new_root}: not an empty folder; `lakehouse migrate` makes a new lake there")
    made_folder = not new_root.exists()
    try:
        new_root.mkdir(parents=True, exist_ok=True)
        ducklake = DuckLake.of_folder(new_root.absolute())

        files: dict[str, list[str]] = {}

        def attach_old(con: duckdb.DuckDBPyConnection) -> None:
            with opening_catalog(old.root):
                con.execute(f"ATTACH {sql_literal(str(old.catalog_path))} AS {OLD} (READ_ONLY)")
            con.execute(f"USE {OLD}")
            files.update(committed_files(con, old.root))

        with making_catalog(ducklake, f"lakehouse migrate {old.root}", before=attach_old) as con:
            stored_rows, view_rows = _copy(con, old, ducklake, files, progress)
        snapshot = ducklake.snapshots()[-1][0]
        progress(f"{len(view_rows)} views, the same rows in both lakes; snapshot {snapshot}")
        return Migrated(stored_rows, view_rows, snapshot)
    except BaseException:
        # Nothing of a migration that did not finish is kept: the folder as it was (empty, or none).
        if made_folder:
            shutil.rmtree(new_root, ignore_errors=True)
        else:
            for child in new_root.iterdir():
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        raise


def _copy(
    con: duckdb.DuckDBPyConnection,
    old: Lake,
    ducklake: DuckLake,
    files: dict[str, list[str]],
    progress: Callable[[str], None],
) -> tuple[dict[str, int], dict[str, int]]:
    """Copy the old lake's rows into the new catalog (in its first transaction); the rows per stored table
    and per view, the same in both lakes."""
    for table in META_TABLES:
        con.execute(f"INSERT INTO meta.{table} BY NAME SELECT * FROM {OLD}.meta.{table}")
    # Each committed file of the old lake becomes a file of its table (linked, else copied: DuckLake never
    # changes a file, and the old lake's writers replace theirs by renaming), so that an input ingested
    # again replaces its own file, as in the old lake.
    stored_rows: dict[str, int] = {}
    for key, paths in files.items():
        folder = Path(ducklake.table_path(key))
        folder.mkdir(parents=True, exist_ok=True)
        committed = [Path(path) for path in paths if Path(path).name != SCHEMA_FILE]  # (of no rows)
        targets = []
        for path in committed:
            target = folder / stored_name(path.stem)
            try:
                os.link(path, target)
            except OSError:
                shutil.copy2(path, target)
            targets.append(str(target))
        if targets:
            register(con, key, targets)
        stored_rows[key] = count(con, f"SELECT count(*) FROM {DATASETS[key].stored}")
        if stored_rows[key]:
            progress(f"{DATASETS[key].stored}: {stored_rows[key]:,} rows in {len(committed)} files")
    view_rows: dict[str, int] = {}
    # A view this version added since the old lake's catalog was made is made here and not compared.
    in_old = {
        row[0]
        for row in con.execute(
            f"SELECT schema_name || '.' || view_name FROM duckdb_views() WHERE database_name = '{OLD}'"
        ).fetchall()
    }
    for view in view_files():
        if view.name not in in_old:
            progress(f"{view.name}: not in the old lake's catalog (made by an older lakehouse); not compared")
            continue
        before = count(con, f"SELECT count(*) FROM {OLD}.{view.name}")
        after = count(con, f"SELECT count(*) FROM {ALIAS}.{view.name}")
        if before != after:
            raise LakehouseError(f"{view.name}: {before:,} rows in {old.root}, {after:,} in the new lake; nothing kept")
        view_rows[view.name] = after
    return stored_rows, view_rows
