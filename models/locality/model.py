"""Runtime locality: how much a job's submit time (or user) tells about its run time.

For a bin width t_s of submit time and a ratio t_r of run-time bins, each job gets a submit bin
S = floor(submit / t_s) and a run-time bin R = floor(ln(max(runtime, 1)) / ln(t_r)) (so run times below
1.5 s share the bin of 1 s).  The locality of the log is

    f = I(S; R) - mean over k shuffles of I(S; R shuffled)

with I the plug-in mutual information in bits over the non-empty cells.  The shuffles permute R over the
jobs; they remove every dependence between S and R but keep both marginals, so their mean is what I
would be by chance with this many bins and jobs (the plug-in estimate is biased upwards, the more so the
finer the bins).  The same k permutations of the jobs serve every cell of a log's grid, so two cells
differ by their bins only.

Variants: `time` (S = submit bin), `user` (S = user id, t_s unused) and `time+user` (S = the pair).

Since I(S; R) = H(S) + H(R) - H(S, R) and shuffling R keeps H(S) and H(R), f is the mean joint entropy
of the shuffles minus the joint entropy of the log: only joint entropies are computed.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import polars as pl

from lakehouse.base.datasets import DATASETS
from lakehouse.base.errors import TooLittleDataError
from lakehouse.base.lake import Lake
from lakehouse.base.results import store
from lakehouse.base.units import format_duration
from lakehouse.models.job_bins import LocalityError, LogJobs, check_bins, log_jobs, log_runtimes, runtime_bins
from lakehouse.models.locality import LOCALITY

#: The published grid: submit bins from 10 minutes to a day, run-time bin ratios from 1.1 to 2.5.
#: The default grid reaches the study's best cells: minutes to a day for the submit time alone (its
#: Table 2.2), days to a month and ratios near 1 for the user and the pair (its Table 2.3).
SUBMIT_BINS = (600, 1200, 2400, 3600, 7200, 21600, 43200, 86400, 259200, 604800, 1209600, 2592000)
RUNTIME_RATIOS = (1.03, 1.05, 1.08, 1.1, 1.2, 1.3, 1.49, 1.8, 2.5)
SHUFFLES = 10
#: Each shuffle is a permutation of every job held at once (8 bytes a job): 1,000 of SDSC-BLUE's 233 k
#: jobs are 1.9 GB, and the chance level they measure is known to the third decimal long before.
MAX_SHUFFLES = 1_000
SEED = 0


class Variant(enum.StrEnum):
    time = "time"
    user = "user"
    pair = "time+user"


def kmeans_runtime_bins(runtime: np.ndarray, n: int) -> np.ndarray:
    """N run-time bins by the thesis' own k-means (its Algorithm 2, behind its Table 2.1), on the
    logarithm of the run times (`log_runtimes`, as `runtime_bins`).

    Initialisation: the N - 1 widest gaps between consecutive sorted values cut them into bins (a gap
    as wide as the (N - 1)-th widest cuts too).  Iterations: each bin's geometric average of run times
    (the mean of its logarithms), the bounds half-way between neighbouring averages (in log space),
    every run time to the bin between its bounds, until no run time changes bin.  A bin left without a
    run time disappears.  Bins are numbered by increasing run time.  (Deterministic: the thesis uses no
    random start.)"""
    if n < 1:
        raise LocalityError(f"k-means needs at least one bin, not {n}")
    logs = log_runtimes(runtime)
    values = np.sort(logs)
    if np.unique(values).size <= n:  # as many bins as distinct run times: each its own bin
        return np.unique(logs, return_inverse=True)[1].ravel().astype(np.int64)
    gaps = np.diff(values)
    widest = np.sort(gaps)[::-1][n - 2] if n >= 2 else np.inf
    bounds = values[1:][gaps >= widest] if n >= 2 else np.empty(0)
    # The bins are worked out on the sorted values, where each is a run between two cuts: a job's bin
    # is the number of bounds at or below its run time, so a bound cuts the sorted values at the first
    # one it does not exceed.  Each round then costs a search of the few bounds among the values and one
    # sum per bin, not a search of every job among the bounds (6.7 of `reproduce locality`'s 15 s).
    # A cut past the last value puts no job above it: cuts that differ only there give the same bins.
    size = values.size
    cuts = np.searchsorted(values, bounds, side="left")
    while True:
        edges = np.concatenate(([0], cuts, [size]))
        starts, lengths = edges[:-1], np.diff(edges)
        filled = lengths > 0  # a bin left without a run time disappears
        averages = np.add.reduceat(values, starts[filled]) / lengths[filled]  # increasing, as the bins
        bounds = (averages[:-1] + averages[1:]) / 2
        moved = np.searchsorted(values, bounds, side="left")
        if np.array_equal(moved[moved < size], cuts[cuts < size]):
            return np.searchsorted(bounds, logs, side="right").astype(np.int64)
        cuts = moved


def submit_bins(submit: np.ndarray, t_s: float) -> np.ndarray:
    return np.floor(np.asarray(submit, dtype=np.float64) / t_s).astype(np.int64)


def permutations(n: int, k: int = SHUFFLES, seed: int = SEED) -> np.ndarray:
    """k seeded permutations of n jobs, one per row."""
    rng = np.random.default_rng(seed)
    return np.stack([rng.permutation(n) for _ in range(k)]) if k else np.empty((0, n), dtype=np.int64)


def _sum_c_log_c(s_sorted: np.ndarray, r: np.ndarray) -> float:
    """Σ c log2 c over the counts c of the (S, R) cells, S non-decreasing.

    A stable sort by R keeps S in order within each R, so the pairs come out sorted and the cells are
    runs; for small R codes numpy's stable sort is a radix sort (linear), which is what keeps the
    48-cell grid with 10 shuffles at a few seconds on a 250,000-job log."""
    order = np.argsort(r, kind="stable")
    rs, ss = r[order], s_sorted[order]
    starts = np.flatnonzero((rs[1:] != rs[:-1]) | (ss[1:] != ss[:-1])) + 1
    counts = np.diff(np.concatenate(([0], starts, [r.size])))
    return float(np.sum(counts * np.log2(counts)))


def _entropy(codes: np.ndarray) -> float:
    counts = np.bincount(codes)
    counts = counts[counts > 0]
    n = codes.size
    return float(math.log2(n) - np.sum(counts * np.log2(counts)) / n)


@dataclass(frozen=True)
class _Submit:
    """S prepared once for every t_r: dense codes in sorted order, the order, H(S)."""

    order: np.ndarray | None  # None: the jobs are already in S order
    codes: np.ndarray
    entropy: float

    @classmethod
    def of(cls, s: np.ndarray) -> _Submit:
        codes = np.unique(s, return_inverse=True)[1].ravel()
        if np.all(codes[1:] >= codes[:-1]):
            return cls(None, codes, _entropy(codes))
        order = np.argsort(codes, kind="stable")
        return cls(order, codes[order], _entropy(codes))


@dataclass(frozen=True)
class _Runtime:
    """R prepared once for every t_s: dense codes of the log and of each shuffle, H(R)."""

    codes: np.ndarray
    shuffled: np.ndarray  # one row per permutation
    entropy: float

    @classmethod
    def of(cls, r: np.ndarray, perms: np.ndarray) -> _Runtime:
        codes = np.unique(r, return_inverse=True)[1].ravel()
        # uint16 makes numpy's stable sort a radix sort; run-time bins never come near 65,536 in practice.
        codes = codes.astype(np.uint16 if codes.max() < 2**16 else np.int64)
        return cls(codes, codes[perms], _entropy(codes))


@dataclass(frozen=True)
class Cell:
    mi: float  # I(S; R) in bits
    shuffled_mi: float  # its mean over the shuffles
    shuffled_sd: float  # and their standard deviation

    @property
    def locality(self) -> float:
        return self.mi - self.shuffled_mi


def _cell(s: _Submit, r: _Runtime) -> Cell:
    n = s.codes.size
    log_n = math.log2(n)

    def mutual_information(r_of_jobs: np.ndarray) -> float:
        in_s_order = r_of_jobs if s.order is None else r_of_jobs[s.order]
        h_joint = log_n - _sum_c_log_c(s.codes, in_s_order) / n
        return s.entropy + r.entropy - h_joint

    shuffled = np.array([mutual_information(row) for row in r.shuffled])
    return Cell(
        mutual_information(r.codes),
        float(shuffled.mean()) if shuffled.size else 0.0,
        float(shuffled.std(ddof=1)) if shuffled.size > 1 else 0.0,
    )


def cell(s: np.ndarray, r: np.ndarray, perms: np.ndarray) -> Cell:
    """The locality of one cell: S and R codes per job (any integers), `perms` one permutation of the
    jobs per row (the shuffles)."""
    s, r = np.asarray(s), np.asarray(r)
    if s.size == 0:
        raise TooLittleDataError("no jobs to measure locality on")
    return _cell(_Submit.of(s), _Runtime.of(r, np.asarray(perms, dtype=np.int64).reshape(-1, s.size)))


def _dense_pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One integer per distinct (a, b) pair."""
    return np.unique(np.stack([a, b], axis=1), axis=0, return_inverse=True)[1].ravel()


