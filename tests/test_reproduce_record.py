"""The record of `lakehouse reproduce` the docs cite (docs/reproduced/STUDY.csv, refreshed by `make
reproductions`): its statuses are what the code gives for its numbers, its published numbers are the
data file's, each study's counts in docs/reproductions.md are counted from it, and every experiment a
status names is in the docs."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest
from refresh_reproductions import COUNTS_LINE, RECORD, counts_line

from lakehouse.base.published import Status, explanations, published
from lakehouse.reproduce import STUDIES, counts, judge

DOC = Path(__file__).resolve().parents[1] / "docs" / "reproductions.md"


def record(study: str) -> pl.DataFrame:
    return pl.read_csv(RECORD / f"{study}.csv", infer_schema_length=None, schema_overrides={
        "published": pl.Float64, "ours": pl.Float64, "difference": pl.Float64, "relative_pct": pl.Float64,
        "log": pl.String, "setting": pl.String, "experiment": pl.String, "note": pl.String,
    })  # fmt: skip


@pytest.mark.parametrize("study", list(STUDIES))
def test_the_records_statuses_are_the_codes_for_its_numbers(study):
    rows = record(study)
    assert rows.height and set(rows["study"]) == {study}
    again = judge(rows.drop("status", "experiment"))
    assert again["status"].to_list() == rows["status"].to_list()
    assert again["experiment"].to_list() == rows["experiment"].to_list()
    assert set(rows["status"]) <= {s.value for s in Status}


@pytest.mark.parametrize("study", list(STUDIES))
def test_the_record_holds_every_published_number_of_the_data_file(study):
    rows = record(study)
    mine = {(p.source, p.trace, p.quantity): p.value for p in published(study)}
    found = {(r["source"], r["trace"], r["quantity"]): r["published"] for r in rows.iter_rows(named=True)}
    assert found == mine


def test_each_studys_counts_in_the_docs_are_counted_from_the_record():
    text = DOC.read_text(encoding="utf-8")
    lines = {match.group(2): match.group(0) for match in COUNTS_LINE.finditer(text)}
    assert set(lines) == set(STUDIES)
    for study in STUDIES:
        assert lines[study] == counts_line(study, record(study)), study


def test_counts_add_up_and_are_in_status_order():
    rows = pl.DataFrame({"status": ["unknown", "within 5 %", "within 5 %", "ours alone"]})
    assert counts(rows) == {"within 5 %": 2, "explained": 0, "unknown": 1, "not measured": 0, "ours alone": 1}


def test_every_experiment_a_status_names_is_in_the_docs():
    text = DOC.read_text(encoding="utf-8")
    for entry in explanations():
        assert entry.status in (Status.explained, Status.unknown)
        assert entry.experiment in text, entry.experiment


def test_a_row_beyond_the_tolerance_is_explained_or_unknown_never_within():
    table = pl.DataFrame(
        {
            "study": ["hmm-backfilling", "hmm-backfilling", "hmm-backfilling", "hmm", "hmm", "selection"],
            "source": ["Table 5.1", "Table 5.1", "Table 5.1", "Table 3.1", "Table 3.1", "Table 1"],
            "trace": ["SDSC SP2", "CTC SP2", "KTH SP2", "SDSC Paragon '95", "SDSC Paragon '95", "KTH-SP2"],
            "quantity": [
                "mean wait EASY",
                "mean wait EASY",
                "mean wait EASY",
                "state 9 KL mle",
                "state 5 KL simple",
                "jobs",
            ],
            "setting": ["", "338 processors: the machine the log's header states", "", "", "", ""],
            # (The stays' divergences: printed to 0.01 bit, so 0.004 off is within, 0.01 off is not.)
            "published": [364.0, 21.3, 114.0, 1.24, -0.08, 28000.0],
            "ours": [342.8, 232.0, 119.6, 1.244, -0.07, None],
        }
    )
    found = judge(table)
    assert found["status"].to_list() == [
        "explained", "explained", "within 5 %", "within 5 %", "unknown", "not measured",
    ]  # fmt: skip
    # 119.8 is 5.09 % above 114: beyond, by hand; 5 % is 119.7.
    assert judge(table.with_columns(ours=pl.lit(119.8)))["status"][2] == "unknown"
    assert found["experiment"][0] == "jobs run past their request"
    assert found["experiment"][1] == "CTC-SP2 on 338 to 512 processors"


def test_a_rows_setting_says_a_machine_chosen_because_it_fits():
    """CTC-SP2 in the HMM-backfilling study: 512 processors because they give the published EASY waits;
    the row says so, and the same quantities follow on the header's 338 (from the record)."""
    rows = record("hmm-backfilling").filter(pl.col("trace") == "CTC SP2")
    chosen = rows.filter(pl.col("setting").str.starts_with("512 processors"))
    header = rows.filter(pl.col("setting").str.starts_with("338 processors"))
    assert chosen.height == header.height == 6
    assert chosen["setting"].str.contains("chosen because it gives the published EASY waits").all()
    assert re.search(r"the header's 338 gives \d+ min", chosen["setting"][0])
    assert (header["status"] == "explained").all()


