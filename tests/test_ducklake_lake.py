"""A DuckLake lake written by lakehouse (`init --ducklake`, lakehouse.base.ducklake_lake): each ingest
and report commits one snapshot that names the command; an unchanged log is skipped; a changed log
replaces its rows while the snapshot before still reads the old ones; the folder moves and is written
where it lands; a file that a killed writer left unregistered is removed by the next writer."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from lakehouse.base.ducklake import DuckLake
from lakehouse.base.ducklake_lake import DuckLakeWriter
from lakehouse.base.lake import Lake
from lakehouse.base.testing import small_log, swf_job, write_swf

from conftest import cli


@pytest.fixture(autouse=True)
def as_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each command run here sees the command line a user would have typed (a snapshot's message)."""
    import conftest

    real = conftest.cli

    def typed(*args: object, code: int = 0):
        monkeypatch.setattr("sys.argv", ["lakehouse", *map(str, args)])
        return real(*args, code=code)

    monkeypatch.setitem(globals(), "cli", typed)


def _snapshots(root: Path) -> list[str]:
    """The message of each snapshot after the empty first one."""
    assert Lake(root).ducklake is not None
    return [message or "" for _, _, _, message in Lake(root).ducklake.snapshots()[1:]]


def _jobs(root: Path, as_of: int | None = None) -> dict[str, int]:
    return dict(Lake(root, snapshot=as_of).rows("SELECT log, count(*) FROM swf.jobs GROUP BY log"))


@pytest.fixture
def logs(tmp_path: Path) -> tuple[Path, Path]:
    jobs, header = small_log(6)
    first = write_swf(tmp_path / "first.swf", jobs, header)
    second = write_swf(tmp_path / "second.swf", jobs[:4], header)
    return first, second


def test_each_write_is_a_snapshot_and_a_changed_log_keeps_its_old_rows_in_the_snapshot_before(
    tmp_path: Path, logs: tuple[Path, Path]
) -> None:
    root = tmp_path / "lake"
    first, second = logs
    cli("init", "--ducklake", "--lake", root)
    cli("ingest", "swf", first, "--lake", root)
    cli("ingest", "swf", first, second, "--lake", root)  # first unchanged: skipped
    messages = _snapshots(root)
    assert len(messages) == 3 and messages[0].startswith("lakehouse init --ducklake")
    assert all(f"ingest swf {first}" in m for m in messages[1:])
    assert _jobs(root) == {"first": 6, "second": 4}
    assert _jobs(root, as_of=2) == {"first": 6}
    # The log changes: its rows are replaced, and snapshot 3 still reads the six jobs it had.
    jobs, header = small_log(6)
    write_swf(first, [*jobs, swf_job(7, submit=100, run=5, procs=1, req_time=10)], header)
    cli("ingest", "swf", first, "--lake", root)
    assert _jobs(root) == {"first": 7, "second": 4}
    assert _jobs(root, as_of=3) == {"first": 6, "second": 4}
    stored = Path(DuckLake.of_folder(root).table_path("swf_jobs"))
    assert len(list(stored.glob("first.*.parquet"))) == 2  # the old one, for snapshot 3
    # A report stores its tables in a snapshot of its own.
    cli("report", "locality", "first", "--lake", root)
    assert "report locality first" in _snapshots(root)[-1]
    assert Lake(root).rows("SELECT count(*) > 0 FROM analysis.locality") == [(True,)]


def test_an_ingest_that_commits_between_its_logs_keeps_every_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The writer commits every 2 s of work, and places a log's files without its transaction: here it
    # commits after each log (a version of the writer kept only the first commit's logs of 19).
    folder = tmp_path / "logs"
    folder.mkdir()
    for number in range(4):
        write_swf(folder / f"log{number}.swf", *small_log(3 + number))
    root = tmp_path / "lake"
    cli("init", "--ducklake", "--lake", root)
    made = DuckLakeWriter.__init__

    def committing_after_each_log(writer: DuckLakeWriter, lake: Lake, commit_every: float) -> None:
        made(writer, lake, 0.0)

    monkeypatch.setattr(DuckLakeWriter, "__init__", committing_after_each_log)
    cli("ingest", "swf", folder, "--lake", root)
    assert _jobs(root) == {f"log{number}": 3 + number for number in range(4)}
    assert len([message for message in _snapshots(root) if "ingest swf" in message]) == 4


