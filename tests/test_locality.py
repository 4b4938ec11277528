"""Runtime locality: hand-computed cells, an independent mutual information, planted
ground truths, the published best cells on real logs, and the command."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from lakehouse.base.lake import Lake
from lakehouse.cli import app
from lakehouse.ingest.swf import ingest_swf
from lakehouse.models.locality import model as locality

from conftest import SWF_DIR, examples, shared_or_skip


def plug_in_mi(s, r) -> float:
    """I(S; R) in bits from the definition, with dictionaries (independent of the module's sorting)."""
    n = len(s)
    joint, ps, pr = Counter(zip(s, r, strict=True)), Counter(s), Counter(r)
    return sum(c / n * math.log2(c * n / (ps[a] * pr[b])) for (a, b), c in joint.items())


def test_four_jobs_enumerating_every_permutation_give_minus_a_third():
    # (s0, r0), (s0, r1), (s1, r0), (s1, r1): I = 0.  Of the 24 orders of R, 8 put both r0 (or both r1)
    # with s0, where I = 1 bit; the other 16 give 0.  Expected shuffled I = 8/24 = 1/3 bit.
    s, r = [0, 0, 1, 1], [0, 1, 0, 1]
    perms = np.array(list(itertools.permutations(range(4))))
    cell = locality.cell(s, r, perms)
    assert cell.mi == pytest.approx(0.0, abs=1e-12)
    assert cell.shuffled_mi == pytest.approx(1 / 3, abs=1e-12)
    assert cell.locality == pytest.approx(-1 / 3, abs=1e-12)


def test_a_run_time_that_follows_the_submit_bin_carries_its_whole_entropy():
    # Two bins, each with its own run time: I = H(R) = 1 bit.
    cell = locality.cell([0, 0, 1, 1], [5, 5, 7, 7], np.empty((0, 4), dtype=int))
    assert cell.mi == pytest.approx(1.0) and cell.shuffled_mi == 0.0


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 6), st.integers(0, 4)), min_size=1, max_size=60),
    st.integers(0, 2**32 - 1),
)
def test_mutual_information_equals_the_definition(pairs, seed):
    s, r = zip(*pairs, strict=True)
    perms = locality.permutations(len(s), 3, seed)
    cell = locality.cell(np.array(s), np.array(r), perms)
    assert cell.mi == pytest.approx(plug_in_mi(s, r), abs=1e-9)
    shuffled = [plug_in_mi(s, [r[i] for i in p]) for p in perms]
    assert cell.shuffled_mi == pytest.approx(float(np.mean(shuffled)), abs=1e-9)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 30), st.integers(2, 12))
def test_run_times_independent_of_submit_bins_have_no_locality(seed, submit_bins, runtime_bins):
    # The plug-in I of independent variables is biased upwards by about (|S|-1)(|R|-1) / (2 n ln 2)
    # (up to 0.06 bit here); the shuffles carry the same bias, so f stays near zero.
    rng = np.random.default_rng(seed)
    n = 3000
    s, r = rng.integers(0, submit_bins, n), rng.integers(0, runtime_bins, n)
    cell = locality.cell(s, r, locality.permutations(n, 10, seed))
    assert cell.mi > 0
    assert abs(cell.locality) < 0.03


def test_planted_runtime_per_hour_is_recovered_by_the_grid():
    # Each hour of a synthetic log runs one of 8 run-time classes (a factor 4 apart, so distinct bins for
    # every t_r of the grid below 4): I(S; R) = H(R) (about 3 bits) at t_s = 1 h, and f close to it: the
    # shuffles' bias, about (400 - 1)(8 - 1) / (2 n ln 2) = 0.05 bit with 100 jobs an hour, is all it loses.
    rng = np.random.default_rng(7)
    hours, per = 400, 100
    per_hour = rng.integers(0, 8, hours)
    submit = np.repeat(np.arange(hours) * 3600, per) + np.tile(np.arange(per) * 36, hours)
    run_time = 4.0 ** (1 + np.repeat(per_hour, per))
    jobs = pl.DataFrame({"submit_time": submit, "run_time": run_time, "user_id": np.ones(submit.size, dtype=int)})
    frame = locality.grid(jobs, "planted", locality.LocalitySettings(submit_bins=[600, 3600, 86400], variants=["time"]))
    hourly = frame.filter(t_s=3600.0)
    h_r = -sum(c / hours * math.log2(c / hours) for c in Counter(per_hour).values())
    assert hourly["mi"].to_list() == pytest.approx([h_r] * hourly.height, abs=1e-9)
    assert (hourly["locality"] > h_r - 0.1).all()
    # 10-minute bins lose nothing (an hour's jobs share their bin's run time); a day mixes 24 classes.
    best = frame.filter("best")
    assert best["t_s"][0] in (600.0, 3600.0)
    assert frame.filter(t_s=86400.0)["locality"].max() < h_r - 0.5


