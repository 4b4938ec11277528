"""Bad input to the Google ingest: one test per class, clear messages, the rest still ingested."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lakehouse.base.lake import Lake
from lakehouse.cli import app
from lakehouse.data import sample_google_trace
from lakehouse.ingest.google import ingest_google

from conftest import cli as run
from conftest import stored_files

# Real lines of job_events part 0 (8 columns).
JOB_LINES = [
    "0,,3418309,0,70s3v5qRyCO/1PCdI6fVXnrW8FU/w+5CKRSa72xgcIo=,3,IHgtoxEBuUTHNbUeVs4hzptMY4n8rZKLbZg+Jh5fNG4=,"
    "wAmgn2H74cdoMuSFwJF3NaUEaudVBTZ0/HaNZBwIpEQ=",
    "0,,3418314,0,70s3v5qRyCO/1PCdI6fVXnrW8FU/w+5CKRSa72xgcIo=,3,L52XDyhi9x9ChmVBZ1qavOFmnzPeVsvQ2QyGmBZcV4s=,"
    "ShNjeaoUeqGV2i9WMKEX9HTeuc9K2Fdfovibt7Mp6qI=",
    "5611824441,,3418314,4,70s3v5qRyCO/1PCdI6fVXnrW8FU/w+5CKRSa72xgcIo=,3,L52XDyhi9x9ChmVBZ1qavOFmnzPeVsvQ2QyGmBZcV4s=,"
    "ShNjeaoUeqGV2i9WMKEX9HTeuc9K2Fdfovibt7Mp6qI=",
]
MACHINE_LINES = ["0,5,0,HofLGzk1Or/8Ildj2+Lqv0UGGvY82NLoni8+J/Yy0RU=,0.5,0.2493"]


def write_part(root: Path, table: str, number: int, total: int, lines: list[str]) -> Path:
    path = root / table / f"part-{number:05d}-of-{total:05d}.csv.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress("".join(f"{line}\n" for line in lines).encode(), mtime=0))
    return path


def by_part(results) -> dict[str, object]:
    return {f"{r.table}/{r.part}" if r.part else r.table: r for r in results}


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    root = tmp_path / "trace"
    write_part(root, "job_events", 0, 2, JOB_LINES)
    write_part(root, "job_events", 1, 2, JOB_LINES[2:])
    write_part(root, "machine_events", 0, 1, MACHINE_LINES)
    return root


def test_a_good_trace(trace, tmp_path):
    lake = Lake(tmp_path / "lake")
    results, warnings = ingest_google(lake, trace)
    assert [(r.table, r.part, r.status, r.rows) for r in results] == [
        ("job_events", "part-00000-of-00002", "ok", 3),
        ("job_events", "part-00001-of-00002", "ok", 1),
        ("machine_events", "part-00000-of-00001", "ok", 1),
    ]
    assert warnings == []
    assert lake.query("SELECT count(*) AS n FROM google.job_events")["n"][0] == 4


@pytest.mark.parametrize(
    ("bad_line", "reason"),
    [
        ("0,,3418309,0,user,3", "Expected Number of Columns: 8 Found: 6"),  # wrong column count
        ("0,,34x8309,0,user,3,name,logical", "Could not convert string \"34x8309\" to 'BIGINT'"),  # corrupted number
    ],
)
def test_bad_lines_are_quarantined_with_part_and_line(trace, tmp_path, bad_line, reason):
    write_part(trace, "job_events", 0, 2, [JOB_LINES[0], bad_line, JOB_LINES[1]])
    lake = Lake(tmp_path / "lake")
    results, _ = ingest_google(lake, trace)
    part = by_part(results)["job_events/part-00000-of-00002"]
    assert (part.status, part.rows, part.quarantined) == ("ok", 2, 1)
    quarantined = lake.query("SELECT table_name, part, line, raw, reason FROM google.quarantine").rows()
    assert len(quarantined) == 1
    table, part_name, line, raw, why = quarantined[0]
    assert (table, part_name, line, raw) == ("job_events", "part-00000-of-00002", 2, bad_line)
    assert reason in why
    # Lines in = rows + quarantined, and the other parts are all there.
    assert lake.query("SELECT count(*) AS n FROM google.job_events")["n"][0] == 3


def test_a_truncated_part_fails_alone(trace, tmp_path):
    path = write_part(trace, "job_events", 1, 2, JOB_LINES * 50)
    path.write_bytes(path.read_bytes()[:-20])
    lake = Lake(tmp_path / "lake")
    results, _ = ingest_google(lake, trace)
    broken = by_part(results)["job_events/part-00001-of-00002"]
    assert broken.status == "failed" and str(path) in broken.error
    assert {r.status for r in results if r is not broken} == {"ok"}
    assert lake.query("SELECT count(*) AS n FROM google.job_events")["n"][0] == 3


def test_a_part_that_is_not_gzip_is_an_error(trace, tmp_path):
    (trace / "job_events" / "part-00001-of-00002.csv.gz").write_text("0,,1,0,u,3,n,l\n")
    results, _ = ingest_google(Lake(tmp_path / "lake"), trace)
    assert "not a gzip file" in by_part(results)["job_events/part-00001-of-00002"].error


def test_an_empty_part_is_an_error(trace, tmp_path):
    write_part(trace, "machine_events", 0, 1, [])
    results, _ = ingest_google(Lake(tmp_path / "lake"), trace)
    empty = by_part(results)["machine_events/part-00000-of-00001"]
    assert empty.status == "failed" and "empty part" in empty.error


@pytest.mark.parametrize("blank", [0, 1, 3])
def test_a_blank_line_fails_its_part_rather_than_vanish(trace, tmp_path, blank):
    # Arrow and DuckDB both read past a blank line; a row count short of the lines must not pass.
    write_part(trace, "job_events", 1, 2, [*JOB_LINES[:blank], "", *JOB_LINES[blank:]])
    results, _ = ingest_google(Lake(tmp_path / "lake"), trace)
    failed = by_part(results)["job_events/part-00001-of-00002"]
    assert failed.status == "failed" and "4 lines but 3 rows" in failed.error, failed.error
    assert by_part(results)["job_events/part-00000-of-00002"].status == "ok"


@pytest.mark.parametrize("room", [0, 100, 10_000])
def test_a_part_longer_than_the_text_buffer_goes_the_counted_way(trace, tmp_path, monkeypatch, room):
    # A part that does not fit its worker's buffer is counted line by line and read by DuckDB; one
    # that fits is kept uncounted for Arrow.  Both give every row, also from a two-member gzip file.
    import mmap

    import pyarrow.parquet as pq

    from lakehouse.ingest import google

    path = write_part(trace, "job_events", 1, 2, JOB_LINES * 20)
    path.write_bytes(path.read_bytes() + gzip.compress(f"{JOB_LINES[0]}\n".encode(), mtime=0))
    buffer = mmap.mmap(-1, room) if room else None
    size, lines = google.decompress(path, buffer)
    assert size == sum(len(line) + 1 for line in [*JOB_LINES * 20, JOB_LINES[0]])
    assert lines == (None if room == 10_000 else 61)
    monkeypatch.setattr(google, "_text_buffer", lambda: mmap.mmap(-1, room or 1))
    lake = Lake(tmp_path / "lake")
    results, _ = ingest_google(lake, trace)
    assert by_part(results)["job_events/part-00001-of-00002"].rows == 61
    written = pq.ParquetFile(stored_files(lake.root, "google_job_events")["part-00001-of-00002"])
    assert ("DuckDB" if room < 10_000 else "parquet-cpp-arrow") in written.metadata.created_by


def test_an_unknown_table_folder_is_reported_and_the_rest_ingested(trace, tmp_path):
    (trace / "job_event").mkdir()
    results, _ = ingest_google(Lake(tmp_path / "lake"), trace)
    unknown = by_part(results)["job_event"]
    assert unknown.status == "failed" and "unknown table folder" in unknown.error
    assert sum(r.status == "ok" for r in results) == 3


def test_a_stray_file_is_reported(trace, tmp_path):
    (trace / "job_events" / "notes.txt").write_text("x")
    results, _ = ingest_google(Lake(tmp_path / "lake"), trace)
    assert "not a part of the trace" in by_part(results)["job_events/notes.txt"].error


def test_a_missing_part_in_a_sequence_is_a_warning(trace, tmp_path):
    (trace / "job_events" / "part-00001-of-00002.csv.gz").unlink()
    write_part(trace, "job_events", 3, 4, JOB_LINES[2:])
    _, warnings = ingest_google(Lake(tmp_path / "lake"), trace)
    assert warnings == ["job_events: parts disagree on the part count ([2, 4])"]
    (trace / "job_events" / "part-00000-of-00002.csv.gz").unlink()
    write_part(trace, "job_events", 0, 4, JOB_LINES)
    _, warnings = ingest_google(Lake(tmp_path / "lake2"), trace)
    assert warnings == ["job_events: 2 part(s) missing, 00001-00002"]


def test_out_of_order_times_are_kept_and_reported(trace, tmp_path):
    write_part(trace, "job_events", 0, 2, [JOB_LINES[2], JOB_LINES[0]])
    results, _ = ingest_google(Lake(tmp_path / "lake"), trace)
    part = by_part(results)["job_events/part-00000-of-00002"]
    assert part.rows == 2
    assert part.warnings == ["1 row(s) earlier than the row before (time out of order)"]


def test_only_a_fixed_part_is_read_again(trace, tmp_path):
    lake = Lake(tmp_path / "lake")
    write_part(trace, "job_events", 1, 2, ["0,,1,0,u,3"])  # wrong column count
    ingest_google(lake, trace)
    write_part(trace, "job_events", 1, 2, JOB_LINES[2:])  # fixed
    results, _ = ingest_google(lake, trace)
    assert {r.part: r.status for r in results if r.table == "job_events"} == {
        "part-00000-of-00002": "unchanged",
        "part-00001-of-00002": "ok",
    }
    assert lake.query("SELECT count(*) AS n FROM google.quarantine")["n"][0] == 0
    assert lake.query("SELECT count(*) AS n FROM google.job_events")["n"][0] == 4


def test_task_views_on_a_hand_made_trace(tmp_path):
    # Job 1: task 0 submitted and scheduled before the trace (time 0), never ends -> long-running;
    # task 1 submitted at 1 s, scheduled at 2 s, finishes at 12 s -> lifetime 10 s.  Class 3 (high SLO).
    # Usage: task 0 sampled (non-zero mu1s), task 1 used CPU but its sample is 0 -> job 1 is measured
    # but inconsistent.  Job 2: one task with usage and no sample -> not measured, consistent.
    root = tmp_path / "trace"
    task = "{t},,{job},{index},7,{event},u,3,9,0.5,0.25,0.01,0"
    write_part(
        root,
        "task_events",
        0,
        1,
        [
            task.format(t=0, job=1, index=0, event=0),
            task.format(t=0, job=1, index=0, event=1),
            task.format(t=1_000_000, job=1, index=1, event=0),
            task.format(t=2_000_000, job=1, index=1, event=1),
            task.format(t=12_000_000, job=1, index=1, event=4),
        ],
    )
    usage = "600000000,900000000,{job},{index},7,{rate},0.1,0.1,0,0,0.1,0,0,0.5,0,1.5,0.01,1,0,{sample}"
    write_part(
        root,
        "task_usage",
        0,
        1,
        [
            usage.format(job=1, index=0, rate=0.2, sample=0.3),
            usage.format(job=1, index=1, rate=0.1, sample=0),
            usage.format(job=2, index=0, rate=0.4, sample=0),
            # A task measured for the last 60 s of the bucket only: a fifth of its rate, a fifth of a task.
            usage.format(job=3, index=0, rate=0.5, sample=0).replace("600000000,", "840000000,", 1),
        ],
    )
    lake = Lake(tmp_path / "lake")
    ingest_google(lake, root)
    tasks = lake.query("SELECT * FROM google.tasks ORDER BY task_index").to_dicts()
    assert [(t["task_index"], t["lifetime_s"], t["final_event"], t["before_trace"], t["ended"]) for t in tasks] == [
        (0, None, "SCHEDULE", True, False),
        (1, 10.0, "FINISH", False, True),
    ]
    assert tasks[0]["cpu_request"] == 0.5 and tasks[0]["scheduling_class"] == 3
    long_running = lake.query("SELECT job_id, task_index FROM google.tasks_long_running").rows()
    assert long_running == [(1, 0)]
    assert lake.query("SELECT count(*) AS n FROM google.tasks_high_slo")["n"][0] == 2
    sampling = lake.query("SELECT job_id, tasks_used, tasks_sampled, measured, consistent FROM google.job_sampling")
    assert sorted(sampling.rows()) == [(1, 2, 1, True, False), (2, 1, 0, False, True), (3, 1, 0, False, True)]
    demand = lake.query("SELECT job_id, bucket_s, cpu_rate, tasks FROM google.job_demand_5min ORDER BY job_id")
    assert demand.rows() == [
        (1, 600, pytest.approx(0.3), 2),
        (2, 600, pytest.approx(0.4), 1),
        (3, 600, pytest.approx(0.1), pytest.approx(0.2)),
    ]


@pytest.mark.parametrize("kind", ["folder", "link loop", "dangling link"])
def test_an_entry_named_like_a_part_that_is_not_a_file_fails_alone(trace, tmp_path, kind):
    entry = trace / "job_events" / "part-00001-of-00002.csv.gz"
    entry.unlink()
    if kind == "folder":
        entry.mkdir()
    elif kind == "link loop":
        entry.symlink_to(entry.name)
    else:
        entry.symlink_to("nowhere.csv.gz")
    result = CliRunner().invoke(app, ["ingest", "google", str(trace), "--lake", str(tmp_path / "lake")])
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    message = " ".join(result.stderr.split())
    assert "part-00001-of-00002.csv.gz" in message
    assert ("not a regular file (a folder" if kind == "folder" else "cannot be read") in message
    lake = Lake(tmp_path / "lake")
    assert lake.query("SELECT count(*) AS n FROM google.job_events")["n"][0] == 3  # the rest is in


def test_the_same_part_under_two_names_is_ingested_once(trace, tmp_path):
    copy = trace / "job_events" / "part-00001-of-00002.csv.gz"
    copy.write_bytes((trace / "job_events" / "part-00000-of-00002.csv.gz").read_bytes())
    lake = Lake(tmp_path / "lake")
    results, _ = ingest_google(lake, trace)
    duplicate = by_part(results)["job_events/part-00001-of-00002"]
    assert duplicate.status == "failed" and "the same content as part part-00000-of-00002" in duplicate.error
    assert lake.query("SELECT count(*) AS n FROM google.job_events")["n"][0] == 3  # not 6
    # A later run that finds a copy of a part already in the lake says so too.
    write_part(trace, "job_events", 1, 2, JOB_LINES[2:])
    ingest_google(lake, trace)
    (trace / "job_events" / "part-00002-of-00003.csv.gz").write_bytes(copy.read_bytes())
    results, _ = ingest_google(lake, trace)
    assert "the same content as part part-00001-of-00002" in by_part(results)["job_events/part-00002-of-00003"].error
    assert lake.query("SELECT count(*) AS n FROM google.job_events")["n"][0] == 4


def test_a_quoted_newline_and_a_line_of_commas_are_quarantined(trace, tmp_path):
    # The trace never quotes: a quote is data, so the quoted newline leaves two broken lines.
    lines = [JOB_LINES[0], '0,,3418310,0,"user', 'name",3,n,l', ",,,,,,,", JOB_LINES[1]]
    write_part(trace, "job_events", 0, 2, lines)
    lake = Lake(tmp_path / "lake")
    results, _ = ingest_google(lake, trace)
    part = by_part(results)["job_events/part-00000-of-00002"]
    assert (part.status, part.rows, part.quarantined) == ("ok", 2, 3)  # 5 lines in = 2 rows + 3 quarantined
    quarantined = lake.query("SELECT line, raw, reason FROM google.quarantine ORDER BY line").rows()
    assert [(line, raw) for line, raw, _ in quarantined] == [(2, '0,,3418310,0,"user'), (3, 'name",3,n,l'),
                                                            (4, ",,,,,,,")]  # fmt: skip
    assert "Expected Number of Columns: 8 Found: 5" in quarantined[0][2]
    assert "only commas" in quarantined[2][2]
    assert lake.query("SELECT count(*) AS n FROM google.job_events WHERE job_id IS NULL")["n"][0] == 0


@pytest.mark.parametrize(
    ("hostile", "said"),
    [
        (",".join(["1"] * 300_000), "line 2 is 599,999 bytes long"),  # DuckDB rejected it field by field
        ("7," + "x" * (50 << 20) + ",1,0,,3,a,b", "line 2 is over "),  # reported as "(blank lines?)"
    ],
    ids=["300,000 fields", "a 50 MB line"],
)
@pytest.mark.parametrize("fast", [True, False], ids=["text kept", "text streamed"])
def test_a_line_longer_than_the_trace_allows_fails_its_part_alone_and_fast(tmp_path, hostile, said, fast):
    import time

    from lakehouse.ingest import google

    root = tmp_path / "trace"
    write_part(root, "job_events", 0, 2, [JOB_LINES[0], hostile, JOB_LINES[1]])
    write_part(root, "job_events", 1, 2, JOB_LINES[2:])
    lake = Lake(tmp_path / "lake")
    started = time.perf_counter()
    if fast:
        results, _ = ingest_google(lake, root)
        parts = by_part(results)
        bad, good = parts["job_events/part-00000-of-00002"], parts["job_events/part-00001-of-00002"]
        assert bad.status == "failed" and said in bad.error and "the part is not ingested" in bad.error
        assert good.status == "ok" and good.rows == 1  # the part beside it goes in
    else:  # a part too large to keep in memory is read again, streamed
        with pytest.raises(google.BrokenFileError, match=said):
            google.write_part(lake, google.discover_trace(root)[0][0], fast=False)
    assert time.perf_counter() - started < 30  # (the 300,000-field line took DuckDB over 8 minutes)


def test_a_trace_folder_with_glob_characters_is_read_as_it_is(tmp_path):
    shutil.copytree(sample_google_trace(), tmp_path / "tr[1]")
    shutil.copytree(sample_google_trace(), tmp_path / "tr1")
    name = Path("machine_events") / "part-00000-of-00001.csv.gz"
    lines = gzip.decompress((tmp_path / "tr1" / name).read_bytes()).splitlines(keepends=True)
    (tmp_path / "tr1" / name).write_bytes(gzip.compress(b"".join(lines[:5])))  # the sibling: five events
    # A bad line sends the part through DuckDB's line-checked reader, the one that took a path as a pattern.
    (tmp_path / "tr[1]" / name).write_bytes(gzip.compress(b"".join(lines) + b"not,a,machine,event\n"))
    lake = Lake(tmp_path / "lake")
    run("ingest", "google", tmp_path / "tr[1]", "--lake", lake.root)
    assert lake.rows("select count(*) from google.machine_events")[0][0] == len(lines)
    assert lake.rows("select count(*) from google.quarantine")[0][0] == 1
