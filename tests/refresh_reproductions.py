"""Refresh the record of `lakehouse reproduce` that the docs cite: docs/reproduced/STUDY.csv (every row
of each study, with its status) and the status counts of docs/reproductions.md, from lakes holding the
studies' data.  `make reproductions` runs it on the shared data (about 15 minutes on 2 cores: the
studies' campaigns); tests/test_reproduce_record.py checks that the counts are the record's and the
statuses are what the code gives for its numbers.

    python tests/refresh_reproductions.py SWF_LAKE GOOGLE_LAKE
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import polars as pl

REPO = Path(__file__).resolve().parents[1]
RECORD = REPO / "docs" / "reproduced"
DOC = REPO / "docs" / "reproductions.md"
COUNTS_LINE = re.compile(r"Status of the (\d+) rows \(`lakehouse reproduce ([\w-]+)`\): [^\n]*\.")


def counts_line(study: str, table: pl.DataFrame) -> str:
    from lakehouse.reproduce import counts

    said = ", ".join(f"{n} {status}" for status, n in counts(table).items())
    return f"Status of the {table.height} rows (`lakehouse reproduce {study}`): {said}."


def with_counts(text: str, study: str, line: str) -> tuple[str, bool]:
    """The docs with `study`'s counts line replaced by `line`, and whether it had one."""
    found = [m for m in COUNTS_LINE.finditer(text) if m.group(2) == study]
    for m in reversed(found):
        text = text[: m.start()] + line + text[m.end() :]
    return text, bool(found)


def main(swf_lake: Path, google_lake: Path) -> None:
    from lakehouse.reproduce import STUDIES

    RECORD.mkdir(exist_ok=True)
    text = DOC.read_text(encoding="utf-8")
    for study, declared in STUDIES.items():
        lake = swf_lake if declared.lake == "swf" else google_lake
        out = RECORD / f"{study}.csv"
        quick = ["--quick"] if study == "selection" else []
        command = [sys.executable, "-m", "lakehouse.cli", "reproduce", study, "--lake", str(lake), *quick]
        subprocess.run([*command, "--format", "csv", "--output", str(out)], check=True)
        table = pl.read_csv(out, infer_schema_length=None)
        line = counts_line(study, table)
        text, found = with_counts(text, study, line)
        if not found:
            print(f"docs/reproductions.md has no counts line for {study}: add `{line}`", file=sys.stderr)
        print(line)
    DOC.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
