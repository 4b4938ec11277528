"""Each class of bad SWF input: broken files fail alone with a clear error, bad lines are quarantined.

Invariant checked throughout: data lines in = rows in swf.jobs + quarantined lines.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lakehouse.base.testing import small_log, swf_job, swf_text, write_swf
from lakehouse.cli import app
from lakehouse.ingest.swf import ingest_swf

from conftest import read_every_view


def ingest_one(lake, path: Path, **kwargs):
    (result,) = ingest_swf(lake, [str(path)], **kwargs)
    return result


def quarantine(lake, log):
    return lake.query("SELECT line, raw, reason FROM swf.quarantine WHERE log = ? ORDER BY line", [log]).rows()


def job_count(lake, log):
    return lake.query("SELECT count(*) AS n FROM swf.jobs WHERE log = ?", [log])["n"][0]


def assert_nothing_lost(lake, result):
    assert result.job_lines == job_count(lake, result.log) + len(quarantine(lake, result.log))


def test_wrong_field_count_is_quarantined_with_line_and_reason(lake, tmp_path):
    jobs, header = small_log(4)
    text = swf_text(jobs, header).splitlines()
    text[5] = text[5] + " 7"  # line 6: 19 fields
    path = tmp_path / "wide.swf"
    path.write_text("\n".join(text) + "\n")
    r = ingest_one(lake, path)
    assert (r.status, r.jobs, r.quarantined) == ("ok", 3, 1)
    ((line, raw, reason),) = quarantine(lake, "wide")
    assert line == 6 and raw == text[5] and reason == "expected 18 fields, found 19"
    assert_nothing_lost(lake, r)


def test_non_numeric_field_is_quarantined(lake, tmp_path):
    jobs, header = small_log(3)
    text = swf_text(jobs, header).replace(" 200 ", " 2OO ", 1)
    r = ingest_one(lake, write_text(tmp_path / "alpha.swf", text))
    ((line, _, reason),) = quarantine(lake, "alpha")
    assert line == 5 and reason == "field 9 is not an integer: '2OO'"
    assert r.jobs == 2
    assert_nothing_lost(lake, r)


def write_text(path: Path, text: str) -> Path:
    path.write_bytes(text.encode())
    return path


def test_crlf_line_ends_are_accepted(lake, tmp_path):
    jobs, header = small_log(5)
    path = write_text(tmp_path / "dos.swf", swf_text(jobs, header).replace("\n", "\r\n"))
    r = ingest_one(lake, path)
    assert (r.status, r.jobs, r.quarantined) == ("ok", 5, 0)
    assert lake.query("SELECT max_procs FROM swf.logs WHERE log = 'dos'")["max_procs"][0] == 8
    assert any("CRLF" in w for w in r.warnings)


def test_a_byte_order_mark_and_lone_carriage_returns_are_read(lake, tmp_path):
    """Old Mac line ends (CR only) and a UTF-8 byte-order mark: every job read, lines in = rows."""
    jobs, header = small_log(300)
    text = swf_text(jobs, header)
    path = tmp_path / "mac.swf"
    path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r").encode())
    r = ingest_one(lake, path)
    assert (r.status, r.jobs, r.quarantined) == ("ok", 300, 0)
    assert lake.query("SELECT max_procs FROM swf.logs WHERE log = 'mac'")["max_procs"][0] == 8
    assert any("lone CR" in w for w in r.warnings) and any("byte-order mark" in w for w in r.warnings)
    lines = lake.query("SELECT min(line) AS first, max(line) AS last FROM swf.jobs WHERE log = 'mac'").row(0)
    assert lines == (text.count("\n") - 299, text.count("\n"))  # the job lines keep their numbers


def test_header_numbers_beyond_64_bits_are_kept_as_text_with_a_warning(lake, tmp_path):
    jobs, header = small_log(5)
    text = swf_text(jobs, header).replace("; MaxProcs: 8", "; MaxProcs: 99999999999999999999")
    path = write_text(tmp_path / "huge.swf", text)
    other = write_swf(tmp_path / "next.swf", jobs, header)  # the files after it are still recorded
    results = {r.log: r for r in ingest_swf(lake, [str(path), str(other)], machine_size=8)}
    assert (results["huge"].status, results["huge"].jobs) == ("ok", 5)
    assert any("MaxProcs" in w and "64 bits" in w for w in results["huge"].warnings)
    row = lake.query("SELECT max_procs, header['MaxProcs'] AS text FROM swf.logs WHERE log = 'huge'").row(0)
    assert row == (None, "99999999999999999999")
    assert lake.query("SELECT count(*) AS n FROM meta.manifest WHERE status = 'ok'")["n"][0] == 2


def test_truncated_gzip_fails_alone_and_the_batch_goes_on(lake, tmp_path):
    jobs, header = small_log(200)
    good = write_swf(tmp_path / "good.swf.gz", jobs, header)
    blob = gzip.compress(swf_text(jobs, header).encode())
    (tmp_path / "cut.swf.gz").write_bytes(blob[: len(blob) // 2])
    results = {r.log: r for r in ingest_swf(lake, [str(tmp_path / "cut.swf.gz"), str(good)])}
    assert results["cut"].status == "failed"
    assert "cut.swf.gz" in results["cut"].error and "gzip" in results["cut"].error
    assert results["good"].status == "ok" and job_count(lake, "good") == 200
    assert job_count(lake, "cut") == 0
    failed = lake.query("SELECT status, message FROM meta.manifest WHERE name = 'cut'").row(0)
    assert failed[0] == "failed" and "truncated" in failed[1]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty file"),
        (b"   \n\n", "empty file"),
        (bytes(range(256)) * 4, "binary file"),
        (b"job,submit,run\n1,2,3\n4,5,6\n", "not an SWF log"),
        (b"<html><body>Not found</body></html>\n", "not an SWF log"),
    ],
    ids=["empty", "blank", "binary", "csv", "html"],
)
def test_broken_files_get_a_clear_error_naming_them(lake, tmp_path, content, message):
    path = tmp_path / "broken.swf"
    path.write_bytes(content)
    r = ingest_one(lake, path)
    assert r.status == "failed"
    assert str(path) in r.error and message in r.error


def test_header_only_file_is_a_log_without_jobs(lake, tmp_path):
    _, header = small_log()
    r = ingest_one(lake, write_swf(tmp_path / "hdr.swf", [], header))
    assert (r.status, r.jobs, r.quarantined) == ("ok", 0, 0)
    assert "no job lines (header only)" in r.warnings
    assert lake.query("SELECT jobs, max_procs FROM swf.logs WHERE log = 'hdr'").row(0) == (0, 8)


def test_unsorted_submit_times_are_kept_in_file_order_and_reported(lake, tmp_path):
    jobs = [swf_job(1, 100, 10, 1, 20), swf_job(2, 50, 10, 1, 20), swf_job(3, 200, 10, 1, 20)]
    r = ingest_one(lake, write_swf(tmp_path / "order.swf", jobs, {"MaxProcs": 4}))
    assert (r.jobs, r.quarantined) == (3, 0)
    assert any("decreases at 1 places" in w for w in r.warnings)
    assert lake.query("SELECT unsorted_submits FROM swf.logs")["unsorted_submits"][0] == 1
    assert lake.query("SELECT job_id FROM swf.jobs ORDER BY line")["job_id"].to_list() == [1, 2, 3]


def test_duplicate_job_ids_keep_the_first_and_quarantine_the_rest(lake, tmp_path):
    jobs = [swf_job(1, 0, 10, 1, 20), swf_job(2, 5, 10, 1, 20), swf_job(1, 9, 10, 1, 20), swf_job(1, 12, 3, 1, 20)]
    r = ingest_one(lake, write_swf(tmp_path / "dups.swf", jobs, {"MaxProcs": 4}))
    assert (r.jobs, r.quarantined) == (2, 2)
    rows = quarantine(lake, "dups")
    assert [(line, reason) for line, _, reason in rows] == [
        (4, "duplicate job id 1 (first on line 2)"),
        (5, "duplicate job id 1 (first on line 2)"),
    ]
    assert lake.query("SELECT submit_time FROM swf.jobs WHERE job_id = 1")["submit_time"].to_list() == [0]
    assert_nothing_lost(lake, r)


def test_header_value_with_text_after_the_number(lake, tmp_path):
    header = {"MaxProcs": "1664 (72, 1368, 224)", "MaxNodes": "338 (batch partition; 512 total)", "Version": "SWF v2"}
    ingest_one(lake, write_swf(tmp_path / "txt.swf", [swf_job(1, 0, 10, 4, 20)], header))
    row = lake.query("SELECT max_procs, max_nodes, version, header['MaxProcs'] FROM swf.logs").row(0)
    assert row == (1664, 338, "SWF v2", "1664 (72, 1368, 224)")
    numeric = lake.query("SELECT map_keys(header_numeric) AS k, map_values(header_numeric) AS v FROM swf.logs")
    assert dict(zip(numeric["k"][0], numeric["v"][0], strict=True)) == {"MaxProcs": 1664, "MaxNodes": 338}


def test_fractional_field_6_and_only_field_6(lake, tmp_path):
    ok = swf_job(1, 0, 10, 4, 20, avg_cpu_time=3.25)
    bad = swf_job(2, 0, 10, 4, 20, used_memory=1.5)
    r = ingest_one(lake, write_swf(tmp_path / "frac.swf", [ok, bad, swf_job(3, 1, 1, 1, 1)], {"MaxProcs": 4}))
    assert lake.query("SELECT avg_cpu_time FROM swf.jobs WHERE job_id = 1")["avg_cpu_time"][0] == 3.25
    ((_, _, reason),) = quarantine(lake, "frac")
    assert reason == "field 7 is not an integer: '1.5'"
    assert_nothing_lost(lake, r)


def test_comment_lines_between_jobs_and_blank_lines_keep_line_numbers(lake, tmp_path):
    text = (
        "; MaxProcs: 4\n\n" + swf_text([swf_job(1, 0, 1, 1, 1)]) + "; a note\n\n" + swf_text([swf_job(2, 1, 1, 1, 1)])
    )
    ingest_one(lake, write_text(tmp_path / "notes.swf", text))
    assert lake.query("SELECT line FROM swf.jobs ORDER BY line")["line"].to_list() == [3, 6]
    assert "a note" in lake.query("SELECT raw_header FROM swf.logs")["raw_header"][0]


def test_minus_one_is_null_in_the_jobs_view(lake, tmp_path):
    ingest_one(lake, write_swf(tmp_path / "nul.swf", [swf_job(1, 0, 10, 4, -1)], {"MaxProcs": 4}))
    row = lake.query("SELECT req_time, used_memory, procs FROM swf.jobs").row(0)
    assert row == (None, None, 4)


def test_times_and_counts_out_of_range_are_quarantined_and_every_view_still_answers(lake, tmp_path):
    """A submit time of 10^18 s or a start time beyond the timestamp range used to be stored, and then
    swf.jobs (and every view and report on it) failed for all logs.  Now such lines are quarantined,
    such header values kept as text, and every view answers."""
    from typer.testing import CliRunner

    from lakehouse.cli import app

    jobs, header = small_log(6)
    jobs[1]["submit_time"] = 999_999_999_999_999_999  # 18 digits: fits the tokenizer, not a timestamp
    jobs[2]["run_time"] = 2**59  # 18 digits too; a run of 18 billion years
    jobs[3]["req_procs"] = 2**40  # beyond the simulator's 32-bit processor counts
    header["UnixStartTime"] = 99_999_999_999_999_999
    r = ingest_one(lake, write_swf(tmp_path / "extreme.swf", jobs, header))
    assert (r.status, r.jobs, r.quarantined) == ("ok", 3, 3)
    reasons = [q[2] for q in quarantine(lake, "extreme")]
    assert [reason.split(":")[0] for reason in reasons] == [
        "field 2 is out of range",
        "field 4 is out of range",
        "field 8 is out of range",
    ]
    assert any("UnixStartTime" in w and "kept as text" in w for w in r.warnings)
    assert_nothing_lost(lake, r)
    assert lake.query("SELECT unix_start_time FROM swf.logs WHERE log = 'extreme'").row(0) == (None,)
    assert read_every_view(lake) > 30  # none fails on what was stored
    runner = CliRunner()
    for command in (["logs"], ["simulate", "extreme"], ["report", "predictions", "extreme"]):
        result = runner.invoke(app, [*command, "--lake", str(lake.root)])
        assert result.exit_code == 0, (command, result.output)


def test_values_below_minus_one_are_kept_and_said(lake, tmp_path):
    """-1 is SWF's only negative (unknown); a -5 is kept as the log has it, with a note naming the field."""
    jobs = [swf_job(i, 10 * i, 50, 1, 100) for i in range(1, 5)]
    jobs[2] |= {"status": -5}
    write_swf(tmp_path / "odd.swf", jobs, {"MaxProcs": 8})
    (result,) = ingest_swf(lake, [str(tmp_path / "odd.swf")])
    assert result.jobs == 4 and result.quarantined == 0
    assert any("status: 1 value(s) below -1, which SWF does not allow" in w and "line" in w for w in result.warnings)
    assert lake.query("SELECT status FROM swf.jobs WHERE job_id = 3")["status"][0] == -5


