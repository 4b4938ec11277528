"""Sliding-window resource predictions: estimates of each job's usage from the jobs of its workflow that
had completed before it was submitted, scored against the users' own requests.

Everything runs in DuckDB over predict.swf_targets / predict.cluster_targets (the cloud traces, read
through the common cluster.* views; one row per job and resource: submit, done, walltime, used,
requested, workflow keys), as window functions and ASOF joins:

- history: the completions of each workflow in order of completion time, with window aggregates over
  the last k of them (max, mean, median, 90 % quantile; and the mean of the last two).  A job's
  prediction is the aggregate at the last completion strictly before its submit time (ASOF join), so
  nothing that happened after its submission can reach it;
- cold start: a job whose workflow has no completed job yet falls back to its user's profile (the
  used/requested ratio of the user's completed jobs, sum(used) / sum(requested), times the job's
  request), then to the global profile (the same ratio over every user), then to the request itself;
  each layer can be switched off;
- predictions never exceed the request: a job is killed at its request, so predicting more gains nothing;
- the SQL is built here, not kept in sql/queries/: its columns, windows and losses come from the
  settings a user gives (grouping, window, the --under/--over weights);
- window size: chosen per user and resource among WINDOWS (1 job to all), the one with the least loss on the first
  80 % of that user's jobs (by submit time); every score is measured on the remaining 20 %, which the
  choice never sees.  Or fixed by the caller.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar, cast

import duckdb
import polars as pl

from lakehouse.base.budget import Budget
from lakehouse.base.catalog import named_query, sql_literal
from lakehouse.base.datasets import DATASETS, TRACES
from lakehouse.base.errors import LakehouseError
from lakehouse.base.lake import Lake, count, one_row
from lakehouse.base.log_names import LogNameError, log_named
from lakehouse.base.partitions import (
    Partitioning,
    joined,
    partition_files,
    read_files,
    run_partitions,
    split_by_hash,
)
from lakehouse.base.results import store
from lakehouse.base.traces import refuse_unfed
from lakehouse.base.writer import pending_path
from lakehouse.models.predictions import CANNOT_FEED, PREDICTIONS_JOBS, PREDICTIONS_SCORES

T = TypeVar("T")

ALL = 1_000_000_000  # a window larger than any log: the whole history
# The candidate windows, up to the whole history (which users of a stable workflow choose).
WINDOWS = (1, 2, 5, 10, 20, 50, 100, ALL)
TRAIN_SHARE = 0.8
#: The share of the budget the predictions keep out of DuckDB's pool (a third elsewhere: OUTSIDE_POOL_SHARE).
#: Their window and ASOF-join operators hold memory the pool does not count, and it grows with the trace:
#: above a full pool, 440 MiB at 0.04 of a 2019 cell, 700 at 0.1 and 914 at 0.2 (under 3 GB, so a third of
#: it at 0.2: the command peaked 2 % over its limit).  A smaller pool spills sooner instead.
PREDICTIONS_OUTSIDE_POOL_SHARE = 0.45
#: The bytes of DuckDB's pool one target row takes in the steps of its partition (its row, its history's
#: window aggregates and the joins'); a source is split into as many partitions as keep one partition's
#: rows within the pool (`partitions_for`).
POOL_BYTES_PER_TARGET = 600


def partitions_for(targets: int, budget: Budget) -> int:
    """How many partitions `targets` rows are split into so that one partition's steps fit the pool."""
    return max(1, math.ceil(targets * POOL_BYTES_PER_TARGET / budget.duckdb_memory))


# The predictors over the workflow's last k completions (history_sql computes each, p_<name>_<k>).
AGGREGATES = ("max", "mean", "median", "q90")
LAST_TWO = "last2"  # the mean of the last two completions, whatever k
PREDICTORS = (*AGGREGATES, LAST_TWO)

# Workflow groupings by target family; the SQL column holding each one's key.
GROUPINGS = {
    "swf": {
        "user": "wf_user",
        "user+group": "wf_user_group",
        "application": "wf_application",
        "queue": "wf_queue",
        "request signature": "wf_signature",
    },
    # The cloud traces (Google 2011, each 2019 cell, Alibaba 2018), read through the common cluster.* views.
    "cluster": {"job": "wf_job", "user": "wf_user", "logical name": "wf_name", "request signature": "wf_signature"},
}

#: The name that takes every cell of Google's 2019 trace; one cell's source is GOOGLE_2019 + '-' + cell.
GOOGLE_2019 = "google-2019"


def grouping_names() -> list[str]:
    """Every grouping a user may name, of either family (the report refuses one its source lacks)."""
    return list(dict.fromkeys(name for family in GROUPINGS.values() for name in family))


# The columns every target view has besides its workflow keys (what the later steps carry along).
# (Neither the source, the same on every row, nor the user's text, kept once per user in TEMP `user_names`:
# at the trace's shape they were a sixth of every table's width.)
BASE_COLUMNS: tuple[str, ...] = ("job", "user_key", "submit", "done", "walltime", "resource", "used", "requested")
BASE_COLUMNS += ("freed_weight", "train")


class PredictionError(LakehouseError, ValueError):
    """PredictionSettings or data the predictions cannot work with; the message says which."""


class NoTargetsError(PredictionError):
    """A source without one job that has both a request and a usage of some resource."""


@dataclass(frozen=True)
class PredictionSettings:
    """What the caller can change: the loss's weights (under- and over-estimates), the window (None: chosen
    per user), the cold-start layers, and the workflow grouping (None: the best by loss)."""

    under: float = 1.0
    over: float = 0.5
    window: int | None = None
    local_profile: bool = True
    global_profile: bool = True
    grouping: str | None = None

    def __post_init__(self) -> None:
        # (The weights go into the scoring SQL as numbers: a NaN would read as a column's name.)
        for name in ("under", "over"):
            weight = getattr(self, name)
            if not (isinstance(weight, int | float) and math.isfinite(weight) and weight >= 0):
                raise PredictionError(f"--{name}: a loss weight is a finite number >= 0, not {weight!r}")
        if self.under == self.over == 0:
            raise PredictionError("--under and --over are both 0: every prediction would score the same")


