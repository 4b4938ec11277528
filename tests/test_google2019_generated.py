"""A generated cell of Google's 2019 trace: every planted truth recovered through the views and the
report (`lakehouse generate google-2019`, `ingest google-2019`, `report volatility --trace google-2019`).
The expected numbers come from the generator's truth: each window's exact seconds, not our estimates."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from lakehouse.base.lake import Lake
from lakehouse.synth.google2019_cell import BATCH_IDS, JOB_IDS

from conftest import cli

CELL = "e"  # Helsinki: UTC+3 in May, so local and UTC hours differ


@pytest.fixture(scope="module")
def cell(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("cell")
    cli("generate", "google-2019", root / "gen", "--cell", CELL, "--hours", "24", "--jobs", "40", "--seed", "3")
    cli("ingest", "google-2019", root / "gen" / f"cell_{CELL}", "--lake", root / "lake")
    return root / "lake", json.loads((root / "gen" / "truth.json").read_text())


def _one(lake: Path, sql: str) -> object:
    ((value,),) = Lake(lake).query(sql).rows()
    return value


def test_the_double_count_is_planted_and_removed(cell: tuple[Path, dict]) -> None:
    lake, truth = cell
    assert truth["rows_inside_alloc_sets"] > 0
    inside = _one(lake, "SELECT affected_rows FROM google2019.caveats WHERE caveat LIKE 'usage of a task inside%'")
    assert inside == truth["rows_inside_alloc_sets"]
    assert _one(lake, "SELECT sum(average_usage_cpus) FROM google2019.usage") == pytest.approx(truth["top_level_cpu"])
    every_row = _one(lake, "SELECT sum(average_usage_cpus) FROM google2019.instance_usage")
    assert every_row == pytest.approx(truth["all_rows_cpu"]) and every_row > truth["top_level_cpu"] * 1.05
    assert _one(lake, "SELECT count(*) FROM google2019.usage") == truth["usage_rows"] - truth["rows_inside_alloc_sets"]


def test_tiers_and_machines_without_capacity(cell: tuple[Path, dict]) -> None:
    lake, truth = cell
    tiers = dict(Lake(lake).query("SELECT tier, count(*) FROM google2019.collections GROUP BY tier").rows())
    assert tiers == {tier: n for tier, n in truth["tiers"].items() if n}
    # Every instance runs through the whole trace (there before it, never ended) but the recurring runs.
    ((count, long_running, ended),) = (
        Lake(lake)
        .query("SELECT count(*), count(*) FILTER (long_running), count(*) FILTER (ended) FROM google2019.instances")
        .rows()
    )
    assert long_running == truth["long_running_instances"] and ended == len(truth["batch_runs"]) > 0
    assert count == long_running + ended
    adds = _one(lake, "SELECT affected_rows FROM google2019.caveats WHERE caveat = 'machine ADD without capacity'")
    assert adds == truth["machines_without_capacity"]


def test_the_daily_cycle_peaks_at_its_local_hour(cell: tuple[Path, dict]) -> None:
    """The cycle was planted in the cell's local time (peak 14:00 in Helsinki, 11:00 UTC)."""
    lake, truth = cell
    hourly = Lake(lake).query(
        "SELECT hour(local_start) AS local_hour, hour(timezone('UTC', start_at)) AS utc_hour, "
        "sum(average_usage_cpus) AS cpu FROM google2019.usage GROUP BY ALL ORDER BY cpu DESC LIMIT 1"
    )
    local_hour, utc_hour = hourly.row(0)[:2]
    assert abs(local_hour - truth["peak_local_hour"]) <= 1
    assert (local_hour - utc_hour) % 24 == 3


