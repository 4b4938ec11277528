"""Places a hostile user or neighbour can point lakehouse at (docs/bad-input.md): a spill folder that is a
symbolic link, a fixed name in the shared temporary folder, an --output into the lake's data, onto a
device, a FIFO, standard output or through a link.  Nothing outside the lake is removed, nothing of the
lake is overwritten, and a device stays a device."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lakehouse.base.budget import SPILL_FOLDER, SpillFolders, sweep
from lakehouse.base.testing import small_log, write_swf
from lakehouse.cli import app

runner = CliRunner()


@pytest.fixture
def mini_lake(tmp_path) -> Path:
    jobs, header = small_log(6)
    write_swf(tmp_path / "mini.swf", jobs, header)
    root = tmp_path / "lake"
    assert runner.invoke(app, ["ingest", "swf", str(tmp_path / "mini.swf"), "--lake", str(root)]).exit_code == 0
    return root


def _victim(tmp_path: Path) -> Path:
    """A folder of someone else's, with unlocked subfolders a sweep would take for dead spill folders."""
    victim = tmp_path / "victim"
    for sub in ("12345-abc", "important", ".new-old"):
        (victim / sub).mkdir(parents=True)
        (victim / sub / "data.txt").write_text("keep me")
    return victim


def _intact(victim: Path) -> bool:
    return all((victim / sub / "data.txt").read_text() == "keep me" for sub in ("12345-abc", "important", ".new-old"))


def test_a_spill_folder_that_is_a_link_is_never_swept_or_used(mini_lake, tmp_path):
    victim = _victim(tmp_path)
    spill = mini_lake / SPILL_FOLDER
    if spill.exists():
        for folder in spill.iterdir():
            folder.rmdir()
        spill.rmdir()
    spill.symlink_to(victim, target_is_directory=True)
    # A reader, a writer, and a command that fails: none follows the link.
    assert runner.invoke(app, ["sql", "select count(*) from swf.jobs", "--lake", str(mini_lake)]).exit_code == 0
    assert runner.invoke(app, ["ingest", "swf", str(tmp_path / "mini.swf"), "--lake", str(mini_lake)]).exit_code == 0
    assert runner.invoke(app, ["sql", "select * from nowhere", "--lake", str(mini_lake)]).exit_code != 0
    subprocess.run(
        [sys.executable, "-m", "lakehouse.cli", "logs", "--lake", str(mini_lake)], check=True, capture_output=True
    )
    assert _intact(victim)
    assert sweep(spill) == [] and _intact(victim)
    assert spill.is_symlink()  # left as it was


def test_a_sweep_never_follows_a_link_inside_the_spill_folder(tmp_path):
    victim = _victim(tmp_path)
    spill = tmp_path / "lake" / SPILL_FOLDER
    spill.mkdir(parents=True)
    (spill / "999-dead").symlink_to(victim / "important", target_is_directory=True)
    (spill / "998-dead").mkdir()  # a real dead folder: swept
    assert sweep(spill) == [spill / "998-dead"]
    assert _intact(victim) and (spill / "999-dead").is_symlink()


def test_spill_folders_are_private_and_the_fallback_has_no_fixed_name(tmp_path, monkeypatch):
    lake = tmp_path / "lake"
    lake.mkdir()
    folders = SpillFolders()
    mine = folders.folder(lake, "reader")
    assert mine is not None and mine.parent.parent == lake / SPILL_FOLDER
    for place in (lake / SPILL_FOLDER, mine.parent):
        assert stat.S_IMODE(os.lstat(place).st_mode) == 0o700
    # A lake it cannot write (its .spill is a file here): a new private folder, never a planted name.
    other = tmp_path / "read-only-lake"
    other.mkdir()
    (other / SPILL_FOLDER).write_text("not a folder")
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    victim = _victim(tmp_path)
    (tmp_path / "tmp" / "lakehouse-spill").symlink_to(victim, target_is_directory=True)  # the old fixed name
    fallback = folders.folder(other, "reader")
    assert fallback is not None and fallback.parent.parent == tmp_path / "tmp"
    assert fallback.parent.name.startswith("lakehouse-spill-") and not fallback.parent.is_symlink()
    assert stat.S_IMODE(os.lstat(fallback.parent).st_mode) == 0o700
    folders.remove_all()
    assert not fallback.parent.exists() and _intact(victim)


def _refused(args: list[str]) -> str:
    result = runner.invoke(app, args)
    output = result.stdout + result.stderr
    assert result.exit_code != 0 and "Traceback" not in output, output
    return output


