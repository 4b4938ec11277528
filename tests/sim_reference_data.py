"""Readers for the published simulator's outputs in ../shared/data/reference/predictsim-sc15."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import polars as pl

from conftest import SHARED

PYSS_DIR = SHARED / "reference" / "predictsim-sc15"


def read_pyss_output(path: Path) -> pl.DataFrame:
    """Job id, submit, wait, run, backfilled flag (field 16), under-predictions - 1 (field 17) and the
    initial prediction (field 18; -1 in runs without a predictor)."""
    rows = [line.split() for line in gzip.open(path, "rt") if line.strip() and not line.startswith(";")]
    return pl.DataFrame(
        {
            "job_id": [int(r[0]) for r in rows],
            "ref_submit": [int(r[1]) for r in rows],
            "ref_wait": [int(r[2]) for r in rows],
            "ref_run": [int(r[3]) for r in rows],
            "ref_backfilled": [int(r[15]) == 1 for r in rows],
            "ref_underpredictions": [int(r[16]) + 1 for r in rows],
            "ref_initial_prediction": [int(r[17]) for r in rows],
        }
    )


def expected_metrics() -> dict[str, dict[str, float]]:
    """The README's table "Expected metrics": run name -> avg wait, avg bsld, max wait, avg (w+r)."""
    text = (PYSS_DIR / "README.md").read_text()
    table = text[text.index("## Expected metrics") :]
    metrics = {}
    for row in re.finditer(r"^\| ([A-Za-z][^|]*?) \| ([\d.]+) \| ([\d.]+) \| (\d+) \| ([\d.]+) \|$", table, re.M):
        name = row.group(1).replace(" (rerun)", "").strip()
        metrics[name] = {
            "mean_wait": float(row.group(2)),
            "mean_bounded_slowdown": float(row.group(3)),
            "max_wait": int(row.group(4)),
            "mean_response": float(row.group(5)),
        }
    return metrics
