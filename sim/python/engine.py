"""`simulate`: replay a workload from the lake with the compiled backfilling engine."""

from __future__ import annotations

import importlib
import math
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from lakehouse import _native
from lakehouse.errors import SettingsError, SimulationInputError

# The settings' kinds, as grid.py imports them too: both take settings as text and check them here.
from lakehouse.sim.options import (
    BACKFILL_CONFIDENCE,
    DEFAULT_TAU,
    DISTRIBUTION_PREDICTORS,
    WEEK,
    Algorithm,
    Backfill,
    Compat,
    Correction,
    JobClass,
    Policy,
    choose,
    parse_period,
    parse_predictor,
    parse_selector,
    window_problem,
)
from lakehouse.sim.workload import Columns, as_columns, input_columns, workload_from

if TYPE_CHECKING:
    # Polars (the result and its metrics) is imported while the engine runs: see `_loading_polars`.
    import polars as pl
    import pyarrow as pa

#: The engine counts processors in 32 bits (it compares a block of queued jobs per instruction).
MAX_MACHINE_SIZE = _native.SWF_MAX_PROCS  # processors are counted in 32 bits
MAX_THRESHOLD = _native.SWF_MAX_SECONDS  # as long as any time the lake stores


def threshold_problem(threshold: int | None) -> str | None:
    """What is wrong with a starvation threshold, if anything (None means no threshold)."""
    if threshold is not None and not 0 <= threshold <= MAX_THRESHOLD:
        return f"threshold must be from 0 to {MAX_THRESHOLD:,} seconds, got {threshold}"
    return None


@dataclass(frozen=True)
class SimulationResult:
    """`jobs`: one row per job (input order); `summary`: headline metrics; `settings`: what ran;
    `periods`: with a selector, the policy chosen for each period (period, start, policy)."""

    jobs: pl.DataFrame
    summary: dict[str, float | int | None]
    settings: dict[str, object] = field(default_factory=dict)
    periods: pl.DataFrame | None = None
    warnings: list[str] = field(default_factory=list)  # what was repaired in the input (e.g. missing predictions)

    def summary_frame(self, **labels: object) -> pl.DataFrame:
        import polars as pl

        return pl.DataFrame([{**labels, **self.summary}])

    def summary_by(self, by: JobClass | str) -> pl.DataFrame:
        """The summary per job class: `size` (1 processor, <= 10 %, <= 50 %, > 50 % of the machine),
        `length` (run < 1 min, < 1 h, < 10 h, >= 10 h) or `user`; within the same warm-up and
        cool-down as `summary`."""
        from lakehouse.sim.metrics import measured, summary_by

        chosen = choose(JobClass, by)
        window = measured(self.jobs, float(self.settings.get("warmup", 0)), float(self.settings.get("cooldown", 0)))
        return summary_by(window, int(self.settings["machine_size"]), chosen)  # type: ignore[call-overload]

    def plot(
        self,
        output: str | Path | None = None,
        *,
        folder: str | Path | None = None,
        t_from: float | None = None,
        t_to: float | None = None,
        vs: SimulationResult | None = None,
        svg: bool = False,
    ) -> list[Path]:
        """Draw the replay (utilization, queue, a Gantt chart of [t_from, t_to) in seconds, one day
        from the first start by default, and waits per job size) into `output` (one image) or one
        file per figure in `folder`; `vs`: a second replay drawn beside this one."""
        from lakehouse.sim.schedule_io import schedule_frame
        from lakehouse.sim.schedule_plots import draw, write

        figures = draw(
            schedule_frame(self),
            int(self.settings["machine_size"]),  # type: ignore[call-overload]
            t_from=t_from,
            t_to=t_to,
            vs=None if vs is None else schedule_frame(vs),
        )
        return write(figures, None if output is None else Path(output), None if folder is None else Path(folder),
                     svg, "schedule")  # fmt: skip

    def policy_shares(self) -> pl.DataFrame:
        """Share of the periods each candidate policy ran (every candidate listed, in order)."""
        import polars as pl

        if self.periods is None:
            raise SettingsError("this replay ran one policy throughout (no selector)")
        candidates = [str(p) for p in self.settings["policies"]]  # type: ignore[attr-defined]
        counts = dict(self.periods.group_by("policy").len().iter_rows())
        total = self.periods.height
        return pl.DataFrame(
            {
                "policy": candidates,
                "periods": [counts.get(p, 0) for p in candidates],
                "share": [counts.get(p, 0) / total for p in candidates],
            }
        )


