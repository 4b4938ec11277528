"""The online policy-selection study: on many week resamples of each log, every fixed queue policy of
EASY and the selectors (full, noisy, egreedy unless told; a period of a week and of a day), compared with
EASY-FCFS on the same resample by their average wait.

`lakehouse report selection LOG...` runs them as a campaign (stored, resumable) and summarizes:
- per log and strategy, the ratio of the average wait to EASY-FCFS's over the resamples (mean, 10th
  and 90th percentiles): analysis.selection_runs;
- the same ratio over time, on the jobs submitted up to the end of each week: analysis.selection_curves.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from lakehouse.base.errors import LakehouseError
from lakehouse.base.lake import Lake
from lakehouse.base.machine import CEA_CURIE_PARTITION
from lakehouse.base.results import store
from lakehouse.campaigns.grid import RunSettings
from lakehouse.campaigns.report import latest
from lakehouse.campaigns.runner import campaign_rows
from lakehouse.models.selection import SELECTION_CURVES, SELECTION_RUNS
from lakehouse.sim.options import DAY, WEEK, Policy, Selector

BASELINE = "easy-fcfs"
#: The fixed-policy strategies, in `Policy` order (the order of the tables and figures).
FIXED_STRATEGIES = tuple(f"easy-{p}" for p in Policy)
#: The study's selectors (`egreedy-started`, the authors' simulator's bandit, runs when asked).
SELECTORS = (Selector.full, Selector.noisy, Selector.egreedy)
PERIODS = (WEEK, DAY)
EPSILON = 0.3
#: The study's candidates: the paper's "search space of 10 reordering policies", P_1 ... P_10 of its
#: list, FCFS to SRF.  Its list goes on with LAF and SAF as (11) and (12), but every other mention (the
#: selection rules, Eqs. 5 and 9, and the figure of the fixed policies) counts ten; measured, the two
#: areas matter: with them simulation feedback picks SAF in 94-95 % of the weeks of three logs and ends
#: worse than FCFS on SDSC-SP2 (docs/selection.md).  `--policies all` gives all twelve.
PAPER_POLICIES = tuple(Policy)[:10]
#: The machines of the study's Table 1 where they differ from the log's header.
MACHINE_SIZES = (CEA_CURIE_PARTITION,)


def study_machine_sizes(logs: Sequence[str], given: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
    """The per-log sizes a run of the study uses: those given (they win), then the study's own for the
    logs it replays."""
    return given + tuple((p, size) for p, size in MACHINE_SIZES if any(log.startswith(p) for log in logs))


_RESAMPLE_SUFFIX = re.compile(r"-r\d+$")


def selection_settings(
    resamples: int,
    seed: int = 0,
    policies: Sequence[str] = PAPER_POLICIES,
    periods: Sequence[int] = PERIODS,
    epsilons: Sequence[float] = (EPSILON,),
    threshold: int | None = None,
    selectors: Sequence[Selector] = SELECTORS,
) -> list[RunSettings]:
    """Every run of the study: per resample, each fixed policy, then each selector at each period (the
    bandit at each epsilon).  A threshold (the paper's EASY(P, Theta), which it does not quantify) applies
    to every run but EASY-FCFS's, the baseline, which it cannot change: under FCFS the jobs that waited
    longest are already first."""
    if resamples < 1:
        raise LakehouseError(f"--resamples must be at least 1, got {resamples}")
    candidates = tuple(str(p) for p in policies)
    if not candidates:
        raise LakehouseError("the study needs at least one candidate policy")
    if "fcfs" not in candidates:
        raise LakehouseError("the study compares every strategy with EASY-FCFS: keep fcfs among the policies")
    if not epsilons or any(not 0 <= e <= 1 for e in epsilons):
        raise LakehouseError(f"epsilon must be in [0, 1], got {', '.join(f'{e:g}' for e in epsilons) or 'none'}")
    settings = []
    for r in range(resamples):
        settings += [
            RunSettings(policy=p, seed=seed, resample=r, threshold=None if p == "fcfs" else threshold)
            for p in candidates
        ]
        settings += [
            RunSettings(
                selector=str(selector),
                policies=candidates,
                period=period,
                epsilon=epsilon,
                seed=seed,
                resample=r,
                threshold=threshold,
            )
            for period in periods
            for selector in selectors
            for epsilon in (epsilons if selector.bandit else (None,))
        ]
    return settings


def _runs(rows: pl.DataFrame) -> pl.DataFrame:
    """The successful resampled runs, one per (log, strategy, resample), with their strategy's name.  A
    log the campaign replayed on several machines counts on the machine of its newest run: ratios
    compare runs on one machine."""
    ok = rows.filter(pl.col("status") == "ok", pl.col("resample").is_not_null())
    if ok.is_empty():
        raise LakehouseError("the campaign has no successful resampled runs")
    newest = ok.sort("finished_at").group_by("log").agg(pl.col("machine_size").last())
    ok = ok.join(newest, on=["log", "machine_size"], how="semi")
    return latest(ok).with_columns(strategy=pl.col("variant").str.replace(_RESAMPLE_SUFFIX.pattern, ""))


def _with_baseline(runs: pl.DataFrame) -> pl.DataFrame:
    base = runs.filter(pl.col("strategy") == BASELINE).select(
        "log", "resample", base_wait="mean_wait", base_weekly="weekly_wait"
    )
    if base.is_empty():
        raise LakehouseError("the campaign has no EASY-FCFS runs to compare with")
    return runs.join(base, on=["log", "resample"], how="inner")


def _order(strategies: list[str]) -> list[str]:
    """Selectors first (week, then day), then fixed policies in their usual order."""

    def key(s: str) -> tuple[int, int, str]:
        if s in FIXED_STRATEGIES:
            return (1, FIXED_STRATEGIES.index(s), s)
        return (0, 0, s)

    return sorted(strategies, key=key)


def selection_table(rows: pl.DataFrame) -> pl.DataFrame:
    """Per log and strategy: resamples, and the ratio of the average wait to EASY-FCFS's on the same
    resample (mean, 10th and 90th percentiles), with the strategies' mean average wait."""
    runs = _with_baseline(_runs(rows)).with_columns(ratio=pl.col("mean_wait") / pl.col("base_wait"))
    table = runs.group_by("log", "strategy").agg(
        resamples=pl.len(),
        mean_ratio=pl.col("ratio").mean(),
        p10_ratio=pl.col("ratio").quantile(0.1, "linear"),
        p90_ratio=pl.col("ratio").quantile(0.9, "linear"),
        mean_wait=pl.col("mean_wait").mean(),
    )
    order = _order(table["strategy"].unique().to_list())
    return (
        table.with_columns(rank=pl.col("strategy").replace_strict(order, range(len(order))))
        .sort("log", "rank")
        .drop("rank")
    )


def selection_curves(rows: pl.DataFrame) -> pl.DataFrame:
    """Per log, strategy and week: the ratio of the average wait of the jobs submitted up to the end
    of that week to EASY-FCFS's (same resample), mean and 10th/90th percentiles over resamples."""
    runs = _with_baseline(_runs(rows))
    out = []
    for (log, strategy), group in runs.group_by("log", "strategy", maintain_order=True):
        weeks = min(len(w) for w in group["weekly_wait"].to_list())
        ratios = []
        for mine, base in zip(group["weekly_wait"].to_list(), group["base_weekly"].to_list(), strict=True):
            cum_mine, cum_base = np.cumsum(mine[:weeks]), np.cumsum(base[:weeks])
            with np.errstate(divide="ignore", invalid="ignore"):
                ratios.append(np.where(cum_base > 0, cum_mine / cum_base, np.nan))
        matrix = np.array(ratios)
        # A week in which no resample's EASY-FCFS has waited yet has no ratio: NaN, without numpy's
        # "empty slice" warnings.
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mean = np.nanmean(matrix, axis=0)
            p10, p90 = np.nanpercentile(matrix, [10, 90], axis=0)
        out.append(
            pl.DataFrame(
                {
                    "log": log,
                    "strategy": strategy,
                    "week": np.arange(1, weeks + 1),
                    "mean_ratio": mean,
                    "p10_ratio": p10,
                    "p90_ratio": p90,
                }
            )
        )
    return pl.concat(out).fill_nan(None).sort("log", "strategy", "week")


def policy_shares_over_time(rows: pl.DataFrame, strategy: str) -> pl.DataFrame:
    """For one selector strategy (e.g. `easy-full-week`): per log, period and policy, the share of
    resamples that ran that policy in that period."""
    runs = _runs(rows).filter(pl.col("strategy") == strategy, pl.col("period_policies").is_not_null())
    if runs.is_empty():
        return pl.DataFrame(schema={"log": pl.String, "period": pl.Int64, "policy": pl.String, "share": pl.Float64})
    long = runs.select("log", "resample", pl.col("period_policies").alias("policy")).explode("policy")
    long = long.with_columns(period=pl.int_range(pl.len()).over("log", "resample"))
    counts = long.group_by("log", "period", "policy").len()
    totals = long.group_by("log", "period").len().rename({"len": "total"})
    return (
        counts.join(totals, on=["log", "period"])
        .select("log", "period", "policy", share=pl.col("len") / pl.col("total"))
        .sort("log", "period", "policy")
    )


@dataclass(frozen=True)
class SelectionTables:
    """`lakehouse report selection`: a campaign's stored runs and the tables made from them."""

    campaign: str
    rows: pl.DataFrame
    table: pl.DataFrame  # analysis.selection_runs
    curves: pl.DataFrame  # analysis.selection_curves


def selection_tables(lake: Lake, campaign: str) -> SelectionTables:
    rows = campaign_rows(lake, campaign)
    return SelectionTables(campaign, rows, selection_table(rows), selection_curves(rows))


def store_tables(lake: Lake, tables: SelectionTables) -> None:
    campaign, table, curves = tables.campaign, tables.table, tables.curves
    for stored, frame in ((SELECTION_RUNS, table), (SELECTION_CURVES, curves)):
        store(lake, stored, frame.with_columns(campaign=pl.lit(campaign)).select(stored.schema.names), campaign)