@pytest.mark.parametrize(
    ("runtime", "ratio", "expected"),
    [(0, 2.0, 0), (1, 2.0, 0), (1.4, 1.1, 0), (2, 2.0, 1), (3, 2.0, 1), (8, 2.0, 3), (1000, 10.0, 3), (1.3**7, 1.3, 7)],
)
def test_runtime_bins_by_hand(runtime, ratio, expected):
    assert locality.runtime_bins(np.array([runtime]), ratio)[0] == expected


@pytest.mark.parametrize(
    "settings_kwargs",
    [{"submit_bins": [0]}, {"submit_bins": [-60]}, {"runtime_ratios": [1.0]}, {"runtime_ratios": [float("nan")]}],
)
def test_bins_the_metric_cannot_use_are_refused(settings_kwargs):
    with pytest.raises(locality.LocalityError):
        locality.LocalitySettings(**settings_kwargs)


# -- real logs: the published best cells (Nissimov and Feitelson) -----------------------------------------


@pytest.fixture(scope="module")
def published_lake(tmp_path_factory: pytest.TempPathFactory) -> Lake:
    lake = Lake(tmp_path_factory.mktemp("locality") / "lake")
    names = ["SDSC-Par-1996-3.1-cln", "LANL-CM5-1994-4.1-cln", "SDSC-SP2-1998-4.2-cln", "CTC-SP2-1996-3.1-cln"]
    ingest_swf(lake, [str(shared_or_skip(SWF_DIR / f"{name}.swf.gz")) for name in names])
    return lake


@pytest.mark.parametrize(
    ("log", "t_s", "t_r", "published"),
    [
        ("SDSC-Par-1996-3.1-cln", 6 * 3600, 1.49, 0.85),
        ("LANL-CM5-1994-4.1-cln", 6 * 3600, 1.2, 0.45),
        ("SDSC-SP2-1998-4.2-cln", 2 * 3600, 1.3, 0.875),
        ("CTC-SP2-1996-3.1-cln", 3600, 1.3, 0.75),
    ],
)
def test_the_best_cell_is_the_published_one(published_lake, log, t_s, t_r, published):
    _, frame = locality.measure(published_lake, log, locality.LocalitySettings(variants=[locality.Variant.time]))
    best = frame.filter("best").row(0, named=True)
    assert (best["t_s"], best["t_r"]) == (t_s, t_r)
    assert best["locality"] == pytest.approx(published, abs=0.07)


def test_the_user_variant_of_sdsc_sp2_matches_the_published_figure(published_lake):
    settings_ = locality.LocalitySettings(runtime_ratios=[1.057], variants=[locality.Variant.user])
    _, frame = locality.measure(published_lake, "SDSC-SP2-1998-4.2-cln", settings_)
    assert frame["locality"][0] == pytest.approx(1.27, abs=0.03)


# -- the command ---------------------------------------------------------------------------------------------


def test_report_stores_the_grid_draws_it_and_counts_what_it_left_out(published_lake, tmp_path: Path):
    run = CliRunner().invoke(
        app,
        ["report", "locality", "SDSC-Par", "--lake", str(published_lake.root), "--plots", str(tmp_path), "-f", "csv"],
    )
    assert run.exit_code == 0, run.output
    assert "32,135 of 32,135 jobs used" in run.stderr
    grid = pl.read_csv(run.stdout.encode())
    assert grid.height == 12 * 9 + 9 + 12 * 9 and set(grid["variant"]) == {"time", "user", "time+user"}
    stored = published_lake.query("SELECT * FROM analysis.locality WHERE log = 'SDSC-Par-1996-3.1-cln'")
    assert stored.height == grid.height and stored.filter("best").height == 3
    assert [p.name for p in tmp_path.glob("*.png")] == ["locality-SDSC-Par-1996-3.1-cln.png"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--runtime-ratios", "1"], "above 1"),
        (["--runtime-ratios", "fast"], "numbers above 1"),
        (["--submit-bins", "0"], "positive number of seconds"),
        (["--submit-bins", "2 fortnights"], "is not a duration"),
        (["--variant", "users"], "time, user, time+user"),
    ],
)
def test_bad_options_get_one_clear_line(published_lake, options, message):
    run = CliRunner().invoke(app, ["report", "locality", "LANL", "--lake", str(published_lake.root), *options])
    assert run.exit_code in (1, 2) and message in run.output
    assert "Traceback" not in run.output


def test_a_log_without_run_times_is_a_clear_error(no_runtime_lake):
    lake = no_runtime_lake
    run = CliRunner().invoke(app, ["report", "locality", "norun", "--lake", str(lake.root)])
    assert run.exit_code == 1 and "no job has a known submit time, run time and processor count" in run.output


