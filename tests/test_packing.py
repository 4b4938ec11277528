"""Packing periodic demands: feasibility on a time grid, the lower bound, hand-made phases, bad input."""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import polars as pl
import pytest

from lakehouse.models.packing.model import (
    PackingInputError,
    bfd,
    by_peak,
    check_jobs,
    expand,
    ffd,
    lower_bound,
    mm,
    pack_all,
    peak_loads,
    smallest_mm,
)

from conftest import cli as run
from conftest import unboxed

CAPACITY = 20.0


def random_jobs(rng, n, big=True, large_amplitude=True, tasks=1):
    c = rng.uniform(0, 10 if big else 1, n)
    rho = rng.uniform(0, 1 if large_amplitude else 0.5, n) * c
    return pl.DataFrame(
        {"job": np.arange(n), "tasks": np.full(n, tasks), "c": c, "rho": rho, "phi": rng.uniform(0, 2 * np.pi, n)}
    )


def grid_peaks(tasks, where, points=720):
    """Largest load of each machine over a dense grid of one period: sum of C + rho sin(wt + phi)."""
    angle = np.linspace(0, 2 * np.pi, points, endpoint=False)
    rho = np.hypot(tasks.dx, tasks.dy)
    phi = np.arctan2(tasks.dy, tasks.dx)
    load = tasks.c[:, None] + rho[:, None] * np.sin(angle[None, :] + phi[:, None])
    machines = int(where.max()) + 1
    per_machine = np.zeros((machines, points))
    np.add.at(per_machine, where, load)
    return per_machine.max(axis=1)


@pytest.mark.parametrize("seed", range(6))
def test_every_heuristic_respects_capacity_at_every_sampled_instant(seed):
    rng = np.random.default_rng(seed)
    jobs = random_jobs(rng, 60, big=seed % 2 == 0, large_amplitude=seed % 3 != 0, tasks=1 + seed % 3)
    tasks = expand(check_jobs(jobs, CAPACITY))
    bound = lower_bound(jobs, CAPACITY)
    packings = {"FFD": ffd(tasks, CAPACITY), "BFD": bfd(tasks, CAPACITY)}
    packings["MM"] = smallest_mm(tasks, CAPACITY, math.ceil(bound))[1]
    peaks = by_peak(tasks)
    packings["MMM"] = smallest_mm(peaks, CAPACITY, math.ceil(bound))[1]
    for name, where in packings.items():
        assert grid_peaks(tasks, where).max() <= CAPACITY + 1e-9, name
        assert peak_loads(tasks, where).max() <= CAPACITY + 1e-9, name
        assert int(where.max()) + 1 >= bound - 1e-9, name


def test_antagonistic_phases_let_two_peak_15_tasks_share_a_machine():
    # C = 10, rho = 5: each peaks at 15.  In opposite phase the sum is 20 + |5 - 5| = 20 <= 20.
    opposite = pl.DataFrame(
        {"job": [1, 2], "tasks": [1, 1], "c": [10.0, 10.0], "rho": [5.0, 5.0], "phi": [0.0, math.pi]}
    )
    tasks = expand(check_jobs(opposite, CAPACITY))
    assert int(ffd(tasks, CAPACITY).max()) + 1 == 1
    assert mm(tasks, CAPACITY, 1) is not None
    # In phase, 20 + 10 = 30 > 20: two machines; packing by peak (15 + 15) also needs two.
    same = opposite.with_columns(phi=pl.lit(0.0))
    assert int(ffd(expand(check_jobs(same, CAPACITY)), CAPACITY).max()) + 1 == 2
    table = pack_all(opposite, CAPACITY)
    assert dict(table.select("heuristic", "machines").rows()) == {"FFD": 1, "BFD": 1, "MM": 1, "MMM": 2}
    assert lower_bound(opposite, CAPACITY) == pytest.approx(1.0)