def load_targets(con: duckdb.DuckDBPyConnection, family: str, source: str) -> int:
    """One source's rows into TEMP `targets`, with the train/evaluation split; returns the row count.

    Every later step partitions, sorts and joins on the resource, the user and a workflow key: those are
    made integers here (resource an ENUM, the others a 64-bit hash of the text, checked one to one on this
    source, `_key_code`), which makes those steps about a sixth faster than on text, and their tables
    narrower.  The keys are read and made numbers once per job (predict.<family>_job_targets), then a row
    is made per resource: read as rows per resource, the text came four times over (at 0.2 of a 2019 cell,
    the read and the split took 49 s, and 39 s so).  The user's text goes to TEMP `user_names` (user_key,
    user_name), for the per-job output."""
    if family not in GROUPINGS:
        raise PredictionError(f"unknown target family {family!r} ({', '.join(GROUPINGS)})")
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE job_targets AS SELECT * EXCLUDE ({', '.join(_LOCATING[family])}) "
        f"FROM predict.{family}_job_targets WHERE {_of_source(family, source)}"
    )
    workflow_keys = list(GROUPINGS[family].values())
    code = {key: _key_code(con, key) for key in ("user_key", *workflow_keys)}
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE user_names AS
        SELECT DISTINCT {code["user_key"]} AS user_key, user_key AS user_name FROM job_targets"""
    )
    coded_keys = "".join(f", {code[key]} AS {key}" for key in workflow_keys)
    # A user's first TRAIN_SHARE of jobs by submission (then job) train, per resource: those up to the
    # floor(TRAIN_SHARE * n)-th, found by a window over four columns and joined back to every row (a
    # window over the targets themselves sorted all their columns: at 0.2 of a 2019 cell it spilled).
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE targets AS
        WITH coded AS (
            SELECT job, {code["user_key"]} AS user_key, submit, done, walltime, r.resource::{RESOURCE_TYPE} AS resource,
                r.used, r.requested, r.freed_weight{coded_keys}
            FROM (SELECT *, unnest(resources) AS r FROM job_targets)),
        last_train AS (
            SELECT resource, user_key, submit, job FROM (SELECT resource, user_key, submit, job FROM coded)
            WINDOW users AS (PARTITION BY resource, user_key)
            QUALIFY row_number() OVER (users ORDER BY submit, job) = floor({TRAIN_SHARE} * count(*) OVER users))
        SELECT c.*, coalesce(c.submit < l.submit OR (c.submit = l.submit AND c.job <= l.job), false) AS train
        FROM coded AS c
        LEFT JOIN last_train AS l ON l.resource = c.resource AND l.user_key IS NOT DISTINCT FROM c.user_key"""
    )
    con.execute("DROP TABLE job_targets")
    return count(con, "SELECT count(*) FROM targets")


# Every resource of both target families (a value outside it fails the cast loudly).
RESOURCES = ("walltime", "memory", "processors", "cpu", "cpu_peak", "memory_peak")
RESOURCE_TYPE = "ENUM(" + ", ".join(f"'{r}'" for r in RESOURCES) + ")"


#: The columns of a target view that say which source a row is of (left out of the targets).
_LOCATING = {"swf": ("source",), "cluster": ("source", "trace", "cell")}


def _of_source(family: str, source: str) -> str:
    """The condition of `source`'s rows, as literals: a cloud source's trace and cell let DuckDB read that
    trace's branch of the cluster.* views alone (a condition on the source it makes would read them all)."""
    if family != "cluster":
        return f"source = {sql_literal(source)}"
    trace, cell = cloud_trace(source)
    where_cell = "cell IS NULL" if cell is None else f"cell = {sql_literal(cell)}"
    return f"trace = {sql_literal(trace)} AND {where_cell} AND source = {sql_literal(source)}"


def cloud_trace(source: str) -> tuple[str, str | None]:
    """The trace and cell of a cloud source: google (the 2011 trace), google-2019-<cell>, alibaba-2018."""
    if source == "google":
        return "google-2011", None
    if source.startswith(f"{GOOGLE_2019}-"):
        return GOOGLE_2019, source.removeprefix(f"{GOOGLE_2019}-")
    return source, None


def _key_code(con: duckdb.DuckDBPyConnection, key: str) -> str:
    """An integer standing for job_targets' text column `key`, NULL where it is NULL: the first of
    KEY_CODES that gives no two values of this source one number, else (never seen, but then no workflows
    merge) the value's dense rank, a sort of every row in one thread."""

    def counted(coding: str) -> str:
        return f"count(DISTINCT {coding.format(key)}) FILTER ({key} IS NOT NULL)"

    distinct, codes = one_row(con, f"SELECT count(DISTINCT {key}), {counted(KEY_CODES[0])} FROM job_targets")
    for number, coding in enumerate(KEY_CODES):
        if number:  # (the first coding's count came with the values')
            codes = count(con, f"SELECT {counted(coding)} FROM job_targets")
        if not _codes_collide(distinct, codes):
            return f"CASE WHEN {key} IS NOT NULL THEN {coding.format(key)} END"
    return f"CASE WHEN {key} IS NOT NULL THEN dense_rank() OVER (ORDER BY {key}) END::UBIGINT"


#: The 64-bit codes of a text key, cheapest first.  DuckDB's hash is the quickest, but of short text it
#: is weaker than its 64 bits: a generated 2019 cell's 2,710,439 request signatures ('0.045573/0.01204' and
#: '0.045578/0.01201' share one) had 572 hashes fewer than values.  The lower half of their MD5 had none,
#: at five times the cost per value.
KEY_CODES = ("hash({})", "md5_number_lower({})")


def _codes_collide(distinct: int, codes: int) -> bool:
    return codes != distinct


def available_groupings(con: duckdb.DuckDBPyConnection, family: str) -> list[str]:
    """The groupings whose key the source carries (some logs lack groups, applications or queues)."""
    columns = GROUPINGS[family]
    counts = one_row(con, "SELECT " + ", ".join(f"count({c})" for c in columns.values()) + " FROM targets")
    return [name for (name, _), n in zip(columns.items(), counts, strict=True) if n]


def _last_per_instant(over: str) -> str:
    # Completions at the same instant: the last one (by job) carries the aggregates of all of them, so
    # an ASOF join on the completion time finds exactly one row.  (lead over the aggregates' own order
    # shares their sort.)
    return f"QUALIFY lead(done) OVER ({over}) IS DISTINCT FROM done"


def _frame(k: int) -> str:
    # Constant frame bounds: DuckDB then uses its segment and merge-sort trees (a bound read from a
    # column is evaluated row by row).
    return "ROWS UNBOUNDED PRECEDING" if k >= ALL else f"ROWS BETWEEN {k - 1} PRECEDING AND CURRENT ROW"


def _k_name(k: int) -> str:
    return "all" if k >= ALL else str(k)


# The maximum over a frame from the partition's start: arg_max(x, x) is max(x), and DuckDB 1.5 computes it
# on such frames twice as fast as max (measured on HPC2N; on bounded frames max is the faster).
RUNNING_MAX = "arg_max({0}, {0})"
LIST_WINDOWS_UP_TO = 10  # statistics of so few values: cheaper from one list than from DuckDB's trees