def test_a_second_run_replaces_only_the_cells_it_computed(no_runtime_lake, tmp_path):
    """`report locality --variant user` after a full run keeps the time cells; a cell computed again
    replaces its earlier value, and `best` is marked over everything stored."""
    from lakehouse.models.locality.model import LocalitySettings, Variant, grid, write_locality

    rng = np.random.default_rng(3)
    jobs = pl.DataFrame(
        {"submit_time": np.sort(rng.integers(0, 30 * 86_400, 400)), "run_time": rng.integers(1, 50_000, 400),
         "user_id": rng.integers(1, 9, 400)}
    )  # fmt: skip
    lake = no_runtime_lake
    full = grid(jobs, "x", LocalitySettings(submit_bins=[3600, 86_400], runtime_ratios=[1.5, 2.0]))
    with lake.writer():  # as Report.run stores
        write_locality(lake, "x", full)
    user = grid(jobs, "x", LocalitySettings(variants=[Variant.user], runtime_ratios=[2.0, 3.0], shuffles=5))
    with lake.writer():
        write_locality(lake, "x", user)
    stored = lake.query("SELECT * FROM analysis.locality WHERE log = 'x'")
    cells = {(v, t_s, t_r) for v, t_s, t_r in stored.select("variant", "t_s", "t_r").rows()}
    assert cells == {(v, t_s, t_r) for v, t_s, t_r in full.select("variant", "t_s", "t_r").rows()} | {
        ("user", None, 3.0)
    }
    again = stored.filter(variant="user", t_r=2.0)
    assert again["shuffles"].item() == 5  # recomputed: the new value
    assert stored.filter("best").group_by("variant").len().height == 3  # one best per variant at least
    best_user = stored.filter(variant="user").sort("locality", descending=True)["best"].to_list()
    assert best_user[0] and not any(best_user[1:])


def test_kmeans_bins_find_the_planted_groups_in_order_of_run_time():
    from lakehouse.models.locality.model import kmeans_runtime_bins

    # Three groups of run times a decade or more apart, shuffled: the bins are the groups, numbered by
    # increasing run time; below 1.5 s counts as 1 s.
    runtime = np.array([3600, 10, 100_000, 12, 3500, 0, 90_000, 11, 3700])
    assert kmeans_runtime_bins(runtime, 3).tolist() == [1, 0, 2, 0, 1, 0, 2, 0, 1]
    # As many bins as distinct values: each value its own bin.
    assert kmeans_runtime_bins(np.array([5, 5, 60, 7]), 4).tolist() == [0, 0, 2, 1]


def kmeans_job_by_job(runtime: np.ndarray, n: int) -> list[int]:
    """The thesis' k-means as its Algorithm 2 reads, one job at a time (slow, plain): the reference the
    model's version, which works on cuts of the sorted run times, must agree with."""
    logs = [math.log(max(float(t), 1.0)) if t >= 1.5 else 0.0 for t in runtime]
    distinct = sorted(set(logs))
    if len(distinct) <= n:
        return [distinct.index(x) for x in logs]
    ordered = sorted(logs)
    gaps = [b - a for a, b in itertools.pairwise(ordered)]
    widest = sorted(gaps, reverse=True)[n - 2] if n >= 2 else math.inf
    bounds = [b for b, gap in zip(ordered[1:], gaps, strict=True) if gap >= widest]
    labels = [sum(bound <= x for bound in bounds) for x in logs]
    while True:
        members: dict[int, list[float]] = {}
        for label, x in zip(labels, logs, strict=True):
            members.setdefault(label, []).append(x)
        averages = [sum(members[k]) / len(members[k]) for k in sorted(members)]
        bounds = [(a + b) / 2 for a, b in itertools.pairwise(averages)]
        moved = [sum(bound <= x for bound in bounds) for x in logs]
        if moved == labels:
            return labels
        labels = moved


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.one_of(st.integers(0, 5), st.integers(0, 10**6)), min_size=1, max_size=80),
    st.integers(1, 12),
)
def test_kmeans_bins_are_the_algorithm_job_by_job(runtime, n):
    from lakehouse.models.locality.model import kmeans_runtime_bins

    assert kmeans_runtime_bins(np.array(runtime), n).tolist() == kmeans_job_by_job(np.array(runtime), n)


def test_kmeans_bins_follow_the_thesis_algorithm_by_hand():
    from lakehouse.models.locality.model import kmeans_runtime_bins

    # The thesis' example: 2, 10, 100 and 200 s in two bins; the widest gap (10 -> 100) cuts, and the
    # bound half-way between the geometric averages (4.5 s and 141 s, so 25 s) keeps the cut.
    assert kmeans_runtime_bins(np.array([2, 10, 100, 200]), 2).tolist() == [0, 0, 1, 1]
    # Logarithms 0, 1, ..., 9, 10.2, 11.2: the widest gap (9 -> 10.2) starts the bins {0..9} and
    # {10.2, 11.2}; averages 4.5 and 10.7 put the bound at 7.6, so 8 and 9 move; then averages 3.5 and
    # 9.55, bound 6.52, and 7 moves; then 3 and 9.08, bound 6.04: nothing moves.
    logs = np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10.2, 11.2])
    bins = kmeans_runtime_bins(np.exp(logs), 2)
    assert bins.tolist() == [0] * 7 + [1] * 5
