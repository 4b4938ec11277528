"""The DuckDB catalog of a lake, made from the files in ``sql/``.

A view file holds one SELECT and a header::

    -- name: swf.jobs
    -- grain: one row per job
    -- description: what the view is for (becomes COMMENT ON VIEW)

A setup file (the ingest manifest, the Google macros) holds statements run as they are, under a
``-- setup: what`` and a ``-- description:`` header.  A view reads the lake's data as the tables of the
`stored` schema (``FROM stored.swf_jobs``, one per dataset): here each is a view of the Parquet files
its writers committed, listed by absolute path, and it is the only view that changes when an ingest
commits (the views of sql/ name no file, so they are made once per version of the package).
``sql/audits/`` holds the audits (`lakehouse.base.audit`).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import duckdb

from lakehouse.base.datasets import DATASETS, SCHEMA_FILE, ingest_outputs
from lakehouse.base.errors import SqlFileError
from lakehouse.base.tables import TOPICS_PACKAGE, stored_tables, topic_packages

_HEADER = re.compile(r"^--\s*(name|grain|description|setup|audit|query)\s*:\s*(.*)$")


@dataclass(frozen=True)
class ViewFile:
    file_name: str
    name: str  # schema.view
    grain: str
    description: str
    body: str  # the SELECT

    @property
    def schema(self) -> str:
        return self.name.split(".", 1)[0]

    def ddl(self) -> str:
        comment = sql_literal(f"{self.description} Grain: {self.grain}.")
        return f"CREATE OR REPLACE VIEW {self.name} AS\n{self.body};\nCOMMENT ON VIEW {self.name} IS {comment};"


def sql_literal(text: str) -> str:
    """A SQL string literal (for paths and names DuckDB cannot take as bound parameters)."""
    return "'" + text.replace("'", "''") + "'"


def path_literal(path: str | os.PathLike[str]) -> str:
    """A file's path as a literal DuckDB's table functions (read_csv, read_parquet) read as that one
    file, never as a pattern: each glob character (`[`, `*`, `?`) stands in a class of its own
    (`m[1].csv` would otherwise read `m1.csv`, `p*.csv` every match)."""
    return sql_literal(re.sub(r"([\[*?])", r"[\1]", os.fspath(path)))


#: The files each ingested dataset's views read (dataset key -> absolute paths).
Files = dict[str, list[str]]


def stored_ddl(key: str, files: list[str]) -> str:
    """The view `stored.KEY` of a dataset's committed files (its schema file first, so that it binds with
    the dataset's columns and types when nothing is committed yet)."""
    dataset = DATASETS[key]
    listed = "[" + ", ".join(sql_literal(path) for path in files) + "]"
    by_name = ", union_by_name = true" if dataset.evolves else ""
    comment = sql_literal(f"The rows of {dataset.folder}/ as its writers committed them (the views of sql/ read this).")
    return (
        f"CREATE OR REPLACE VIEW {dataset.stored} AS SELECT * FROM read_parquet({listed}{by_name});\n"
        f"COMMENT ON VIEW {dataset.stored} IS {comment};"
    )


def committed_files(con: duckdb.DuckDBPyConnection, root: Path) -> Files:
    """For each dataset, its schema file and the files its writers committed that are in place: the
    outputs of the manifest's ingests, the analysis files of meta.outputs.  A file someone else put in
    a folder (`duckdb -readonly` can COPY anywhere it may write) is not read."""
    files: Files = {
        key: [dataset.directory(root).joinpath(SCHEMA_FILE).as_posix()] for key, dataset in DATASETS.items()
    }
    committed = [
        pair
        for dataset, name in con.execute("SELECT dataset, name FROM meta.manifest ORDER BY ALL").fetchall()
        for pair in ingest_outputs(dataset, name)
    ]
    committed += con.execute("SELECT dataset, name FROM meta.outputs ORDER BY ALL").fetchall()
    for key, stem in committed:
        if key in DATASETS and (path := DATASETS[key].file(root, stem)).exists():
            files[key].append(path.as_posix())
    return {key: sorted(paths) for key, paths in files.items()}


def adopt_analysis_files(con: duckdb.DuckDBPyConnection, root: Path) -> int:
    """Record the analysis files already in place as committed: once, for a lake made before
    meta.outputs listed them (its views globbed the folders).  Returns how many."""
    rows = [
        (key, path.stem, "found in place when the lake's outputs were first listed", count_rows(path))
        for key, dataset in DATASETS.items()
        if key.startswith("analysis_")
        for path in sorted(dataset.directory(root).glob("[!._]*.parquet"))
    ]
    if rows:
        con.executemany(named_query("output_record"), rows)
    return len(rows)