def history_sql(column: str, windows: list[int], whole_max: bool = True, targets: str = "targets") -> str:
    """Window aggregates of each workflow's completions, one row per workflow and completion instant:
    `last` and `before` (the last two completions' values, from which `predictor` makes every predictor
    of k = 1 and 2, and p_last2) and a column per predictor and larger window size (p_<predictor>_<k>).
    A single sort serves them all, and the fewest window functions (DuckDB builds a tree per function and
    frame):
    - 2 < k <= 10: slices of one list of the last completions;
    - larger k: max, mean, and one quantile tree for both the median and the 90 % quantile (over the
      whole history two trees, one each, measured faster); without whole_max, no maximum over the whole
      history (the caller has it from grouping_predictions)."""
    over = "PARTITION BY resource, wf ORDER BY done, job"
    inner = [f"used AS last, coalesce(lag(used) OVER ({over}), used) AS before"]
    listed = [k for k in windows if 2 < k <= LIST_WINDOWS_UP_TO]
    if listed:
        inner.append(f"list(used) OVER ({over} {_frame(max(listed))}) AS l")
    outer = ["last", "before"]
    for k in windows:
        name = _k_name(k)
        if k <= 2:
            continue
        if k in listed:
            values = f"l[-{k}:]"
            inner.append(f"list_max({values}) AS p_max_{name}, list_avg({values}) AS p_mean_{name}")
            inner.append(f"list_aggregate({values}, 'quantile_cont', [0.5, 0.9]) AS q_{name}")
        else:
            frame = f"OVER ({over} {_frame(k)})"
            if k < ALL or whole_max:
                inner.append(f"{RUNNING_MAX.format('used') if k >= ALL else 'max(used)'} {frame} AS p_max_{name}")
            inner.append(f"avg(used) {frame} AS p_mean_{name}")
            if k >= ALL:  # over the whole history two quantile trees measured faster than one for both
                inner.append(f"[median(used) {frame}, quantile_cont(used, 0.9) {frame}] AS q_{name}")
            else:
                inner.append(f"quantile_cont(used, [0.5, 0.9]) {frame} AS q_{name}")
        outer += [f"p_max_{name}"] if k < ALL or whole_max else []
        outer += [f"p_mean_{name}", f"q_{name}[1] AS p_median_{name}", f"q_{name}[2] AS p_q90_{name}"]
    return (
        f"SELECT resource, wf, done, {', '.join(outer)} FROM ("
        f"SELECT resource, wf, done, {', '.join(inner)} "
        f"FROM (SELECT *, {column} AS wf FROM {targets} WHERE {column} IS NOT NULL) "
        f"{_last_per_instant(over)})"
    )


def predictor(name: str, k: int, table: str) -> str:
    """The SQL of predictor `name` over the last k completions, from a row of history_sql's `table`.  Of
    one or two values (`last`, `before`: computed here, not stored, which keeps the history narrower):
    the median of two is their mean, and their 90 % quantile by linear interpolation a + 0.9 (b - a) =
    0.2 mean + 0.8 max."""
    last, before = f"{table}.last", f"{table}.before"
    if name == LAST_TWO:
        return f"({last} + {before}) / 2"
    if k > 2:
        return f"{table}.p_{name}_{_k_name(k)}"
    top, mean = (last, last) if k == 1 else (f"greatest({last}, {before})", f"({last} + {before}) / 2")
    return {"max": top, "mean": mean, "median": mean, "q90": f"0.2 * {mean} + 0.8 * {top}"}[name]


# The profiles: used / requested over the user's (everyone's) completed jobs, as sum(used) / sum(requested):
# running sums over completion instants (all jobs completing at an instant count together).
PROFILES_SQL = """
    CREATE OR REPLACE TEMP TABLE profiles AS
    SELECT resource, user_key, done, sum(u) OVER wl / sum(r) OVER wl AS local_ratio
    FROM (SELECT resource, user_key, done, sum(used) AS u, sum(requested) AS r FROM targets GROUP BY ALL)
    WINDOW wl AS (PARTITION BY resource, user_key ORDER BY done ROWS UNBOUNDED PRECEDING);
    CREATE OR REPLACE TEMP TABLE global_profile AS
    SELECT resource, done, sum(u) OVER wg / sum(r) OVER wg AS global_ratio
    FROM (SELECT resource, done, sum(used) AS u, sum(requested) AS r FROM targets GROUP BY ALL)
    WINDOW wg AS (PARTITION BY resource ORDER BY done ROWS UNBOUNDED PRECEDING);
    CREATE OR REPLACE TEMP TABLE row_profiles AS
    SELECT t.rowid AS target, lp.local_ratio, gp.global_ratio
    FROM (SELECT rowid, resource, user_key, submit FROM targets) AS t
    ASOF LEFT JOIN profiles AS lp ON lp.resource = t.resource AND lp.user_key = t.user_key AND t.submit > lp.done
    ASOF LEFT JOIN global_profile AS gp ON gp.resource = t.resource AND t.submit > gp.done
    """
# The targets with the profiles of each row as of its submission.  The ASOF joins take four columns of
# the targets (ASOF joins of the targets themselves sorted all their columns: at 0.2 of a 2019 cell they
# took three times as long as at 0.1), and the ratios, sorted by row, are set beside the rows they were
# computed for (a hash join by row held 0.38 GB more at 0.2 than at 0.1, the command's peak); a row
# out of place stops the query rather than giving a job another's profile.
PARTED_SQL = """
    SELECT t.*, p.local_ratio * t.requested AS local_profile, p.global_ratio * t.requested AS global_profile
    FROM targets AS t POSITIONAL JOIN (SELECT * FROM row_profiles ORDER BY target) AS p
    WHERE CASE WHEN t.rowid = p.target THEN true ELSE error('the profiles are not beside their targets') END"""
PROFILES = ("local_profile", "global_profile")


def _loss(predicted: str, settings: PredictionSettings) -> str:
    """The loss of one job: w * |predicted - used| * walltime, w by the sign of the error."""
    return (
        f"CASE WHEN {predicted} < used THEN {settings.under} ELSE {settings.over} END"
        f" * abs({predicted} - used) * walltime"
    )


def _predicted(history: str, settings: PredictionSettings, profiles: bool) -> str:
    layers = [history]
    if profiles and settings.local_profile:
        layers.append("local_profile")
    if profiles and settings.global_profile:
        layers.append("global_profile")
    return f"least(coalesce({', '.join(layers)}, requested), requested)"


def _layer(history: str, settings: PredictionSettings) -> str:
    return (
        f"CASE WHEN {history} IS NOT NULL THEN 'workflow' "
        f"WHEN {'local_profile' if settings.local_profile else 'NULL'} IS NOT NULL THEN 'user profile' "
        f"WHEN {'global_profile' if settings.global_profile else 'NULL'} IS NOT NULL THEN 'global profile' "
        "ELSE 'request' END"
    )


def _twins(con: duckdb.DuckDBPyConnection, keys: list[str]) -> dict[str, str]:
    """For each key column, the first of `keys` that splits the targets into the same workflows (itself if
    none before it does; e.g. user and user+group when every user is in one group): same workflows, same
    histories, computed once.  Two keys split alike when they are NULL on the same rows and, elsewhere,
    map one to one (as many distinct values of each as of the pair)."""
    pairs = [(a, b) for i, b in enumerate(keys) for a in keys[:i]]
    if not pairs:
        return {key: key for key in keys}
    # Over the distinct key combinations, one count of distinct values at a time: one query of all the
    # counts (two a pair) made the command's peak at 0.2 of a 2019 cell, 0.37 GB above its peak at 0.1.
    con.execute(f"CREATE OR REPLACE TEMP TABLE key_combinations AS SELECT DISTINCT {', '.join(keys)} FROM targets")

    def distinct(*columns: str) -> int:
        return count(
            con,
            f"SELECT count(*) FROM (SELECT DISTINCT {', '.join(columns)} FROM key_combinations "
            f"WHERE {columns[0]} IS NOT NULL)",
        )

    nulls_alike = one_row(
        con,
        "SELECT "
        + ", ".join(f"count(*) FILTER (({a} IS NULL) != ({b} IS NULL)) = 0" for a, b in pairs)
        + " FROM key_combinations",
    )
    values = {key: distinct(key) for key in keys}
    same = [
        alike and values[a] == values[b] == distinct(a, b) for (a, b), alike in zip(pairs, nulls_alike, strict=True)
    ]
    con.execute("DROP TABLE key_combinations")
    twins = {key: key for key in keys}
    for (a, b), alike in zip(pairs, same, strict=True):
        if alike and twins[b] == b:
            twins[b] = twins[a]
    return twins


