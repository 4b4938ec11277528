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
from lakehouse.ingest.download import URL_ENV, parse_checksums
from lakehouse.ingest.google import ingest_google

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
