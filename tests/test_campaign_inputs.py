"""A campaign shows what its current inputs give: the run its newest plan chose for each slot (log,
machine size, variant, tau), never a row of an older plan; a run's key holds only the columns it reads;
one rule splits every list of policies (the researcher's round, docs/campaigns.md)."""

from __future__ import annotations

import json

import polars as pl
import pytest

from lakehouse.campaigns.grid import grid_from_toml
from lakehouse.sim import simulate_log

from conftest import cli

KTH = "KTH-SP2-1996-2.1-cln"


def shown(lake, name: str) -> pl.DataFrame:
    return pl.DataFrame(json.loads(cli("campaign", "show", name, "--lake", lake.root, "--format", "json").stdout))


def _import(lake, table: pl.DataFrame, path, name: str) -> None:
    table.write_csv(path)
    cli("import", "predictions", path, "--name", name, "--lake", lake.root)


def test_a_restored_prediction_table_shows_its_own_result_not_the_replaced_ones(kth_lake, tmp_path):
    jobs = kth_lake.query(f"select log, job_id, run_time from swf.jobs_clean where log = '{KTH}'")
    exact = jobs.select("log", "job_id", pl.col("run_time").cast(pl.Float64).alias("predicted"))
    doubled = exact.with_columns(pl.col("predicted") * 2)
    path = tmp_path / "u2.csv"
    args = ("campaign", "run", "--name", "restored", "--log", KTH, "--lake", kth_lake.root)
    _import(kth_lake, exact, path, "u2")
    first = cli(*args, "--predictor", "requested,table:u2")
    assert "2 runs ok" in first.stderr.replace("\n", " "), first.stderr
    _import(kth_lake, doubled, path, "u2")
    second = cli(*args, "--predictor", "requested,table:u2")
    # Only the run that reads the table is replayed: the other's key does not hold it.
    assert "1 runs ok, 0 failed, 1 already stored" in second.stderr.replace("\n", " "), second.stderr
    _import(kth_lake, exact, path, "u2")
    third = cli(*args, "--predictor", "requested,table:u2")
    assert "0 runs ok, 0 failed, 2 already stored" in third.stderr.replace("\n", " "), third.stderr

    table = shown(kth_lake, "restored")
    assert table.height == 2 and set(table["inputs"]) == {"current"}
    row = table.filter(pl.col("variant") == "easy-fcfs-table:u2").row(0, named=True)
    direct = simulate_log(kth_lake, KTH, predictor="table:u2").summary
    assert row["mean_bounded_slowdown"] == pytest.approx(direct["mean_bounded_slowdown"], rel=1e-12)
    doubled_result = simulate_log(kth_lake, KTH, predictor="column:req_time").summary  # (capped: the request)
    assert row["mean_bounded_slowdown"] != pytest.approx(doubled_result["mean_bounded_slowdown"], rel=1e-6)
    listed = pl.DataFrame(json.loads(cli("campaign", "list", "--lake", kth_lake.root, "--format", "json").stdout))
    counts = listed.filter(pl.col("campaign") == "restored").row(0, named=True)
    assert (counts["runs"], counts["stored"]) == (2, 3)

    # The table imported again with other values and no re-run: the row says its inputs changed.
    _import(kth_lake, doubled, path, "u2")
    result = cli("campaign", "show", "restored", "--lake", kth_lake.root, "--format", "json")
    inputs = dict(pl.DataFrame(json.loads(result.stdout)).select("variant", "inputs").iter_rows())
    assert inputs == {"easy-fcfs": "current", "easy-fcfs-table:u2": "changed since the run"}
    assert f"the jobs of {KTH} are not those the campaign replayed" in " ".join(result.stderr.split())