def count_rows(path: Path) -> int:
    import pyarrow.parquet as pq  # only a writer adopting old files needs it

    return int(pq.ParquetFile(path).metadata.num_rows)


@dataclass(frozen=True)
class SetupFile:
    file_name: str
    what: str
    description: str
    statements: str


def parse_header(file_name: str, text: str) -> tuple[dict[str, str], str]:
    """The `-- key: value` lines that open a file of `sql/`, and the SQL after them."""
    meta: dict[str, str] = {}
    body_lines: list[str] = []
    for line in text.splitlines():
        m = _HEADER.match(line)
        if m and not body_lines:
            meta[m.group(1)] = m.group(2).strip()
        else:
            body_lines.append(line)
    return meta, "\n".join(body_lines).strip()


def _require(file_name: str, meta: dict[str, str], keys: set[str]) -> None:
    missing = keys - meta.keys()
    if missing:
        raise SqlFileError(f"sql/{file_name}: header lacks {', '.join(sorted(missing))}")


def parse_view_file(file_name: str, text: str) -> ViewFile:
    meta, body = parse_header(file_name, text)
    _require(file_name, meta, {"name", "grain", "description"})
    return ViewFile(file_name, meta["name"], meta["grain"], meta["description"], body.rstrip(";"))


#: Folders of sql/ that hold no views: the audits and the package's fixed queries.
NOT_VIEWS = ("audits", "queries")
#: A reference to a view in a view's SQL: `schema.name` (a column of an alias, `t.cell`, is not a view).
_REFERENCE = re.compile(r"(?<![\w.])([a-z][a-z0-9_]*\.[a-z_][a-z0-9_]*)(?![\w(])")


@functools.cache
def _sql_files() -> tuple[tuple[str, str], ...]:
    """Every .sql file of sql/ and of its topic folders (sql/cluster/...), by its path in sql/: read once
    per process (the package's files do not change under it; each writer session read and parsed them
    three times, some 10 ms)."""
    root = resources.files("lakehouse.sql")
    found = []
    for entry in root.iterdir():
        if entry.name.endswith(".sql"):
            found.append((entry.name, entry.read_text(encoding="utf-8")))
        elif entry.is_dir() and entry.name not in NOT_VIEWS and not entry.name.startswith(("_", ".")):
            found += [
                (f"{entry.name}/{file.name}", file.read_text(encoding="utf-8"))
                for file in entry.iterdir()
                if file.name.endswith(".sql")
            ]
    return tuple(sorted(found))


def setup_files() -> list[SetupFile]:
    """The statements run before the views (schemas, the manifest table, macros), in order."""
    return list(_setups_of(tuple(_sql_files())))


@functools.cache
def _setups_of(files: tuple[tuple[str, str], ...]) -> tuple[SetupFile, ...]:
    found = []
    for name, text in files:
        meta, body = parse_header(name, text)
        if "setup" in meta:
            _require(name, meta, {"setup", "description"})
            found.append(SetupFile(name, meta["setup"], meta["description"], body))
    return tuple(found)


def view_files() -> list[ViewFile]:
    """Every view of the package, in the order it must be created: each after the views it reads (DuckDB
    binds a view when it is made), else by its file's path.  So a view's file may sit in any folder of a
    topic and needs no number; one that reads itself round a cycle is refused, naming the cycle."""
    return list(_views_of(tuple(_sql_files())))


@functools.cache
def _views_of(files: tuple[tuple[str, str], ...]) -> tuple[ViewFile, ...]:
    views = [parse_view_file(name, text) for name, text in files if "setup" not in parse_header(name, text)[0]]
    views += declared_views()
    by_name = {v.name: v for v in views}
    reads = {v.name: sorted({r for r in _REFERENCE.findall(v.body) if r in by_name and r != v.name}) for v in views}
    ordered: list[ViewFile] = []
    state: dict[str, str] = {}  # name -> "visiting" | "done"

    def visit(view: ViewFile, path: tuple[str, ...]) -> None:
        if state.get(view.name) == "done":
            return
        if state.get(view.name) == "visiting":
            cycle = " -> ".join((*path[path.index(view.name) :], view.name))
            raise SqlFileError(f"sql/{view.file_name}: views that read each other round a cycle: {cycle}")
        state[view.name] = "visiting"
        for name in reads[view.name]:
            visit(by_name[name], (*path, view.name))
        state[view.name] = "done"
        ordered.append(view)

    for view in views:
        visit(view, ())
    return tuple(ordered)


def declared_views() -> list[ViewFile]:
    """The one-line view of each stored table declared with its grain and description: every file of it,
    as stored (lakehouse.base.tables).  Its `file_name` says where it is declared, for the messages."""
    return [
        ViewFile(f"({table.view}: a StoredTable)", table.view, table.grain, table.description, table.select)
        for table in stored_tables()
        if table.grain
    ]