# How the work splits.  The workflows of one grouping are independent of each other: a job's history is
# its own workflow's.  So every step that reads histories runs in partitions, by a hash of the grouping's
# workflow key (every job of a workflow in one partition); what spans workflows is made before them, once
# (the train/evaluation split and the profiles, per user and over everyone: columns of each target row),
# or summed after them (the scores, and each user's training losses that choose the window):
#   targets      (here)        the targets, with the train/evaluation split
#   groupings    (whole here,  per grouping: the maximum of each workflow's history, scored (on a
#                 partitions   cluster each partition reads the targets filtered by a hash of the
#                 on a cluster) grouping's key)
#   parted       (here)        the targets with their profiles, split once by a hash of the chosen
#                              grouping's key: each partition's rows apart (`_Rows.write_parts`)
#   windows      (partitions)  for the chosen grouping: every window's predictors; each user's
#                              training losses per window, summed here to choose the window
#   predictions  (partitions)  the chosen window's predictors, scored, and the per-job rows
# As many partitions as keep one partition's steps within the pool (`partitions_for`), or as asked.
# One partition, in this process, is the whole work done at once; more partitions, here or on a Ray
# cluster (lakehouse.base.partitions), give the same numbers (sums taken in another order aside).


@dataclass(frozen=True)
class _Rows:
    """Where the steps keep the rows they pass on: TEMP tables of the one connection every partition
    runs on in this process, or Parquet files in a folder every worker of a cluster reads (`folder`).
    The targets' partitions (`write_parts`) go to Parquet files by partition in `parts_folder` (the
    lake's scratch folder, `folder` on a cluster), in one scan, so that each partition reads its own
    rows alone; without a lake (a caller's connection) they are TEMP tables."""

    folder: Path | None = None
    parts_folder: Path | None = None

    def read(self, name: str) -> str:
        if self.folder is None:
            return name
        return f"read_parquet({sql_literal((self.folder / f'{name}.parquet').as_posix())})"

    def read_all(self, name: str, partitions: int) -> str:
        """Every partition's `name`_<number> as one relation."""
        if self.folder is None:
            return "(" + " UNION ALL ".join(f"SELECT * FROM {name}_{number}" for number in range(partitions)) + ")"
        files = [sql_literal((self.folder / f"{name}_{number}.parquet").as_posix()) for number in range(partitions)]
        return f"read_parquet([{', '.join(files)}])"

    def write(self, con: duckdb.DuckDBPyConnection, name: str, query: str) -> None:
        """`query`'s rows as `name`; a file under a temporary name, renamed last (a partition run again
        after its worker died finds no half-written file)."""
        if self.folder is None:
            con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {query}")
            return
        final = self.folder / f"{name}.parquet"
        written = final.with_name(f".{final.name}.tmp")
        con.execute(f"COPY ({query}) TO {sql_literal(written.as_posix())} (FORMAT parquet)")
        os.replace(written, final)

    def write_parts(self, con: duckdb.DuckDBPyConnection, name: str, query: str, key: str, partitions: int) -> None:
        """`query`'s rows split by a hash of its column `key` into `partitions` parts, each read by
        `read_part(name, number)`."""
        if self.parts_folder is None:
            if partitions == 1:
                con.execute(f"CREATE OR REPLACE TEMP TABLE {name}_0 AS {query}")
                return
            con.execute(f"CREATE OR REPLACE TEMP TABLE {name}_all AS {query}")
            for number in range(partitions):
                con.execute(
                    f"CREATE OR REPLACE TEMP TABLE {name}_{number} AS "
                    f"SELECT * FROM {name}_all WHERE hash({key}) % {partitions} = {number}"
                )
            con.execute(f"DROP TABLE {name}_all")
            return
        split_by_hash(con, self.parts_folder, name, query, key, partitions)
        written = [partition_files(self.parts_folder, name, number) for number in range(partitions)]
        some = next(files for files in written if files)
        for number, files in enumerate(written):
            if not files:  # a partition without rows: a file of none, with the columns' types
                empty = self.parts_folder / name / f"partition={number}" / "empty.parquet"
                empty.parent.mkdir(parents=True, exist_ok=True)
                con.execute(f"COPY (SELECT * FROM {read_files(some)} LIMIT 0) TO {sql_literal(empty.as_posix())}")

    def read_part(self, name: str, number: int) -> str:
        if self.parts_folder is None:
            return f"{name}_{number}"
        return read_files(partition_files(self.parts_folder, name, number))

    def drop_part(self, con: duckdb.DuckDBPyConnection, name: str, number: int) -> None:
        if self.parts_folder is None:
            con.execute(f"DROP TABLE IF EXISTS {name}_{number}")
        else:
            shutil.rmtree(self.parts_folder / name / f"partition={number}", ignore_errors=True)

    def drop(self, con: duckdb.DuckDBPyConnection, *names: str) -> None:
        for name in names:
            if self.folder is None:
                con.execute(f"DROP TABLE IF EXISTS {name}")
            else:
                (self.folder / f"{name}.parquet").unlink(missing_ok=True)


@dataclass(frozen=True)
class _Plan:
    """What every partition of a run knows: the target family, the settings, how many partitions, the
    key columns of the groupings (one per set of twins), and, once chosen, the sliding-window grouping's
    key column and the twin whose running maxima it reuses; the predictions the last step scores."""

    family: str
    settings: PredictionSettings
    partitions: int
    twins: Mapping[str, str]  # each grouping's key column -> the first that splits the targets alike (_twins)
    column: str = ""
    maxima: str = ""
    scored: tuple[str, ...] = ()
    #: Keep the evaluation jobs' tables (by_grouping_*, by_window_*) for the TEMP views of a run in
    #: memory; otherwise each goes once scored (at 0.2 of a 2019 cell they held about a third of the pool
    #: the last steps had: the larger the trace, the more those steps spilled).
    keep_scored: bool = False

    @property
    def keys(self) -> tuple[str, ...]:
        """The key columns whose histories are computed (one per set of twins)."""
        return tuple(dict.fromkeys(self.twins.values()))

    @property
    def windows(self) -> list[int]:
        return [self.settings.window] if self.settings.window is not None else list(WINDOWS)


