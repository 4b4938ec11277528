"""Beaumont et al.'s packing of jobs with periodic demand (Euro-Par 2015)."""

from __future__ import annotations

import polars as pl

from lakehouse.base.lake import Lake
from lakehouse.base.published import Published
from lakehouse.reproduce.study import (
    MEASURED,
    Request,
    Study,
    row,
)

#: task_usage parts of the whole Google 2011-2 trace: the paper's Table 1 and Table 2 need all of them.
WHOLE_TRACE_PARTS = 500


def _synthetic(campaign: pl.DataFrame, s: dict[str, str]) -> float:
    """The campaign's figure for one sentence of the paper: the mean (over the families the sentence
    names) of the mean ratio, or the largest ratio of any instance."""
    rows = campaign.filter(pl.col("heuristic") == s["heuristic"], pl.col("order") == s["order"])
    if "tasks" in s:
        rows = rows.filter(pl.col("family").str.starts_with(f"{s['tasks']} tasks"))
    if "amplitude" in s:
        rows = rows.filter(pl.col("family").str.contains(f"{s['amplitude']} amplitude", literal=True))
    if s["statistic"] == "max":
        return float(rows["max_ratio"].max())  # type: ignore[arg-type]
    return float(rows["mean_ratio"].mean())  # type: ignore[arg-type]


def task_usage_parts(lake: Lake) -> int:
    """How many parts of the Google trace's task_usage the lake holds."""
    found = lake.query("SELECT count(*) AS n FROM meta.manifest WHERE dataset = 'google.task_usage'")
    return int(found["n"][0])


def _whole_trace(lake: Lake, rows: list[Published]) -> dict[tuple[str, str], float]:
    """Table 1 (`report periodicity`'s summary) and Table 2 (`lakehouse pack` on its fits), run as those
    commands run, on a lake holding the whole trace: (quantity, setting) -> ours."""
    from lakehouse.models.periodicity.job_sinusoids import summary
    from lakehouse.models.periodicity.report import run_2011
    from lakehouse.reports import PACK, PackRequest, PeriodicitySettings

    periodicity = run_2011(lake, PeriodicitySettings())
    components = summary(periodicity.fits, false_positive=periodicity.false_positive)
    packed = PACK.run(lake, PackRequest())
    machines = dict(packed.table.select("heuristic", "machines").iter_rows())
    values = {}
    for p in rows:
        s = p.settings()
        if "component" in s:
            found = components.filter(pl.col("component") == s["component"])[s["statistic"]]
            values[(p.quantity, p.setting)] = found[0]
        elif s.get("heuristic") == "bound":
            values[(p.quantity, p.setting)] = float(packed.table["lower_bound"][0])
        elif "heuristic" in s:
            values[(p.quantity, p.setting)] = float(machines[s["heuristic"]])
    return values


def _packing(lake: Lake, rows: list[Published], request: Request) -> list[dict[str, object]]:
    """Section 6's synthetic campaign (`lakehouse pack --synthetic`), and, on a lake holding the whole
    Google trace, Table 1 and Table 2."""
    from lakehouse.models.packing.campaign import SEEDS, campaign

    synthetic = campaign(SEEDS)  # as `lakehouse pack --synthetic` runs it, with its instances per family
    trace = [p for p in rows if p.trace.startswith("Google")]
    parts = task_usage_parts(lake) if trace else 0
    whole = _whole_trace(lake, trace) if parts >= WHOLE_TRACE_PARTS else {}
    out = []
    for p in rows:
        if not p.trace.startswith("Google"):
            out.append(row(p, None, _synthetic(synthetic, p.settings()), MEASURED))
        elif whole:
            value = whole.get((p.quantity, p.setting))
            out.append(row(p, None, value, MEASURED if value is not None else "not computed"))
        else:
            why = (
                f"needs the whole Google trace: the lake holds {parts} of its {WHOLE_TRACE_PARTS} task_usage parts "
                "(lakehouse ingest google DIR)"
            )
            out.append(row(p, None, None, why))
    return out


STUDY = Study(
    "packing",
    _packing,
    (
        "Beaumont et al., 2015: section 6's synthetic campaign as `lakehouse pack --synthetic` runs it; tables 1 "
        "and 2, the amplitudes of the periodic jobs and the machines each heuristic needs for them, on a lake "
        "holding the whole Google trace, as `lakehouse report periodicity` and `lakehouse pack` give them"
    ),
    order=50,
    citation=(
        "O. Beaumont, I. Belaid, L. Eyraud-Dubois, J.-A. Lorenzo-Del-Castillo, Allocating jobs with "
        "periodic demand variations, Euro-Par 2015"
    ),
)