def test_a_campaign_run_again_on_its_first_view_shows_that_views_jobs(kth_lake):
    args = ("campaign", "run", "--name", "views", "--log", KTH, "--lake", kth_lake.root)
    strong_jobs = kth_lake.rows(f"select count(*) from swf.jobs_strong where log = '{KTH}'")[0][0]
    clean_jobs = kth_lake.rows(f"select count(*) from swf.jobs_clean where log = '{KTH}'")[0][0]
    assert strong_jobs != clean_jobs
    cli(*args, "--view", "jobs_strong")
    assert shown(kth_lake, "views")["jobs"].to_list() == [strong_jobs]
    cli(*args, "--view", "jobs_clean")
    assert shown(kth_lake, "views")["jobs"].to_list() == [clean_jobs]
    third = cli(*args, "--view", "jobs_strong")
    assert "1 already stored" in third.stderr.replace("\n", " ")
    assert shown(kth_lake, "views")["jobs"].to_list() == [strong_jobs]
    view = kth_lake.rows("select view from analysis.campaign_results where campaign = 'views'")
    assert view == [("jobs_strong",)]

    # Runs stored before campaigns recorded plans: their newest row per slot, inputs not recorded.
    from lakehouse.campaigns.runner import store_rows

    old = kth_lake.query("select * from analysis.campaign_runs where campaign = 'views' order by finished_at")
    store_rows(kth_lake, "before-plans", old.with_columns(campaign=pl.lit("before-plans")).to_dicts())
    legacy = shown(kth_lake, "before-plans")
    assert legacy["jobs"].to_list() == [clean_jobs] and legacy["inputs"].to_list() == ["not recorded"]


def test_runs_planned_but_not_stored_are_counted_not_filled_from_an_older_plan(kth_lake):
    from lakehouse.campaigns.runner import store_plan

    cli("campaign", "run", "--name", "unfinished", "--log", KTH, "--lake", kth_lake.root)
    plan = kth_lake.query("select * from analysis.campaign_plans where campaign = 'unfinished'")
    # A newer plan of the same slot whose run was never stored (the campaign killed before it ran).
    newer = plan.with_columns(run_key=pl.lit("0" * 24), planned_at=pl.col("planned_at") + pl.duration(seconds=1))
    store_plan(kth_lake, "unfinished", newer.to_dicts())
    assert kth_lake.rows("select count(*) from analysis.campaign_results where campaign = 'unfinished'") == [(0,)]
    result = cli("campaign", "show", "unfinished", "--lake", kth_lake.root, code=1)
    assert "campaign 'unfinished' has no stored run of its last plan yet (1 planned)" in " ".join(result.stderr.split())


FORMULA = "max:(w + r) / max(r, 1)"


def test_a_comma_inside_a_formulas_parentheses_stays_in_it_on_the_command_line_and_in_toml(kth_lake, tmp_path):
    result = cli(
        "campaign", "run", "--name", "comma", "--log", KTH, "--lake", kth_lake.root, "--policy", f"fcfs,{FORMULA}"
    )
    assert "2 runs ok" in result.stderr.replace("\n", " "), result.stderr
    assert set(shown(kth_lake, "comma")["variant"]) == {"easy-fcfs", f"easy-{FORMULA}"}
    spec = tmp_path / "comma.toml"
    spec.write_text(f'name = "comma"\nlogs = ["KTH"]\n[grid]\npolicy = ["fcfs, {FORMULA}", "spf"]\n')
    assert grid_from_toml(spec).values["policy"] == ("fcfs", FORMULA, "spf")


def test_a_campaign_takes_the_jobs_window_of_simulate_and_a_new_window_replaces_its_slots(kth_lake, tmp_path):
    window = ["--where", "submit_offset < 60*86400", "--warmup", "7d", "--cooldown", "1w"]
    args = ("campaign", "run", "--name", "window", "--log", KTH, "--lake", kth_lake.root, "--policy", "fcfs,spf")
    cli(*args, *window)
    table = shown(kth_lake, "window")
    for policy in ("fcfs", "spf"):
        direct = simulate_log(kth_lake, KTH, policy=policy, where=window[1], warmup=7 * 86400, cooldown=7 * 86400)
        row = table.filter(pl.col("variant") == f"easy-{policy}").row(0, named=True)
        assert row["jobs"] == direct.summary["jobs"] < 28_475
        assert row["mean_wait"] == direct.summary["mean_wait"]
    stored = kth_lake.query(
        "select where_condition, warmup, cooldown from analysis.campaign_results where campaign = 'window'"
    )
    assert stored.unique().rows() == [(window[1], 604_800.0, 604_800.0)]
    # The same campaign without the window: new runs in the same slots, every job counted.
    cli(*args)
    assert shown(kth_lake, "window")["jobs"].to_list() == [28_475, 28_475]
    spec = tmp_path / "window.toml"
    spec.write_text('name = "window"\nlogs = ["KTH"]\nwhere = "procs <= 8"\nwarmup = "2d"\n[grid]\npolicy = ["fcfs"]\n')
    grid = grid_from_toml(spec)
    assert (grid.where, grid.warmup, grid.cooldown) == ("procs <= 8", 172_800.0, 0.0)