def _in_partition(rows: _Rows, plan: _Plan, key: str, number: int) -> str:
    """The targets of partition `number` by a hash of `key` (for the groupings, whose keys differ: the
    chosen grouping's partitions are split once, `_Rows.write_parts`)."""
    if plan.partitions == 1:
        return rows.read("targets")
    return f"(SELECT * FROM {rows.read('targets')} WHERE hash({key}) % {plan.partitions} = {number})"


def _groupings_step(con: duckdb.DuckDBPyConnection, rows: _Rows, plan: _Plan, number: int) -> list[pl.DataFrame]:
    """Partition `number` of each grouping key: the running maximum of every workflow's history
    (max_history_<key>_<number>: resource, wf, done, p, one row per workflow and completion instant),
    the evaluation jobs with it (by_grouping_<key>_<number>), and their partial scores, per key."""
    scores = []
    for key in plan.keys:
        maxima, jobs = f"max_history_{key}_{number}", f"by_grouping_{key}_{number}"
        targets = _in_partition(rows, plan, key, number)
        rows.write(
            con,
            maxima,
            f"""SELECT resource, wf, done, {RUNNING_MAX.format("used_max")} OVER (PARTITION BY resource, wf
                ORDER BY done ROWS UNBOUNDED PRECEDING) AS p
            FROM (SELECT resource, {key} AS wf, done, max(used) AS used_max FROM {targets}
                WHERE {key} IS NOT NULL GROUP BY ALL)""",
        )
        rows.write(
            con,
            jobs,
            f"""SELECT {", ".join(f"t.{c}" for c in SCORED_COLUMNS)}, m.p
            FROM (SELECT * FROM {targets} WHERE NOT train) AS t
            ASOF LEFT JOIN {rows.read(maxima)} AS m
                ON m.resource = t.resource AND m.wf = t.{key} AND t.submit > m.done""",
        )
        scores.append(_score_sums(con, rows.read(jobs), _predicted("p", plan.settings, False), plan.settings))
        if not plan.keep_scored:
            rows.drop(con, jobs)
    return scores


def _windows_step(con: duckdb.DuckDBPyConnection, rows: _Rows, plan: _Plan, number: int) -> pl.DataFrame | None:
    """Partition `number` of the chosen grouping: history_<number> (history_sql's window aggregates), and,
    when the window is chosen per user, each user's training loss per window (summed over the partitions),
    from the training targets joined to it as they stream: no table of the join is kept (its step took 37 s
    of 473 at 0.2 of a 2019 cell, and its table held the pool while the next step ran)."""
    column, windows = plan.column, plan.windows
    targets, history = rows.read_part("parted", number), f"history_{number}"
    if ALL in windows and plan.maxima == column:  # the same rows, one per workflow and completion instant
        rows.write(
            con,
            history,
            f"""SELECT h.*, m.p AS p_max_{_k_name(ALL)}
            FROM ({history_sql(column, windows, whole_max=False, targets=targets)}) AS h
            JOIN {rows.read_part("maxima", number)} AS m USING (resource, wf, done)""",
        )
    else:
        rows.write(con, history, history_sql(column, windows, targets=targets))
    if plan.settings.window is not None:
        return None
    maxima = ", ".join(f"{predictor('max', k, 'h')} AS p_max_{_k_name(k)}" for k in windows)
    losses = ", ".join(
        f"sum({_loss(_predicted(f'p_max_{_k_name(k)}', plan.settings, True), plan.settings)}) AS loss_{_k_name(k)}"
        for k in windows
    )
    return con.execute(
        f"""SELECT resource::VARCHAR AS resource, user_key, {losses}
        FROM (SELECT t.*, {maxima} FROM (SELECT * FROM {targets} WHERE train) AS t
            ASOF LEFT JOIN {rows.read(history)} AS h
                ON h.resource = t.resource AND h.wf = t.{column} AND t.submit > h.done)
        GROUP BY ALL"""
    ).pl()


def _predictions_step(con: duckdb.DuckDBPyConnection, rows: _Rows, plan: _Plan, number: int) -> list[pl.DataFrame]:
    """Partition `number` of the chosen grouping: by_window_<number> (the targets with the window used and
    every predictor over it, from one join of the history), the partial scores of `plan.scored`, and the
    per-job rows (jobs_<number>)."""
    column, windows, settings = plan.column, plan.windows, plan.settings
    targets, history, by_window = rows.read_part("parted", number), f"history_{number}", f"by_window_{number}"
    if settings.window is None:
        chosen = rows.read("chosen_windows")
        window = f"coalesce(c.k, {max(windows)})"
    else:
        chosen = "(SELECT NULL::VARCHAR AS resource, NULL::UBIGINT AS user_key, NULL::BIGINT AS k WHERE false)"
        window = str(settings.window)
    picked = ", ".join(f"{_pick(p, windows)} AS p_{p}" for p in AGGREGATES)
    rows.write(
        con,
        by_window,
        f"""SELECT {", ".join(f"j.{c}" for c in (*BASE_COLUMNS, column, *PROFILES))}, j.window_jobs, {picked},
            {predictor(LAST_TWO, 2, "h")} AS p_{LAST_TWO}
        FROM (SELECT t.*, {window} AS window_jobs FROM {targets} AS t
            LEFT JOIN {chosen} AS c ON c.resource = t.resource::VARCHAR AND c.user_key = t.user_key) AS j
        ASOF LEFT JOIN {rows.read(history)} AS h
            ON h.resource = j.resource AND h.wf = j.{column} AND j.submit > h.done""",
    )
    rows.drop(con, history)
    scores = [_score_sums(con, rows.read(by_window), predicted, settings) for predicted in plan.scored]
    full = _predicted("p_max", settings, True)
    rows.write(
        con,
        f"jobs_{number}",
        f"""SELECT job, resource, user_key, submit, used, requested, window_jobs,
            count(*) OVER (PARTITION BY resource, {column}) AS workflow_jobs,
            {_layer("p_max", settings)} AS layer, {full} AS predicted, train
        FROM {rows.read(by_window)}""",
    )
    if not plan.keep_scored:
        rows.drop(con, by_window)
    return scores


Step = Callable[[duckdb.DuckDBPyConnection, _Rows, _Plan, int], T]


def _on_worker(step: Step[T], lake: Lake, rows: _Rows, plan: _Plan, number: int) -> T:
    """A step's partition in a worker of a cluster, on a connection of its own under the lake's budget."""
    with _connected(lake) as con, lake.query_errors():
        con.execute("SET preserve_insertion_order = false")
        return step(con, rows, plan, number)


def _connected(lake: Lake) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the lake whose pool leaves PREDICTIONS_OUTSIDE_POOL_SHARE of the budget outside it."""
    con = lake.connect()
    con.execute(lake.budget.leaving(PREDICTIONS_OUTSIDE_POOL_SHARE).pool_statement())
    return con


def _each_partition(
    step: Step[T], con: duckdb.DuckDBPyConnection, rows: _Rows, plan: _Plan, lake: Lake | None, ray: str | None
) -> list[T]:
    if ray is None:
        return run_partitions(functools.partial(step, con, rows, plan), plan.partitions)
    assert lake is not None
    return run_partitions(functools.partial(_on_worker, step, lake, rows, plan), plan.partitions, ray)


def _pick(name: str, windows: list[int]) -> str:
    """Predictor `name` over the row's own window, from its row of the history (h)."""
    cases = " ".join(f"WHEN {k} THEN {predictor(name, k, 'h')}" for k in windows)
    return f"CASE window_jobs {cases} END"