runner = CliRunner()


def _good_log(folder: Path) -> Path:
    jobs, header = small_log(8)
    return write_swf(folder / "good.swf", jobs, header)


def _ingest(lake: Path, *paths: Path) -> str:
    result = runner.invoke(app, ["ingest", "swf", *map(str, paths), "--lake", str(lake), "-f", "csv"])
    assert "Traceback" not in result.output, result.output
    return result.output


def test_a_fifo_or_a_device_named_like_a_log_fails_alone(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    good = _good_log(inputs)
    os.mkfifo(inputs / "fifo.swf")  # a reader of it would block for ever
    (inputs / "zero.swf").symlink_to("/dev/zero")  # a reader of it would never end
    output = _ingest(tmp_path / "lake", good, inputs / "fifo.swf", inputs / "zero.swf")
    assert "good,ok,8,8" in output and "fifo,failed" in output and "zero,failed" in output, output
    assert "not a regular file (a FIFO" in output and "not a regular file (a device" in output
    jobs = runner.invoke(
        app, ["sql", "select count(*) as n from swf.jobs", "--lake", str(tmp_path / "lake"), "-f", "csv"]
    )
    assert jobs.stdout.splitlines()[-1] == "8"
    # The nightly run's inbox: the same files are unreadable there, the good log is new.
    from lakehouse.base.lake import Lake
    from lakehouse.nightly.inbox import State, scan

    found = {f.path.name: f for f in scan(Lake(tmp_path / "lake2"), inputs).files}
    assert found["fifo.swf"].state is State.unreadable and "not a regular file" in str(found["fifo.swf"].problem)
    assert found["zero.swf"].state is State.unreadable and found["good.swf"].state is State.new


def test_a_gzip_bomb_fails_alone_within_its_bound(tmp_path, monkeypatch):
    import gzip

    from lakehouse.ingest import input_files

    monkeypatch.setattr(input_files, "MIN_EXPANDED", 2**20)  # (the bound at a test's scale: 1 MB, 200x)
    bomb = tmp_path / "bomb.swf.gz"
    bomb.write_bytes(gzip.compress(b"0" * (64 * 2**20)))  # 64 MB of text in ~64 KB: 1000x
    good = _good_log(tmp_path)
    output = _ingest(tmp_path / "lake", bomb, good)
    assert "expands past" in output and "gzip bomb" in output, output
    assert runner.invoke(app, ["logs", "--lake", str(tmp_path / "lake"), "-f", "csv"]).stdout.count("good") == 1


def test_hostile_header_lines_are_text_in_linear_time(tmp_path):
    import time

    jobs, header = small_log(5)
    path = write_swf(tmp_path / "odd.swf", jobs, header)
    text = path.read_text()
    hostile = f"; MaxRecords: {'9' * 5000}\n;{' ' * 200_000}x\n; Note{' ' * 200_000}\n"
    path.write_text(hostile + text)
    started = time.monotonic()
    output = _ingest(tmp_path / "lake", path)
    assert time.monotonic() - started < 30, "a header line must not take minutes"
    assert "odd" in output and "failed" not in output.split("\n")[-2:], output
    stored = runner.invoke(
        app, ["sql", "select count(*) as n from swf.jobs", "--lake", str(tmp_path / "lake"), "-f", "csv"]
    )
    assert stored.stdout.splitlines()[-1] == "5"
