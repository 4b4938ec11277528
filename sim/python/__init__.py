"""The backfilling simulator: `simulate(jobs, machine_size, ...)` over frames queried from the lake.

The event loop is compiled (`lakehouse._native.simulate`, Rust); this package prepares its input
columns, names its choices and computes the metrics.
"""

from lakehouse.sim.engine import SimulationResult, simulate
from lakehouse.sim.options import Algorithm, Backfill, Compat, Correction, Policy

__all__ = ["Algorithm", "Backfill", "Compat", "Correction", "Policy", "SimulationResult", "simulate"]
