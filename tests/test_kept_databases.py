"""A process's readers of a DuckLake lake are cursors of one database of it, and its writer sessions of
another (lakehouse.base.kept_databases): what each sees must be what a database of its own would show."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from lakehouse.base.kept_databases import KEPT, READER_DATABASES, WRITER_DATABASES
from lakehouse.base.lake import Lake
from lakehouse.base.testing import small_log, write_swf
from lakehouse.ingest.status import Status
from lakehouse.ingest.swf import ingest_swf

from conftest import filled


def _jobs(lake: Lake) -> int:
    return int(lake.rows("SELECT count(*) FROM swf.jobs")[0][0])


def _ingest(lake: Lake, folder: Path, name: str, jobs: int) -> None:
    path = folder / f"{name}.swf"
    write_swf(path, *small_log(jobs))
    ingest_swf(lake, [str(path)])


def test_a_reader_sees_every_commit_made_after_its_database(lake: Lake, tmp_path: Path) -> None:
    _ingest(lake, tmp_path, "first", 5)
    kept = lake.cursor()  # the database is made here, and stays open with this cursor
    assert _jobs(lake) == 5
    _ingest(lake, tmp_path, "second", 7)  # another database (the writer's) commits
    assert _jobs(lake) == 12
    assert kept.execute("SELECT count(*) FROM swf.jobs").fetchone() == (12,)
    kept.close()


def test_a_lake_made_again_at_the_same_path_is_read_anew(tmp_path: Path) -> None:
    """Both lakes are at the same schema version with other tables: a database that kept the first lake's
    catalog would look the second lake's table up in the first one's schema, and not find it."""
    root = tmp_path / "lake"

    def made_with(table: str, value: int) -> Lake:
        lake = Lake(root).init()
        assert lake.ducklake is not None
        with lake.ducklake.connection() as con:
            con.execute(f"CREATE TABLE lake.main.{table} AS SELECT {value} AS v")
        return lake

    first = made_with("first_table", 1)
    held = first.cursor()  # a cursor still in use keeps the first lake's database
    assert first.rows("SELECT v FROM main.first_table") == [(1,)]
    shutil.rmtree(root)
    made_with("second_table", 2)
    assert Lake(root).rows("SELECT v FROM main.second_table") == [(2,)]
    held.close()


def test_a_snapshot_and_the_lake_now_are_two_databases(lake: Lake, tmp_path: Path) -> None:
    _ingest(lake, tmp_path, "first", 5)
    (first,) = lake.rows("SELECT max(snapshot_id) FROM ducklake_snapshots('lake')")[0]
    _ingest(lake, tmp_path, "second", 7)
    assert _jobs(Lake(lake.root, snapshot=first)) == 5
    assert _jobs(lake) == 12


def test_settings_one_reader_changes_are_not_the_others(lake: Lake, tmp_path: Path) -> None:
    """`disabled_optimizers` is a setting of the whole database: `joins_as_written` takes one of its own."""
    _ingest(lake, tmp_path, "first", 5)
    setting = "SELECT current_setting('disabled_optimizers')"
    with lake.joins_as_written():
        assert "join_order" in lake.rows(setting)[0][0]
        other = lake.cursor()
        assert "join_order" not in other.execute(setting).fetchall()[0][0]
        other.close()
    assert "join_order" not in lake.rows(setting)[0][0]


def test_readers_on_threads_at_once_each_answer(lake: Lake, tmp_path: Path) -> None:
    _ingest(lake, tmp_path, "first", 5)
    answers: list[int] = []
    failures: list[BaseException] = []

    def read() -> None:
        try:
            for _ in range(20):
                with lake.reading():
                    answers.append(_jobs(lake))
        except BaseException as exc:  # (reported below, in the test's thread)
            failures.append(exc)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    assert answers == [5] * 80


def test_a_process_keeps_a_few_databases_and_a_dropped_ones_cursor_still_answers(tmp_path: Path) -> None:
    lakes = [Lake(tmp_path / f"lake{i}") for i in range(KEPT + 1)]
    for i, lake in enumerate(lakes):
        _ingest(lake, tmp_path, f"log{i}", i + 1)
    first = lakes[0].cursor()
    for lake in lakes[1:]:
        lake.rows("SELECT 1")
    assert len(READER_DATABASES._databases) <= KEPT
    assert first.execute("SELECT count(*) FROM swf.jobs").fetchone() == (1,)
    first.close()
    assert [_jobs(lake) for lake in lakes] == [i + 1 for i in range(len(lakes))]


def _kept_for(lake: Lake) -> bool:
    """Whether this process keeps a writer database of the lake."""
    return any(key[0] == lake.root for key, _ in WRITER_DATABASES._databases)


def _manifest(lake: Lake) -> list[tuple[str, str]]:
    return [(str(d), str(n)) for d, n in lake.rows("SELECT dataset, name FROM meta.manifest ORDER BY ALL")]


def test_a_writer_database_kept_between_sessions_sees_another_processs_commit(lake: Lake, tmp_path: Path) -> None:
    """This process's writer database of the lake outlives its sessions; another process commits between
    two of them: the next session builds on that commit (no log ingested twice, none lost)."""
    _ingest(lake, tmp_path, "first", 5)
    assert _kept_for(lake)
    other = tmp_path / "other"
    other.mkdir()
    write_swf(other / "second.swf", *small_log(7))
    subprocess.run(
        [sys.executable, "-m", "lakehouse.cli", "ingest", "swf", str(other), "--lake", str(lake.root)],
        check=True,
        capture_output=True,
    )
    _ingest(lake, tmp_path, "third", 3)
    assert _jobs(lake) == 15
    assert sorted({name for _, name in _manifest(lake)}) == ["first", "second", "third"]
    again = ingest_swf(lake, [str(tmp_path / "first.swf"), str(other / "second.swf"), str(tmp_path / "third.swf")])
    assert [result.status for result in again] == [Status.unchanged] * 3
    assert _jobs(lake) == 15


def test_a_commit_that_fails_drops_the_writer_database_and_the_next_commits(small_disk: Path, tmp_path: Path) -> None:
    """Nothing of a commit that went wrong stays in what the process keeps of the catalog."""
    lake = Lake(small_disk / "lake")
    _ingest(lake, tmp_path, "first", 5)
    assert _kept_for(lake)
    # (48 KB: enough to read the catalog, whose write-ahead log's index takes 32 KB, not to commit to it)
    with filled(small_disk, 48):
        with pytest.raises(OSError, match="No space left") as failed, lake.writer() as session:
            session.con.execute("DELETE FROM meta.manifest")
        assert failed.traceback[-1].frame.code.name == "naming_a_full_disk"  # the commit itself failed
        assert not _kept_for(lake)
    _ingest(lake, tmp_path, "second", 7)
    assert _jobs(lake) == 12
