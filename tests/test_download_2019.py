"""`lakehouse download google-2019` against a local bucket that speaks the storage JSON API
(tests/google_bucket.py): the listing read page by page, every shard checked against its listed MD5, a
cut shard continued where it stopped, a shard with other bytes refused, the choice of tables, shards
and export, and the folder ingested as it is (its name gives the cell)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lakehouse.base.lake import Lake
from lakehouse.cli import app
from lakehouse.ingest.download import URL_2019_ENV

from conftest import cli
from google_bucket import Faults, crc32c, serve

USAGE = "clusterdata_2019_c/instance_usage-000000000001.json.gz"


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A host with the bucket of cell c: a generated cell, in both exports, five shards of usage."""
    root = tmp_path_factory.mktemp("host")
    for export in ("json", "parquet"):
        cli("generate", "google-2019", root / export, "--cell", "c", "--hours", "3", "--jobs", "8", "--shards", "5",
            "--format", export)  # fmt: skip
        shutil.copytree(root / export / "cell_c", root / "storage" / "clusterdata_2019_c", dirs_exist_ok=True)
    return root / "storage"


def download(url: str, dest: Path, *args: str):
    return CliRunner().invoke(
        app, ["download", "google-2019", str(dest), "--cell", "c", *args], env={URL_2019_ENV: url}
    )


def test_a_cell_arrives_checked_page_by_page_and_ingests_as_it_is(host: Path, tmp_path: Path) -> None:
    faults = Faults(page=2)
    with serve(host, faults) as url:
        run = download(url, tmp_path / "traces")
    assert run.exit_code == 0, run.output
    json_shards = sorted(p.name for p in (host / "clusterdata_2019_c").glob("*.json.gz"))
    got = sorted(p.name for p in (tmp_path / "traces" / "clusterdata_2019_c").iterdir())
    assert got == json_shards  # the JSON export only (the default), every table, no .part left
    for name in got:
        assert (tmp_path / "traces" / "clusterdata_2019_c" / name).read_bytes() == (
            host / "clusterdata_2019_c" / name
        ).read_bytes()
    listings = [path for path, _ in faults.seen if path.startswith("/storage/v1/b/clusterdata_2019_c/o")]
    assert any("pageToken=" in path for path in listings)  # instance_usage's five shards: three pages of two
    cli("ingest", "google-2019", tmp_path / "traces" / "clusterdata_2019_c", "--lake", tmp_path / "lake")
    ((cells, rows),) = (
        Lake(tmp_path / "lake")
        .query("SELECT string_agg(DISTINCT cell), count(*) FROM google2019.instance_usage")
        .rows()
    )
    assert cells == "c" and rows > 0
    with serve(host) as url:
        again = download(url, tmp_path / "traces")
    assert again.exit_code == 0 and f"0 fetched, {len(got)} already whole" in " ".join(again.stderr.split())


def test_a_cut_shard_is_resumed_and_a_wrong_md5_refused(host: Path, tmp_path: Path) -> None:
    faults = Faults(cut_once={USAGE}, cut_after=20_000)
    with serve(host, faults) as url:
        run = download(url, tmp_path / "traces", "--tables", "instance_usage", "--shards", "1")
    assert run.exit_code == 0, run.output
    assert (tmp_path / "traces" / USAGE).read_bytes() == (host / USAGE).read_bytes()
    assert (USAGE, "bytes=20000-") in faults.seen  # a range request: the first 20,000 bytes were kept
    other = "clusterdata_2019_c/instance_usage-000000000002.json.gz"
    with serve(host, Faults(corrupt={other})) as url:
        bad = download(url, tmp_path / "traces", "--tables", "instance_usage", "--shards", "1-2")
    assert bad.exit_code == 1
    message = " ".join(bad.stderr.split())
    assert "instance_usage-000000000002.json.gz: MD5" in message and "is not the published" in message
    assert not (tmp_path / "traces" / other).exists() and not list((tmp_path / "traces").rglob("*.part"))


def test_a_shard_whose_crc32c_is_not_the_listed_one_is_refused(host: Path, tmp_path: Path) -> None:
    """The CRC-32C is checked too: alone (a composed object has no MD5) and after a right MD5."""
    assert crc32c(b"123456789") == 0xE3069283  # the bucket's own CRC-32C, at the algorithm's check value
    first, second = (f"clusterdata_2019_c/instance_usage-00000000000{n}.json.gz" for n in (1, 2))
    with serve(host, Faults(no_md5={first})) as url:
        right = download(url, tmp_path / "ok", "--tables", "instance_usage", "--shards", "1")
    assert right.exit_code == 0, right.output
    assert (tmp_path / "ok" / first).read_bytes() == (host / first).read_bytes()
    with serve(host, Faults(wrong_crc32c={first, second}, no_md5={second})) as url:
        bad = download(url, tmp_path / "bad", "--tables", "instance_usage", "--shards", "1-2")
    assert bad.exit_code == 1
    message = " ".join(bad.stderr.split())
    for shard in (first, second):
        assert f"{shard.split('/')[1]}: CRC-32C" in message and "is not the published" in message, message
        assert not (tmp_path / "bad" / shard).exists()


def test_tables_shards_and_export_choose_the_shards(host: Path, tmp_path: Path) -> None:
    with serve(host) as url:
        run = download(url, tmp_path / "t", "--tables", "instance_usage,machine_events", "--shards", "0-1",
                       "--export", "parquet")  # fmt: skip
        assert run.exit_code == 0, run.output
        got = sorted(p.name for p in (tmp_path / "t" / "clusterdata_2019_c").iterdir())
        assert got == [
            "instance_usage-000000000000.parquet.gz",
            "instance_usage-000000000001.parquet.gz",
            "machine_events-000000000000.parquet.gz",
        ]
        for args, message in (
            (["--tables", "task_usage"], "unknown table task_usage"),
            (["--shards", "5-2"], "--shards '5-2': the range ends before it starts"),
            (["--export", "csv"], "--export 'csv': json or parquet"),
            (["--tables", "machine_attributes"], "no shard of clusterdata_2019_c matches"),
        ):
            refused = download(url, tmp_path / "u", *args)
            assert refused.exit_code != 0 and message in " ".join(refused.stderr.split()), (args, refused.output)