GRID_SCHEMA = {
    "log": pl.String,
    "variant": pl.String,
    "t_s": pl.Float64,
    "t_r": pl.Float64,
    "jobs": pl.Int64,
    "mi": pl.Float64,
    "shuffled_mi": pl.Float64,
    "shuffled_sd": pl.Float64,
    "locality": pl.Float64,
}


@dataclass(frozen=True)
class LocalitySettings:
    submit_bins: Sequence[float] = SUBMIT_BINS
    runtime_ratios: Sequence[float] = RUNTIME_RATIOS
    variants: Sequence[Variant] = tuple(Variant)
    shuffles: int = SHUFFLES
    seed: int = SEED

    def __post_init__(self) -> None:
        check_bins(self.submit_bins, self.runtime_ratios)
        if not 0 <= self.shuffles <= MAX_SHUFFLES:
            raise LocalityError(f"the shuffles are 0 to {MAX_SHUFFLES:,}, not {self.shuffles:,}")


#: A cell of a log's grid, and the rule that marks each variant's best one.
CELL = ["variant", "t_s", "t_r"]
BEST = pl.col("locality") == pl.col("locality").max().over("log", "variant")


def grid(jobs: pl.DataFrame, log: str = "", settings: LocalitySettings = LocalitySettings()) -> pl.DataFrame:
    """The locality of every cell of the grid, per variant; `best` marks each variant's highest f.

    `jobs`: submit_time, run_time and user_id (null when unknown: the user variants leave such jobs
    out), one row per job in submit order."""
    rows = []
    for variant in settings.variants:
        chosen = jobs if variant is Variant.time else jobs.filter(pl.col("user_id").is_not_null())
        if chosen.is_empty():
            raise TooLittleDataError(f"{log}: no job with a known user for the {variant} variant")
        perms = permutations(chosen.height, settings.shuffles, settings.seed)
        runtime = chosen["run_time"].to_numpy()
        by_ratio = {t_r: _Runtime.of(runtime_bins(runtime, t_r), perms) for t_r in settings.runtime_ratios}
        widths: Sequence[float | None] = [None] if variant is Variant.user else settings.submit_bins
        for t_s in widths:
            if t_s is None:
                s = chosen["user_id"].to_numpy()
            else:
                s = submit_bins(chosen["submit_time"].to_numpy(), t_s)
                if variant is Variant.pair:
                    s = _dense_pairs(s, chosen["user_id"].to_numpy())
            prepared = _Submit.of(s)
            for t_r, r in by_ratio.items():
                c = _cell(prepared, r)
                rows.append(
                    (log, str(variant), t_s, t_r, chosen.height, c.mi, c.shuffled_mi, c.shuffled_sd, c.locality)
                )
    frame = pl.DataFrame(rows, schema=GRID_SCHEMA, orient="row")
    return frame.with_columns(
        BEST.alias("best"),
        pl.lit(settings.shuffles, pl.Int64).alias("shuffles"),
        pl.lit(settings.seed, pl.Int64).alias("seed"),
    )


