from __future__ import annotations

import ast
import contextlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import typer.testing

from lakehouse.base.datasets import DATASETS, SCHEMA_FILE
from lakehouse.base.ducklake import ALIAS, FOLDER_CATALOG, FOLDER_DATA
from lakehouse.base.lake import FORMAT_VAR, Lake, new_lake_format
from lakehouse.base.tables import STORED_SCHEMA
from lakehouse.base.testing import small_log, swf_job, write_swf
from lakehouse.data import sample_swf_paths
from lakehouse.ingest.swf import ingest_swf

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("LAKEHOUSE_SHARED_DATA", REPO.parent / "shared" / "data"))
SWF_DIR = SHARED / "swf"


def _one_command_per_app() -> None:
    """typer turns the app into its click command at every CliRunner.invoke (some 40 ms: the type hints
    of every command are evaluated again); the tests invoke it some two thousand times. The command is
    the same each time (the registry's commands are made when lakehouse.cli is imported), so each
    app's is made once per test process."""
    made: dict[int, tuple[object, object]] = {}
    make = typer.testing._get_command

    def command(app: typer.Typer) -> object:
        if id(app) not in made:
            made[id(app)] = (app, make(app))  # the app is kept, so that its id is not reused
        return made[id(app)][1]

    typer.testing._get_command = command  # type: ignore[assignment]


_one_command_per_app()


#: The test files that take longest (their test-seconds in a profile of `make test` of 2026-11-30, at a
#: reference of 3.6-3.8 s: 75, 74, 73, 51, 46, 43, 37, 35, 31, 28, 24, 22, 22, 21 and 21; the DuckLake
#: files added later, 25 and 22), in that order.
#: make test hands the files to its two workers in the order collected (--no-loadscope-reorder): the
#: longest first, so that the workers end within a short file of each other (2.2 s apart in a run of
#: 9:19, 7 s in one of 10:56).  pytest-xdist's own order, most tests first, handed out
#: test_ingest_faults.py (4 tests, 69 s then) among the last.  A file missing from the list only runs later.
LONGEST_FIRST = (
    "test_nightly.py",
    "test_reproduce.py",
    "test_cli_examples.py",
    "test_cli.py",
    "test_partitions.py",
    "test_campaign.py",
    "test_google_real.py",
    "test_nightly_faults.py",
    "test_predict.py",
    "test_lake_safety.py",
    "test_ducklake_lake.py",
    "test_predict_lake.py",
    "test_migrate.py",
    "test_ducklake_catalog.py",
    "test_ducklake_team.py",
    "test_nightly_html.py",
    "test_published_numbers.py",
    "test_schedule_plots.py",
)


@pytest.fixture(scope="module", autouse=True)
def _module_of_todays_format(request: pytest.FixtureRequest) -> Iterator[None]:
    """A module marked `today_format` makes its lakes in the DuckDB catalog's format, its module-wide
    fixtures' lakes too (see `_of_todays_format`)."""
    if request.node.get_closest_marker("today_format") is None:
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(FORMAT_VAR, "duckdb")
        yield


