"""The heuristic-triple study: its settings, and its tables on hand-made result rows."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime

import polars as pl
import pytest
from test_campaign import cli

from lakehouse.base.errors import LakehouseError
from lakehouse.base.lake import Lake
from lakehouse.campaigns.grid import Grid, GridError
from lakehouse.campaigns.runner import store_rows
from lakehouse.sim.metrics import prediction_errors
from lakehouse.studies.triples import eloss_variants, leave_one_out, per_log_table, triple_settings


def test_the_triples_are_130_distinct_settings():
    settings = triple_settings()
    assert len(settings) == len(set(settings)) == 2 + 2 + 3 * 2 + 20 * 3 * 2
    assert len(set(eloss_variants())) == 20
    # Never-exceeded predictions are run once, with the default correction.
    assert {s.correction for s in settings if s.predictor in ("requested", "clairvoyant")} == {"requested"}
    # Table 2.5's combinations with Eq. 2.3's weighing: over- and under-predictions alike (factor 1).
    assert all("over-factor=1" in v for v in eloss_variants())
    assert "eloss:over-factor=1" in eloss_variants()  # squared both sides, weight 5 + ln(q/p): short spelling
    assert Grid("t", ("KTH",), explicit=tuple(settings)).settings() == settings
    with pytest.raises(GridError, match="preset fixes the settings"):
        Grid("t", ("KTH",), values={"policy": ("spf",)}, explicit=tuple(settings))


def rows() -> list[dict]:
    """Three logs; EASY, EASY++, clairvoyant and three learned triples, slowdowns chosen by hand."""
    base = {"campaign": "tri", "view": "jobs_strong", "algorithm": "easy", "policy": "fcfs", "threshold": None,
            "compat": "canonical", "tau": 10.0, "status": "ok", "error": None, "jobs": 10, "mean_wait": 1.0,
            "max_wait": 5.0, "mean_response": 2.0, "makespan": 100.0, "utilization": 0.5, "engine_seconds": 0.1,
            "engine_version": "test", "schema_version": 1, "jobs_fingerprint": "f",
            "finished_at": datetime(2026, 1, 1, tzinfo=UTC)}  # fmt: skip
    triples = [  # (predictor, correction, backfill)
        ("requested", "requested", "queue"),
        ("ave2", "incremental", "sjbf"),
        ("clairvoyant", "requested", "sjbf"),
        ("eloss", "requested", "sjbf"),
        ("eloss:weight=one", "doubling", "sjbf"),
        ("eloss:under=linear", "requested", "queue"),
    ]
    values = {  # per log, in the order of `triples`
        "A": (100.0, 80.0, 10.0, 50.0, 60.0, 90.0),
        "B": (40.0, 20.0, 5.0, 30.0, 10.0, 45.0),
        "C": (10.0, 8.0, 1.0, 9.0, 9.5, 12.0),
    }
    out = []
    for log, bslds in values.items():
        for (predictor, correction, backfill), bsld in zip(triples, bslds, strict=True):
            variant = f"{predictor}-{correction}-{backfill}"
            out.append({**base, "log": log, "machine_size": 64, "backfill": backfill, "predictor": predictor,
                        "correction": correction, "variant": variant, "run_key": log + variant,
                        "mean_bounded_slowdown": bsld})  # fmt: skip
    return out


def test_per_log_table_by_hand():
    table = per_log_table(pl.DataFrame(rows()))
    a = table.row(0, named=True)
    assert (a["log"], a["easy"], a["easy_plus_plus"], a["clairvoyant_sjbf"]) == ("A", 100.0, 80.0, 10.0)
    assert a["clairvoyant_queue"] is None
    assert (a["best_learned_sjbf"], a["best_learned_sjbf_triple"]) == (50.0, "eloss + requested + sjbf")
    assert (a["worst_learned_sjbf"], a["worst_learned_sjbf_triple"]) == (60.0, "eloss:weight=one + doubling + sjbf")
    assert a["best_learned_queue"] == a["worst_learned_queue"] == 90.0
    b = table.row(1, named=True)
    assert b["best_learned_sjbf_triple"] == "eloss:weight=one + doubling + sjbf"


def test_leave_one_out_by_hand():
    loo = {r["held_out"]: r for r in leave_one_out(pl.DataFrame(rows())).iter_rows(named=True)}
    # Sums without A (clairvoyant excluded): EASY 50, EASY++ 28, eloss 39, eloss:weight=one 19.5,
    # eloss:under=linear 57 -> eloss:weight=one; on A it scores 60 (EASY 100, EASY++ 80).
    assert loo["A"]["selected"] == "eloss:weight=one + doubling + sjbf"
    assert loo["A"]["selected_bsld"] == 60.0
    assert math.isclose(loo["A"]["reduction_vs_easy_pct"], 40.0)
    assert math.isclose(loo["A"]["reduction_vs_easy_plus_plus_pct"], 25.0)
    # Without B: EASY 110, EASY++ 88, eloss 59, weight=one 69.5 -> eloss, which scores 30 on B.
    assert (loo["B"]["selected"], loo["B"]["selected_bsld"]) == ("eloss + requested + sjbf", 30.0)
    # Without C: EASY 140, EASY++ 100, eloss 80, weight=one 70 -> weight=one, 9.5 on C.
    assert (loo["C"]["selected"], loo["C"]["selected_bsld"]) == ("eloss:weight=one + doubling + sjbf", 9.5)
    with pytest.raises(LakehouseError, match="at least two logs"):
        leave_one_out(pl.DataFrame([r for r in rows() if r["log"] == "A"]))


def test_report_triples_reads_the_stored_campaign(tmp_path):
    lake = Lake(tmp_path / "lake").init()
    store_rows(lake, "tri", rows())
    run = cli("report", "triples", "tri", "--lake", lake.root, "-f", "json", "--output", tmp_path / "t.json")
    assert [r["log"] for r in json.loads((tmp_path / "t.json").read_text())] == ["A", "B", "C"]
    import numpy as np

    from lakehouse.studies.triples import log_correlations

    pearson = log_correlations(pl.DataFrame(rows()))["pearson"]
    said = " ".join(run.stderr.split())
    assert f"over 3 couples: mean {pearson.mean():.2f}, least {pearson.min():.2f}" in said
    a, b, c = [100.0, 80.0, 10.0, 50.0, 60.0, 90.0], [40.0, 20.0, 5.0, 30.0, 10.0, 45.0], [10, 8, 1, 9, 9.5, 12]
    by_numpy = [np.corrcoef(x, y)[0, 1] for x, y in ((a, b), (a, c), (b, c))]
    assert pearson.to_list() == pytest.approx(by_numpy)
    assert len(json.loads((tmp_path / "t-loo.json").read_text())) == 3
    missing = cli("report", "triples", "nope", "--lake", lake.root, code=1)
    assert "no campaign named 'nope'; stored: tri" in missing.stderr


def test_report_triples_keeps_both_tables_in_the_lake(tmp_path):
    lake = Lake(tmp_path / "lake").init()
    store_rows(lake, "tri", rows())
    cli("report", "triples", "tri", "--lake", lake.root, "-f", "json")
    stored = lake.query("SELECT * FROM analysis.triples ORDER BY log")
    assert stored["campaign"].to_list() == ["tri"] * 3 and stored["machine_size"].to_list() == [64] * 3
    assert stored.filter(pl.col("log") == "A")["easy_plus_plus"].item() == 80.0
    loo = lake.query("SELECT held_out, selected_bsld FROM analysis.triples_loo ORDER BY held_out")
    assert loo.rows() == [("A", 60.0), ("B", 30.0), ("C", 9.5)]


def test_a_log_at_two_machine_sizes_or_semantics_is_refused():
    two = rows() + [{**r, "machine_size": 128, "run_key": r["run_key"] + "-128"} for r in rows() if r["log"] == "A"]
    with pytest.raises(LakehouseError, match="A was replayed at 2 machine sizes"):
        per_log_table(pl.DataFrame(two))
    both = rows() + [
        {**r, "compat": "pyss", "variant": r["variant"] + "-pyss", "run_key": r["run_key"] + "-pyss"}
        for r in rows()
        if r["log"] == "B"
    ]
    with pytest.raises(LakehouseError, match=r"B was replayed at 2 semantics \(canonical, pyss\)"):
        leave_one_out(pl.DataFrame(both))


def test_prediction_errors_by_hand():
    """MAE, mean E-Loss (over squared, under linear, weight 1 + ln(q p)) and share under-predicted."""
    jobs = pl.DataFrame({"start_time": [0, 10], "end_time": [50, 50], "initial_prediction": [100, 30], "procs": [1, 2]})
    errors = prediction_errors(jobs)
    assert errors["prediction_mae"] == 30.0  # |100 - 50| and |30 - 40|
    assert errors["prediction_under_share"] == 0.5
    over = (1 + math.log(1 * 50)) * 50**2
    under = (1 + math.log(2 * 40)) * 10
    assert math.isclose(errors["prediction_mean_eloss"], (over + under) / 2, rel_tol=1e-12)


def test_the_scatter_of_triples_labels_its_axes(tmp_path):
    """Each pair of logs' axes carry labelled ticks, whether the slowdowns span decades or not."""
    from lakehouse.base.figures import pyplot, save
    from lakehouse.studies.triples_plots import _scatter

    plt = pyplot()
    captured = []
    frame = pl.DataFrame(rows())
    _scatter(plt, lambda fig, path: captured.append(fig) or save(fig, path), frame, tmp_path / "s.png")
    fig = captured[0]
    fig.canvas.draw()
    for ax in fig.axes:
        if ax.axison:
            assert [t.get_text() for t in ax.get_xticklabels() if t.get_text()], ax.get_xlabel()
            assert [t.get_text() for t in ax.get_yticklabels() if t.get_text()], ax.get_ylabel()
    assert (tmp_path / "s.png").exists()


def test_the_correlation_between_two_logs_is_pearsons_over_the_triples():
    import numpy as np

    from lakehouse.studies.triples import log_correlations

    table = log_correlations(pl.DataFrame(rows()))
    values = {  # the hand-made slowdowns of `rows`, per log, in the same triple order
        "A": [100.0, 80.0, 10.0, 50.0, 60.0, 90.0],
        "B": [40.0, 20.0, 5.0, 30.0, 10.0, 45.0],
        "C": [10.0, 8.0, 1.0, 9.0, 9.5, 12.0],
    }
    assert table.select("log_a", "log_b").rows() == [("A", "B"), ("A", "C"), ("B", "C")]
    for a, b, triples, r in table.iter_rows():
        assert triples == 6
        assert r == pytest.approx(np.corrcoef(values[a], values[b])[0, 1])  # numpy's, independently
