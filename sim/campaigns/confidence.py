"""How sure a campaign's numbers are: block-bootstrap confidence intervals over the log's weeks (or
months), and paired comparisons of two variants on the same jobs (docs/campaigns.md, "Confidence").

A log is one realisation of a workload whose weeks are far from independent job by job (a user submits
bursts of similar jobs; a long wait delays the jobs behind it), so the jobs are resampled in *blocks*:
the non-empty weeks (or 30-day months) of submission, counted from the log's first replayed job.  A
replicate draws as many blocks as the log has, with replacement, and computes the metric over the jobs
of the blocks drawn (a block drawn twice counts its jobs twice).  The interval is the percentile
interval of the replicates.  Two variants of a campaign replay the same jobs, so a comparison draws the
same blocks for both, and its p-value is the two-sided bootstrap one: twice the share of replicates on
the smaller side of zero (at least 1 / replicates).

The per-job schedules come from the campaign's stored schedules (`--jobs-out`) or, without them, from
replaying the run again: a run is deterministic, and the replay is checked against the stored row (the
same run key, hence the same jobs, settings and machine; the same summary metric).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl

from lakehouse.base.comma_lists import split_items
from lakehouse.base.errors import LakehouseError, SettingsError
from lakehouse.base.job_views import View, log_jobs
from lakehouse.base.lake import Lake
from lakehouse.campaigns.grid import RunSettings, run_key
from lakehouse.campaigns.report import DEFAULT_CONFIDENCE, DEFAULT_REPLICATES, Block
from lakehouse.campaigns.runner import (
    JOBS_FOLDER,
    LogInput,
    Run,
    frame_fingerprint,
    needed_columns,
    replay_row,
)
from lakehouse.sim.metrics import GEOMEAN_FLOOR, measured
from lakehouse.sim.options import DAY, WEEK
from lakehouse.sim.settings import TUNABLES

#: A month of the bootstrap's blocks: 30 days (calendar months would need each log's time zone and
#: differ in length by a tenth).
MONTH = 30 * DAY
BLOCKS = {Block.week: WEEK, Block.month: MONTH}
#: Metrics that are not a function of the jobs alone (the machine's busy time over the whole span):
#: a resample of weeks has no makespan of its own.
NO_INTERVAL = ("utilization", "makespan")


class ConfidenceError(LakehouseError):
    """A confidence interval or comparison that cannot be computed (the message says why)."""


@dataclass(frozen=True)
class Bootstrap:
    """How to resample: the block length (s), the replicates, the confidence level and the seed."""

    block_seconds: int = WEEK
    replicates: int = DEFAULT_REPLICATES
    confidence: float = DEFAULT_CONFIDENCE
    seed: int = 0

    def __post_init__(self) -> None:
        if self.block_seconds <= 0:
            raise SettingsError(f"a block must be longer than 0 s, got {self.block_seconds}")
        if not 10 <= self.replicates <= 1_000_000:
            raise SettingsError(f"replicates must be from 10 to 1,000,000, got {self.replicates}")
        if not 0 < self.confidence < 1:
            raise SettingsError(f"the confidence level must be between 0 and 1 (e.g. 0.95), got {self.confidence}")


# -- the metrics over resampled blocks ------------------------------------------------------------


@dataclass(frozen=True)
class JobValues:
    """One schedule's per-job values of a metric, and the block of each job."""

    values: np.ndarray  # float64
    blocks: np.ndarray  # int64, 0 .. n_blocks - 1 (non-empty blocks only)
    n_blocks: int


def job_values(schedule: pl.DataFrame, metric: str, tau: float, block_seconds: int) -> JobValues:
    """The schedule's per-job value that `metric` summarises, and each job's block of submission."""
    if metric in NO_INTERVAL:
        raise ConfidenceError(
            f"{metric} is not a metric of the jobs alone (it depends on the whole span's makespan): it has no "
            "bootstrap interval; choose a wait or slowdown metric"
        )
    wait = (schedule["start_time"] - schedule["submit_time"]).cast(pl.Float64).to_numpy()
    run = (schedule["end_time"] - schedule["start_time"]).cast(pl.Float64).to_numpy()
    if metric.endswith("bounded_slowdown"):
        values = np.maximum((wait + run) / np.maximum(run, tau), 1.0)
    elif metric == "mean_response":
        values = wait + run
    elif metric == "geomean_wait":
        values = np.log(np.maximum(wait, GEOMEAN_FLOOR))
    else:
        values = wait
    submit = schedule["submit_time"].to_numpy()
    raw = (submit - submit.min()) // block_seconds
    _, blocks = np.unique(raw, return_inverse=True)  # empty blocks left out
    return JobValues(values, blocks.astype(np.int64), int(blocks.max()) + 1)


