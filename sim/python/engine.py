"""`simulate`: replay a workload from the lake with the compiled backfilling engine."""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from lakehouse import _native
from lakehouse.base.errors import ORDER_KIND, SettingsError, SimulationInputError
from lakehouse.sim.options import PYTHON, Compat, check_order_columns, order_columns
from lakehouse.sim.result import SimulationResult
from lakehouse.sim.settings import ReplaySettings
from lakehouse.sim.workload import Columns, as_columns, input_columns, workload_from

if TYPE_CHECKING:
    # Polars (the result and its metrics) is imported while the engine runs: see `_loading_polars`.
    import polars as pl
    import pyarrow as pa


#: An order function: called as `order(queue, now)` at every pass that sorts the waiting queue, with
#: `queue` a dict of int64 numpy columns (job_id, submit_time, req_time, procs, user_id, prediction,
#: wait) and `now` the time of the pass; returns one key per waiting job, smallest first.
OrderFunction = Callable[[dict[str, np.ndarray], int], Any]


def simulate(
    jobs: pl.DataFrame | pa.Table | Mapping[str, np.ndarray],
    machine_size: int,
    *,
    order: OrderFunction | None = None,
    **settings: Any,
) -> SimulationResult:
    """Replay `jobs` (e.g. `lake.query("select * from swf.jobs_strong where log = '…'")`).

    The jobs (a Polars frame, an Arrow table or a dict of numpy columns, masked where missing) need
    the columns job_id, submit_time, run_time, req_time, procs and user_id, sorted by submit time.
    A job runs min(run_time, req_time) seconds (it is killed at its request).

    - algorithm: `easy` (one reservation) or `conservative` (every waiting job holds one).
    - policy: primary queue order: a built-in `Policy`, a preset (`wfp3`, `unicef`, `f1`-`f4`) or a
      formula `min:EXPR` / `max:EXPR` (docs/your-own-policy.md; a job whose key is NaN or infinite
      goes last, and the jobs gain a `key_not_finite` column); backfill: `queue` order or `sjbf`.
    - predictor: `requested`, `clairvoyant`, `ave2`, `eloss[:KEY=VALUE,...]` (learned online during
      the replay, docs/predictions.md) or `column:NAME` (a column of the jobs; nulls fall back to
      the request), `hmm[:KEY=VALUE,...]` (run-time distributions from a workload HMM trained online;
      docs/hmm.md) or `requested-law` (each job one event at its request: EASY, as distributions);
      correction: what happens when a running job outlives its prediction.
    - backfill_confidence: with `hmm` or `requested-law`, a waiting job EASY would refuse is backfilled
      all the same if the probability that it delays the head of the queue is below this (in (0, 1)).
    - threshold: jobs that waited longer than this many seconds go first, in submit order.
    - compat: `canonical` (at one instant all completions, then all submissions, then one pass) or
      `pyss` (the published SC'15 simulator, job for job); docs/simulator.md has the details.
    - tau: bound of the bounded slowdown, in seconds.
    - drop_wider: leave out the jobs wider than the machine (counted in `warnings`) instead of
      refusing them.
    - warmup, cooldown: leave the jobs submitted in the first / last this many seconds out of the
      summary (they are still simulated, and `jobs` keeps them); `summary_by` uses the same window.
    - record_reservations: add a `reservation` column, each job's first reservation (EASY: when it
      first blocks the head of the queue; conservative: its first slot); null if it never had one.

    - selector: change the queue policy of EASY at every period boundary t0 + k * period (t0: the
      first submission; docs/selection.md): `fixed:P` (P throughout), `full` (replay the jobs of
      each past period under every candidate and run the one whose decayed total wait is least),
      `noisy` (the same, each replayed wait times U[0.85, 1.15]), `egreedy` (with probability
      1 - epsilon the candidate with the least mean wait of the jobs that finished while it ran,
      untried ones first, else one drawn at random) or `egreedy-started` (the same on the jobs that
      started while it ran).  `policy` is then unused; `policies` are the
      candidates (default: all twelve, in `Policy` order, which also breaks ties); `period` is
      seconds, `day` or `week`; `decay` (lambda in [0, 1]) weighs each older period; `seed` drives
      the noise and the draws.  The jobs gain a `policy` column (the one in force at their start)
      and the result a `periods` frame.

    - order: your own queue order as a Python function (docs/your-own-policy.md): `order(queue, now)`
      gets the waiting jobs as numpy columns (job_id, submit_time, req_time, procs, user_id,
      prediction, wait) at every pass that sorts the queue and returns one key per job, smallest
      first (ties by submit time, then job id; NaN or infinite keys last).  The policy is then
      `python`.  What it raises stops the replay and is raised here; so is a wrong number of keys.

    EASY++ is `predictor="ave2", backfill="sjbf", correction="incremental"`; the published E-Loss run
    is `predictor="eloss", backfill="sjbf", correction="requested"`.
    The keywords build a `ReplaySettings` (lakehouse.sim.settings), checked before any job is read;
    `replay(jobs, settings)` takes one directly.  Raises `SimulationInputError` (a ValueError) naming
    the offending job ids; its `kind` (`wider_than_machine`, `machine_size`, ...) says what is wrong.
    """
    if order is not None:
        if str(settings.setdefault("policy", PYTHON)) != PYTHON:
            raise SimulationInputError(
                f"an order function replaces the policy: leave policy out (it is {PYTHON!r} then), "
                f"not {settings['policy']!r}",
                kind="setting",
            )
        if not callable(order):
            raise SimulationInputError(f"order must be a function of (queue, now), got {order!r}", kind="setting")
    return replay(jobs, ReplaySettings.of(machine_size, **settings), order=order)