@pytest.mark.parametrize("seed", range(4))
def test_lower_bound_equals_the_continuous_relaxation(seed):
    # The relaxation of the exact model (X continuous, 0 <= Y <= 1) solved by cvxpy equals the closed form.
    rng = np.random.default_rng(100 + seed)
    jobs = random_jobs(rng, 6, tasks=3)
    n, c, rho, phi = (jobs[k].to_numpy().astype(float) for k in ("tasks", "c", "rho", "phi"))
    machines = math.ceil(lower_bound(jobs, CAPACITY)) + 2
    x = cp.Variable((len(n), machines), nonneg=True)
    y = cp.Variable(machines)
    constraints = [cp.sum(x, axis=1) == n, y <= 1, y >= 0]
    for k in range(machines):
        phasor = cp.hstack([x[:, k] @ (rho * np.cos(phi)), x[:, k] @ (rho * np.sin(phi))])
        constraints.append(cp.norm(phasor, 2) <= CAPACITY * y[k] - x[:, k] @ c)
    problem = cp.Problem(cp.Minimize(cp.sum(y)), constraints)
    problem.solve()
    assert problem.status == cp.OPTIMAL
    assert problem.value == pytest.approx(lower_bound(jobs, CAPACITY), rel=1e-5)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"c": [-1.0, 2.0]}, "negative demands: job 1"),
        ({"rho": [float("nan"), 1.0]}, "missing or NaN demands: job 1"),
        ({"rho": [3.0, 1.0]}, "amplitude above the level"),
        ({"c": [15.0, 2.0], "rho": [6.0, 1.0]}, "peaks above the machine capacity 20.0: job 1"),
        ({"tasks": [0, 1]}, "at least one task: job 1"),
    ],
)
def test_bad_demands_name_the_jobs(change, message):
    jobs = pl.DataFrame({"job": [1, 2], "tasks": [1, 1], "c": [2.0, 2.0], "rho": [1.0, 1.0], "phi": [0.0, 1.0]})
    with pytest.raises(PackingInputError, match=message):
        check_jobs(jobs.with_columns(**{k: pl.Series(v) for k, v in change.items()}), CAPACITY)


def test_clip_offers_a_way_out_for_amplitudes_above_the_level():
    jobs = pl.DataFrame({"job": [1], "tasks": [2], "c": [2.0], "rho": [3.0], "phi": [0.0]})
    assert check_jobs(jobs, CAPACITY, clip=True)["rho"].to_list() == [2.0]


@pytest.mark.parametrize("seed", range(5))
def test_the_exact_optimum_lies_between_the_bound_and_every_heuristic(seed):
    from lakehouse.models.packing.model import exact

    rng = np.random.default_rng(200 + seed)
    jobs = random_jobs(rng, 5, big=True, tasks=2)
    result = exact(jobs, CAPACITY, time_limit=30)
    assert result.optimal, result.solver_statuses
    table = dict(pack_all(jobs, CAPACITY).select("heuristic", "machines").rows())
    assert lower_bound(jobs, CAPACITY) - 1e-9 <= result.machines <= min(table.values())
    tasks = expand(check_jobs(jobs, CAPACITY))
    assert grid_peaks(tasks, result.where).max() <= CAPACITY + 1e-6


def test_mm_reports_its_own_machines_even_where_first_fit_needs_fewer():
    """The paper: "In the case of Big Tasks, it happens that FFD outperforms MM".  On big tasks of large
    amplitude MM fails at every count up to FFD's; its answer is then a larger count of its own, with
    its own packing (not FFD's, as a fallback would give), and every smaller count fails."""
    jobs = check_jobs(random_jobs(np.random.default_rng(3), 1000), CAPACITY)
    tasks = expand(jobs, "c")
    first_fit = int(ffd(tasks, CAPACITY).max()) + 1
    machines, where = smallest_mm(tasks, CAPACITY, math.ceil(lower_bound(jobs, CAPACITY)))
    assert machines > first_fit
    assert np.array_equal(where, mm(tasks, CAPACITY, machines))
    assert all(mm(tasks, CAPACITY, m) is None for m in range(first_fit - 3, machines))
    assert dict(pack_all(jobs, CAPACITY).select("heuristic", "machines").rows())["MM"] == machines


def test_pack_without_periodic_jobs_says_what_to_run(tmp_path):
    run("init", "--lake", tmp_path / "l")
    result = run("pack", "--lake", tmp_path / "l", code=1)
    assert result.stdout == ""
    assert "no periodic job to pack: analysis.job_sinusoids is empty (run `lakehouse report periodicity`" in unboxed(
        result.stderr
    )