def test_a_named_formula_labels_its_variant_and_long_names_fit_their_plots(kth_lake, tmp_path, monkeypatch):
    long = "max:(w + r) / max(r, 1) + 0*(n + p + s + t + a + id + ur + uw + run_time + req_time + procs)"
    cli("campaign", "run", "--name", "named", "--log", KTH, "--lake", kth_lake.root,
        "--policy", f"fcfs,cube=max:(w/r)^3*n,{long}", "--backfill", "queue,sjbf")  # fmt: skip
    table = shown(kth_lake, "named")
    assert {"easy-cube", "easy-cube-sjbf", f"easy-{long}-sjbf"} <= set(table["variant"])
    cube = table.filter(pl.col("variant") == "easy-cube").row(0, named=True)
    assert cube["mean_wait"] == simulate_log(kth_lake, KTH, policy="max:(w/r)^3*n").summary["mean_wait"]

    # Every tick label of every figure lies inside its figure (none cut at an edge).
    from lakehouse.campaigns import report

    drawn = []
    original = report.save

    def checked(fig, path):
        fig.tight_layout()
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            low, high = sorted(ax.get_xlim())
            shown_x = [
                lab for tick, lab in zip(ax.get_xticks(), ax.get_xticklabels(), strict=True) if low <= tick <= high
            ]
            for label in [*ax.get_yticklabels(), *shown_x]:  # (ticks beyond the axis' limits are not drawn)
                box = label.get_window_extent(renderer)  # (a pixel of rounding at either edge)
                assert box.x0 >= -1 and box.x1 <= fig.bbox.width + 1, (path.name, label.get_text(), box)
        drawn.append(path)
        return original(fig, path)

    monkeypatch.setattr(report, "save", checked)
    cli("campaign", "show", "named", "--lake", kth_lake.root, "--plots", tmp_path / "figures")
    assert len(drawn) == 2  # the heatmap and the one log's bars


def test_a_campaign_refused_for_its_size_leaves_the_shown_plan_as_it_was(kth_lake, monkeypatch):
    from lakehouse.cli import campaign as campaign_cli

    args = ("campaign", "run", "--name", "budget", "--log", KTH, "--lake", kth_lake.root)
    cli(*args, "--policy", "fcfs")
    monkeypatch.setattr(campaign_cli, "RUN_BUDGET", 1)
    refused = cli(*args, "--policy", "spf,lexp", "--where", "procs <= 8", code=1)
    assert "would replay 2 runs, more than 1" in " ".join(refused.stderr.split())
    table = shown(kth_lake, "budget")
    assert table["variant"].to_list() == ["easy-fcfs"] and table["inputs"].to_list() == ["current"]
    assert kth_lake.rows("select count(*) from analysis.campaign_plans where campaign = 'budget'") == [(1,)]


@pytest.mark.parametrize("threshold", ["[3600.7]", "1.9", "[true]"])
def test_a_threshold_that_is_not_whole_seconds_is_refused_not_rounded(tmp_path, threshold):
    from lakehouse.campaigns.grid import GridError, grid_from_toml

    spec = tmp_path / "t.toml"
    spec.write_text(f'name = "t"\nlogs = ["KTH"]\n[grid]\nthreshold = {threshold}\n')
    with pytest.raises(GridError, match="whole number of seconds|must be a value or a list"):
        grid_from_toml(spec)
    whole = tmp_path / "w.toml"
    whole.write_text('name = "w"\nlogs = ["KTH"]\n[grid]\nthreshold = [3600, 7200.0, "none"]\n')
    assert grid_from_toml(whole).values["threshold"] == (3600, 7200, None)