# The columns a score reads, with the job (what a row is).
SCORED_COLUMNS = ("job", "resource", "used", "requested", "walltime", "freed_weight", "train")


def _score_sums(
    con: duckdb.DuckDBPyConnection, table: str, predicted: str, settings: PredictionSettings
) -> pl.DataFrame:
    """The sums `scores` makes each score of, per resource, over the evaluation jobs of `table`."""
    accuracy = "least(p, used) / greatest(p, used)"
    return con.execute(
        f"""SELECT resource::VARCHAR AS resource, count(*) AS jobs, sum({_loss("p", settings)}) AS loss,
            sum({accuracy}) AS accuracy, count({accuracy}) AS accuracy_n,
            sum((p < used)::DOUBLE) AS under, count(p < used) AS under_n,
            sum((requested - p) * freed_weight) AS freed, sum(requested * freed_weight) AS reserved
        FROM (SELECT *, {predicted} AS p FROM {table} WHERE NOT train) GROUP BY ALL"""
    ).pl()


def scores(sums: list[pl.DataFrame]) -> pl.DataFrame:
    """Per resource, on the evaluation jobs: jobs, loss (resource units x hours), mean accuracy
    min(p, u) / max(p, u), share under-estimated, and the share of reserved resource-time freed against
    the users' requests: sum((requested - p) * freed_weight) / sum(requested * freed_weight); from the
    partitions' sums (`_score_sums`)."""
    total = pl.concat(sums).group_by("resource").agg(pl.exclude("resource").sum()).sort("resource")
    return total.select(
        "resource",
        "jobs",
        pl.col("loss") / 3600,
        (pl.col("accuracy") / pl.col("accuracy_n")).alias("accuracy"),
        (pl.col("under") / pl.col("under_n")).alias("under_share"),
        (pl.col("freed") / pl.col("reserved")).alias("freed_share"),
    )


def score(con: duckdb.DuckDBPyConnection, table: str, predicted: str, settings: PredictionSettings) -> pl.DataFrame:
    """`scores` of the predictions `predicted` of one table's evaluation jobs."""
    return scores([_score_sums(con, table, predicted, settings)])


@dataclass(frozen=True)
class Predictions:
    """One source's scores, and its per-job predictions: in memory, or (from a lake) in a Parquet file
    written as DuckDB streams them, waiting beside its place until `write_report` renames it in."""

    table: pl.DataFrame  # scenario x resource scores, plus 'overall' per scenario
    grouping: str  # the workflow grouping of the sliding-window scenarios
    frame: pl.DataFrame | None = None  # per job and resource: the full method's prediction
    pending: Path | None = None  # that table written outside the writer lock, until it is stored
    final: Path | None = None  # where it is stored
    written: int = 0  # the rows of `pending`

    @property
    def jobs(self) -> pl.DataFrame:
        """Per job and resource: the full method's prediction (read from its file when it has one)."""
        return self.jobs_where(pl.lit(True))

    def jobs_where(self, condition: pl.Expr) -> pl.DataFrame:
        """The rows of `jobs` that meet `condition`, the others never read into memory."""
        if self.frame is not None:
            return self.frame.filter(condition)
        assert self.pending is not None and self.final is not None
        return pl.scan_parquet(self.pending if self.pending.exists() else self.final).filter(condition).collect()


def report(
    lake: Lake,
    family: str,
    source: str,
    settings: PredictionSettings = PredictionSettings(),
    partitioning: Partitioning | None = None,
) -> Predictions:
    """The scenario table of one source (an SWF log, or 'google') of the lake.  The per-job table goes
    straight from DuckDB to a file beside its place, so that the memory it takes is DuckDB's, within the
    lake's budget, however many jobs the source holds (the Google trace's 25 M tasks)."""
    final = DATASETS[PREDICTIONS_JOBS.key].file(lake.root, source)
    final.parent.mkdir(parents=True, exist_ok=True)
    pending = pending_path(final)
    try:
        # query_errors: DuckDB's errors as ours (one line: out of memory names the limit to raise).
        with _connected(lake) as con, lake.query_errors():
            result = run(con, family, source, settings, jobs_to=pending, partitioning=partitioning, lake=lake)
            return replace(result, final=final)
    except BaseException:
        pending.unlink(missing_ok=True)
        raise


def run(
    con: duckdb.DuckDBPyConnection,
    family: str,
    source: str,
    settings: PredictionSettings = PredictionSettings(),
    jobs_to: Path | None = None,
    partitioning: Partitioning | None = None,
    lake: Lake | None = None,
) -> Predictions:
    """The scenario table of one source, on any connection where predict.<family>_targets exists; the
    per-job table in memory (and, to look at, TEMP views by_grouping and by_window of the evaluation
    jobs' and every job's predictions), or written to the Parquet file `jobs_to`.  In partitions by a
    hash of the workflow (by default as many as `lake`'s memory limit needs, `partitions_for`; one
    without a lake), in this process or on a Ray cluster (`partitioning.ray`); the partitions' files
    are in `lake`'s spill folder, where a cluster's workers read them too."""
    partitioning = partitioning or Partitioning()
    if partitioning.ray is not None and lake is None:
        raise PredictionError("predictions on a Ray cluster read the targets from a lake")
    con.execute("SET preserve_insertion_order = false")  # every table here is ordered where it is read
    with contextlib.ExitStack() as stack:
        folder = None if lake is None else stack.enter_context(lake.scratch_folder("predictions"))
        return _run(con, family, source, settings, jobs_to, partitioning, lake, folder, stack)


def _run(
    con: duckdb.DuckDBPyConnection,
    family: str,
    source: str,
    settings: PredictionSettings,
    jobs_to: Path | None,
    partitioning: Partitioning,
    lake: Lake | None,
    folder: Path | None,
    stack: contextlib.ExitStack,
) -> Predictions:
    if not (target_rows := load_targets(con, family, source)):
        raise NoTargetsError(f"{source}: no job with both a positive request and usage of any resource")
    groupings = available_groupings(con, family)
    if settings.grouping is not None and settings.grouping not in groupings:
        raise PredictionError(f"{source} has no workflow grouping {settings.grouping!r}; it has {', '.join(groupings)}")
    if settings.window is not None and settings.window < 1:
        raise PredictionError(f"the window must hold at least one job, not {settings.window}")
    needed = 1 if lake is None else partitions_for(target_rows, lake.budget.leaving(PREDICTIONS_OUTSIDE_POOL_SHARE))
    partitions = partitioning.resolve(needed, lambda: count(con, "SELECT count(DISTINCT job) FROM targets"), "jobs")
    columns = GROUPINGS[family]
    twins = _twins(con, [columns[name] for name in groupings])
    plan = _Plan(family, settings, partitions, twins, keep_scored=jobs_to is None and partitioning.ray is None)
    requests = score(con, "targets", "requested", settings)
    rows = _Rows(parts_folder=folder)
    if partitioning.ray is not None:
        assert folder is not None
        rows = _Rows(folder, folder)
        stack.enter_context(joined(partitioning.ray))  # one join of the cluster for the three steps
    table, chosen, plan = _partitioned(con, rows, plan, groupings, requests, lake, partitioning.ray)
    return _per_job(con, rows, plan, source, table, chosen, jobs_to)


