"""Figures of `lakehouse report hmm`: transitions, stays against their geometric laws, gain per states."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from lakehouse.base.figures import pyplot, save
from lakehouse.models.hmm.model import HeldOut


def plot_hmm(log: str, studies: list[HeldOut], folder: Path) -> list[Path]:
    plt = pyplot()
    largest = max(studies, key=lambda s: s.settings.states)
    p = largest.fit.params
    paths = []

    fig, ax = plt.subplots(figsize=(6.4, 5.4))
    image = ax.imshow(p.transitions, cmap="magma", vmin=0, vmax=1)
    fig.colorbar(image, ax=ax, label="probability")
    ax.set_xlabel("to state")
    ax.set_ylabel("from state")
    ax.set_title(f"{log}: transitions of the {p.states}-state HMM")
    paths.append(save(fig, folder / f"hmm-transitions-{log}.png"))

    # Stays of the four most frequent states: the share of stays longer than k bins, observed on the
    # Viterbi path, against the geometric law fitted to them (p = 1 / mean stay) and the model's own
    # (p = 1 - a_jj).
    shares = largest.stays.group_by("state").agg(pl.col("bins").sum()).sort("bins", descending=True)
    top = shares["state"].head(4).to_list()
    fig, axes = plt.subplots(1, len(top), figsize=(4 * len(top), 3.6), squeeze=False)
    for ax, state in zip(axes[0], top, strict=False):
        stays = np.sort(largest.stays.filter(state=state)["bins"].to_numpy())
        k = np.arange(1, stays.max() + 1)
        observed = 1 - np.searchsorted(stays, k, side="right") / stays.size
        fitted = 1 / stays.mean()
        implied = 1 - p.transitions[state, state]
        shown = observed > 0
        ax.step(k[shown], observed[shown], where="post", label="Viterbi stays")
        ax.plot(k, (1 - fitted) ** k, "--", label=f"geometric p={fitted:.3f}")
        ax.plot(k, (1 - implied) ** k, ":", label=f"model 1-a_jj={implied:.3f}")
        ax.set_yscale("log")
        ax.set_ylim(0.5 / stays.size, 1.2)  # down to one stay: the laws' tails below say nothing
        ax.set_xlabel("bins")
        ax.set_title(f"state {state} ({stays.size} stays)")
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("share of stays longer")
    fig.suptitle(f"{log}: how long the HMM stays in a state")
    paths.append(save(fig, folder / f"hmm-stays-{log}.png"))

    if len(studies) > 1:
        fig, ax = plt.subplots(figsize=(5.6, 3.8))
        ordered = sorted(studies, key=lambda s: s.settings.states)
        ax.plot([s.settings.states for s in ordered], [s.gain_bits_per_job for s in ordered], marker="o")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("states")
        ax.set_ylabel("held-out gain (bits per job)")
        ax.set_title(f"{log}: gain over the single-state model")
        paths.append(save(fig, folder / f"hmm-gain-{log}.png"))
    return paths
