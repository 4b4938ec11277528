from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from lakehouse.ingest.swf import ingest_swf
from lakehouse.lake import Lake

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("LAKEHOUSE_SHARED_DATA", REPO.parent / "shared" / "data"))
SWF_DIR = SHARED / "swf"


def shared_or_skip(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared data not available: {path}")
    return path


def provenance_job_counts() -> dict[str, int]:
    """Job-line counts as published in swf/PROVENANCE.md (an independent source, not our parser)."""
    text = shared_or_skip(SWF_DIR / "PROVENANCE.md").read_text()
    counts = {}
    for row in re.finditer(r"^\| ([^|]+?\.swf\.gz) \|(?:[^|]*\|){4} ([\d,]+) \|", text, re.M):
        counts[row.group(1).strip()] = int(row.group(2).replace(",", ""))
    return counts


@pytest.fixture
def lake(tmp_path: Path) -> Lake:
    return Lake(tmp_path / "lake")


@pytest.fixture(scope="session")
def pwa_lake(tmp_path_factory: pytest.TempPathFactory) -> tuple[Lake, list]:
    """All shared SWF logs ingested once per test session."""
    shared_or_skip(SWF_DIR)
    lake = Lake(tmp_path_factory.mktemp("pwa") / "lake")
    results = ingest_swf(lake, [str(SWF_DIR)])
    return lake, results