def simulate(
    jobs: pl.DataFrame | pa.Table | Mapping[str, np.ndarray],
    machine_size: int,
    *,
    algorithm: Algorithm | str = Algorithm.easy,
    policy: Policy | str = Policy.fcfs,
    backfill: Backfill | str = Backfill.queue,
    predictor: str = "requested",
    correction: Correction | str = Correction.requested,
    threshold: int | None = None,
    compat: Compat | str = Compat.canonical,
    tau: float = DEFAULT_TAU,
    record_reservations: bool = False,
    selector: str | None = None,
    policies: Sequence[Policy | str] | None = None,
    period: int | str = WEEK,
    decay: float = 1.0,
    epsilon: float = 0.3,
    seed: int = 0,
    backfill_confidence: float = BACKFILL_CONFIDENCE,
    warmup: float = 0,
    cooldown: float = 0,
    drop_wider: bool = False,
) -> SimulationResult:
    """Replay `jobs` (e.g. `lake.query("select * from swf.jobs_strong where log = '…'")`).

    The jobs (a Polars frame, an Arrow table or a dict of numpy columns, masked where missing) need
    the columns job_id, submit_time, run_time, req_time, procs and user_id, sorted by submit time.
    A job runs min(run_time, req_time) seconds (it is killed at its request).

    - algorithm: `easy` (one reservation) or `conservative` (every waiting job holds one).
    - policy: primary queue order (see `Policy`); backfill: `queue` order or `sjbf`.
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
      `noisy` (the same, each replayed wait times U[0.85, 1.15]) or `egreedy` (with probability
      1 - epsilon the candidate with the least mean wait of the jobs that finished while it ran,
      untried ones first, else one drawn at random).  `policy` is then unused; `policies` are the
      candidates (default: all twelve, in `Policy` order, which also breaks ties); `period` is
      seconds, `day` or `week`; `decay` (lambda in [0, 1]) weighs each older period; `seed` drives
      the noise and the draws.  The jobs gain a `policy` column (the one in force at their start)
      and the result a `periods` frame.

    EASY++ is `predictor="ave2", backfill="sjbf", correction="incremental"`; the published E-Loss run
    is `predictor="eloss", backfill="sjbf", correction="requested"`.
    Raises `SimulationInputError` (a ValueError) naming the offending job ids.
    """
    try:
        settings = {
            "algorithm": choose(Algorithm, algorithm),
            "policy": choose(Policy, policy),
            "backfill": choose(Backfill, backfill),
            "predictor": predictor,
            "correction": choose(Correction, correction),
            "threshold": threshold,
            "compat": choose(Compat, compat),
        }
        engine_predictor, column = parse_predictor(predictor)
        settings.update(_selection(selector, policies, period, decay, epsilon, seed))
        settings.update(_confidence(engine_predictor, backfill_confidence))
    except ValueError as exc:
        raise SimulationInputError(str(exc)) from None
    if not (isinstance(tau, int | float) and math.isfinite(tau) and tau > 0):
        raise SimulationInputError(f"tau must be a positive finite number of seconds, got {tau!r}")
    if problem := threshold_problem(threshold):
        raise SimulationInputError(problem)
    for name, seconds in (("warmup", warmup), ("cooldown", cooldown)):
        if problem := window_problem(name, seconds):
            raise SimulationInputError(problem)
        if seconds:
            settings[name] = seconds
    if machine_size is None or machine_size <= 0:
        raise SimulationInputError(f"machine size must be positive, got {machine_size}")
    if machine_size > MAX_MACHINE_SIZE:
        raise SimulationInputError(f"machine size {machine_size} is beyond the engine's {MAX_MACHINE_SIZE:,}")
    pyss = settings["compat"] is Compat.pyss
    # Only what the replay reads (and `log`, which names the result's log).
    columns = as_columns(jobs, [*input_columns(pyss=pyss, prediction_column=column), "log"])
    dropped: list[str] = []
    if drop_wider:
        columns, dropped = _narrower(columns, machine_size)
    workload, columns = workload_from(columns, machine_size, pyss=pyss, prediction_column=column)
    try:
        with _loading_polars():
            out = _native.simulate(
                *workload.columns,
                workload.prediction,
                machine_size=int(machine_size),
                algorithm=str(settings["algorithm"]),
                policy=str(settings["policy"]),
                backfill=str(settings["backfill"]),
                predictor=engine_predictor,
                correction=str(settings["correction"]),
                threshold=threshold,
                compat=str(settings["compat"]),
                record_reservations=record_reservations,
                backfill_confidence=float(settings.get("backfill_confidence", BACKFILL_CONFIDENCE)),
                **_engine_selection(settings),
            )
    except _native.InputError as exc:
        raise SimulationInputError(*exc.args) from None
    except ValueError as exc:
        raise SimulationInputError(str(exc)) from None
    import polars as pl

    from lakehouse.sim.metrics import measured, per_job_columns, summary

    result = pl.DataFrame(
        {
            "job_id": workload.id,
            "submit": workload.submit,
            "start": out.start,
            "end": out.end,
            "procs": workload.procs,
            "requested": workload.requested,
            "user_id": workload.user,
            "backfilled": out.backfilled,
            "corrections": out.corrections,
            "initial_prediction": out.initial_prediction,
        }
    ).with_columns(per_job_columns(tau))
    if record_reservations:
        reservation = pl.Series("reservation", out.reservation).replace(-1, None)
        result = result.with_columns(reservation)
    periods = None
    if "policies" in settings:
        candidates = pl.Series([str(p) for p in settings["policies"]])  # type: ignore[attr-defined]
        result = result.with_columns(candidates.gather(out.policy).alias("policy"))
        first, step = int(workload.submit[0]), int(settings["period"])  # type: ignore[call-overload]
        periods = pl.DataFrame(
            {
                "period": range(len(out.periods)),
                "start": [first + k * step for k in range(len(out.periods))],
                "policy": candidates.gather(out.periods),
            }
        )
    elif selector is not None:
        result = result.with_columns(pl.lit(str(settings["policy"])).alias("policy"))
    if (log := columns.only("log")) is not None:
        settings["log"] = log
    counted = measured(result, warmup, cooldown)
    return SimulationResult(
        result,
        summary(counted, machine_size),
        {**settings, "machine_size": machine_size},
        periods,
        dropped + workload.warnings,
    )


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