def test_the_2011_method_and_the_percentiles_against_the_exact_spread(cell: tuple[Path, dict], tmp_path: Path) -> None:
    lake, truth = cell
    # the tasks' windows (an alloc instance's, the sum of its tasks, is a series of another kind)
    exact = np.array([w[4] for w in truth["windows"] if w[0] >= JOB_IDS and w[3] > 0])
    result = cli("report", "volatility", "--trace", "google-2019", "--lake", lake, "--format", "csv")
    assert "analysis.volatility_2019" in result.stderr or "volatility_2019" in result.stdout + result.stderr
    rows = Lake(lake).query("SELECT * FROM analysis.volatility_2019 WHERE tier = 'all'").row(0, named=True)
    assert rows["cell"] == CELL and rows["windows"] == exact.size
    # The percentiles read the spread almost exactly (a quantile function linear between 20 points).
    assert rows["mean_mad_percentiles"] == pytest.approx(exact.mean(), rel=0.05)
    # One random second per window estimates it without bias: within 4 standard errors of the exact mean.
    abs_d = (
        Lake(lake)
        .query(
            "SELECT abs(average_usage_cpus - random_sample_usage_cpus) / average_usage_cpus AS d "
            "FROM google2019.instance_usage WHERE collection = 'JOB' AND average_usage_cpus > 0"
        )["d"]
        .to_numpy()
    )
    standard_error = abs_d.std() / math.sqrt(abs_d.size)
    assert abs(rows["mean_abs_d_2011"] - exact.mean()) < 4 * standard_error
    assert rows["ratio_2011_to_percentiles"] == pytest.approx(rows["mean_abs_d_2011"] / rows["mean_mad_percentiles"])
    assert rows["share_sample_outside_range"] == 0  # a second of the window lies within its p0..p100
    plots = tmp_path / "figures"
    plots.mkdir()
    cli("report", "volatility", "--trace", "google-2019", "--cell", CELL, "--lake", lake, "--plots", plots)
    assert (plots / "volatility_2019_method_check.png").stat().st_size > 10_000


def test_a_cell_without_usage_says_what_to_ingest(cell: tuple[Path, dict]) -> None:
    lake, _ = cell
    result = cli("report", "volatility", "--trace", "google-2019", "--cell", "h", "--lake", lake, code=1)
    assert "no usage windows of Google's 2019 trace in cell h" in result.stderr
    result = cli("report", "volatility", "--trace", "google-2019", "--cell", "z", "--lake", lake, code=2)
    assert "expected one of a, b, c, d, e, f, g, h" in result.stderr
    result = cli("report", "predictions", "google-2019-h", "--lake", lake, code=1)
    assert f"nothing to predict for google-2019-h: the lake has google-2019-{CELL}" in result.stderr


def test_the_parquet_export_gives_the_same_tables(cell: tuple[Path, dict], tmp_path: Path) -> None:
    lake, _ = cell
    cli("generate", "google-2019", tmp_path / "gen", "--cell", CELL, "--hours", "24", "--jobs", "40", "--seed", "3",
        "--format", "parquet")  # fmt: skip
    cli("ingest", "google-2019", tmp_path / "gen" / f"cell_{CELL}", "--lake", tmp_path / "lake")
    for view in ("instance_usage", "instance_events", "collection_events", "machine_events"):
        columns = "* EXCLUDE (line)" if view != "instance_usage" else "* EXCLUDE (line, shard)"
        query = f"SELECT {columns} FROM google2019.{view} ORDER BY ALL"
        assert Lake(tmp_path / "lake").query(query).equals(Lake(lake).query(query)), view


def test_the_daily_cycle_is_found_at_its_local_hour_by_the_periodicity_report(
    cell: tuple[Path, dict], tmp_path: Path
) -> None:
    """Every task's demand was planted with a daily cycle peaking at 14:00 in the cell's time zone
    (Helsinki); the fits on the cell's clock put the peak there, not at 14:00 Pacific time."""
    lake, truth = cell
    plots = tmp_path / "figures"
    plots.mkdir()
    cli("report", "periodicity", "--trace", "google-2019", "--lake", lake, "--plots", plots)
    assert {p.name for p in plots.iterdir()} == {"periodicity_2019_ratios.png", "periodicity_2019_local_peaks.png"}
    fits = Lake(lake).query("SELECT * FROM analysis.periodicity_2019")
    assert fits.height > 0 and set(fits["cell"]) == {CELL}
    assert (fits["daily_p"] < 0.01).all()
    hours = fits["daily_peak_local_h"].to_numpy()
    off = np.abs((hours - truth["peak_local_hour"] + 12) % 24 - 12)
    assert off.max() < 1.0, hours
    # the planted amplitude: 0.3 of the level (the generator's daily_amplitude)
    assert fits["daily_ratio"].median() == pytest.approx(truth["daily_amplitude"], rel=0.15)