def kmeans_cell(jobs: pl.DataFrame, t_s: float, bins: int, settings: LocalitySettings = LocalitySettings()) -> Cell:
    """f(s; r) of the time variant with `bins` k-means run-time bins instead of the ratio t_r (the
    thesis' Table 2.1), on the jobs and shuffles `grid` uses."""
    perms = permutations(jobs.height, settings.shuffles, settings.seed)
    s = submit_bins(jobs["submit_time"].to_numpy(), t_s)
    return cell(s, kmeans_runtime_bins(jobs["run_time"].to_numpy(), bins), perms)


# -- the lake -------------------------------------------------------------------------------------------


class Measured(NamedTuple):
    """`lakehouse report locality` on one log: its usable jobs and its grid of cells."""

    jobs: LogJobs
    grid: pl.DataFrame


def measure(lake: Lake, log: str, settings: LocalitySettings = LocalitySettings()) -> Measured:
    """A log's usable jobs and its locality grid."""
    jobs = log_jobs(lake, log)
    return Measured(jobs, grid(jobs.jobs, log, settings))


def store_measured(lake: Lake, measured: Measured) -> None:
    write_locality(lake, measured.jobs.log, measured.grid)


def write_locality(lake: Lake, log: str, frame: pl.DataFrame) -> None:
    """Store one log's cells where analysis.locality reads them: the cells computed now replace their
    earlier values, the log's other cells (other variants, other bins) stay; `best` is marked again
    over all of them."""
    # Read through the lake's stored table (a DuckLake lake keeps the file under a name of its own).
    stored = lake.query(f"SELECT * FROM {DATASETS[LOCALITY.key].stored} WHERE log = $1", [log])
    if stored.height:
        earlier = stored.join(frame.select(CELL), on=CELL, how="anti", nulls_equal=True)
        frame = pl.concat([earlier, frame.select(earlier.columns)]).with_columns(BEST.alias("best")).sort(CELL)
    store(lake, LOCALITY, frame, name=log)