@functools.cache
def named_query(name: str, topic: str | None = None) -> str:
    """The SQL of a fixed query: `sql/queries/<name>.sql` (the ground floor's), or, given a topic's
    package (its `__package__`, lakehouse.models.NAME), `<name>.sql` in that topic's folder, so
    that a topic's queries sit with its model.  Python builds SQL from what a user gives (a log name, a
    condition, a grouping), and keeps a query beside the constants it is made of where those are shared
    with other code (the volatility report's bins and counts)."""
    if topic is None:
        path, shown = resources.files("lakehouse.sql").joinpath("queries", f"{name}.sql"), f"sql/queries/{name}.sql"
    else:
        path, shown = resources.files(topic).joinpath(f"{name}.sql"), f"{topic_folder(topic)}/{name}.sql"
    meta, body = parse_header(shown, path.read_text(encoding="utf-8"))
    if "query" not in meta or not body:
        raise SqlFileError(f"{shown}: needs a `-- query:` line, then the query")
    return body.rstrip().rstrip(";")


def topic_folder(topic: str) -> str:
    """A topic package's folder as the repository names it (lakehouse.models.NAME: models/NAME)."""
    return "models/" + topic.removeprefix(f"{TOPICS_PACKAGE}.").replace(".", "/")


def named_queries() -> list[tuple[str, str | None]]:
    """(name, topic) of every fixed query: the ground floor's, then each topic folder's."""
    found: list[tuple[str, str | None]] = [
        (name, None) for name in _query_names(resources.files("lakehouse.sql").joinpath("queries"))
    ]
    for topic in topic_packages():
        found += [(name, topic) for name in _query_names(resources.files(topic))]
    return sorted(found, key=lambda pair: (pair[1] or "", pair[0]))


def _query_names(folder: Traversable) -> list[str]:
    return [entry.name.removesuffix(".sql") for entry in folder.iterdir() if entry.name.endswith(".sql")]


def prepare_catalog(con: duckdb.DuckDBPyConnection, root: Path) -> dict[str, str]:
    """Run the setup files (the manifest is created only if new) and record where the lake is; returns
    the DDL of the views that are as their statements made them (`refresh_views` makes the others)."""
    fresh, listed = not _has_table(con, "meta", "manifest"), _has_table(con, "meta", "outputs")
    # One transaction, as the views' (each statement on its own synced the catalog's log: 20 ms of
    # every writer session, 12 ms so).
    con.begin()
    try:
        for setup in setup_files():
            try:
                con.execute(setup.statements)
            except duckdb.Error as exc:
                raise SqlFileError(f"sql/{setup.file_name} ({setup.what}): {exc}") from exc
        # Where the views read: a lake moved or copied elsewhere must be rebuilt before it is read
        # (`Lake.connect` compares), or its views would read the old place.
        con.execute(f"CREATE OR REPLACE VIEW meta.lake AS SELECT {sql_literal(root.as_posix())} AS root")
        con.execute(
            "COMMENT ON VIEW meta.lake IS 'The folder the views were built to read (lakehouse catalog rebuild).'"
        )
        if fresh and restore_meta(con, root):
            pass  # a catalog lost or broken: its tables come back from their copies (`save_meta`)
        elif not listed:
            adopt_analysis_files(con, root)
    except BaseException:
        con.rollback()
        raise
    con.commit()
    return _views_as_made(con)


#: Each view the catalog still holds as its statements made it, with those statements.  A view dropped
#: since has no row in duckdb_views(); one redefined (in a DuckDB shell, say) has lost its comment, since
#: CREATE OR REPLACE VIEW drops it.  (DuckDB's own text of a view is no witness: it lists an EXCLUDE's
#: columns in a different order from one creation to the next.)
_VIEWS_AS_MADE = """
    SELECT m.name, m.ddl FROM meta.views AS m
    JOIN duckdb_views() AS d ON d.schema_name || '.' || d.view_name = m.name AND NOT d.internal
    WHERE d.comment IS NOT DISTINCT FROM m.made_comment"""


