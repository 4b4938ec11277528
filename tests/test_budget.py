"""The memory budget: the limit and threads reach DuckDB from every way of setting them, a report spills
under a tiny limit and gives the same numbers, the spill folder is removed however a command ends, and
a query that cannot fit says what to change in one line."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from typer.testing import CliRunner

from lakehouse.base.budget import MEMORY_ENV, SPILL_FOLDER, THREADS_ENV, Budget, SpillFolders, parse_memory, sweep
from lakehouse.base.errors import SettingsError
from lakehouse.base.lake import Lake
from lakehouse.cli import app
from lakehouse.reports import PERIODICITY, VOLATILITY, PeriodicitySettings
from lakehouse.synth.google_trace import Settings, generate_lake

STORED = ("analysis.task_volatility", "analysis.volatility_summary", "analysis.volatility_d_histogram",
          "analysis.volatility_rate_histogram", "analysis.job_sinusoids")  # fmt: skip
ORDER = {"analysis.volatility_summary": "metric", "analysis.job_sinusoids": "job_id"}


@pytest.fixture(scope="module")
def google_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("budget") / "lake"
    generate_lake(root, Settings(machines=30, days=2, seed=4, services=8, batch_jobs_per_hour=40, parts=3))
    return root


def settings(lake: Lake) -> tuple[str, int, str]:
    with lake.connect() as con:
        return con.execute(
            "SELECT current_setting('memory_limit'), current_setting('threads'), current_setting('temp_directory')"
        ).fetchone()


def test_the_limit_and_threads_reach_duckdb(google_lake: Path, monkeypatch: pytest.MonkeyPatch):
    memory, threads, spill = settings(Lake(google_lake, memory_limit="300MB", threads=1))
    # DuckDB gets the budget less max(600 MB, 30 %), at least a quarter of it: 300 MB / 4 = 75 * 10^6 bytes, shown in
    # binary units (75 * 10^6 / 2^20 = 71.5 MiB).
    assert (memory, threads) == ("71.5 MiB", 1)
    assert Path(spill).parent.parent == google_lake / SPILL_FOLDER
    monkeypatch.setenv(MEMORY_ENV, "2GiB")
    monkeypatch.setenv(THREADS_ENV, "2")
    # 2^31 less 30 % of it (more than 600 MB): 1,503,238,554 bytes, just under 1.4 GiB once DuckDB rounds
    # it down to whole units of its own, shown cut to one decimal
    assert settings(Lake(google_lake))[:2] == ("1.3 GiB", 2)
    # the option wins: 2^30 - 600 * 10^6 = 473,741,824 bytes = 451.79 MiB, shown cut to one decimal
    assert settings(Lake(google_lake, memory_limit="1GiB"))[:2] == ("451.7 MiB", 2)


def test_the_default_is_a_quarter_of_the_machine(google_lake: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(MEMORY_ENV, raising=False)
    budget = Budget.resolve()
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert budget.memory <= max(total // 4, 1 << 30) and budget.memory_source == "default"
    assert budget.threads == os.cpu_count()


def test_the_command_line_takes_the_options(google_lake: Path):
    query = "select current_setting('memory_limit') as m, current_setting('threads') as t"
    run = CliRunner().invoke(
        app, ["sql", query, "--lake", str(google_lake), "--memory-limit", "512MiB", "--threads", "1", "-f", "csv"]
    )
    assert run.exit_code == 0, run.output
    assert run.stdout.splitlines() == ["m,t", "128.0 MiB,1"]  # a quarter of 512 MiB (more than 512 MiB - 600 MB)


@pytest.mark.parametrize(
    ("text", "amount"),
    [("3GB", 3 * 10**9), ("512MiB", 512 << 20), ("2.5 gb", 2_500_000_000), ("100000000", 10**8)],
)
def test_amounts_read_as_duckdb_reads_them(text: str, amount: int):
    assert parse_memory(text) == amount


@pytest.mark.parametrize(
    "text", ["lots", "3 GBs", "-1GB", "10kB", "0", "GB", "99999999999999999999TB", "18446744073709551616", "1000%"]
)
def test_unreadable_or_tiny_amounts_are_refused(text: str):
    with pytest.raises(SettingsError, match="--memory-limit"):
        parse_memory(text)


@pytest.mark.parametrize(
    "args", [["--memory-limit", "lots"], ["--memory-limit", "1MB"], ["--threads", "0"], ["--threads", "x"]]
)
def test_a_bad_setting_is_one_line(google_lake: Path, args: list[str]):
    run = CliRunner().invoke(app, ["report", "volatility", "--lake", str(google_lake), *args])
    assert run.exit_code in (1, 2)
    assert "Traceback" not in run.output
    assert ("--memory-limit" if args[0] == "--memory-limit" else "threads") in run.output


def stored(lake: Lake) -> dict[str, pl.DataFrame]:
    return {view: lake.query(f"SELECT * FROM {view} ORDER BY {ORDER.get(view, 'ALL')}") for view in STORED}


def test_a_tiny_limit_spills_and_gives_the_same_numbers(google_lake: Path, monkeypatch: pytest.MonkeyPatch):
    from lakehouse.models.volatility import model

    # The windows' memory counted twice: the split a trace twice as long would need under the smallest
    # budget (this lake's windows fit 32 MB whole).
    monkeypatch.setattr(model, "WINDOW_BYTES", 2 * model.WINDOW_BYTES)
    results = {}
    for limit in ("4GB", "32MB"):
        lake = Lake(google_lake, memory_limit=limit, threads=2)
        volatility = VOLATILITY.run(lake, None)
        PERIODICITY.run(lake, PeriodicitySettings(noise_trials=10))
        results[limit] = (volatility.partitions, stored(lake))
    assert results["4GB"][0] == 1 and results["32MB"][0] > 1  # the windows were split to fit 32 MB
    for view in STORED:
        assert_frame_equal(results["4GB"][1][view], results["32MB"][1][view], check_exact=False, rel_tol=1e-12)


def spill_entries(root: Path) -> list[str]:
    folder = root / SPILL_FOLDER
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_the_spill_folder_is_gone_after_a_normal_end(google_lake: Path):
    before = spill_entries(google_lake)  # this test process's own, if it opened the lake already
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "lakehouse.cli",
            "report",
            "volatility",
            "--lake",
            str(google_lake),
            "--memory-limit",
            "32MB",
            "--format",
            "csv",
        ],  # fmt: skip
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert spill_entries(google_lake) == before


@pytest.mark.faults
def test_the_next_command_removes_what_a_killed_one_left(tmp_path: Path):
    root = tmp_path / "lake"
    Lake(root).init()
    before = spill_entries(root)  # this test process's own
    # A query that runs for minutes and spills (a sort far beyond 32 MB).
    slow = "select count(*) from (select * from range(400000000) t(i) order by hash(i))"
    child = subprocess.Popen(
        [sys.executable, "-m", "lakehouse.cli", "sql", slow, "--lake", str(root), "--memory-limit", "32MB"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    spilled: list[Path] = []
    while time.monotonic() < deadline and not spilled:
        spilled = (
            [p for p in (root / SPILL_FOLDER).glob("*/*/*") if p.is_file()] if (root / SPILL_FOLDER).exists() else []
        )
        time.sleep(0.05)
    assert child.poll() is None, "the query ended before it spilled"
    assert spilled, "the query never spilled"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert any(name.startswith(f"{child.pid}-") for name in spill_entries(root))  # left behind by the killed one
    run = subprocess.run(
        [sys.executable, "-m", "lakehouse.cli", "sql", "select 1", "--lake", str(root)], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert spill_entries(root) == before


def test_a_living_process_keeps_its_folder(google_lake: Path):
    lake = Lake(google_lake)
    with lake.connect():
        mine = spill_entries(google_lake)
        assert mine and sweep(google_lake / SPILL_FOLDER) == []  # held by this process: not swept
        assert spill_entries(google_lake) == mine


def test_a_query_beyond_the_limit_says_what_to_change(google_lake: Path):
    # A list of 50 M integers is held whole in memory: DuckDB cannot spill it.
    run = CliRunner().invoke(
        app,
        ["sql", "select list(range) from range(50000000)", "--lake", str(google_lake), "--memory-limit", "50MB"],
    )
    assert run.exit_code == 1
    assert run.output.count("error:") == 1 and "Traceback" not in run.output
    message = " ".join(run.output.split())  # one message, wrapped at the terminal's width
    assert "--memory-limit" in message and "50.0 MB" in message


#: Every command that reads the Google trace's views (google.*), whose queries can group ~1.3 G usage rows.
READS_GOOGLE = [
    "audit",
    "nightly",
    "pack",
    "sql",
    "reproduce",
    "report periodicity",
    "report volatility",
    "report predictions",
    "export google-swf",
]


def test_every_command_that_reads_the_google_trace_takes_a_memory_limit():
    import typer

    def commands(group, prefix=()):
        for name, command in group.commands.items():
            if hasattr(command, "commands"):
                yield from commands(command, (*prefix, name))
            else:
                yield " ".join((*prefix, name)), command

    found = dict(commands(typer.main.get_group(app)))
    for name in READS_GOOGLE:
        options = {opt for param in found[name].params for opt in param.opts}
        assert {"--memory-limit", "--threads"} <= options, name


runner = CliRunner()


def _victim(tmp_path: Path) -> Path:
    """A folder of someone else's, with unlocked subfolders a sweep would take for dead spill folders."""
    victim = tmp_path / "victim"
    for sub in ("12345-abc", "important", ".new-old"):
        (victim / sub).mkdir(parents=True)
        (victim / sub / "data.txt").write_text("keep me")
    return victim


def _intact(victim: Path) -> bool:
    return all((victim / sub / "data.txt").read_text() == "keep me" for sub in ("12345-abc", "important", ".new-old"))


def test_a_spill_folder_that_is_a_link_is_never_swept_or_used(cli_lake, tmp_path):
    victim = _victim(tmp_path)
    spill = cli_lake / SPILL_FOLDER
    shutil.rmtree(spill, ignore_errors=True)  # (the folders of this process's readers, copied with the lake)
    spill.symlink_to(victim, target_is_directory=True)
    # A reader, a writer, and a command that fails: none follows the link.
    assert runner.invoke(app, ["sql", "select count(*) from swf.jobs", "--lake", str(cli_lake)]).exit_code == 0
    assert runner.invoke(app, ["ingest", "swf", str(tmp_path / "mini.swf"), "--lake", str(cli_lake)]).exit_code == 0
    assert runner.invoke(app, ["sql", "select * from nowhere", "--lake", str(cli_lake)]).exit_code != 0
    subprocess.run(
        [sys.executable, "-m", "lakehouse.cli", "logs", "--lake", str(cli_lake)], check=True, capture_output=True
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
