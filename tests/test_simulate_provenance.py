"""What `simulate` writes says what produced it: the settings as columns of every row, a formula's
name, the jobs in the JSON when asked, and plots whose legends name the policies (the researcher's round)."""

from __future__ import annotations

import json

import pytest

from lakehouse.sim import simulate_log

from conftest import cli as run

KTH = "KTH-SP2-1996-2.1-cln"


def test_every_row_carries_the_settings_and_a_formula_its_name(kth_lake, tmp_path):
    out = tmp_path / "kth.json"
    run("simulate", "KTH", "--lake", kth_lake.root, "--policy", "cube=max:(w/r)^3*n", "--backfill", "sjbf",
        "--where", "procs <= 64", "--warmup", "1d", "-f", "json", "--with-jobs", "-o", out)  # fmt: skip
    (row,) = json.loads(out.read_text())
    assert {k: row[k] for k in ("view", "where", "algorithm", "policy", "order", "backfill", "predictor")} == {
        "view": "jobs_clean", "where": "procs <= 64", "algorithm": "easy", "policy": "cube",
        "order": "max:(w/r)^3*n", "backfill": "sjbf", "predictor": "requested",
    }  # fmt: skip
    assert (row["correction"], row["threshold"], row["compat"], row["tau"]) == ("requested", None, "canonical", 10.0)
    assert (row["warmup"], row["cooldown"]) == (86_400.0, 0.0)
    direct = simulate_log(kth_lake, KTH, policy="max:(w/r)^3*n", backfill="sjbf", where="procs <= 64", warmup=86_400)
    assert row["mean_wait"] == direct.summary["mean_wait"]
    schedule = row["schedule"]
    assert len(schedule) == direct.jobs.height > row["jobs"]  # every job replayed; the warm-up not counted
    assert [job["start_time"] for job in schedule] == direct.jobs["start_time"].to_list()
    csv = run("simulate", "KTH", "--lake", kth_lake.root, "--by", "size", "-f", "csv").stdout
    header, first = csv.splitlines()[:2]
    assert (
        header.startswith("log,size,")
        and header.endswith(",tau,warmup,cooldown,usage_half_life")
        and ",fcfs,fcfs," in first
    )
    refused = run("simulate", "KTH", "--lake", kth_lake.root, "-f", "csv", "--with-jobs", code=2)
    assert "goes with --format json" in refused.stderr


def test_a_name_that_is_already_an_orders_is_refused():
    result = run("simulate", "KTH", "--policy", "spf=min:n", code=2)
    assert "'spf' already names a queue order" in " ".join(result.stderr.split())


def test_two_replays_drawn_together_are_named_by_their_policies(kth_lake, tmp_path, monkeypatch):
    from lakehouse.sim import schedule_plots

    seen = {}
    original = schedule_plots.draw

    def draw(*args, **kwargs):
        seen["labels"] = kwargs["labels"]
        return original(*args, **kwargs)

    monkeypatch.setattr(schedule_plots, "draw", draw)
    first = simulate_log(kth_lake, KTH, where="submit_offset < 3*86400")
    second = simulate_log(kth_lake, KTH, where="submit_offset < 3*86400", policy="cube=max:(w/r)^3*n", backfill="sjbf")
    first.plot(folder=tmp_path, vs=second)
    assert seen["labels"] == ("fcfs", "cube sjbf")
    first.plot(folder=tmp_path, vs=first)  # the same settings: told apart by order
    assert seen["labels"] == ("this run", "other run")


@pytest.mark.parametrize("text", ["min:a == 1", "max:if(n == 1, r, w)"])
def test_a_formulas_own_equal_signs_are_not_a_name(text):
    from lakehouse.sim.options import named_order

    assert named_order(text) == (None, text)
