"""Data is never markup: text from the lake (cells, column names, an SWF header, a file name) and from
errors prints as it is, whatever brackets it holds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lakehouse.base.testing import small_log, write_swf

ODD = ["x[y]z", "[/]", "[bold]b", "[red]", "a[/b]c"]


def lakehouse(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lakehouse.cli", *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def odd_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A log whose header holds brackets, in a folder whose name holds some too."""
    folder = tmp_path_factory.mktemp("odd") / "in [batch:1]"
    folder.mkdir()
    jobs, header = small_log(6)
    write_swf(folder / "odd.swf", jobs, {**header, "Queue": "1 [batch:1]", "Note": "[/] and [bold]"})
    lake = folder.parent / "lake"
    done = lakehouse("ingest", "swf", str(folder), "--lake", str(lake))
    assert done.returncode == 0, done.stderr
    return lake


@pytest.mark.parametrize("text", ODD)
def test_cells_and_column_names_print_as_they_are(odd_lake, text):
    quoted = text.replace("'", "''")
    shown = lakehouse("sql", f"SELECT '{quoted}' AS \"{text}\"", "--lake", str(odd_lake))
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
    assert shown.stdout.count(text) == 2, shown.stdout  # the header and the cell


@pytest.mark.parametrize("text", ODD)
def test_an_error_naming_odd_text_is_one_line(odd_lake, text):
    refused = lakehouse("sql", f"SELECT * FROM {text}", "--lake", str(odd_lake))
    assert refused.returncode != 0 and "Traceback" not in refused.stderr, refused.stderr
    assert refused.stderr.startswith("error:") and text in refused.stderr


def test_a_header_with_brackets_prints_whole(odd_lake):
    shown = lakehouse("sql", "SELECT header FROM swf.logs", "--lake", str(odd_lake), "-f", "table")
    assert shown.returncode == 0, shown.stderr
    assert "1 [batch:1]" in shown.stdout.replace("\n", " ") or "[batch:1]" in shown.stdout
    listed = lakehouse("logs", "--lake", str(odd_lake))
    assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr
