"""The figure of `lakehouse reproduce STUDY --plots DIR`: each published number against ours."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from lakehouse.base.figures import pyplot, save

#: The band drawn around equality: differences within it need no explanation (docs/reproductions.md).
TOLERANCE = 0.05


def plot_reproduction(table: pl.DataFrame, study: str, folder: Path) -> list[Path]:
    """One PNG: ours against the published value for every number measured, one colour per table of
    the paper, the line of equality and the ±5 % band; none when nothing is measured."""
    measured = table.filter(pl.col("ours").is_not_null(), pl.col("published").is_not_null())
    if measured.is_empty():
        return []
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 5.6))
    values = np.abs(np.concatenate([measured["published"].to_numpy(), measured["ours"].to_numpy()]))
    positive = values[values > 0]
    # A log scale only where the values span decades and none is negative (changes in % are).
    logarithmic = (
        bool(positive.size)
        and (measured["published"] > 0).all()
        and (measured["ours"] > 0).all()
        and positive.max() / positive.min() > 100
    )
    for source in measured["source"].unique(maintain_order=True).to_list():
        part = measured.filter(pl.col("source") == source)
        ax.scatter(part["published"], part["ours"], s=22, label=f"{source} ({part.height})")
    both = np.concatenate([measured["published"].to_numpy(), measured["ours"].to_numpy()])
    low, high = float(both.min()), float(both.max())
    line = np.geomspace(low, high, 100) if logarithmic else np.linspace(low, high, 100)
    ax.plot(line, line, color="black", lw=0.8, label="ours = published")
    ax.fill_between(line, line * (1 - TOLERANCE), line * (1 + TOLERANCE), color="grey", alpha=0.2, label="±5 %")
    if logarithmic:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel("published")
    ax.set_ylabel("ours")
    within = (measured["relative_pct"].abs() <= 100 * TOLERANCE).sum()
    ax.set_title(f"{study}: {within} of {measured.height} measured numbers within 5 %", fontsize=10)
    ax.legend(fontsize=7)
    return [save(fig, folder / f"reproduce_{study}.png")]
