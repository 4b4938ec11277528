"""Crash safety, incremental re-runs and the single-writer lock (docs/lake.md)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from typer.testing import CliRunner

from lakehouse.base.audit import run_audits
from lakehouse.base.errors import LakeBusyError, LakehouseError
from lakehouse.base.lake import Lake
from lakehouse.base.testing import small_log, swf_job, write_swf
from lakehouse.base.writer import pending_path
from lakehouse.cli import app
from lakehouse.data import sample_swf_paths
from lakehouse.ingest.swf import ingest_swf

from conftest import SWF_DIR, filled, provenance_job_counts, shared_or_skip, stored_files


def make_logs(folder, count, jobs_each=50):
    folder.mkdir()
    for i in range(count):
        jobs, header = small_log(jobs_each + i)
        write_swf(folder / f"log{i:02d}.swf.gz", jobs, header)
    return {f"log{i:02d}": jobs_each + i for i in range(count)}


def counts(lake):
    return dict(lake.query("SELECT log, count(*) FROM swf.jobs GROUP BY log").rows())


def test_unchanged_files_are_skipped_and_a_changed_file_replaces_only_its_log(lake, tmp_path):
    expected = make_logs(tmp_path / "in", 3)
    ingest_swf(lake, [str(tmp_path / "in")])
    other = stored_files(lake.root, "swf_jobs")["log01"]
    before = other.stat().st_mtime_ns
    assert {r.status for r in ingest_swf(lake, [str(tmp_path / "in")])} == {"unchanged"}
    jobs, header = small_log(7)
    write_swf(tmp_path / "in" / "log00.swf.gz", jobs, header)
    statuses = {r.log: r.status for r in ingest_swf(lake, [str(tmp_path / "in")])}
    assert statuses == {"log00": "ok", "log01": "unchanged", "log02": "unchanged"}
    assert counts(lake) == {**expected, "log00": 7}
    assert other.stat().st_mtime_ns == before


def test_ctrl_c_keeps_what_was_done_and_a_rerun_finishes(lake, tmp_path):
    expected = make_logs(tmp_path / "in", 5)
    seen = []

    def interrupt_after_two(result, size):
        seen.append(result.log)
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ingest_swf(lake, [str(tmp_path / "in")], on_file=interrupt_after_two, workers=1)
    done = lake.query("SELECT name FROM meta.manifest WHERE status = 'ok' ORDER BY name")["name"].to_list()
    assert done == ["log00", "log01"]
    # Nothing in place without its manifest row: the files after the interruption were not committed.
    assert sorted(counts(lake)) == done
    assert all(result.passed for result in run_audits(lake))
    statuses = {r.log: r.status for r in ingest_swf(lake, [str(tmp_path / "in")])}
    assert statuses["log00"] == statuses["log01"] == "unchanged"
    assert counts(lake) == expected


def test_ctrl_c_on_the_command_stops_promptly_with_one_line(tmp_path):
    """SIGINT to `lakehouse ingest swf FOLDER` while it works: exit 130 within about a second, one
    line and no traceback, a consistent lake, and a re-run that completes it."""
    expected = make_logs(tmp_path / "in", 40, jobs_each=5_000)
    lake = tmp_path / "lake"
    command = [sys.executable, "-m", "lakehouse.cli", "ingest", "swf", str(tmp_path / "in"), "--lake", str(lake)]
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not stored_files(lake, "swf_jobs"):  # some work done
        assert time.monotonic() < deadline and child.poll() is None, "the ingest ended before it could be interrupted"
        time.sleep(0.02)
    child.send_signal(signal.SIGINT)
    sent = time.monotonic()
    _, err = child.communicate(timeout=30)
    # About a second when the machine is idle; the bound leaves room for a loaded one.
    assert child.returncode == 130 and time.monotonic() - sent < 10
    assert err.strip().splitlines()[-1] == "interrupted: what was done is kept; run the same command again to finish"
    assert "Traceback" not in err
    target = Lake(lake)
    failed = [(r.audit.name, r.offenders.rows()) for r in run_audits(target) if not r.passed]
    assert not failed
    assert 0 < len(counts(target)) < len(expected)
    ingest_swf(target, [str(tmp_path / "in")])
    assert counts(target) == expected


def test_a_killed_ingest_leaves_a_consistent_lake_and_a_rerun_completes(lake, tmp_path):
    expected = make_logs(tmp_path / "in", 6, jobs_each=2000)
    script = textwrap.dedent(
        """
        import os, signal, sys
        from lakehouse.base.lake import Lake
        from lakehouse.ingest.swf import ingest_swf
        done = []
        def die(result, size):
            done.append(result.log)
            if len(done) == 3:
                os.kill(os.getpid(), signal.SIGKILL)
        ingest_swf(Lake(sys.argv[1]), [sys.argv[2]], on_file=die)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script, str(lake.root), str(tmp_path / "in")], check=False)
    assert proc.returncode == -9
    # Whatever state the kill left: the catalog opens and every view answers.
    partial = counts(lake) if lake.exists() else {}
    assert all(expected[log] == n for log, n in partial.items())
    results = ingest_swf(lake, [str(tmp_path / "in")])
    assert {r.status for r in results} <= {"ok", "unchanged"}
    assert counts(lake) == expected  # no duplicates, nothing missing
    assert not list(lake.root.glob(".*.tmp")) and not list(lake.root.rglob("*.parquet.tmp"))


