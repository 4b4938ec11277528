"""Configuration files (lakehouse.base.tomlfile: the nightly run's and a campaign's): hostile TOML is one
line naming the file, and a FIFO, a device or a file too large is refused before it is read."""

from __future__ import annotations

import os

import pytest
from typer.testing import CliRunner

from lakehouse.cli import app

runner = CliRunner()


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


@pytest.mark.parametrize("kind", ["fifo", "zero", "large"])
@pytest.mark.parametrize("command", ["nightly", "campaign"])
def test_a_configuration_that_is_no_regular_file_is_refused_at_once(tmp_path, kind, command):
    import time

    config = tmp_path / "config.toml"
    if kind == "fifo":
        os.mkfifo(config)  # (a reader that opened it blocking would wait for ever)
    elif kind == "zero":
        config.symlink_to("/dev/zero")
    else:
        config.write_text("# " + "x" * (2 << 20) + "\n")
    args = (
        ["nightly", "--inbox", tmp_path, "--config", config, "--dry-run", "--lake", tmp_path / "lake"]
        if command == "nightly"
        else ["campaign", "run", str(config), "--lake", tmp_path / "lake"]
    )
    started = time.monotonic()
    result = runner.invoke(app, [str(a) for a in args])
    said = " ".join((result.stdout + result.stderr).split())
    assert result.exit_code != 0 and time.monotonic() - started < 10, said
    expected = "larger than 1,048,576 bytes" if kind == "large" else "not a regular file"
    assert f"{config}: " in said and expected in said and "Traceback" not in said, said
