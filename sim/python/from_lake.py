"""Replaying a log of the lake by its name: what `lakehouse simulate LOG` does, from Python."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from lakehouse.base.errors import ORDER_KIND, SettingsError, SimulationInputError, TooLittleDataError
from lakehouse.base.job_views import View, log_columns, log_machine_size, order_problem_columns, resolve_log
from lakehouse.base.lake import Lake
from lakehouse.sim.engine import simulate
from lakehouse.sim.options import (
    FIXED_PREFIX,
    Compat,
    check_order_columns,
    order_columns,
    parse_policy,
    parse_predictor,
)
from lakehouse.sim.result import SimulationResult
from lakehouse.sim.workload import input_columns


def simulate_log(
    lake: Lake,
    log: str,
    *,
    view: View | str = View.jobs_clean,
    where: str | None = None,
    machine_size: int | None = None,
    **settings: Any,
) -> SimulationResult:
    """Replay one log of the lake (a name or a unique prefix) as `lakehouse simulate` does: the jobs of
    `swf.<view>` (those `where` keeps), on the machine size the view was filtered with unless
    `machine_size`; `settings` are `simulate`'s (algorithm="conservative", backfill="sjbf", ...).

    >>> simulate_log(Lake("lake"), "KTH", backfill="sjbf").summary["mean_bounded_slowdown"]  # doctest: +SKIP
    """
    view = View(str(view))
    compat = Compat(str(settings.get("compat", Compat.canonical)))
    predictor = str(settings.get("predictor", "requested"))
    orders = [settings.get("policy"), *(settings.get("policies") or [])]
    selector = settings.get("selector")
    if isinstance(selector, str) and selector.startswith(FIXED_PREFIX):  # fixed:P replays P: its columns too
        orders.append(selector.removeprefix(FIXED_PREFIX))
    formula_columns = order_columns(*(parse_policy(str(o)) for o in orders if o is not None))
    columns = input_columns(
        pyss=compat is Compat.pyss, prediction_column=parse_predictor(predictor)[1], formula_columns=formula_columns
    )
    with lake.reading():
        if formula_columns:  # names the formula reads that the view lacks: the caret, before any query
            try:
                check_order_columns(orders, *order_problem_columns(lake, view))
            except SettingsError as exc:
                raise SimulationInputError(str(exc), kind=ORDER_KIND) from None
        name = resolve_log(lake, log)
        size = machine_size if machine_size is not None else log_machine_size(lake, name, view)
        # (As numpy columns: Polars is imported while the engine runs.)
        jobs = log_columns(lake, name, view, where, columns)
    if not len(jobs["job_id"]):
        raise TooLittleDataError(f"no jobs of {name} in swf.{view}" + (f" where {where}" if where else ""))
    return replace(simulate(jobs, size, **settings), log=name)
