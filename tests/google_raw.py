"""Reading a generated Google trace straight from its CSV text, independently of the lake."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np


def raw_rows(out: Path, table: str) -> list[list[str]]:
    rows = []
    for part in sorted((out / "trace" / table).glob("*.csv.gz")):
        with gzip.open(part, "rt") as lines:
            rows += [line.rstrip("\n").split(",") for line in lines]
    return rows


def raw_usage(out: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(job, task) keys, mean CPU rate (mu5m) and sampled CPU (mu1s) of every usage row."""
    rows = raw_rows(out, "task_usage")
    key = np.array([(int(r[2]), int(r[3])) for r in rows])
    return key, np.array([float(r[5]) for r in rows]), np.array([float(r[19]) for r in rows])


def raw_cpu_requests(out: Path) -> dict[tuple[int, int], float]:
    """The last CPU request of each (job, task) in task_events."""
    return {(int(r[2]), int(r[3])): float(r[9]) for r in raw_rows(out, "task_events") if r[9]}