def _statistic(metric: str) -> Callable[[JobValues, np.ndarray], np.ndarray]:
    """The metric of each replicate, given the replicates' block counts (replicates x blocks)."""
    if metric.startswith("p") and "_" in metric and metric[1:].split("_")[0].isdigit():
        q = int(metric[1:].split("_")[0]) / 100
        return lambda jobs, counts: _weighted_quantiles(jobs, counts, q)
    if metric == "max_wait":

        def maximum(jobs: JobValues, counts: np.ndarray) -> np.ndarray:
            highest = np.full(jobs.n_blocks, -np.inf)
            np.maximum.at(highest, jobs.blocks, jobs.values)
            return np.where(counts > 0, highest, -np.inf).max(axis=1)

        return maximum

    def mean(jobs: JobValues, counts: np.ndarray) -> np.ndarray:
        sums = np.bincount(jobs.blocks, weights=jobs.values, minlength=jobs.n_blocks)
        sizes = np.bincount(jobs.blocks, minlength=jobs.n_blocks).astype(np.float64)
        means = (counts @ sums) / (counts @ sizes)
        return np.exp(means) if metric == "geomean_wait" else means

    return mean


def _weighted_quantiles(jobs: JobValues, counts: np.ndarray, q: float) -> np.ndarray:
    """The q-quantile of each replicate's jobs, as numpy's default (linear interpolation between order
    statistics) gives it on the replicate written out job by job (a block drawn k times: its jobs k times)."""
    order = np.argsort(jobs.values, kind="stable")
    values, blocks = jobs.values[order], jobs.blocks[order]
    out = np.empty(len(counts))
    for i, drawn in enumerate(counts):
        cumulative = np.cumsum(drawn[blocks])
        position = q * (cumulative[-1] - 1)
        low, high = int(np.floor(position)), int(np.ceil(position))
        below = values[np.searchsorted(cumulative, low, side="right")]
        above = values[np.searchsorted(cumulative, high, side="right")]
        out[i] = below + (position - low) * (above - below)
    return out


def draws(n_blocks: int, bootstrap: Bootstrap) -> np.ndarray:
    """The replicates' block counts (replicates x blocks): each draws n_blocks blocks with replacement."""
    rng = np.random.default_rng(bootstrap.seed)
    return rng.multinomial(n_blocks, np.full(n_blocks, 1.0 / n_blocks), size=bootstrap.replicates).astype(np.float64)


def interval(replicates: np.ndarray, confidence: float) -> tuple[float, float]:
    """The percentile interval of the replicates at `confidence`."""
    tail = (1 - confidence) / 2
    low, high = np.quantile(replicates, [tail, 1 - tail])
    return float(low), float(high)


def metric_interval(schedule: pl.DataFrame, metric: str, tau: float, bootstrap: Bootstrap) -> tuple[float, float, int]:
    """(low, high, blocks): the bootstrap interval of `metric` over the schedule's blocks."""
    jobs = job_values(schedule, metric, tau, bootstrap.block_seconds)
    if jobs.n_blocks < 2:
        raise ConfidenceError("the jobs span one block only: choose a shorter --block")
    replicates = _statistic(metric)(jobs, draws(jobs.n_blocks, bootstrap))
    return (*interval(replicates, bootstrap.confidence), jobs.n_blocks)


def paired_difference(
    first: pl.DataFrame, second: pl.DataFrame, metric: str, tau: float, bootstrap: Bootstrap
) -> dict[str, float | int]:
    """`metric` of `second` minus that of `first` (two schedules of the same jobs), with its bootstrap
    interval (the same blocks drawn for both) and two-sided p-value."""
    a = first.sort("job_id")
    b = second.sort("job_id")
    if not a["job_id"].equals(b["job_id"]) or not a["submit_time"].equals(b["submit_time"]):
        raise ConfidenceError(
            "the two runs did not replay the same jobs: a paired comparison needs the same log and view"
        )
    jobs_a = job_values(a, metric, tau, bootstrap.block_seconds)
    jobs_b = job_values(b, metric, tau, bootstrap.block_seconds)
    if jobs_a.n_blocks < 2:
        raise ConfidenceError("the jobs span one block only: choose a shorter --block")
    counts = draws(jobs_a.n_blocks, bootstrap)
    statistic = _statistic(metric)
    ones = np.ones((1, jobs_a.n_blocks))
    observed = float(statistic(jobs_b, ones)[0] - statistic(jobs_a, ones)[0])
    differences = statistic(jobs_b, counts) - statistic(jobs_a, counts)
    low, high = interval(differences, bootstrap.confidence)
    below, above = float(np.mean(differences <= 0)), float(np.mean(differences >= 0))
    p_value = min(1.0, max(2 * min(below, above), 1 / bootstrap.replicates))
    return {"difference": observed, "low": low, "high": high, "p_value": p_value, "blocks": jobs_a.n_blocks}


# -- the schedules of a campaign's runs -----------------------------------------------------------


