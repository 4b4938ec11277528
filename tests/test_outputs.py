"""Every output a command writes: its place refused before any work when no file can be made there, and
the file written aside and renamed, so that a write stopped halfway leaves the previous file whole.

The corpus crosses each kind of output (--output of a table, --jobs-out, an SWF export, a schedule's
figure, a folder of figures, the nightly pages) with each kind of place that cannot take it."""

from __future__ import annotations

import os
import resource
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lakehouse.cli import app

from conftest import stored_files

runner = CliRunner()


@pytest.fixture
def cli_lake(mini_lakes, tmp_path: Path) -> Path:
    return mini_lakes(40, tmp_path)


#: Each kind of output: the command, with {out} where the destination goes.
FILE_OUTPUTS = {
    "sql --output": ["sql", "SELECT 1 AS a", "-f", "csv", "--output", "{out}"],
    "simulate --jobs-out": ["simulate", "mini", "--jobs-out", "{out}"],
    "simulate --output": ["simulate", "mini", "-f", "json", "--output", "{out}"],
    "export swf": ["export", "swf", "mini", "--output", "{out}"],
    "plot schedule -o": ["plot", "schedule", "--log", "mini", "--output", "{out}"],
    "logs --output": ["logs", "--output", "{out}"],
}
FOLDER_OUTPUTS = {
    "plot schedule --plots": ["plot", "schedule", "--log", "mini", "--plots", "{out}"],
    "report locality --plots": ["report", "locality", "mini", "--plots", "{out}"],
}


def _suffix(kind: str) -> str:
    return {"simulate --jobs-out": ".parquet", "export swf": ".swf", "plot schedule -o": ".png"}.get(kind, ".csv")


def _places(tmp_path: Path, suffix: str) -> dict[str, tuple[str, str]]:
    """Places no file can be made, each with what the message must say."""
    (tmp_path / "a-folder").mkdir(exist_ok=True)
    (tmp_path / "a-folder" / f"inside{suffix}").mkdir(exist_ok=True)
    return {
        "missing folder": (str(tmp_path / "nowhere" / f"x{suffix}"), "does not exist"),
        "a folder": (str(tmp_path / "a-folder" / f"inside{suffix}"), "folder"),
        "/proc": (f"/proc/lakehouse-test{suffix}", "cannot write"),
        "name over 255 bytes": (str(tmp_path / ("n" * 300 + suffix)), "cannot write"),
    }


def refused(args: list[str]) -> str:
    result = runner.invoke(app, args)
    output = result.stdout + result.stderr
    assert result.exit_code != 0, output
    assert "Traceback" not in output and (result.exception is None or isinstance(result.exception, SystemExit))
    assert output.count("error:") + output.count("─ Error ─") == 1, output
    return " ".join(output.replace("│", " ").split())


@pytest.mark.parametrize("kind", sorted(FILE_OUTPUTS))
@pytest.mark.parametrize("place", ["missing folder", "a folder", "/proc", "name over 255 bytes"])
def test_a_file_no_one_can_write_is_refused_before_any_work(cli_lake, tmp_path, kind, place):
    destination, message = _places(tmp_path, _suffix(kind))[place]
    args = [a.replace("{out}", destination) for a in FILE_OUTPUTS[kind]] + ["--lake", str(cli_lake)]
    text = refused(args)
    assert message in text, text
    assert not list(tmp_path.rglob("*.tmp"))


@pytest.mark.parametrize("kind", sorted(FOLDER_OUTPUTS))
def test_a_folder_of_figures_that_cannot_take_files_is_refused(cli_lake, tmp_path, kind):
    (tmp_path / "file").write_text("x")
    for destination in ("/proc/lakehouse-figures", str(tmp_path / "file")):
        args = [a.replace("{out}", destination) for a in FOLDER_OUTPUTS[kind]] + ["--lake", str(cli_lake)]
        text = refused(args)
        assert "cannot" in text or "is a file" in text, text


def test_the_nightly_reports_folder_is_checked_first(cli_lake, tmp_path):
    (tmp_path / "inbox").mkdir()
    args = ["nightly", "--inbox", str(tmp_path / "inbox"), "--lake", str(cli_lake), "--reports", "/proc/reports"]
    assert "cannot" in refused(args)


def _limited(limit_bytes: int):
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return apply