def test_within_is_5_percent_or_half_the_papers_last_digit():
    """By hand: the paper prints CEA-Curie's EASY++ reduction as 4 %, so 4.29 is within (3.5 to 4.5) though
    7 % away; 4.6 is not.  0.85 printed: 5 % (0.0425) is wider than half its digit (0.005)."""
    from lakehouse.base.published import resolution, within_tolerance

    assert (resolution("4"), resolution("0.85"), resolution("1.5")) == (1.0, 0.01, 0.1)
    assert within_tolerance(4.0, 4.29, resolution("4"))
    assert not within_tolerance(4.0, 4.6, resolution("4"))
    assert within_tolerance(0.85, 0.892, resolution("0.85"))
    assert not within_tolerance(0.85, 0.893, resolution("0.85"))
    # The stays' divergences: half their last digit alone, whatever the value.
    assert not within_tolerance(1.24, 1.25, resolution("1.24"), last_digit_only=True)
    assert within_tolerance(-0.08, -0.076, resolution("-0.08"), last_digit_only=True)
    # (The HMM study is the one whose numbers are so judged.)
    from lakehouse.reproduce import STUDIES

    assert [name for name, study in STUDIES.items() if study.last_digit_only] == ["hmm"]


def test_section_2s_averages_are_the_papers_own_numbers_averaged():
    """The three averages the locality chapter's text gives, recomputed from its own tables (as the study
    computes ours): 8.4 % (mean excess of Table 2.2's f over Table 2.1's), 32 % (of f((s;u);r) over
    f(u;r)) and 4.3 (geometric mean of Table 2.3's two N)."""
    import math

    mine = {(p.trace, p.quantity): p.value for p in published("locality") if p.log}
    traces = sorted({trace for trace, _ in mine})
    assert len(traces) == 6

    def mean_excess(over, under):
        return 100 * (sum(mine[(t, over)] / mine[(t, under)] for t in traces) / 6 - 1)

    stated = {p.settings()["statistic"]: p.value for p in published("locality") if not p.log}
    assert mean_excess("f(s;r)", "f(s;r) K-Means run-time bins") == pytest.approx(
        stated["simple_over_kmeans"], abs=0.05
    )
    assert mean_excess("f((s;u);r)", "f(u;r)") == pytest.approx(stated["user_and_submit_over_user"], abs=1)
    ratios = [mine[(t, "N run-time bins of f(u;r)")] / mine[(t, "N run-time bins of f((s;u);r)")] for t in traces]
    assert math.prod(ratios) ** (1 / 6) == pytest.approx(stated["user_bins_over_both"], abs=0.05)
