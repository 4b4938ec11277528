"""`lakehouse download google-2011` against a local bucket (tests/google_bucket.py): every file checked
against SHA256SUM, a cut connection continued where it stopped, a stopped run continued by the next, a
file with other bytes refused, and the folder ingested as it is."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from lakehouse.base.lake import Lake
from lakehouse.cli import app
from lakehouse.data import sample_google_trace
from lakehouse.ingest import download as downloads
from lakehouse.ingest.download import URL_ENV, parse_checksums
from lakehouse.ingest.google import ingest_google

from conftest import cli as run
from google_bucket import Faults, make_bucket, serve

USAGE = "task_usage/part-00000-of-00500.csv.gz"


@pytest.fixture(scope="module")
def bucket(tmp_path_factory) -> Path:
    return make_bucket(tmp_path_factory.mktemp("bucket") / "clusterdata-2011-2")


def download(url: str, dest: Path, *args: str):
    return CliRunner().invoke(app, ["download", "google-2011", str(dest), *args], env={URL_ENV: url})


def test_the_whole_bucket_arrives_checked_and_ingests_as_it_is(bucket, tmp_path):
    with serve(bucket) as url:
        run = download(url, tmp_path / "trace")
    assert run.exit_code == 0, run.output
    published = parse_checksums((bucket / "SHA256SUM").read_text())
    assert all((tmp_path / "trace" / f.path).read_bytes() == (bucket / f.path).read_bytes() for f in published)
    assert not list((tmp_path / "trace").rglob("*.part"))
    assert "6 fetched, 0 already whole, 0 failed" in " ".join(run.stderr.split())
    # The folder is a trace as `ingest google` takes it: the same rows as the sample itself.
    ours, theirs = Lake(tmp_path / "a"), Lake(tmp_path / "b")
    ingest_google(ours, tmp_path / "trace")
    ingest_google(theirs, sample_google_trace())
    count = "SELECT (SELECT count(*) FROM google.task_usage), (SELECT count(*) FROM google.machine_events)"
    assert ours.rows(count) == theirs.rows(count)
    # Again: nothing is fetched twice.
    with serve(bucket) as url:
        again = download(url, tmp_path / "trace")
    assert again.exit_code == 0 and "0 fetched, 6 already whole" in " ".join(again.stderr.split())


def test_a_cut_connection_goes_on_where_it_stopped(bucket, tmp_path):
    faults = Faults(cut_once={USAGE}, cut_after=50_000)
    with serve(bucket, faults) as url:
        run = download(url, tmp_path / "trace", "--tables", "task_usage")
    assert run.exit_code == 0, run.output
    assert (tmp_path / "trace" / USAGE).read_bytes() == (bucket / USAGE).read_bytes()
    assert (USAGE, "bytes=50000-") in faults.seen  # a range request: the first 50,000 bytes were kept


def test_a_run_stopped_part_way_is_continued_by_the_next(bucket, tmp_path):
    left = tmp_path / "trace" / (USAGE + ".part")  # what a run killed part way through leaves
    left.parent.mkdir(parents=True)
    left.write_bytes((bucket / USAGE).read_bytes()[:123_456])
    faults = Faults()
    with serve(bucket, faults) as url:
        run = download(url, tmp_path / "trace", "--tables", "task_usage")
    assert run.exit_code == 0, run.output
    assert (USAGE, "bytes=123456-") in faults.seen
    assert (tmp_path / "trace" / USAGE).read_bytes() == (bucket / USAGE).read_bytes() and not left.exists()


def test_a_file_whose_checksum_differs_is_refused_by_name_and_not_kept(bucket, tmp_path):
    wrong = "job_events/part-00001-of-00500.csv.gz"
    with serve(bucket, Faults(corrupt={wrong})) as url:
        run = download(url, tmp_path / "trace", "--tables", "job_events")
    assert run.exit_code == 1
    said = [line for line in run.stderr.splitlines() if line.startswith("failed:")]
    assert len(said) == 1 and f"{wrong}: SHA-256" in said[0] and "is not the published" in said[0]
    assert not (tmp_path / "trace" / wrong).exists() and not list((tmp_path / "trace").rglob("*.part"))
    assert (tmp_path / "trace" / "job_events" / "part-00000-of-00500.csv.gz").exists()


def test_tables_and_parts_choose_the_files(bucket, tmp_path):
    with serve(bucket) as url:
        run = download(url, tmp_path / "trace", "--tables", "job_events,machine_events", "--parts", "1-2")
    assert run.exit_code == 0, run.output
    got = sorted(p.relative_to(tmp_path / "trace").as_posix() for p in (tmp_path / "trace").rglob("*.gz"))
    assert got == [  # machine_events has one part: it comes whole
        "job_events/part-00001-of-00500.csv.gz",
        "job_events/part-00002-of-00500.csv.gz",
        "machine_events/part-00000-of-00001.csv.gz",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tables", "task_usag"], "unknown table task_usag; the tables are: "),
        (["--parts", "9-2"], "the range ends before it starts"),
        (["--parts", "x"], "give a part number or a range such as 0-9"),
    ],
)
def test_a_bad_request_is_one_line(bucket, tmp_path, args, message):
    with serve(bucket) as url:
        run = download(url, tmp_path / "trace", *args)
    assert run.exit_code == 1 and message in " ".join(run.stderr.split()) and "Traceback" not in run.output


@pytest.mark.parametrize(
    "hostile",
    ["job_events/../../outside/part-00000-of-00001.csv.gz", "/tmp/part-00000-of-00001.csv.gz",
     "job_events//part-00000-of-00001.csv.gz", "job_events\\\\..\\\\part-00000-of-00001.csv.gz"],
)  # fmt: skip
def test_a_listing_path_that_leaves_the_download_folder_refuses_the_listing(tmp_path, monkeypatch, hostile):
    bucket = make_bucket(tmp_path / "bucket")
    with (bucket / "SHA256SUM").open("a") as listing:
        listing.write(f"{'0' * 64}  {hostile}\n")
    dest = tmp_path / "work" / "dest"
    with serve(bucket) as url:
        monkeypatch.setenv(URL_ENV, url)
        result = run("download", "google-2011", dest, code=1)
    said = " ".join(result.stderr.split())
    assert "the listing is refused" in said and "Traceback" not in said, said
    assert not (tmp_path / "work" / "outside").exists() and not (dest / "job_events").exists()


def test_a_file_listed_twice_refuses_the_listing():
    from lakehouse.ingest.download import DownloadError, parse_checksums

    listing = (
        f"{'a' * 64}  job_events/part-00000-of-00500.csv.gz\n{'b' * 64}  ./job_events/part-00000-of-00500.csv.gz\n"
    )
    with pytest.raises(DownloadError, match="line 2: 'job_events/part-00000-of-00500.csv.gz' is listed already"):
        parse_checksums(listing)


def test_a_body_longer_than_announced_is_cut_and_refused(tmp_path, monkeypatch):
    bucket = make_bucket(tmp_path / "bucket")
    grown = "machine_events/part-00000-of-00001.csv.gz"
    with serve(bucket, Faults(grow={grown})) as url:
        monkeypatch.setenv(URL_ENV, url)
        result = run("download", "google-2011", tmp_path / "dest", "--tables", "machine_events", code=1)
    said = " ".join(result.stderr.split())
    assert "announced" in said and "sends more: not fetched" in said, said
    assert not (tmp_path / "dest" / grown).exists() and not list((tmp_path / "dest").rglob("*.part"))


def test_an_endless_listing_is_read_up_to_its_bound(tmp_path, monkeypatch):
    bucket = make_bucket(tmp_path / "bucket")
    monkeypatch.setattr(downloads, "MAX_LISTING", 1000)  # (the real bound is 16 MB; the listing is ~700 bytes)
    with (bucket / "SHA256SUM").open("a") as listing:
        listing.write("\n" * 2000)
    with serve(bucket) as url:
        monkeypatch.setenv(URL_ENV, url)
        result = run("download", "google-2011", tmp_path / "dest", code=1)
    assert "longer than" in result.stderr and "not a listing of the trace" in result.stderr


def test_ctrl_c_stops_the_transfers_under_way_at_once_and_keeps_what_came(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    bucket = make_bucket(tmp_path / "bucket")
    slow = "task_usage/part-00000-of-00500.csv.gz"  # (365 KB: 7 s at this pace)
    dest = tmp_path / "dest"
    with serve(bucket, Faults(slow={slow}, slow_pause=0.3)) as url:
        process = subprocess.Popen(
            [sys.executable, "-m", "lakehouse.cli", "download", "google-2011", str(dest), "--tables", "task_usage"],
            env={**os.environ, URL_ENV: url}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        partial = dest / (slow + ".part")
        deadline = time.monotonic() + 30
        while not (partial.exists() and partial.stat().st_size > 0) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert partial.exists(), process.communicate(timeout=30)
        process.send_signal(signal.SIGINT)
        stopped = time.monotonic()
        _, err = process.communicate(timeout=30)
    # (A block is 64 KB, 1.2 s at this pace; the rest of the file would take 5 s more.)
    assert time.monotonic() - stopped < 3.5, err.decode()
    assert process.returncode == 130, err.decode()
    assert partial.exists() and not (dest / slow).exists()  # what came is kept, for the next run