@pytest.fixture(autouse=True)
def _of_todays_format(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test marked `today_format` checks a lake of the DuckDB catalog's format, which lakehouse made
    before DuckLake and `migrate` moves from: every lake it makes, in this process or a command's, is made
    so ($LAKEHOUSE_FORMAT)."""
    if request.node.get_closest_marker("today_format") is not None:
        monkeypatch.setenv(FORMAT_VAR, "duckdb")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest files first, the others in pytest's order (a stable sort)."""
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.fixture(scope="session")
def duckdb_shell() -> str:
    """The `duckdb` shell, which the duckdb-cli dependency installs among this interpreter's scripts (not
    necessarily on PATH).  A dependency, not an option: a test that needs it fails if it is missing."""
    for folder in (sysconfig.get_path("scripts"), str(Path(sys.executable).parent)):
        if (shell := Path(folder) / "duckdb").is_file():
            return str(shell)
    pytest.fail("the duckdb shell is missing: duckdb-cli (a dependency in pyproject.toml) is not installed")


#: `make faults` (which sets LAKEHOUSE_FAULT_TRIALS) runs the property tests at their full count of
#: examples; `make test` runs a sixth of them, at least ten (a property that breaks breaks on most draws,
#: and the suite has ten minutes).
THOROUGH = "LAKEHOUSE_FAULT_TRIALS" in os.environ


def examples(full: int) -> int:
    """How many examples a property test draws: `full` under `make faults`, a sixth (at least 10) else."""
    return full if THOROUGH else max(10, full // 6)


def cli(*args: object, code: int = 0) -> typer.testing.Result:
    """`lakehouse ARGS` in this process (every argument as text); its exit code must be `code`, else the
    assertion shows what it printed and raised."""
    from lakehouse.cli import app  # (the command line, loaded by the tests that run it)

    result = typer.testing.CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result


def unboxed(text: str) -> str:
    """Rich's panels (an error, a help page) as one line of words (no borders, no wrapping)."""
    return " ".join(text.translate(str.maketrans("", "", "│╭╮╰╯─")).split())


def modules_loaded_by(statement: str, forbidden: tuple[str, ...]) -> list[str]:
    """The modules a fresh interpreter has loaded once it ran `statement`, among `forbidden` (names and
    their submodules) and the modules of a topic's folder of models/ but its declarations: the folder
    itself (the tables it stores, which the lake lists) and its `report` (which the registry lists)."""
    code = (
        f"import sys\n{statement}\n"
        f"print(sorted(m for m in sys.modules if m.startswith({forbidden!r}) "
        "or m.startswith('lakehouse.models.') and m.count('.') > 2 and not m.endswith('.report')))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return ast.literal_eval(loaded.strip())


def read_every_view(lake: Lake, columns: str = "*") -> int:
    """Select `columns` (every row and column, or `count(*)` where a test repeats the check and needs
    only that each view binds and scans) from every view of the lake, on one reader (a connection per
    view took seconds of a test); how many views.  Any view that fails to answer raises."""
    with lake.connect() as con:
        views = [row[0] for row in con.execute(
            "SELECT schema_name || '.' || view_name FROM duckdb_views() WHERE NOT internal").fetchall()]  # fmt: skip
        for view in views:
            con.execute(f"SELECT {columns} FROM {view}").pl()  # (.pl(): Python's datetimes would need pytz)
    return len(views)


def shared_or_skip(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared data not available: {path}")
    return path


def provenance_job_counts() -> dict[str, int]:
    """Job-line counts as published in swf/PROVENANCE.md (an independent source, not our parser)."""
    text = shared_or_skip(SWF_DIR / "PROVENANCE.md").read_text()
    counts = {}
    for row in re.finditer(r"^\| ([^|]+?\.swf\.gz) \|(?:[^|]*\|){4} ([\d,]+) \|", text, re.M):
        counts[row.group(1).strip()] = int(row.group(2).replace(",", ""))
    return counts


@pytest.fixture
def lake(tmp_path: Path) -> Lake:
    return Lake(tmp_path / "lake")


@pytest.fixture(scope="session")
def mini_lakes(tmp_path_factory: pytest.TempPathFactory) -> Callable[[int, Path], Path]:
    """`make(jobs, folder)`: a lake holding the log `mini` of `jobs` small jobs, ingested from
    `folder/mini.swf`, the test's own to change: a lake ingested once per session (per lake format:
    a test of today's format gets one of that format), restored before each test (an ingest per test
    cost half a second, for some 80 tests).  In place: the views of a lake of today's format read the
    files where it was made (a copy elsewhere needed its ~80 views made again, 0.3-0.5 s)."""
    made: dict[tuple[int, str], tuple[Path, Path]] = {}

    def make(jobs: int, folder: Path) -> Path:
        kind = (jobs, new_lake_format())
        if kind not in made:
            home = tmp_path_factory.mktemp(f"mini-{jobs}-{kind[1]}")
            write_swf(home / "mini.swf", *small_log(jobs))
            (result,) = ingest_swf(Lake(home / "lake"), [str(home / "mini.swf")])
            assert result.jobs == jobs, result
            pristine = tmp_path_factory.mktemp(f"mini-{jobs}-{kind[1]}-pristine") / "lake"
            shutil.copytree(home / "lake", pristine, symlinks=True)
            made[kind] = (home, pristine)
        home, pristine = made[kind]
        shutil.copy(home / "mini.swf", folder / "mini.swf")
        shutil.rmtree(home / "lake", ignore_errors=True)
        shutil.copytree(pristine, home / "lake", symlinks=True)
        return home / "lake"

    return make


@pytest.fixture
def cli_lake(mini_lakes: Callable[[int, Path], Path], tmp_path: Path) -> Path:
    """A lake of one 6-job log, `mini` (tmp_path/mini.swf), for the commands' tests."""
    return mini_lakes(6, tmp_path)


def dataset_folder(root: Path, key: str) -> Path:
    """Where a lake folder keeps the files of a dataset, in either format: a DuckLake lake in its table's
    folder of `data/` (`stored/KEY`), a lake of the DuckDB catalog's format in the dataset's own."""
    if (root / FOLDER_CATALOG).exists():
        return root / FOLDER_DATA / STORED_SCHEMA / key
    return DATASETS[key].directory(root)


def stored_files(root: Path, key: str) -> dict[str, Path]:
    """The files of a dataset in a lake folder, by the output they hold (a log's name, a trace's part):
    DuckLake names each `<output>.<12 hex>.parquet`, the DuckDB catalog's format `<output>.parquet`
    (beside its schema file).  What the folder holds, not what the catalog names."""
    paths = sorted(dataset_folder(root, key).glob("*.parquet"))
    if (root / FOLDER_CATALOG).exists():
        return {path.name.rsplit(".", 2)[0]: path for path in paths}
    return {path.stem: path for path in paths if path.name != SCHEMA_FILE}


def ingested_files(root: Path) -> dict[str, tuple[int, int]]:
    """A lake's ingested data and quarantine, file by file (size, modification time): what no test of a
    shared lake may change (its analysis.* tables it may)."""
    return {
        str(path.relative_to(root)): (path.stat().st_size, path.stat().st_mtime_ns)
        for key, dataset in DATASETS.items()
        if not dataset.folder.startswith("analysis/")
        for folder in [dataset_folder(root, key)]
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@contextlib.contextmanager
def left_unchanged(root: Path) -> Iterator[None]:
    before = ingested_files(root)
    yield
    assert ingested_files(root) == before, f"a test changed the ingested data of the shared lake {root}"


@contextlib.contextmanager
def of_the_default_format() -> Iterator[None]:
    """A session's shared lake is made in the default format, whichever test asks for it first."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(FORMAT_VAR, raising=False)
        yield


@pytest.fixture(scope="session")
def pwa_lake_session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Lake, list]:
    """All shared SWF logs ingested once per test session."""
    shared_or_skip(SWF_DIR)
    lake = Lake(tmp_path_factory.mktemp("pwa") / "lake")
    with of_the_default_format():
        results = ingest_swf(lake, [str(SWF_DIR)])
    return lake, results


@pytest.fixture
def pwa_lake(pwa_lake_session: tuple[Lake, list]) -> Iterator[tuple[Lake, list]]:
    """The session's lake of all shared SWF logs, checked unchanged after each test."""
    with left_unchanged(pwa_lake_session[0].root):
        yield pwa_lake_session


@pytest.fixture(scope="session")
def kth_lake_session(tmp_path_factory: pytest.TempPathFactory) -> Lake:
    """The embedded KTH-SP2 sample, ingested once per test session (tests add analysis results only)."""
    lake = Lake(tmp_path_factory.mktemp("kth") / "lake")
    with of_the_default_format():
        ingest_swf(lake, [str(p) for p in sample_swf_paths()])
    return lake


@pytest.fixture
def kth_lake(kth_lake_session: Lake) -> Iterator[Lake]:
    """The session's KTH-SP2 lake, its ingested data checked unchanged after each test."""
    with left_unchanged(kth_lake_session.root):
        yield kth_lake_session


@pytest.fixture
def no_runtime_lake(tmp_path: Path) -> Lake:
    """A lake with one log, `norun`, whose jobs never recorded a run time."""
    lake = Lake(tmp_path / "lake")
    jobs = [swf_job(i, 60 * i, 100, 4, 600, run_time=-1) for i in range(1, 20)]
    ingest_swf(lake, [str(write_swf(tmp_path / "norun.swf", jobs))])
    return lake


@pytest.fixture
def small_disk(tmp_path):
    """A 24 MB file system of its own (tmpfs: root and a kernel that lets us mount), else a skip."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small file system here ({made.stderr.decode().strip() or 'not root'})")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@contextlib.contextmanager
def filled(disk: Path, room_kb: int) -> Iterator[None]:
    """`disk` (a `small_disk`) full but for `room_kb` KB while the block runs, by a ballast file removed after."""
    ballast = disk / "ballast"
    ballast.write_bytes(b"\0" * max(shutil.disk_usage(disk).free - room_kb * 1024, 0))
    try:
        yield
    finally:
        ballast.unlink(missing_ok=True)


def rewrite_stored_runs(lake: Lake, pattern: str = "*.parquet", **values: object) -> None:
    """Set columns of the stored campaign rows (those of the files `pattern` of the campaign runs' table)
    to constants: how a test pretends that another build of the engine stored them.  A DuckLake lake's by
    an UPDATE (its catalog knows each file's size), one of today's format's by rewriting its files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from lakehouse.campaigns.runner import runs_folder

    if lake.ducklake is not None:
        named = "^" + ".*".join(re.escape(piece) for piece in pattern.split("*")) + "$"
        settings = ", ".join(f'"{name}" = ?' for name in values)
        lake.ducklake.write(
            "a test: the runs as another build stored them",
            lambda con: con.execute(
                f"UPDATE {ALIAS}.stored.analysis_campaign_runs SET {settings} "
                "WHERE regexp_matches(parse_filename(filename), ?)",
                [*values.values(), named],
            ),
        )
        return
    for path in runs_folder(lake).glob(pattern):
        table = pq.read_table(path)
        for name, value in values.items():
            column = pa.array([value] * table.num_rows, table.schema.field(name).type)
            table = table.set_column(table.schema.get_field_index(name), name, column)
        pq.write_table(table, path)


@pytest.fixture(scope="session")
def two_node_ray() -> Iterator[str]:
    """A Ray cluster on this machine: a head and a second node, one CPU each, started for the session
    and stopped after it; its address.  Its workers import this folder's modules (PYTHONPATH)."""
    from ray.cluster_utils import Cluster

    previous = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parent), previous]))
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        yield cluster.address
    finally:
        cluster.shutdown()
        if previous is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = previous