def _partitioned(
    con: duckdb.DuckDBPyConnection,
    rows: _Rows,
    plan: _Plan,
    groupings: list[str],
    requests: pl.DataFrame,
    lake: Lake | None,
    ray: str | None,
) -> tuple[list[tuple[str, pl.DataFrame]], str, _Plan]:
    """The scenario rows, the chosen grouping and the plan the partitions ran (its key column); the per-job
    rows left in jobs_<number>."""
    settings, columns = plan.settings, GROUPINGS[plan.family]
    if rows.folder is not None:  # the groupings' partitions read the targets on the cluster's workers
        rows.write(con, "targets", "SELECT * FROM temp.targets")
    # In this process the groupings run whole: in partitions each would read every target filtered, once
    # per grouping (at 0.2 of a 2019 cell in 8 partitions: 59 s, against 38 s whole).
    by_grouping = plan if ray is not None else replace(plan, partitions=1)
    by_key = dict(
        zip(
            plan.keys,
            zip(*_each_partition(_groupings_step, con, rows, by_grouping, lake, ray), strict=True),
            strict=True,
        )
    )
    results = [("users' requests", requests)]
    for name in groupings:
        results.append((f"{name}: max of all history", scores(list(by_key[plan.twins[columns[name]]]))))
    chosen = settings.grouping or min(
        groupings, key=lambda g: (_relative_loss(results[1 + groupings.index(g)][1], requests), groupings.index(g))
    )
    column = columns[chosen]
    plan = replace(plan, column=column, maxima=plan.twins[column])
    # The targets with their profiles, split once by the chosen grouping's workflow: each partition of
    # the steps below reads its own rows, not every target filtered (with one table for all, the larger
    # the trace the more those steps spilled: time grew as rows^1.2 at a 2019 cell's size).
    con.execute(PROFILES_SQL)
    rows.write_parts(con, "parted", PARTED_SQL, column, plan.partitions)
    con.execute("DROP TABLE row_profiles; DROP TABLE profiles; DROP TABLE global_profile; DROP TABLE targets")
    if rows.folder is not None:  # the cluster's copy of the targets, written for the groupings
        rows.drop(con, "targets")
    if plan.maxima == column:  # the running maxima the windows reuse, split as the targets are
        maxima = rows.read_all(f"max_history_{column}", by_grouping.partitions)
        rows.write_parts(con, "maxima", f"SELECT * FROM {maxima}", "wf", plan.partitions)
    for key in plan.keys:
        rows.drop(con, *(f"max_history_{key}_{number}" for number in range(by_grouping.partitions)))
    losses = _each_partition(_windows_step, con, rows, plan, lake, ray)
    for number in range(plan.partitions if plan.maxima == column else 0):
        rows.drop_part(con, "maxima", number)
    if settings.window is None:
        windows = plan.windows
        total = (
            pl.concat([frame for frame in losses if frame is not None])
            .group_by("resource", "user_key")
            .agg(pl.exclude("resource", "user_key").sum())
        )
        con.register("user_losses", total)
        pairs = ", ".join(f"({k}, loss_{_k_name(k)})" for k in windows)
        # Per user and resource, the window with the least training loss (ties: the smaller k); a user
        # without training jobs gets the largest.
        rows.write(
            con,
            "chosen_windows",
            f"""SELECT resource, user_key, arg_min(k, (loss, k)) AS k
            FROM user_losses, LATERAL (VALUES {pairs}) AS l(k, loss) GROUP BY ALL""",
        )
        con.unregister("user_losses")
    labels = [f"{chosen}: sliding window ({'per user' if settings.window is None else f'k = {settings.window}'}), max"]
    scored = [_predicted("p_max", settings, False)]
    for name in PREDICTORS:
        labels.append(f"{chosen}: sliding window + profiles, {name}")
        scored.append(_predicted(f"p_{name}", settings, True))
    plan = replace(plan, scored=tuple(scored))
    sums = _each_partition(_predictions_step, con, rows, plan, lake, ray)
    for number in range(plan.partitions):
        rows.drop_part(con, "parted", number)
    results += [(label, scores(list(partial))) for label, partial in zip(labels, zip(*sums, strict=True), strict=True)]
    return results, chosen, plan


def _per_job(
    con: duckdb.DuckDBPyConnection,
    rows: _Rows,
    plan: _Plan,
    source: str,
    results: list[tuple[str, pl.DataFrame]],
    chosen: str,
    jobs_to: Path | None,
) -> Predictions:
    """The report: its scenario table, and the partitions' per-job rows in memory or in `jobs_to`."""
    n = plan.partitions
    parts = rows.read_all("jobs", n)
    if n > 1 and rows.folder is None:
        # The partitions' tables made one before the join and the sort: at 0.2 of a 2019 cell under 3 GB
        # the sort of their union, joined, ran out of memory, where the same rows from one table did not.
        rows.write(con, "jobs", f"SELECT * FROM {parts}")
        rows.drop(con, *(f"jobs_{number}" for number in range(n)))
        parts = rows.read("jobs")
    # The columns and types of analysis.predictions_jobs (PREDICTION_JOBS_SCHEMA), in its order.
    jobs = f"""SELECT {sql_literal(source)}::VARCHAR AS source, job::BIGINT AS job, resource::VARCHAR AS resource,
            user_name::VARCHAR AS user_key, submit::DOUBLE AS submit, used::DOUBLE AS used,
            requested::DOUBLE AS requested, window_jobs::BIGINT AS window_jobs, workflow_jobs::BIGINT AS workflow_jobs,
            layer::VARCHAR AS layer, predicted::DOUBLE AS predicted, train::BOOLEAN AS train
        FROM {parts} LEFT JOIN user_names USING (user_key) ORDER BY resource::VARCHAR, submit, job"""
    if jobs_to is None:
        frame = con.execute(jobs).pl()
        if rows.folder is None:
            _views_of_the_partitions(con, plan)
        return Predictions(_table(source, results), chosen, frame=frame)
    copied = con.execute(f"COPY ({jobs}) TO {sql_literal(jobs_to.as_posix())} (FORMAT parquet, COMPRESSION zstd)")
    [(written,)] = copied.fetchall()  # DuckDB answers a COPY with the rows it wrote
    return Predictions(_table(source, results), chosen, pending=jobs_to, written=written)


