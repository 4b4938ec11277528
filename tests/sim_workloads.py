"""Small hand-written workloads for the simulator tests."""

from __future__ import annotations

import polars as pl

from lakehouse.sim import simulate


def jobs(*rows: tuple, prediction: list[int] | None = None) -> pl.DataFrame:
    """Rows of (job_id, submit, run, requested, procs[, user]), in submit order."""
    frame = pl.DataFrame(
        {
            "job_id": [r[0] for r in rows],
            "submit_time": [r[1] for r in rows],
            "run_time": [r[2] for r in rows],
            "req_time": [r[3] for r in rows],
            "procs": [r[4] for r in rows],
            "user_id": [r[5] if len(r) > 5 else 1 for r in rows],
        }
    )
    if prediction is not None:
        frame = frame.with_columns(pl.Series("guess", prediction))
    return frame


def starts(frame: pl.DataFrame, machine_size: int, **settings) -> dict[int, int]:
    result = simulate(frame, machine_size, **settings).jobs
    return dict(zip(result["job_id"].to_list(), result["start_time"].to_list(), strict=True))


def peak_use(result: pl.DataFrame) -> int:
    """Most processors in use at any instant (a job occupies [start, end); ends free first)."""
    events = sorted(
        [(e, -p) for e, p in zip(result["end_time"], result["procs"], strict=True)]
        + [(s, p) for s, p, e in zip(result["start_time"], result["procs"], result["end_time"], strict=True) if e > s]
    )
    use = peak = 0
    for _, delta in events:
        use += delta
        peak = max(peak, use)
    return peak