def _confidence(predictor: str, confidence: float) -> dict[str, object]:
    """The confidence setting of a distribution predictor (none for the others, whose schedules it
    does not change); SettingsError unless it is in (0, 1)."""
    if not (isinstance(confidence, int | float) and 0 < confidence < 1):
        raise SettingsError(f"the backfill confidence must be a number in (0, 1), got {confidence!r}")
    if predictor.split(":")[0] in DISTRIBUTION_PREDICTORS:
        return {"backfill_confidence": float(confidence)}
    return {}


def _selection(
    selector: str | None,
    policies: Sequence[Policy | str] | None,
    period: int | str,
    decay: float,
    epsilon: float,
    seed: int,
) -> dict[str, object]:
    """The settings a selector adds (`fixed:P` sets the policy); ValueError naming what is wrong.
    The engine checks the ranges (one place for them)."""
    if selector is None:
        return {}
    chosen, fixed = parse_selector(selector)
    if not 0 <= seed < 2**64:
        raise SettingsError(f"seed must be from 0 to 2^64 - 1, got {seed}")
    if fixed is not None:
        return {"policy": fixed, "selector": selector}
    candidates = list(Policy) if policies is None else [choose(Policy, str(p)) for p in policies]
    settings: dict[str, object] = {
        "selector": str(chosen),
        "policies": candidates,
        "period": parse_period(period),
        "decay": float(decay),
        "seed": int(seed),
    }
    if chosen == "egreedy":
        settings["epsilon"] = float(epsilon)
    return settings


def _engine_selection(settings: dict[str, object]) -> dict[str, object]:
    """The engine's keyword arguments for the selector in `settings` (none for a fixed policy)."""
    if "policies" not in settings:
        return {}
    return {
        "selector": settings["selector"],
        "policies": [str(p) for p in settings["policies"]],  # type: ignore[attr-defined]
        "period": settings["period"],
        "decay": settings["decay"],
        "epsilon": settings.get("epsilon", 0.3),
        "seed": settings["seed"],
    }
