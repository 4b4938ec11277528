"""The backfilling simulator: `simulate(jobs, machine_size, ...)` (or `replay(jobs, ReplaySettings(...))`)
over frames queried from the lake, and `simulate_log(lake, "KTH", ...)` for a log of the lake by name.

The event loop is compiled (`lakehouse._native.simulate`, Rust); this package prepares its input
columns, names its choices and computes the metrics.
"""

from lakehouse.sim.engine import replay, simulate
from lakehouse.sim.from_lake import simulate_log
from lakehouse.sim.options import Algorithm, Backfill, Compat, Correction, Policy
from lakehouse.sim.result import SimulationResult
from lakehouse.sim.settings import ReplaySettings, Selection

__all__ = [
    "Algorithm",
    "Backfill",
    "Compat",
    "Correction",
    "Policy",
    "ReplaySettings",
    "Selection",
    "SimulationResult",
    "replay",
    "simulate",
    "simulate_log",
]