def test_rejected_lines_are_kept_and_an_input_without_any_has_no_quarantine_file(tmp_path: Path) -> None:
    jobs, header = small_log(4)
    clean = write_swf(tmp_path / "clean.swf", jobs, header)
    dirty = write_swf(tmp_path / "dirty.swf", jobs, header)
    dirty.write_text(dirty.read_text() + "this is not a job\n")
    root = tmp_path / "lake"
    cli("init", "--ducklake", "--lake", root)
    cli("ingest", "swf", clean, dirty, "--lake", root)
    assert Lake(root).rows("SELECT log, count(*) FROM swf.quarantine GROUP BY log") == [("dirty", 1)]
    assert _jobs(root) == {"clean": 4, "dirty": 4}
    folder = Path(DuckLake.of_folder(root).table_path("swf_quarantine"))
    assert [path.name.split(".")[0] for path in folder.glob("*.parquet")] == ["dirty"]
    assert "2 unchanged" in cli("ingest", "swf", clean, dirty, "--lake", root).output


def test_the_smallest_budget_reads_and_writes_the_catalog(
    tmp_path: Path, logs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckLake reads its catalog into the memory the budget holds, and cannot spill it (under 24 MB of
    DuckDB's pool it said "Failed to get table information from DuckLake", in a traceback): the smallest
    budget lakehouse takes holds it, for a reader and for the writer; a smaller one is refused, named."""
    root = tmp_path / "lake"
    cli("init", "--ducklake", "--lake", root)
    monkeypatch.setenv("LAKEHOUSE_MEMORY_LIMIT", "32MB")
    cli("ingest", "swf", logs[0], "--lake", root)
    assert cli("sql", "SELECT count(*) AS n FROM swf.jobs", "--lake", root, "-f", "csv").stdout.split() == ["n", "6"]
    said = " ".join(cli("sql", "SELECT 1", "--lake", root, "--memory-limit", "20MB", code=1).output.split())
    assert "is below 32 MB" in said and "Traceback" not in said


def test_the_folder_moves_and_is_written_where_it_lands(tmp_path: Path, logs: tuple[Path, Path]) -> None:
    first, second = logs
    cli("init", "--ducklake", "--lake", tmp_path / "here")
    cli("ingest", "swf", first, "--lake", tmp_path / "here")
    shutil.move(tmp_path / "here", tmp_path / "there")
    cli("ingest", "swf", second, "--lake", tmp_path / "there")
    assert _jobs(tmp_path / "there") == {"first": 6, "second": 4}
    assert not (tmp_path / "here").exists()


def test_a_file_no_snapshot_names_is_removed_by_the_next_writer(tmp_path: Path, logs: tuple[Path, Path]) -> None:
    root = tmp_path / "lake"
    first, second = logs
    cli("init", "--ducklake", "--lake", root)
    cli("ingest", "swf", first, "--lake", root)
    registered = sorted(Path(DuckLake.of_folder(root).table_path("swf_jobs")).glob("*.parquet"))
    # As a writer killed after it moved its output into the table's folder and before its commit leaves it.
    stray = Path(DuckLake.of_folder(root).table_path("swf_jobs")) / "second.0123456789ab.parquet"
    shutil.copy(registered[0], stray)
    assert _jobs(root) == {"first": 6}  # never read: no snapshot names it
    cli("ingest", "swf", second, "--lake", root)
    assert not stray.exists()
    assert _jobs(root) == {"first": 6, "second": 4}
    assert set(registered) <= set(Path(DuckLake.of_folder(root).table_path("swf_jobs")).glob("*.parquet"))


@pytest.mark.today_format  # (its lake: one that keeps no snapshots)
def test_as_of_is_refused_where_it_cannot_apply(tmp_path: Path, logs: tuple[Path, Path], cli_lake: Path) -> None:
    refused = cli("sql", "SELECT 1", "--lake", cli_lake, "--as-of", "1", code=1)
    assert "keeps no snapshots" in refused.output and "Traceback" not in refused.output
    root = tmp_path / "lake"
    cli("init", "--ducklake", "--lake", root)
    with pytest.raises(Exception, match="cannot take it"), Lake(root, snapshot=1).writer():
        pass


def test_reproduce_as_of_a_snapshot_gives_its_rows_after_a_later_ingest_changed_the_lake(tmp_path: Path) -> None:
    """`reproduce locality --as-of N`: the study's rows as they were at snapshot N, computed again after the
    log changed, and not stored (analysis.reproductions keeps today's)."""
    import random

    def log(seed: int) -> tuple[list[dict], dict[str, object]]:
        rng = random.Random(seed)
        jobs = [
            swf_job(i + 1, submit=60 * i, run=rng.randint(10, 5000), procs=rng.choice([1, 2, 4, 8]), req_time=6000,
                    user=rng.randint(1, 20))
            for i in range(3000)
        ]  # fmt: skip
        return jobs, {"Version": 2.2, "MaxProcs": 64, "UnixStartTime": 0, "TimeZoneString": "UTC"}

    root = tmp_path / "lake"
    path = tmp_path / "CTC-SP2-1996-3.1-cln.swf"  # a generated log under the name the study reads
    cli("init", "--ducklake", "--lake", root)
    write_swf(path, *log(1))
    cli("ingest", "swf", path, "--lake", root)
    ingested = len(Lake(root).ducklake.snapshots()) - 1
    before = cli("reproduce", "locality", "--lake", root, "--format", "csv").output
    write_swf(path, *log(2))
    cli("ingest", "swf", path, "--lake", root)
    after = cli("reproduce", "locality", "--lake", root, "--format", "csv").output
    snapshots = len(Lake(root).ducklake.snapshots())
    as_of = cli("reproduce", "locality", "--lake", root, "--format", "csv", "--as-of", ingested)
    assert len(Lake(root).ducklake.snapshots()) == snapshots  # shown, not stored
    measured = [line for line in before.splitlines() if "CTC-SP2-1996-3.1-cln" in line]
    assert len(measured) >= 4
    assert measured != [line for line in after.splitlines() if "CTC-SP2-1996-3.1-cln" in line]
    assert measured == [line for line in as_of.output.splitlines() if "CTC-SP2-1996-3.1-cln" in line]
    assert f"as of snapshot {ingested}; not stored" in as_of.output


def test_a_lake_an_older_version_made_is_brought_up_to_date_by_the_next_writer(
    tmp_path: Path, logs: tuple[Path, Path]
) -> None:
    """As a lake an older lakehouse made: a stored table without a column this version declares, a view
    missing, another version recorded.  The next writer adds the column (NULL in the older files) and makes
    the views again."""
    first, second = logs
    root = tmp_path / "lake"
    cli("init", "--ducklake", "--lake", root)
    cli("ingest", "swf", first, "--lake", root)
    ducklake = Lake(root).ducklake
    with ducklake.connection() as con:
        con.execute("USE lake")
        con.execute("BEGIN")
        con.execute("DROP VIEW swf.jobs_clean")
        con.execute("DROP VIEW swf.logs")  # (it reads the column)
        con.execute("ALTER TABLE stored.swf_logs DROP COLUMN time_zone_string")
        con.execute("UPDATE meta.catalog_version SET digest = 'an older one'")
        con.execute("COMMIT")
    cli("ingest", "swf", second, "--lake", root)
    lake = Lake(root)
    assert lake.rows("SELECT log, time_zone_string FROM swf.logs ORDER BY log") == [("first", None), ("second", "UTC")]
    assert lake.rows("SELECT count(*) FROM swf.jobs_clean") == [(10,)]


def test_a_reader_of_a_lake_an_older_version_made_is_told_to_rebuild_which_makes_the_views(
    tmp_path: Path, logs: tuple[Path, Path]
) -> None:
    """Before any writer of this version ran, a report reads the catalog an older one made: it lacks a view.
    The report says so in one line, with the command; that command makes the views (it had refused a
    DuckLake lake, which the message named all the same)."""
    root = tmp_path / "lake"
    cli("init", "--ducklake", "--lake", root)
    cli("ingest", "swf", logs[0], "--lake", root)
    with Lake(root).ducklake.connection() as con:
        con.execute("USE lake")
        con.execute("BEGIN")
        con.execute("DROP VIEW predict.swf_targets")
        con.execute("DROP VIEW predict.swf_job_targets")
        con.execute("UPDATE meta.catalog_version SET digest = 'an older one'")
        con.execute("COMMIT")
    said = " ".join(cli("sql", "SELECT count(*) FROM predict.swf_job_targets", "--lake", root, code=1).stderr.split())
    assert "the lake's catalog has no view predict.swf_job_targets" in said
    assert f"run `lakehouse catalog rebuild --lake {root}`" in said
    assert "catalog rebuilt" in cli("catalog", "rebuild", "--lake", root).stderr
    lake = Lake(root)
    # The log's six jobs each ran (100-105 s) and requested 200 s: six jobs with a walltime to predict.
    assert lake.rows("SELECT count(*) FROM predict.swf_job_targets") == [(6,)]
    assert lake.rows("SELECT count(*) FROM predict.swf_targets WHERE resource = 'walltime'") == [(6,)]
    assert lake.rows("SELECT digest <> 'an older one' FROM meta.catalog_version") == [(True,)]


def test_expiring_old_snapshots_deletes_the_files_only_they_read(tmp_path: Path, logs: tuple[Path, Path]) -> None:
    first, _ = logs
    root = tmp_path / "lake"
    cli("init", "--ducklake", "--lake", root)
    cli("ingest", "swf", first, "--lake", root)
    jobs, header = small_log(6)
    write_swf(first, jobs[:3], header)  # the log changes: its old file stays for the snapshot before
    cli("ingest", "swf", first, "--lake", root)
    latest = len(Lake(root).ducklake.snapshots()) - 1
    assert len(list(Path(DuckLake.of_folder(root).table_path("swf_jobs")).glob("first.*.parquet"))) == 2
    said = cli("snapshots", "--lake", root, "--expire-before", latest)
    assert f"{latest} snapshot(s) before {latest} forgotten" in said.output
    assert len(list(Path(DuckLake.of_folder(root).table_path("swf_jobs")).glob("first.*.parquet"))) == 1
    assert _jobs(root) == {"first": 3}
    gone = cli("sql", "SELECT 1", "--lake", root, "--as-of", latest - 1, code=1)
    assert f"the oldest kept is {latest}" in gone.output and "Traceback" not in gone.output
    wrong = cli("snapshots", "--lake", root, "--expire-before", latest + 5, code=1)
    assert f"the snapshots kept are {latest} to {latest}" in wrong.output


def test_the_nightly_page_names_the_snapshot_that_holds_what_it_shows(tmp_path: Path, logs: tuple[Path, Path]) -> None:
    first, _ = logs
    root, inbox = tmp_path / "lake", tmp_path / "inbox"
    inbox.mkdir()
    shutil.copy(first, inbox / first.name)
    config = tmp_path / "nightly.toml"  # the cheapest report: what is tested is the page's snapshot
    config.write_text('reports = ["logs"]\nfigures = false\n')
    cli("init", "--ducklake", "--lake", root)
    cli("nightly", "--inbox", inbox, "--lake", root, "--config", config)
    page = next((root / "reports").glob("*/index.html")).read_text()
    named = re.search(r"snapshot (\d+) holds what this page shows", page)
    assert named is not None and f"lakehouse shell --lake {root}" in page
    assert _jobs(root, as_of=int(named[1])) == {"first": 6}
    assert f"lakehouse sql --as-of {named[1]} --lake {root}" in page


def test_files_placed_in_batches_are_each_registered_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A table's files are registered a batch at a time by one pattern (their names share the batch's
    part): eight logs in batches of three, 3 + 3 + 2, each log once."""
    monkeypatch.setattr("lakehouse.base.ducklake_lake.REGISTER_BATCH", 3)
    folder = tmp_path / "logs"
    folder.mkdir()
    for number in range(8):
        write_swf(folder / f"log{number}.swf", *small_log(2 + number))
    root = tmp_path / "lake"
    cli("ingest", "swf", folder, "--lake", root)
    assert _jobs(root) == {f"log{number}": 2 + number for number in range(8)}
    files = Lake(root).rows("SELECT data_file FROM ducklake_list_files('lake', 'swf_jobs', schema => 'stored')")
    names = sorted(Path(path).name.rsplit(".", 2)[0] for (path,) in files)
    assert names == [f"log{number}" for number in range(8)]
    assert len({Path(path).name.rsplit(".", 2)[1][:8] for (path,) in files}) == 3  # three batches


@pytest.mark.parametrize("batch", [1, 50], ids=["registered at once", "registered at the commit"])
def test_an_output_placed_twice_in_one_session_keeps_its_last_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    """Placed again before the commit: the first file is dropped from the transaction (registered already)
    or removed (not yet: its batch's pattern would find it)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from lakehouse.base.datasets import DATASETS
    from lakehouse.base.writer import pending_path

    monkeypatch.setattr("lakehouse.base.ducklake_lake.REGISTER_BATCH", batch)
    lake = Lake(tmp_path / "lake").init()
    key = "analysis_imported_predictions"
    schema = DATASETS[key].schema

    def written(rows: int) -> Path:
        path = pending_path(DATASETS[key].file(lake.root, "toy"))
        path.parent.mkdir(parents=True, exist_ok=True)
        columns = {field.name: pa.nulls(rows, field.type) for field in schema}
        pq.write_table(pa.table(columns, schema=schema), path)
        return path

    with lake.writer() as writer:
        writer.place(key, written(2), "toy", 2)
        writer.place(key, written(5), "toy", 5)
    files = lake.rows(f"SELECT data_file FROM ducklake_list_files('lake', '{key}', schema => 'stored')")
    assert len(files) == 1
    assert lake.rows(f"SELECT count(*) FROM {DATASETS[key].stored}") == [(5,)]
    # The first file is gone from the disk too: DuckLake removes a file its transaction added then
    # dropped, and the writer one it never registered.
    assert len(list(Path(files[0][0]).parent.glob("toy.*.parquet"))) == 1


def test_a_batch_whose_part_a_committed_file_has_already_is_registered_by_its_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch's pattern would find the earlier files too (both ingests draw the same 8 hex here): the
    writer sees it and registers the batch's own files by their list, so no log is counted twice."""
    from types import SimpleNamespace

    monkeypatch.setattr("lakehouse.base.ducklake_lake.secrets", SimpleNamespace(token_hex=lambda n: "ab" * n))
    root = tmp_path / "lake"
    for first in (0, 3):
        folder = tmp_path / f"logs{first}"
        folder.mkdir()
        for number in range(first, first + 3):
            write_swf(folder / f"log{number}.swf", *small_log(2 + number))
        cli("ingest", "swf", folder, "--lake", root)
    assert _jobs(root) == {f"log{number}": 2 + number for number in range(6)}