def _views_as_made(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """The statements of the views that are as those statements made them; the others are made again.
    Re-creating all ~50 views took a quarter to a whole second of every command that writes to the lake."""
    return dict(con.execute(_VIEWS_AS_MADE).fetchall())


#: The catalog's own tables (the views are made from sql/ and the lake's files).  The writer keeps a
#: Parquet copy of each beside the catalog at every commit, so that a catalog lost or overwritten is
#: rebuilt from them (`lakehouse catalog rebuild`).
META_TABLES = ("manifest", "outputs", "nightly_runs", "nightly_files", "nightly_owed")
META_FOLDER = "meta"


def meta_copy(root: Path, table: str) -> Path:
    return root / META_FOLDER / f"{table}.parquet"


def save_meta(con: duckdb.DuckDBPyConnection, root: Path) -> None:
    """Write the copies of the catalog's tables (each aside, then renamed over the last one)."""
    (root / META_FOLDER).mkdir(exist_ok=True)
    for table in META_TABLES:
        final = meta_copy(root, table)
        tmp = final.with_name(f".{final.name}.tmp")
        con.execute(f"COPY meta.{table} TO {sql_literal(tmp.as_posix())} (FORMAT parquet)")
        os.replace(tmp, final)


def restore_meta(con: duckdb.DuckDBPyConnection, root: Path) -> bool:
    """Fill a new catalog's tables from their copies; False when there are none (a new lake)."""
    copies = {table: meta_copy(root, table) for table in META_TABLES}
    if not any(path.exists() for path in copies.values()):
        return False
    for table, path in copies.items():
        if path.exists():
            try:
                con.execute(f"INSERT INTO meta.{table} BY NAME SELECT * FROM read_parquet({path_literal(path)})")
            except duckdb.Error as exc:  # another table's copy, a file that is not Parquet
                first = str(exc).splitlines()[0]
                raise SqlFileError(
                    f"{path}: not a copy of meta.{table} ({first}); restore the lake's own copy, or move it away "
                    "and rebuild (the lake then forgets what it recorded there)"
                ) from None
    return True


def meta_problem(root: Path) -> str | None:
    """Why the copies of the catalog's tables (meta/) could not fill a new catalog, if they could not
    (a truncated file, another lake's or another program's): tried in a database of its own, so that a
    rebuild moves nothing aside before it knows it can remake what it moves."""
    con = duckdb.connect()
    try:
        for setup in setup_files():
            con.execute(setup.statements)
        restore_meta(con, root)
    except (duckdb.Error, SqlFileError) as exc:
        return str(exc).strip().splitlines()[0]
    finally:
        con.close()
    return None


def _has_table(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> bool:
    found = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE schema_name = $1 AND table_name = $2", [schema, table]
    ).fetchone()
    return bool(found and found[0])


@functools.cache
def schemas_digest() -> str:
    """A digest of every dataset's schema.  A view keeps the columns and types it was made with, so a
    view of sql/ whose statement is unchanged is made again when a stored table it reads changed columns
    (a package that added one): recorded with each view's statement, a changed digest changes them all."""
    import hashlib

    text = "\n".join(f"{key}: {dataset.schema}" for key, dataset in sorted(DATASETS.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def catalog_views(files: Files) -> list[tuple[str, str, str]]:
    """(name, DDL, where it is declared) of every view of the catalog, in the order they are made: the
    stored tables of the committed `files` first, then the views of sql/."""
    schemas = f"\n-- dataset schemas {schemas_digest()}"
    stored = [(DATASETS[key].stored, stored_ddl(key, paths), "lakehouse.base.datasets") for key, paths in files.items()]
    return stored + [(view.name, view.ddl() + schemas, f"sql/{view.file_name}") for view in view_files()]


def refresh_views(con: duckdb.DuckDBPyConnection, root: Path, applied: dict[str, str]) -> dict[str, str]:
    """(Re)create the views whose DDL differs from `applied` (the files an ingest added or replaced
    change the stored tables that list them, nothing else); returns the DDL of every view."""
    made: dict[str, str] = {}
    # One transaction for all of them: each statement on its own wrote and synced the catalog's log
    # (re-creating the ~160 views of a copied lake took 0.9-1.3 s, 0.5 s in one transaction).
    con.begin()
    try:
        for name, ddl, where in catalog_views(committed_files(con, root)):
            if applied.get(name) == ddl:
                continue
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {name.split('.', 1)[0]}")
            try:
                con.execute(ddl)
            except duckdb.Error as exc:
                raise SqlFileError(f"{where} ({name}): {exc}") from exc
            made[name] = ddl
        if made:  # what each view was made by, and its comment as DuckDB keeps it, in one statement
            rows = ", ".join(f"({sql_literal(name)}, {sql_literal(ddl)})" for name, ddl in made.items())
            con.execute(
                f"""INSERT OR REPLACE INTO meta.views
                SELECT m.name, m.ddl, d.comment FROM (VALUES {rows}) AS m(name, ddl)
                JOIN duckdb_views() AS d ON d.schema_name || '.' || d.view_name = m.name"""
            )
    except BaseException:
        con.rollback()
        raise
    con.commit()
    applied.update(made)  # (only once they are committed: a view rolled back is made again next time)
    return applied
