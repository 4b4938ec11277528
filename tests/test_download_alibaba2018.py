"""`lakehouse download alibaba-2018` against a local object store (tests/google_bucket.py's server): each
archive checked against its published SHA-256, a cut connection continued, a table's CSV extracted whole
and ingested as it is, a re-run that fetches nothing, and bad archives refused by name.

The archives are made here from the embedded real sample's first lines (the published SHA-256 of the real
archives is swapped for theirs: the test cannot fetch 49 GB)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from lakehouse.base.lake import Lake
from lakehouse.cli import app
from lakehouse.ingest import download as downloading
from lakehouse.ingest.alibaba2018 import ingest_alibaba2018

from google_bucket import Faults, alibaba_archive, alibaba_digests, serve

LINES = 400


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, bytes]]:
    """A folder as Alibaba's object store serves it, and the published digests set to its archives'."""
    folder = tmp_path / "oss"
    folder.mkdir()
    csvs = {table: alibaba_archive(folder, table, LINES) for table in ("machine_meta", "batch_task")}
    monkeypatch.setattr(downloading, "ALIBABA_2018_SHA256", downloading.ALIBABA_2018_SHA256 | alibaba_digests(folder))
    return folder, csvs


def download(url: str, dest: Path, *args: str):
    return CliRunner().invoke(
        app,
        ["download", "alibaba-2018", str(dest), "--tables", "machine_meta,batch_task", *args],
        env={downloading.ALIBABA_2018_URL_ENV: url},
    )


def test_the_archives_arrive_checked_extracted_and_ingest_as_they_are(store, tmp_path):
    folder, csvs = store
    dest = tmp_path / "trace"
    with serve(folder) as url:
        run = download(url, dest)
    assert run.exit_code == 0, run.output
    assert {p.name for p in dest.iterdir()} == {"machine_meta.csv", "batch_task.csv"}  # archives removed
    for table, csv in csvs.items():
        assert (dest / f"{table}.csv").read_bytes() == csv
    lake = Lake(tmp_path / "lake")
    ingest_alibaba2018(lake, [dest])
    counts = lake.rows(
        "SELECT (SELECT count(*) FROM alibaba2018.machine_meta), (SELECT count(*) FROM alibaba2018.batch_task), "
        "(SELECT count(*) FROM alibaba2018.quarantine)"
    )
    assert counts == [(LINES, LINES, 0)]
    with serve(folder, faults := Faults()) as url:
        again = download(url, dest)
    assert again.exit_code == 0 and not faults.seen
    assert "already extracted, not fetched again: machine_meta.csv, batch_task.csv" in " ".join(again.stderr.split())


def test_a_cut_connection_goes_on_where_it_stopped_and_archives_may_stay(store, tmp_path):
    folder, csvs = store
    faults = Faults(cut_once={"batch_task.tar.gz"}, cut_after=1_000)
    with serve(folder, faults) as url:
        run = download(url, tmp_path / "trace", "--keep-archives")
    assert run.exit_code == 0, run.output
    assert (folder / "batch_task.tar.gz").stat().st_size > 2_000  # (so that the cut falls inside it)
    assert ("batch_task.tar.gz", "bytes=1000-") in faults.seen
    assert (tmp_path / "trace" / "batch_task.tar.gz").read_bytes() == (folder / "batch_task.tar.gz").read_bytes()
    assert (tmp_path / "trace" / "batch_task.csv").read_bytes() == csvs["batch_task"]


def test_an_archive_whose_checksum_differs_is_refused_by_name_and_not_kept(store, tmp_path):
    folder, _ = store
    with serve(folder, Faults(corrupt={"machine_meta.tar.gz"})) as url:
        run = download(url, tmp_path / "trace")
    assert run.exit_code == 1
    said = " ".join(run.stderr.split())
    assert "failed: machine_meta.tar.gz: SHA-256" in said and "is not the published" in said
    assert not list((tmp_path / "trace").glob("machine_meta*"))


def test_an_archive_without_its_table_is_refused_naming_what_it_holds(store, tmp_path, monkeypatch):
    folder, _ = store
    alibaba_archive(folder, "machine_meta", LINES, member="data/other.csv")
    monkeypatch.setitem(downloading.ALIBABA_2018_SHA256, "machine_meta", alibaba_digests(folder)["machine_meta"])
    with serve(folder) as url:
        run = download(url, tmp_path / "trace")
    assert run.exit_code == 1
    assert "machine_meta.tar.gz: holds no machine_meta.csv (it holds data/other.csv)" in " ".join(run.output.split())
    assert "Traceback" not in run.output and not list((tmp_path / "trace").glob("*.part"))


def test_an_unknown_table_is_one_line(tmp_path):
    run = CliRunner().invoke(app, ["download", "alibaba-2018", str(tmp_path / "t"), "--tables", "batch_tasks"])
    assert run.exit_code == 1 and "unknown table batch_tasks; the tables are: machine_meta" in " ".join(
        run.output.split()
    )
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize("damage", ["not an archive", "cut short"])
def test_an_archive_that_cannot_be_read_is_one_line_and_leaves_no_csv(store, tmp_path, monkeypatch, damage):
    """An archive whose bytes are the published ones (the digest vouches for them) but are no whole
    tar.gz: the extraction names it and leaves no CSV, whole or partial."""
    folder, _ = store
    archive = folder / "machine_meta.tar.gz"
    whole = archive.read_bytes()
    archive.write_bytes(
        b"these are not the bytes of a tar.gz\n" if damage == "not an archive" else whole[: len(whole) // 2]
    )
    monkeypatch.setitem(downloading.ALIBABA_2018_SHA256, "machine_meta", alibaba_digests(folder)["machine_meta"])
    with serve(folder) as url:
        run = download(url, tmp_path / "trace")
    said = " ".join(run.output.split())
    assert run.exit_code == 1 and "machine_meta.tar.gz: cannot extract machine_meta.csv" in said, run.output
    assert "Traceback" not in run.output
    assert not list((tmp_path / "trace").glob("machine_meta.csv*"))
