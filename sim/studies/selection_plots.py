"""Figures of `lakehouse report selection --plots DIR`, per log: the average wait relative to EASY-FCFS
over time (mean over resamples with a 10th-90th percentile band) for the selectors and for each fixed
policy, and the share of resamples running each policy in each period under the full selector."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from lakehouse.base.figures import pyplot, save
from lakehouse.base.log_names import short_log
from lakehouse.sim.options import Policy
from lakehouse.studies.selection import FIXED_STRATEGIES as FIXED
from lakehouse.studies.selection import policy_shares_over_time


def selection_plots(rows: pl.DataFrame, curves: pl.DataFrame, folder: Path) -> list[Path]:
    plt = pyplot()
    name = rows["campaign"][0]
    written = []
    for log in sorted(curves["log"].unique().to_list()):
        mine = curves.filter(pl.col("log") == log)
        selectors = sorted(s for s in mine["strategy"].unique().to_list() if s not in FIXED)
        fixed = [s for s in FIXED if s in mine["strategy"].to_list()]
        fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2), sharey=True)
        # Twelve fixed policies need more colours than the default ten: tab20's dark ones, then its light.
        palette = plt.get_cmap("tab20").colors
        colors = palette[::2] + palette[1::2]
        for ax, strategies, title in ((left, selectors, "selectors"), (right, fixed, "fixed policies")):
            for k, strategy in enumerate(strategies):
                curve = mine.filter(pl.col("strategy") == strategy).sort("week")
                (line,) = ax.plot(
                    curve["week"], curve["mean_ratio"], label=strategy.removeprefix("easy-"), color=colors[k % 20]
                )
                ax.fill_between(
                    curve["week"], curve["p10_ratio"], curve["p90_ratio"], color=line.get_color(), alpha=0.15
                )
            ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
            ax.set_xlabel("weeks since the first submission")
            ax.set_title(f"{short_log(log)}: {title}", fontsize=9)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, ncol=2)
        left.set_ylabel("average wait so far / EASY-FCFS's")
        written.append(save(fig, folder / f"{name}_improvement_{log}.png"))

        shares = policy_shares_over_time(rows, "easy-full-week").filter(pl.col("log") == log)
        if shares.height:
            table = shares.pivot(on="policy", index="period", values="share").fill_null(0).sort("period")
            policies = [p for p in (str(q) for q in Policy) if p in table.columns]
            fig, ax = plt.subplots(figsize=(8, 3.8))
            ax.stackplot(table["period"], *[table[p] for p in policies], labels=policies)
            ax.set_xlabel("period (week) since the first submission")
            ax.set_ylabel("share of resamples")
            ax.set_ylim(0, 1)
            ax.set_title(f"{short_log(log)}: policy chosen by the full selector (week)", fontsize=9)
            ax.legend(fontsize=7, ncol=4, loc="upper right")
            written.append(save(fig, folder / f"{name}_policies_{log}.png"))
    return written