def refuse_empty_order_columns(extra: list[tuple[str, np.ndarray]], orders: Sequence[object]) -> None:
    """A formula's column without one finite value would make every key non-finite: each job ranked
    last, which is first come, first served in disguise.  Refused before the replay, naming it."""
    for name, values in extra:
        if len(values) and not np.isfinite(values).any():
            formulas = [str(o) for o in orders if isinstance(o, str) and name in order_columns(o)]
            raise SimulationInputError(
                f"{', '.join(formulas)}: column {name} has no value for any of the {len(values):,} jobs (all "
                "missing or not finite), so every key would sort last and the replay would be first come, first "
                "served: choose another column",
                kind=ORDER_KIND,
            )


def replay(
    jobs: pl.DataFrame | pa.Table | Mapping[str, np.ndarray],
    settings: ReplaySettings,
    order: OrderFunction | None = None,
) -> SimulationResult:
    """Replay `jobs` under `settings` (see `simulate` for both)."""
    machine_size = settings.machine_size
    pyss = settings.compat is Compat.pyss
    column = settings.prediction_column
    # Only what the replay reads (and `log`, which names the result's log).
    formula_columns = settings.formula_columns
    if formula_columns:
        try:
            check_order_columns(settings.orders, _numeric_columns(jobs))
        except SettingsError as exc:
            raise SimulationInputError(str(exc), kind=ORDER_KIND) from None
    wanted = input_columns(pyss=pyss, prediction_column=column, formula_columns=formula_columns)
    columns = as_columns(jobs, [*wanted, "log"])
    dropped: list[str] = []
    if settings.drop_wider:
        columns, dropped = _narrower(columns, machine_size)
    workload, columns = workload_from(columns, machine_size, pyss=pyss, prediction_column=column)
    extra = [(name, _as_float(columns, name)) for name in formula_columns]
    refuse_empty_order_columns(extra, settings.orders)
    try:
        with _loading_polars():
            out = _native.simulate(*workload.columns, workload.prediction, settings, order, extra)
    except _native.InputError as exc:
        what, job_ids, count, kind = exc.args
        raise SimulationInputError(what, job_ids, count, kind=kind) from None
    except ValueError as exc:
        raise SimulationInputError(str(exc), kind="setting") from None
    import polars as pl  # loaded while the engine runs (engine._loading_polars), not at import

    from lakehouse.sim.metrics import measured, per_job_columns, summary  # Polars, as above

    result = pl.DataFrame(
        {
            "job_id": workload.id,
            "submit_time": workload.submit,
            "start_time": out.start,
            "end_time": out.end,
            "procs": workload.procs,
            "req_time": workload.requested,
            "user_id": workload.user,
            "backfilled": out.backfilled,
            "corrections": out.corrections,
            "initial_prediction": out.initial_prediction,
        }
    ).with_columns(per_job_columns(settings.tau))
    if settings.record_reservations:
        reservation = pl.Series("reservation", out.reservation).replace(-1, None)
        result = result.with_columns(reservation)
    periods = None
    if (selection := settings.selection) is not None:
        candidates = pl.Series([str(p) for p in selection.policies])
        result = result.with_columns(candidates.gather(out.policy).alias("policy"))
        first, step = int(workload.submit[0]), selection.period
        periods = pl.DataFrame(
            {
                "period": range(len(out.periods)),
                "start": [first + k * step for k in range(len(out.periods))],
                "policy": candidates.gather(out.periods),
            }
        )
    elif settings.fixed_selector:
        result = result.with_columns(pl.lit(str(settings.policy)).alias("policy"))
    notes = dropped + workload.warnings
    if settings.uses_formulas:
        result = result.with_columns(pl.Series("key_not_finite", out.key_not_finite))
        if (not_finite := int(out.key_not_finite.sum())) > 0:
            notes.append(
                f"{not_finite:,} jobs had a queue key that is not a finite number at some pass (NaN or "
                "infinite: a division by zero, a log of 0, ...); they went last in the queue then "
                "(column key_not_finite)"
            )
    counted = measured(result, settings.warmup, settings.cooldown)
    return SimulationResult(result, summary(counted, machine_size), settings, columns.only("log"), periods, notes)