def test_an_output_into_the_lakes_data_is_refused(mini_lake, tmp_path):
    parquet = next((mini_lake / "parquet" / "swf" / "jobs").glob("[!_]*.parquet"))
    before = {p: p.read_bytes() for p in [parquet, mini_lake / "lake.duckdb"]}
    link = tmp_path / "innocent.csv"
    link.symlink_to(mini_lake / "lake.duckdb")
    for destination, fmt in ((parquet, "parquet"), (mini_lake / "lake.duckdb", "csv"), (link, "csv")):
        output = _refused(["sql", "select 1 as x", "-f", fmt, "--output", str(destination), "--lake", str(mini_lake)])
        assert "it is in the data of the lake" in output, output
    simulate = ["simulate", "mini", "--lake", str(mini_lake), "--jobs-out", str(mini_lake / "analysis" / "x.parquet")]
    assert "it is in the data of the lake" in _refused(simulate)
    assert all(p.read_bytes() == data for p, data in before.items())
    assert link.is_symlink()
    # Elsewhere in the lake's folder (the nightly pages live there) is the user's.
    ok = runner.invoke(
        app, ["sql", "select 1 as x", "-f", "csv", "-o", str(mini_lake / "notes.csv"), "--lake", str(mini_lake)]
    )
    assert ok.exit_code == 0, ok.output


def test_a_device_a_fifo_a_link_and_stdout_are_written_through(mini_lake, tmp_path):
    query = ["sql", "select 42 as answer", "-f", "csv", "--lake", str(mini_lake)]
    # A character device: as root (where a regression would replace it), a null device of the test's own
    # (so that a failing build cannot take the machine's /dev/null); elsewhere /dev/null, which a user
    # cannot replace anyway.
    device = Path("/dev/null")
    if os.geteuid() == 0:
        device = tmp_path / "null"
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    before = os.stat(device)
    assert runner.invoke(app, [*query, "--output", str(device)]).exit_code == 0
    after = os.lstat(device)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    # Through a link: the file it names is written, the link stays.
    real, link = tmp_path / "real.csv", tmp_path / "link.csv"
    link.symlink_to(real)
    assert runner.invoke(app, [*query, "--output", str(link)]).exit_code == 0
    assert link.is_symlink() and "42" in real.read_text()
    # A FIFO: a reader on the other end gets the rows; it stays a FIFO.
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)  # (never blocks the exit)
    reader.start()
    assert runner.invoke(app, [*query, "--output", str(fifo)]).exit_code == 0
    reader.join(timeout=30)
    assert got and "42" in got[0] and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    # `-`: standard output.
    out = subprocess.run(
        [sys.executable, "-m", "lakehouse.cli", *query, "--output", "-"], capture_output=True, text=True, check=True
    )
    assert "42" in out.stdout and not (Path.cwd() / "-").exists()


# Hostile input files: each fails alone, in bounded time and memory, and the good log beside it is ingested.


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


def test_a_lake_whose_lock_cannot_be_taken_is_one_line_for_every_writer(mini_lake, tmp_path):
    # (A read-only mount gives EROFS; a folder where the lock file goes fails the same open, as root too.)
    from lakehouse.base.writer import LOCK_FILE

    lock = mini_lake / LOCK_FILE
    lock.unlink(missing_ok=True)
    lock.mkdir()
    for args in (
        ["init"],
        ["ingest", "swf", str(tmp_path / "mini.swf")],
        ["catalog", "rebuild"],
        ["report", "locality", "mini"],
    ):
        result = runner.invoke(app, [*args, "--lake", str(mini_lake)])
        output = result.stdout + result.stderr
        assert result.exit_code != 0 and "Traceback" not in output, (args, output)
        assert "cannot take the writers' lock" in output and output.count("error:") == 1, (args, output)
    # A reader works on it as it is.
    assert runner.invoke(app, ["sql", "select count(*) from swf.jobs", "--lake", str(mini_lake)]).exit_code == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a = " + "[" * 50_000 + "]" * 50_000 + "\n", "nested too deeply"),
        ("workers = " + "9" * 5000 + "\n", "thousands of digits"),
    ],
)
def test_a_hostile_toml_file_is_one_line(tmp_path, text, message):
    config = tmp_path / "hostile.toml"
    config.write_text(text)
    for args in (
        ["nightly", "--inbox", str(tmp_path), "--config", str(config), "--dry-run"],
        ["campaign", "run", str(config)],
    ):
        result = runner.invoke(app, [*args, "--lake", str(tmp_path / "lake")])
        output = result.stdout + result.stderr
        assert result.exit_code != 0 and "Traceback" not in output and message in output, (args, output)