def test_two_writers_never_run_at_once(lake, tmp_path):
    make_logs(tmp_path / "in", 1)
    with lake.init().writer():
        with pytest.raises(LakeBusyError, match=f"pid {os.getpid()}"):
            ingest_swf(lake, [str(tmp_path / "in")])
    ingest_swf(lake, [str(tmp_path / "in")])  # free again


def test_the_next_writer_sweeps_what_killed_writers_left(lake, tmp_path):
    make_logs(tmp_path / "in", 1)
    ingest_swf(lake, [str(tmp_path / "in")])
    strays = [
        lake.root / "parquet" / "swf" / "jobs" / ".log07.parquet.tmp",
        lake.root / "quarantine" / "swf" / ".log07.parquet.tmp",
    ]
    if lake.ducklake is None:  # the catalog copy of a lake of today's format, and its write-ahead log
        strays += [lake.root / ".lake.duckdb.999999.tmp", lake.root / ".lake.duckdb.999999.tmp.wal"]
    # A campaign's runs, written under its own lock by a process that is still running: not the writer's.
    campaign_tmp = pending_path(lake.root / "analysis" / "campaign_runs" / "c.1.2.parquet")
    for path in [*strays, campaign_tmp]:
        path.write_bytes(b"half-written")
    ingest_swf(lake, [str(tmp_path / "in")])  # unchanged: nothing to do but the sweep
    assert [p for p in strays if p.exists()] == []
    assert campaign_tmp.exists()


def test_writers_starting_together_on_a_new_lake_make_it_once(tmp_path):
    """Several `init` and `ingest` at once on a lake that does not exist yet: every init succeeds, an
    ingest either runs or says another writer is running, nobody fails on a half-made lake."""
    make_logs(tmp_path / "in", 1)
    lake = tmp_path / "lake"
    cli = [sys.executable, "-m", "lakehouse.cli"]
    commands = [[*cli, "init", "--lake", str(lake)] for _ in range(4)]
    commands += [[*cli, "ingest", "swf", str(tmp_path / "in"), "--lake", str(lake)] for _ in range(2)]
    children = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in commands]
    errors = [child.communicate(timeout=120)[1] for child in children]
    outcomes = [(child.returncode, err) for child, err in zip(children, errors, strict=True)]
    for code, err in outcomes[:4]:
        assert code == 0, err
    for code, err in outcomes[4:]:
        assert "Traceback" not in err
        assert code == 0 or "another writer is running" in err, err
    subprocess.run([*cli, "ingest", "swf", str(tmp_path / "in"), "--lake", str(lake)], check=True, capture_output=True)
    from lakehouse.base.lake import Lake

    assert counts(Lake(lake)) == {"log00": 50}


def test_a_writer_can_swap_the_catalog_while_a_reader_is_open(lake, tmp_path):
    write_swf(tmp_path / "a.swf", [swf_job(1, 0, 1, 1, 1)], {"MaxProcs": 1})
    write_swf(tmp_path / "b.swf", [swf_job(1, 0, 1, 1, 1)], {"MaxProcs": 1})
    ingest_swf(lake, [str(tmp_path / "a.swf")])
    with lake.connect() as reader:
        ingest_swf(lake, [str(tmp_path / "b.swf")])
        assert reader.execute("SELECT count(*) FROM swf.logs").fetchone()[0] >= 1
    assert lake.query("SELECT count(*) AS n FROM swf.logs")["n"][0] == 2


def test_an_unchanged_file_is_ingested_again_when_its_machine_size_changes(lake, tmp_path):
    expected = make_logs(tmp_path / "in", 2)
    ingest_swf(lake, [str(tmp_path / "in")])
    results = ingest_swf(lake, [str(tmp_path / "in" / "log01.swf.gz")], machine_sizes=[("log01", 16)])
    assert [(r.log, r.status) for r in results] == [("log01", "ok")]
    assert counts(lake) == expected
    assert lake.query("SELECT machine_size FROM swf.logs WHERE log = 'log01'")["machine_size"][0] == 16