def _views_of_the_partitions(con: duckdb.DuckDBPyConnection, plan: _Plan) -> None:
    """TEMP views by_window (every job with its window and predictors) and by_grouping (the evaluation
    jobs with each grouping's maximum of all history, p_<grouping>) over the partitions' tables (the
    groupings' one: in this process they run whole)."""
    rows, n = _Rows(), plan.partitions
    con.execute(f"CREATE OR REPLACE TEMP VIEW by_window AS SELECT * FROM {rows.read_all('by_window', n)}")
    n = 1
    columns = GROUPINGS[plan.family]
    aliases = {key: f"g{i}" for i, key in enumerate(plan.keys)}
    picks = [
        f'{aliases[plan.twins[column]]}.p AS "p_{name}"' for name, column in columns.items() if column in plan.twins
    ]
    joins = [
        f"LEFT JOIN {rows.read_all(f'by_grouping_{key}', n)} AS {alias} "
        f"ON {alias}.job = g0.job AND {alias}.resource = g0.resource"
        for key, alias in aliases.items()
        if alias != "g0"
    ]
    con.execute(
        f"""CREATE OR REPLACE TEMP VIEW by_grouping AS
        SELECT {", ".join(f"g0.{c}" for c in SCORED_COLUMNS)}, {", ".join(picks)}
        FROM {rows.read_all(f"by_grouping_{plan.keys[0]}", n)} AS g0 {" ".join(joins)}"""
    )


def _relative_loss(scored: pl.DataFrame, requests: pl.DataFrame) -> float:
    joined = scored.join(requests, on="resource", suffix="_request")
    return float(cast(float, (joined["loss"] / joined["loss_request"]).mean()))


TABLE_COLUMNS = [
    "source",
    "scenario",
    "resource",
    "jobs",
    "loss",
    "loss_vs_requests",
    "accuracy",
    "under_share",
    "freed_share",
]


def _table(source: str, rows: list[tuple[str, pl.DataFrame]]) -> pl.DataFrame:
    """One row per scenario and resource, then an 'overall' row per scenario: the mean over resources of
    the loss relative to the users' requests, the accuracy, the under-estimated and the freed shares."""
    requests = rows[0][1].select("resource", pl.col("loss").alias("request_loss"))
    frames = []
    for scenario, scored in rows:
        per_resource = scored.join(requests, on="resource", maintain_order="left").select(
            pl.lit(source).alias("source"),
            pl.lit(scenario).alias("scenario"),
            "resource",
            "jobs",
            "loss",
            # Undefined (NULL) where the requests lose nothing (e.g. processors always exactly requested).
            pl.when(pl.col("request_loss") > 0).then(pl.col("loss") / pl.col("request_loss")).alias("loss_vs_requests"),
            "accuracy",
            "under_share",
            "freed_share",
        )
        overall = per_resource.select(
            pl.lit(source).alias("source"),
            pl.lit(scenario).alias("scenario"),
            pl.lit("overall").alias("resource"),
            pl.col("jobs").max(),
            pl.lit(None, pl.Float64).alias("loss"),
            *[pl.col(c).mean() for c in ("loss_vs_requests", "accuracy", "under_share", "freed_share")],
        )
        frames += [per_resource, overall]
    return pl.concat(frames).select(TABLE_COLUMNS)


def glance(table: pl.DataFrame) -> pl.DataFrame:
    """`_table` as a page shows it at a glance: one row per scenario (it has one per scenario and
    resource), with its overall accuracy and shares and each resource's loss against the users'
    requests (below 1: better than the requests).  The lake keeps the whole table."""
    losses = table.filter(pl.col("resource") != "overall").pivot(
        on="resource", index="scenario", values="loss_vs_requests", maintain_order=True
    )
    losses = losses.rename({c: f"{c} loss vs requests" for c in losses.columns if c != "scenario"})
    overall = table.filter(pl.col("resource") == "overall").select(
        "scenario", "jobs", "accuracy", "under_share", "freed_share"
    )
    return overall.join(losses, on="scenario", how="left", maintain_order="left")


def write_report(lake: Lake, result: Predictions) -> Predictions:
    """Store one source's table and per-job predictions where analysis.predictions_* read them; returns
    the result as stored (its per-job file where the lake keeps it)."""
    source = str(result.table["source"][0])
    store(lake, PREDICTIONS_SCORES, result.table, name=source)
    if result.frame is not None:
        store(lake, PREDICTIONS_JOBS, result.frame, name=source)
        return result
    assert result.pending is not None
    placed = lake.committing.place(PREDICTIONS_JOBS.key, result.pending, source, result.written)
    return replace(result, final=placed)


def sources(lake: Lake) -> list[tuple[str, str]]:
    """(family, source) of everything the lake may predict: every SWF log with targets, then 'google', each
    cell of the 2019 trace ('google-2019-a', ...) and 'alibaba-2018' as the manifest holds them, targets
    or not (to see which have targets reads all their usage, which their runs do anyway: `NoTargetsError`)."""
    clouds = lake.query(named_query("ingested_cloud_sources", __package__))["source"].to_list()
    return [("swf", name) for name in log_sources(lake)] + [("cluster", name) for name in clouds]


def log_sources(lake: Lake) -> list[str]:
    """The SWF logs with targets (the cloud traces' are not read: listing them scans all their usage)."""
    return lake.query(named_query("prediction_sources", __package__))["source"].to_list()


def no_targets(log: str) -> str:
    """Why an SWF log is left out of the predictions."""
    return f"{log}: no job with a positive run time and both a request and a usage of walltime, memory or processors"


def choose_sources(lake: Lake, names: list[str] | None = None) -> tuple[list[tuple[str, str]], list[str]]:
    """(family, source) pairs to predict, and one line per SWF log left out with the reason.

    `names`: SWF log names (or unique prefixes), `google`, `google-2019` (every cell of it), one cell
    (`google-2019-a`) or `alibaba-2018`; None means every SWF log with targets and every cloud source the
    lake ingested.  A named source the lake does not hold is an error naming what it has.  The cloud
    sources come from the manifest: to see which have targets takes a scan of all their usage, which
    their runs make anyway (a run finds a source without any, `NoTargetsError`: refused when named,
    skipped when not)."""
    found = sources(lake)
    known = {name: family for family, name in found}
    logs = lake.log_names()
    skipped = [no_targets(log) for log in logs if log not in known]
    if not names:
        if not found:
            raise PredictionError(
                "no job with both a request and a usage in the lake (ingest SWF logs or a cloud trace)"
            )
        return found, skipped
    chosen = []
    cells = [(family, name) for family, name in found if family == "cluster" and cloud_trace(name)[0] == GOOGLE_2019]
    for name in names:
        if name == GOOGLE_2019 and cells:
            chosen += cells
            continue
        cloud = name == "google" or name.startswith(GOOGLE_2019) or name in TRACES
        refuse_unfed("predictions", name, CANNOT_FEED)
        full = name if name in known or cloud else _log_or_itself(name, logs)
        if full not in known:
            have = ", ".join(known) or "no source with requests"
            raise PredictionError(f"nothing to predict for {name}: the lake has {have}")
        chosen.append((known[full], full))
    return chosen, []


def _log_or_itself(name: str, logs: list[str]) -> str:
    """The log `name` names by lakehouse.base.log_names' rule; `name` itself where it names no log (then
    refused with what the lake has to predict)."""
    try:
        return log_named(name, logs)
    except LogNameError:
        if any(log.startswith(name) for log in logs):  # several: the rule's own message says which
            raise
        return name
