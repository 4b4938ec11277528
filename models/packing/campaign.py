"""The synthetic packing campaign: 8 families of instances, each heuristic's machines / lower bound.

Capacity 20.  Task level C ~ U[0, 10] ("big") or U[0, 1] ("small"); amplitude rho ~ U[0, C] ("large")
or U[0, C/2] ("small"); jobs of 10 identical tasks sharing one phase ("large") or of one task
("small"); phases U[0, 2 pi).  Instance sizes make the expected lower bound 250 machines: the bound is
about sum C / 20, so 250 * 20 / E[C] tasks (1,000 big ones, 10,000 small ones).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import polars as pl

from lakehouse.base.figures import pyplot, save
from lakehouse.models.packing.model import pack_all

CAPACITY = 20.0
TARGET_BOUND = 250
#: Instances per family (`lakehouse pack --synthetic --seeds`, and the campaign `reproduce packing` runs).
SEEDS = 10


def instance(rng: np.random.Generator, big_tasks: bool, large_amplitude: bool, large_jobs: bool) -> pl.DataFrame:
    top = 10.0 if big_tasks else 1.0
    tasks = round(TARGET_BOUND * CAPACITY / (top / 2))
    per_job = 10 if large_jobs else 1
    jobs = tasks // per_job
    c = rng.uniform(0, top, jobs)
    rho = rng.uniform(0, 1.0 if large_amplitude else 0.5, jobs) * c
    return pl.DataFrame(
        {
            "job": np.arange(jobs),
            "tasks": np.full(jobs, per_job),
            "c": c,
            "rho": rho,
            "phi": rng.uniform(0, 2 * np.pi, jobs),
        }
    )


def campaign(seeds: int = SEEDS) -> pl.DataFrame:
    """One row per family, heuristic and task order: machines / lower bound over the seeds."""
    rows = []
    for index, (big, large_rho, large_jobs) in enumerate(itertools.product((True, False), repeat=3)):
        family = f"{'big' if big else 'small'} tasks, {'large' if large_rho else 'small'} amplitude, " + (
            "jobs of 10" if large_jobs else "jobs of 1"
        )
        for seed in range(seeds):
            jobs = instance(np.random.default_rng([index, seed]), big, large_rho, large_jobs)
            for order in ("c", "peak"):
                table = pack_all(jobs, CAPACITY, order=order)
                for heuristic, ratio in table.select("heuristic", "ratio_to_bound").rows():
                    rows.append({"family": family, "order": order, "heuristic": heuristic, "ratio": ratio})
    return (
        pl.DataFrame(rows)
        .group_by("family", "order", "heuristic", maintain_order=True)
        .agg(
            instances=pl.len(),
            mean_ratio=pl.col("ratio").mean(),
            std_ratio=pl.col("ratio").std(),
            min_ratio=pl.col("ratio").min(),
            max_ratio=pl.col("ratio").max(),
        )
    )


def plot(table: pl.DataFrame, path: Path, order: str = "c") -> None:
    """Grouped bars: for each family, each heuristic's mean machines / lower bound (with its spread)."""
    plt = pyplot()
    data = table.filter(pl.col("order") == order)
    families = data["family"].unique(maintain_order=True).to_list()
    heuristics = data["heuristic"].unique(maintain_order=True).to_list()
    width = 0.8 / len(heuristics)
    fig, ax = plt.subplots(figsize=(12, 5))
    for i, heuristic in enumerate(heuristics):
        part = data.filter(pl.col("heuristic") == heuristic)
        ax.bar(
            np.arange(len(families)) + i * width,
            part["mean_ratio"].to_list(),
            width,
            yerr=part["std_ratio"].fill_null(0.0).to_list(),  # one seed: no spread
            label=heuristic,
        )
    ax.set_xticks(np.arange(len(families)) + width * (len(heuristics) - 1) / 2)
    ax.set_xticklabels([f.replace(", ", "\n") for f in families], fontsize=8)
    ax.set_ylabel("machines / lower bound")
    ax.set_ylim(bottom=1.0)
    ax.legend()
    ax.set_title(f"Packing periodic tasks (capacity {CAPACITY:g}, tasks by decreasing {order})")
    save(fig, path)