def _numeric_columns(jobs: object) -> list[str]:
    """The names of the numeric columns of the jobs (a frame, an Arrow table or a dict of arrays)."""
    if isinstance(jobs, Mapping):
        return [name for name, values in jobs.items() if np.asarray(values).dtype.kind in "iufb"]
    schema = getattr(jobs, "schema", None)
    if schema is not None and hasattr(schema, "items"):  # Polars
        return [name for name, dtype in schema.items() if dtype.is_numeric()]
    if schema is not None:  # Arrow
        import pyarrow as pa

        return [f.name for f in schema if pa.types.is_integer(f.type) or pa.types.is_floating(f.type)]
    return []


def _as_float(columns: Columns, name: str) -> np.ndarray:
    """A formula's column as contiguous float64, a missing value as NaN (its key then goes last)."""
    values = np.ma.asarray(columns.arrays[name]).astype(np.float64)
    return np.ascontiguousarray(np.ma.filled(values, np.nan))


def _narrower(columns: Columns, machine_size: int) -> tuple[Columns, list[str]]:
    """The jobs that fit on the machine, and a line counting the others (none if every job fits)."""
    if "procs" not in columns:
        return columns, []  # workload_from names the missing column
    wide = ~columns.null("procs") & (columns.values("procs") > machine_size)
    if not wide.any():
        return columns, []
    first = int(np.argmax(wide))
    job = np.ma.asarray(columns.arrays["job_id"])[first : first + 1].tolist()[0] if "job_id" in columns else None
    line = (
        f"dropped {int(wide.sum()):,} jobs wider than the machine ({machine_size:,} processors), e.g. job "
        f"{job} with {columns.values('procs')[first]:,}"
    )
    return columns.take(~wide), [line]


@contextmanager
def _loading_polars() -> Iterator[None]:
    """Import Polars on another thread while the block runs: the engine runs without the GIL, and
    Polars, which only the result needs, takes ~70 ms to import, a sixth of a whole `lakehouse
    simulate` from the command line (which loads the jobs without it).  Already imported (any
    other caller): nothing to do."""
    if "polars" in sys.modules:
        yield
        return
    loader = threading.Thread(target=importlib.import_module, args=("polars",), name="import polars", daemon=True)
    loader.start()
    try:
        yield
    finally:
        loader.join()