@pytest.mark.parametrize(
    ("kind", "args"),
    [
        ("--jobs-out", ["simulate", "mini", "--jobs-out", "{out}"]),
        ("--output", ["sql", "SELECT range AS n, 'some text' AS t FROM range(100000)", "-f", "csv", "-o", "{out}"]),
        ("export", ["export", "swf", "mini", "--output", "{out}"]),
    ],
)
def test_a_write_stopped_by_a_file_size_limit_keeps_the_previous_file(mini_lakes, tmp_path, kind, args):
    """A file-size limit (as a full disk would) stops the write halfway: one line, the old file whole.
    The limit lets the lake be read (a reader of a DuckLake lake's SQLite catalog makes the 32 KB index
    of its write-ahead log beside it); the outputs of a log of 5,000 jobs go past it."""
    cli_lake = mini_lakes(5_000, tmp_path)
    suffix = {"--jobs-out": ".parquet", "export": ".swf"}.get(kind, ".csv")
    out = tmp_path / f"previous{suffix}"
    previous = b"the previous file\n" * 10
    out.write_bytes(previous)
    command = [sys.executable, "-m", "lakehouse.cli", *[a.replace("{out}", str(out)) for a in args]]
    done = subprocess.run(
        [*command, "--lake", str(cli_lake)], capture_output=True, text=True, preexec_fn=_limited(48_000), timeout=120
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("error:") == 1, done.stderr
    assert "unchanged" in " ".join(done.stderr.split()) or "no space" in done.stderr
    assert out.read_bytes() == previous
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_polars_error_without_errno_is_one_line(tmp_path, monkeypatch):
    """Polars raises OSError('... (os error 28)') with no errno: still the full-disk line."""
    import polars as pl

    from lakehouse.base.render import OutputFormat, emit

    def full(self: object, *args: object, **kwargs: object) -> None:
        raise OSError("failed to write whole buffer: No space left on device (os error 28)")

    monkeypatch.setattr(pl.DataFrame, "write_parquet", full)
    out = tmp_path / "x.parquet"
    out.write_bytes(b"before")
    with pytest.raises(OSError) as caught:
        emit(pl.DataFrame({"a": [1]}), OutputFormat.parquet, out)
    assert caught.value.errno == 28 and caught.value.filename == str(out)
    assert out.read_bytes() == b"before" and not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize("columns", ["40", "80"])
def test_an_error_never_folds_a_path_or_a_word(cli_lake, tmp_path, monkeypatch, columns):
    """The path in an error is whole, as given, whatever the terminal's width and the path's length:
    at 80 columns a box used to cut it (`a-f` / `older`), so it could not be copied, and a test that
    looked for a word found it or not by where the path happened to break."""
    monkeypatch.setenv("COLUMNS", columns)
    deep = tmp_path / "a-folder" / ("long-name-" * 12) / "inside.csv"
    deep.mkdir(parents=True)
    for args in (
        ["logs", "--output", str(deep), "--lake", str(cli_lake)],  # our error
        ["logs", "--format", "no-such-format", "--output", str(deep), "--lake", str(cli_lake)],  # click's
    ):
        result = runner.invoke(app, args)
        output = result.stdout + result.stderr
        assert result.exit_code != 0, output
        assert "error:" in output and "─ Error ─" not in output, output
        if "no-such-format" not in args:
            assert str(deep) in output, output
        assert "no-such-format" in output or "folder" in output, output


def _refused(args: list[str]) -> str:
    result = runner.invoke(app, args)
    output = result.stdout + result.stderr
    assert result.exit_code != 0 and "Traceback" not in output, output
    return output


def test_an_output_into_the_lakes_data_is_refused(cli_lake, tmp_path):
    parquet = stored_files(cli_lake, "swf_jobs")["mini"]
    catalog = next(path for path in (cli_lake / "catalog.sqlite", cli_lake / "lake.duckdb") if path.exists())
    before = {p: p.read_bytes() for p in [parquet, catalog]}
    link = tmp_path / "innocent.csv"
    link.symlink_to(catalog)
    for destination, fmt in ((parquet, "parquet"), (catalog, "csv"), (link, "csv")):
        output = _refused(["sql", "select 1 as x", "-f", fmt, "--output", str(destination), "--lake", str(cli_lake)])
        assert "it is in the data of the lake" in output, output
    simulate = ["simulate", "mini", "--lake", str(cli_lake), "--jobs-out", str(cli_lake / "analysis" / "x.parquet")]
    assert "it is in the data of the lake" in _refused(simulate)
    assert all(p.read_bytes() == data for p, data in before.items())
    assert link.is_symlink()
    # Elsewhere in the lake's folder (the nightly pages live there) is the user's.
    ok = runner.invoke(
        app, ["sql", "select 1 as x", "-f", "csv", "-o", str(cli_lake / "notes.csv"), "--lake", str(cli_lake)]
    )
    assert ok.exit_code == 0, ok.output


def test_a_device_a_fifo_a_link_and_stdout_are_written_through(cli_lake, tmp_path):
    query = ["sql", "select 42 as answer", "-f", "csv", "--lake", str(cli_lake)]
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