def test_an_output_deleted_by_hand_is_one_line_naming_it(lake, tmp_path):
    """DuckLake ends a file's rows by reading them: a file deleted outside lakehouse cannot be replaced."""
    make_logs(tmp_path / "in", 2)
    ingest_swf(lake, [str(tmp_path / "in")])
    gone = stored_files(lake.root, "swf_jobs")["log00"]
    gone.unlink()
    with pytest.raises(LakehouseError, match=f"{gone}: a file of the lake's table stored.swf_jobs was deleted"):
        ingest_swf(lake, [str(tmp_path / "in")])


@pytest.mark.today_format
def test_an_unchanged_file_is_ingested_again_when_its_output_is_gone(lake, tmp_path):
    expected = make_logs(tmp_path / "in", 2)
    ingest_swf(lake, [str(tmp_path / "in")])
    stored_files(lake.root, "swf_jobs")["log00"].unlink()
    assert {r.log: r.status for r in ingest_swf(lake, [str(tmp_path / "in")])} == {"log00": "ok", "log01": "unchanged"}
    assert counts(lake) == expected


@pytest.mark.faults
@pytest.mark.parametrize(
    "room_kb", [pytest.param(100, marks=pytest.mark.thorough), 600, pytest.param(1200, marks=pytest.mark.thorough)]
)
def test_a_full_disk_mid_ingest_is_one_line_and_leaves_every_log_whole(small_disk, tmp_path, room_kb):
    from typer.testing import CliRunner

    from lakehouse.cli import app

    root = small_disk / "lake"
    kth = str(sample_swf_paths()[0])
    logs = [str(p) for p in shared_or_skip(SWF_DIR).glob("SDSC-Par-*.swf.gz")] + [
        str(p) for p in SWF_DIR.glob("CTC-SP2-*.swf.gz")
    ]
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", "swf", kth, "--lake", str(root)]).exit_code == 0
    with filled(small_disk, room_kb):
        full = runner.invoke(app, ["ingest", "swf", *logs, "--lake", str(root)])
        message = " ".join(full.stderr.split())
        assert full.exit_code in (1, 2) and isinstance(full.exception, SystemExit), repr(full.exception)
        assert "no space left on" in message or "No space left on device" in message, message
        assert not list(root.rglob("*.tmp*"))  # nothing half-written left behind
        counts = dict(Lake(root).query("SELECT log, count(*) AS n FROM swf.jobs GROUP BY log").rows())
        assert counts.get("KTH-SP2-1996-2.1-cln") == 28_476
        published = provenance_job_counts()  # job lines as the archive gives them: every one is a job here
        par, ctc = (published[f"{name}.swf.gz"] for name in ("SDSC-Par-1996-3.1-cln", "CTC-SP2-1996-3.1-cln"))
        assert counts.get("SDSC-Par-1996-3.1-cln", par) == par and counts.get("CTC-SP2-1996-3.1-cln", ctc) == ctc
    again = runner.invoke(app, ["ingest", "swf", *logs, "--lake", str(root)])
    assert again.exit_code == 0, again.stderr
    counts = dict(Lake(root).query("SELECT log, count(*) AS n FROM swf.jobs GROUP BY log").rows())
    assert counts == {"KTH-SP2-1996-2.1-cln": 28_476, "SDSC-Par-1996-3.1-cln": par, "CTC-SP2-1996-3.1-cln": ctc}


@pytest.mark.today_format  # (a DuckLake lake's tables list their files: test_ducklake_lake puts one in)
def test_views_read_only_the_files_the_manifest_names(lake, tmp_path):
    """A file someone writes into the lake's folders (`duckdb -readonly` can COPY there) is not read:
    the ingested datasets' views list their files, they do not glob the folder."""
    import duckdb

    make_logs(tmp_path / "in", 2)
    ingest_swf(lake, [str(tmp_path / "in")])
    before = counts(lake)
    jobs = lake.root / "parquet" / "swf" / "jobs"
    with duckdb.connect(str(lake.catalog_path), read_only=True) as con:
        con.execute(f"COPY (SELECT * FROM read_parquet('{jobs}/log00.parquet')) TO '{jobs}/evil.parquet'")
        con.execute(f"COPY (SELECT * FROM read_parquet('{jobs}/log00.parquet')) TO '{jobs}/log99.parquet'")
    assert counts(lake) == before
    make_logs(tmp_path / "more", 3)  # a later ingest lists its own new files, still not the others
    ingest_swf(lake, [str(tmp_path / "more" / "log02.swf.gz")])
    assert set(counts(lake)) == {"log00", "log01", "log02"}
    lake.init()  # as `lakehouse catalog rebuild`
    assert set(counts(lake)) == {"log00", "log01", "log02"}