def test_packing_compares_the_sum_of_the_peaks_with_the_peak_of_the_sum(cell: tuple[Path, dict]) -> None:
    lake, truth = cell
    row = Lake(lake).query("SELECT * FROM google2019.packing").row(0, named=True)
    assert row["cell"] == CELL and row["buckets"] == truth["buckets"]
    assert row["sum_of_peaks"] == pytest.approx(truth["sum_of_peaks"])
    assert row["peak_of_sum"] == pytest.approx(truth["peak_of_sum"])
    # the tasks share one daily cycle: their peaks nearly coincide, so the gain is small but above 1
    assert 1 < row["sharing_gain"] == pytest.approx(truth["sum_of_peaks"] / truth["peak_of_sum"])


def test_the_recurring_workflows_are_predicted_exactly_and_the_requests_scored_by_hand(
    cell: tuple[Path, dict],
) -> None:
    """Each recurring workflow's runs use exactly its level and request twice it.  A window over the
    workflow's last run predicts every run after the first exactly; the requests over-estimate by the
    level, so their loss is 0.5 (the --over weight) x level x walltime (h), summed over the runs scored:
    the last 20 % of each user's runs (one user per workflow)."""
    lake, truth = cell
    cli("report", "predictions", "google-2019", "--grouping", "logical name", "--window", "1", "--lake", lake)
    runs = truth["batch_runs"]  # workflow, run, collection, windows, cpu, memory
    per_workflow = {w: sum(1 for r in runs if r[0] == w) for w, *_ in runs}
    scored = [r for r in runs if r[1] >= math.floor(0.8 * per_workflow[r[0]])]
    hours = {r[2]: r[3] * 300 / 3600 for r in runs}
    expected = {
        "cpu": sum(0.5 * r[4] * hours[r[2]] for r in scored),
        "memory": sum(0.5 * r[5] * hours[r[2]] for r in scored),
    }
    scores = Lake(lake).query(
        "SELECT scenario, resource, jobs, loss, accuracy FROM analysis.predictions_scores "
        f"WHERE source = 'google-2019-{CELL}' AND resource IN ('cpu', 'memory')"
    )
    requests = {r["resource"]: r for r in scores.filter(scores["scenario"] == "users' requests").iter_rows(named=True)}
    for resource, loss in expected.items():
        assert requests[resource]["jobs"] == len(scored)
        assert requests[resource]["loss"] == pytest.approx(loss)
        assert requests[resource]["accuracy"] == pytest.approx(0.5)
    window = scores.filter(scores["scenario"].str.contains("sliding window \\(k = 1\\), max"))
    assert window.height == 2 and (window["loss"] == 0).all() and (window["accuracy"] == 1).all()
    jobs = Lake(lake).query(
        "SELECT count(*) FILTER (abs(predicted - used) > 1e-12) AS wrong, count(*) AS n FROM analysis.predictions_jobs "
        f"WHERE source = 'google-2019-{CELL}' AND resource = 'cpu' AND layer = 'workflow'"
    )
    assert jobs.row(0) == (0, len(runs) - len(per_workflow))  # every run but each workflow's first


def test_pack_packs_a_cells_periodic_jobs_onto_its_machines(cell: tuple[Path, dict]) -> None:
    """The jobs outside alloc sets run through the trace with one daily cycle (amplitude 0.3 of the
    level, one phase for all): the lower bound (sum c + |sum rho e^(i phi)|) / capacity is then
    1.3 x the sum of the planted levels / the machines' 0.5 NCU."""
    lake, truth = cell
    cli("report", "periodicity", "--trace", "google-2019", "--lake", lake)
    top_level = {(w[0], w[1]) for w in truth["windows"] if w[5] and JOB_IDS <= w[0] < BATCH_IDS}
    levels = [level for c, i, level, _ in truth["tasks"] if (c, i) in top_level]
    result = cli("pack", "--trace", "google-2019", "--lake", lake, "--format", "csv")
    assert f"{len(levels)} tasks of {len({c for c, _ in top_level})} jobs, machine capacity 0.5" in result.stderr
    packed = Lake(lake).query("SELECT * FROM analysis.packing")
    bound = (1 + truth["daily_amplitude"]) * sum(levels) / 0.5
    assert packed["lower_bound"][0] == pytest.approx(bound, rel=0.05)
    assert (packed["machines"] >= math.ceil(packed["lower_bound"][0])).all()
    refused = cli("pack", "--trace", "google-2019", "--cell", "a", "--lake", lake, code=1)
    assert f"no periodic job of cell a to pack: the fits are of cell(s) {CELL}" in refused.stderr