def row_settings(row: dict) -> RunSettings:
    """The settings a stored campaign row was replayed with."""
    selector = row.get("selector")
    # A tunable setting a row lacks (stored before it existed) or leaves null: the campaigns' default.
    tuned = {name: row[name] for name in TUNABLES if row.get(name) is not None}
    return RunSettings(
        **tuned,
        selector=selector,
        policies=tuple(split_items(row["policies"])) if selector and row.get("policies") else (),
        period=row.get("period") if selector else None,
        decay=row.get("decay") or 1.0 if selector else 1.0,
        epsilon=row.get("epsilon") if selector else None,
        seed=row.get("seed") or 0 if selector else 0,
        resample=row.get("resample"),
        warmup=row.get("warmup") or 0.0,
        cooldown=row.get("cooldown") or 0.0,
    )


def run_schedule(lake: Lake, row: dict) -> pl.DataFrame:
    """The per-job schedule of a stored campaign run, the jobs its metrics count (not those of its
    warm-up and cool-down): its stored schedule (`--jobs-out`), else the run replayed again on the lake
    as it is, refused unless it is the same run (key) giving the same result."""
    window = (row.get("warmup") or 0.0, row.get("cooldown") or 0.0)
    stored = lake.root / JOBS_FOLDER / row["campaign"] / f"{row['run_key']}.parquet"
    if stored.exists():
        return measured(pl.read_parquet(stored), *window)
    if row["status"] != "ok":
        raise ConfidenceError(f"{row['log']} {row['variant']}: the run failed ({row['error']})")
    settings = row_settings(row)
    columns = sorted(needed_columns([settings]))
    jobs = log_jobs(lake, row["log"], View(row["view"]), row.get("where_condition"), columns=columns)
    fingerprint = frame_fingerprint(jobs.select(columns))
    key = run_key(fingerprint, int(row["machine_size"]), settings, float(row["tau"]))
    if key != row["run_key"]:
        raise ConfidenceError(
            f"{row['log']} {row['variant']}: the lake no longer gives this run's jobs (ingested again, or a "
            "prediction table imported again): run the campaign again first"
        )
    log = LogInput(row["log"], int(row["machine_size"]), jobs.height, stored, row.get("where_condition"))
    replayed = replay_row(jobs, log, Run(settings, key, fingerprint), row["campaign"], row["view"], float(row["tau"]))
    again = replayed["row"]
    if again["status"] != "ok" or not np.isclose(again["mean_wait"], row["mean_wait"], rtol=1e-12, atol=0):
        raise ConfidenceError(
            f"{row['log']} {row['variant']}: replayed again, the run gives another result than the one stored "
            f"(engine {row['engine_version']}): run the campaign again with this build first"
        )
    return measured(replayed["schedule"], *window)


def with_intervals(lake: Lake, rows: pl.DataFrame, metric: str, bootstrap: Bootstrap) -> pl.DataFrame:
    """The campaign's rows with the bootstrap interval of `metric`: `<metric>_low`, `<metric>_high` and
    the blocks resampled (null for failed runs)."""
    found: dict[str, tuple[float | None, float | None, int | None]] = {}
    for row in rows.iter_rows(named=True):
        if row["status"] != "ok":
            found[row["run_key"]] = (None, None, None)
            continue
        found[row["run_key"]] = metric_interval(run_schedule(lake, row), metric, float(row["tau"]), bootstrap)
    keys = rows["run_key"].to_list()
    return rows.with_columns(
        pl.Series(f"{metric}_low", [found[k][0] for k in keys], dtype=pl.Float64),
        pl.Series(f"{metric}_high", [found[k][1] for k in keys], dtype=pl.Float64),
        pl.Series("blocks", [found[k][2] for k in keys], dtype=pl.Int64),
    )


def compare_variants(
    lake: Lake, rows: pl.DataFrame, first: str, second: str, metric: str, bootstrap: Bootstrap
) -> pl.DataFrame:
    """Per log that both variants replayed (on one machine size): `metric` of each, the difference
    (second - first), its interval and p-value."""
    variants = set(rows["variant"].to_list())
    for name in (first, second):
        if name not in variants:
            raise ConfidenceError(f"the campaign has no variant {name!r}; it has: {', '.join(sorted(variants))}")
    out = []
    ok = rows.filter(pl.col("status") == "ok")
    for (log, size), part in ok.group_by("log", "machine_size", maintain_order=True):
        a, b = part.filter(pl.col("variant") == first), part.filter(pl.col("variant") == second)
        if a.is_empty() or b.is_empty():
            continue
        ra, rb = a.row(0, named=True), b.row(0, named=True)
        result = paired_difference(run_schedule(lake, ra), run_schedule(lake, rb), metric, float(ra["tau"]), bootstrap)
        out.append({"log": log, "machine_size": size, first: ra[metric], second: rb[metric], **result})
    if not out:
        raise ConfidenceError(f"no log has a successful run of both {first!r} and {second!r}")
    return pl.DataFrame(out).sort("log")
