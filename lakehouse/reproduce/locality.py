"""Nissimov and Feitelson's runtime locality (MSc thesis, 2006, chapter 2), at the paper's cells."""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from lakehouse.base.lake import Lake
from lakehouse.base.published import Published
from lakehouse.reproduce.study import (
    MEASURED,
    Request,
    Study,
    by_log,
    lacking,
    row,
)


def _locality(lake: Lake, rows: list[Published], request: Request) -> list[dict[str, object]]:
    from lakehouse.models.locality.model import LocalitySettings, Variant, kmeans_cell, runtime_bins
    from lakehouse.reports import LOCALITY

    found: dict[int, dict[str, object]] = {}  # the row of each published number, by its place
    values: dict[tuple[str, str], float] = {}  # (archive log, quantity) -> ours, for the text's averages
    place = {id(p): i for i, p in enumerate(rows)}
    for log, mine in by_log([p for p in rows if p.log], lake.log_names()):
        cells = [p for p in mine if "t_r" in p.settings()]
        if log is None:
            found |= {place[id(p)]: row(p, None, None, lacking(p)) for p in mine}
            continue
        settings = LocalitySettings(
            submit_bins=sorted({float(p.settings()["t_s"]) for p in cells if "t_s" in p.settings()}),
            runtime_ratios=sorted({float(p.settings()["t_r"]) for p in cells}),
            variants=[Variant(v) for v in dict.fromkeys(p.settings()["variant"] for p in cells)],
        )
        measured = LOCALITY.run(lake, (log, settings))
        grid = measured.grid
        jobs = measured.jobs.jobs

        by_quantity = {p.quantity: p for p in mine}
        for p in mine:
            s = p.settings()
            if "n_ratio" in s:  # N: the run-time bins from 1 s to the longest run of the jobs the cell uses
                users = p.quantity.endswith("f(u;r)") or "(s;u)" in p.quantity
                longest = (jobs.drop_nulls("user_id") if users else jobs)["run_time"].max()
                value = float(runtime_bins(np.array([longest]), float(s["n_ratio"]))[0] + 1)
            elif "bins" in s:  # Table 2.1: k-means run-time bins (lakehouse.models.locality.model.kmeans_cell)
                value = kmeans_cell(jobs, float(s["t_s"]), int(s["bins"])).locality
            elif "t_r" in s:
                value = _cell(grid, p)
            else:  # f(s; r | u): what the submit time adds to the user, the pair's best cell over the user's
                value = _cell(grid, by_quantity["f((s;u);r)"]) - _cell(grid, by_quantity["f(u;r)"])
            values[(p.log, p.quantity)] = value
            found[place[id(p)]] = row(p, log, value, MEASURED)
    traces = list(dict.fromkeys(p.log for p in rows if p.log))
    for p in rows:
        if not p.log:
            found[place[id(p)]] = _locality_average(p, traces, values)
    return [found[i] for i in range(len(rows))]


#: The text's averages over the six traces: (statistic) -> (numerator, denominator, geometric).
LOCALITY_AVERAGES = {
    "simple_over_kmeans": ("f(s;r)", "f(s;r) K-Means run-time bins", False),
    "user_and_submit_over_user": ("f((s;u);r)", "f(u;r)", False),
    "user_bins_over_both": ("N run-time bins of f(u;r)", "N run-time bins of f((s;u);r)", True),
}


def _locality_average(p: Published, traces: list[str], values: dict[tuple[str, str], float]) -> dict[str, object]:
    """One of section 2's averages over the six traces: the mean excess (in %) of one of each trace's
    numbers over another, or the geometric mean of their ratio; measured when the lake holds every trace
    (the note gives it over those it holds)."""
    over, under, geometric = LOCALITY_AVERAGES[p.settings()["statistic"]]
    # (A trace whose denominator is 0, a log too small to carry locality, has no ratio.)
    ratios = [values[(t, over)] / values[(t, under)] for t in traces if values.get((t, under)) and (t, over) in values]
    if geometric:
        value = math.prod(ratios) ** (1 / len(ratios)) if ratios else None
    else:
        value = 100 * (sum(ratios) / len(ratios) - 1) if ratios else None
    if len(ratios) == len(traces):
        return row(p, None, value, MEASURED)
    partial = f"; over the {len(ratios)} in the lake: {value:.3g}" if value is not None else ""
    return row(p, None, None, f"{lacking(p)} ({len(traces)} traces){partial}")


def _cell(grid: pl.DataFrame, p: Published) -> float:
    """f at the cell the paper states for `p`."""
    s = p.settings()
    t_s = None if s["variant"] == "user" else float(s["t_s"])
    found = grid.filter(
        pl.col("variant") == s["variant"],
        pl.col("t_s").is_null() if t_s is None else pl.col("t_s") == t_s,
        pl.col("t_r") == float(s["t_r"]),
    )
    return float(found["locality"][0])


STUDY = Study(
    "locality",
    _locality,
    (
        "Nissimov and Feitelson, 2006, tables 2.1-2.3: the runtime locality f at the paper's best cells, measured"
        " as `lakehouse report locality` measures it"
    ),
    order=10,
    citation=(
        "A. Nissimov (D. Feitelson), Locality and its usage in parallel job runtime distribution "
        "modeling using HMM, MSc thesis, Hebrew University, 2006, chapter 2"
    ),
)