def test_export_swf_turns_the_cells_jobs_into_a_log_that_replays(cell: tuple[Path, dict], tmp_path: Path) -> None:
    """Each recurring workflow's run is a one-task job submitted and scheduled at its first window and
    ended after its windows: in the SWF file, submit = first x 300 s, wait 0, run = windows x 300 s, one
    processor per task, or ceil(its request x 100 cores) with --processors cpu; the jobs that were there
    before the trace began are left out. The file ingests as a log and replays."""
    lake, truth = cell
    out = tmp_path / "cell.swf"
    cli("export", "swf", "--trace", "google-2019", "--cell", CELL, "--lake", lake, "-o", out)
    lines = [line.split() for line in out.read_text().splitlines() if not line.startswith(";")]
    runs = truth["batch_runs"]  # workflow, run, collection, windows, cpu, memory
    ended = [[int(f) for f in line] for line in lines if line[3] != "-1"]
    # a run's first window, by batch_runs' rule: 1 + run x (its windows + 1)
    assert sorted((e[1], e[2], e[3], e[4]) for e in ended) == sorted(
        ((1 + b[1] * (b[3] + 1)) * 300, 0, b[3] * 300, 1) for b in runs
    )
    assert len(lines) == len(runs)  # the jobs there before the trace (submitted at 0) are left out, as the rules say
    cores = tmp_path / "cores.swf"
    cli("export", "swf", "--trace", "google-2019", "--processors", "cpu", "--cores-per-machine", "100",
        "--lake", lake, "-o", cores)  # fmt: skip
    sizes = sorted(int(line.split()[4]) for line in cores.read_text().splitlines()
                   if not line.startswith(";") and line.split()[3] != "-1")  # fmt: skip
    assert sizes == sorted(math.ceil(2 * b[4] * 100 - 1e-9) for b in runs)  # requests: twice the level
    header = out.read_text()
    assert f"; MaxNodes: {40}" in header and "Note: converted by lakehouse export swf --trace google-2019" in header
    cli("ingest", "swf", out, "--lake", tmp_path / "replay")
    cli("simulate", "cell", "--lake", tmp_path / "replay")


def test_export_opendc_gives_each_run_its_windows_as_fragments(cell: tuple[Path, dict], tmp_path: Path) -> None:
    """A recurring workflow's run is one task whose usage windows are its fragments: `windows` of 300 s
    each at its level (cores per machine x MHz per core); it starts at its first window, 600 s after
    the trace clock's 0, which is 1 May 2019 06:50 UTC."""
    lake, truth = cell
    out = tmp_path / "opendc"
    cli("export", "opendc", "--trace", "google-2019", "--cores-per-machine", "10", "--mhz-per-core", "1000",
        "--lake", lake, "-o", out)  # fmt: skip
    tasks = {t["id"]: t for t in pq.read_table(out / "tasks.parquet").to_pylist()}
    fragments = pq.read_table(out / "fragments.parquet").to_pylist()
    clock_zero_ms = 1_556_693_400_000  # 2019-05-01T06:50:00Z
    for _, run, collection, windows, cpu, _ in truth["batch_runs"]:
        task = tasks[f"{CELL}/{collection}/0"]
        first = 1 + run * (windows + 1)
        assert task["submission_time"] == clock_zero_ms + (600 + 300 * first) * 1000
        assert task["duration"] == windows * 300_000 and task["cpu_capacity"] == pytest.approx(2 * cpu * 10 * 1000)
        own = [f for f in fragments if f["id"] == task["id"]]
        assert [f["duration"] for f in own] == [300_000] * windows
        assert all(f["cpu_usage"] == pytest.approx(cpu * 10 * 1000) for f in own)