@pytest.mark.today_format
def test_each_writer_session_connects_to_a_catalog_copy_of_its_own(lake):
    # An earlier session's connection still referenced (the traceback of an interrupted query holds it)
    # must not make the next session's connection wait for it: each session has its own file.
    lake.init()
    with lake.writer() as writer:
        kept = writer.con  # referenced past the commit, as a traceback would
        first = writer._tmp
        writer.commit()
        writer.con.execute("SELECT 1")
        assert writer._tmp != first and writer._tmp.exists()
    assert kept is not None and not list(lake.root.glob(".lake.duckdb.*.tmp"))


def test_ctrl_c_inside_a_deferred_block_within_another_waits_for_the_outer_ones_end():
    """The pipeline defers Ctrl-C over an input's outputs and its manifest row; the DuckLake writer defers
    it again over each output: the inner block's end raised it, and a log's files were committed without
    its manifest row (found by test_ctrl_c_on_the_command_stops_promptly_with_one_line)."""
    from lakehouse.base.interrupts import interrupts_deferred

    steps, handler = [], signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        with interrupts_deferred():
            with interrupts_deferred():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)  # handled here
                steps.append("the output put in place")
            steps.append("its manifest row")
    assert steps == ["the output put in place", "its manifest row"]
    assert signal.getsignal(signal.SIGINT) is handler  # put back


def test_sigterm_inside_a_deferred_block_waits_for_its_end_where_it_is_an_interrupt():
    from lakehouse.base.interrupts import interrupts_deferred

    def stop(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    done = []
    try:
        with pytest.raises(KeyboardInterrupt):
            with interrupts_deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)  # the signal is handled here, and must not cut the block short
                done.append("the rest of the block")
        assert done == ["the rest of the block"]
        assert signal.getsignal(signal.SIGTERM) is stop  # put back
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_the_shared_lakes_guard_catches_a_change_to_their_ingested_data(tmp_path):
    """The session's shared lakes (conftest: kth_lake, pwa_lake) are checked after each test: a changed
    data file fails the test; a new analysis table does not."""
    from conftest import left_unchanged

    data = tmp_path / "parquet" / "swf" / "jobs"
    data.mkdir(parents=True)
    (data / "x.parquet").write_bytes(b"PAR1")
    with left_unchanged(tmp_path):
        (tmp_path / "analysis").mkdir()
        (tmp_path / "analysis" / "latest.parquet").write_bytes(b"PAR1")
    with pytest.raises(AssertionError, match="changed the ingested data"), left_unchanged(tmp_path):
        (data / "x.parquet").write_bytes(b"PAR1PAR1")
    with pytest.raises(AssertionError, match="changed the ingested data"), left_unchanged(tmp_path):
        (data / "y.parquet").write_bytes(b"PAR1")


runner = CliRunner()


def test_a_lake_whose_lock_cannot_be_taken_is_one_line_for_every_writer(cli_lake, tmp_path):
    # (A read-only mount gives EROFS; a folder where the lock file goes fails the same open, as root too.)
    from lakehouse.base.writer import LOCK_FILE

    lock = cli_lake / LOCK_FILE
    lock.unlink(missing_ok=True)
    lock.mkdir()
    for args in (
        ["init"],
        ["ingest", "swf", str(tmp_path / "mini.swf")],
        *([["catalog", "rebuild"]] if Lake(cli_lake).ducklake is None else []),
        ["report", "locality", "mini"],
    ):
        result = runner.invoke(app, [*args, "--lake", str(cli_lake)])
        output = result.stdout + result.stderr
        assert result.exit_code != 0 and "Traceback" not in output, (args, output)
        assert "cannot take the writers' lock" in output and output.count("error:") == 1, (args, output)
    # A reader works on it as it is.
    assert runner.invoke(app, ["sql", "select count(*) from swf.jobs", "--lake", str(cli_lake)]).exit_code == 0


KTH = "KTH-SP2-1996-2.1-cln"


def test_one_lake_used_from_four_threads_replays_without_a_crash(kth_lake):
    from lakehouse.sim import simulate_log

    lake = Lake(kth_lake.root)  # one object, shared
    results, errors = [], []

    def replay(policy: str) -> None:
        try:
            for _ in range(3):
                results.append(
                    (
                        policy,
                        simulate_log(lake, KTH, policy=policy, where="submit_offset < 5*86400").summary["mean_wait"],
                    )
                )
        except Exception as exc:  # noqa: BLE001 (the test reports any)
            errors.append(exc)

    threads = [threading.Thread(target=replay, args=(p,)) for p in ("fcfs", "spf", "lexp", "saf")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    by_policy: dict[str, set[float]] = {}
    for policy, value in results:
        by_policy.setdefault(policy, set()).add(value)
    assert all(len(values) == 1 for values in by_policy.values()) and len(results) == 12