def best_cells(frame: pl.DataFrame) -> pl.DataFrame:
    """Each log's and variant's best cell, bins in readable units."""
    return (
        frame.filter("best")
        .unique(["log", "variant"], keep="first", maintain_order=True)
        .select(
            "log",
            "variant",
            _durations("t_s").alias("submit bin"),
            pl.col("t_r").alias("runtime ratio"),
            "jobs",
            pl.col("mi").round(3).alias("I(S;R) bits"),
            pl.col("shuffled_mi").round(3).alias("shuffled"),
            pl.col("locality").round(3).alias("f bits"),
        )
    )


def pivot(frame: pl.DataFrame, log: str, variant: Variant) -> pl.DataFrame:
    """f of one log and variant: a row per submit bin, a column per run-time ratio."""
    cells = frame.filter(log=log, variant=str(variant)).with_columns(
        _durations("t_s").alias("submit bin"),
        pl.col("t_r").cast(pl.String).alias("t_r"),
        pl.col("locality").round(3),
    )
    return cells.pivot("t_r", index="submit bin", values="locality", maintain_order=True)


def _durations(column: str) -> pl.Expr:
    """Seconds as `format_duration` prints them, '-' where null (the user variant has no submit bin)."""
    return pl.col(column).map_batches(
        lambda seconds: pl.Series([format_duration(x) for x in seconds], dtype=pl.String), return_dtype=pl.String
    )
