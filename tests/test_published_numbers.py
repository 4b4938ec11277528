"""The numbers the documentation publishes still come out of the code: the EASY-FCFS and best-variant
bounded slowdowns of the policy campaign (docs/campaigns.md) and the canonical EASY / EASY++ column of
the triple study (docs/predictions.md), replayed on the shared logs. A refactoring that changes a
result fails here, not in a user's hands."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lakehouse.base.job_views import View, log_jobs, log_machine_size
from lakehouse.sim import simulate

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = {name: (DOCS / f"{name}.md").read_text() for name in ("campaigns", "predictions")}
EASY_PLUS_PLUS = {"predictor": "ave2", "backfill": "sjbf", "correction": "incremental"}
LOG_NAMES = {
    "CEA-Curie": "CEA-Curie-2011-2.1-cln",
    "CTC-SP2": "CTC-SP2-1996-3.1-cln",
    "KTH-SP2": "KTH-SP2-1996-2.1-cln",
    "SDSC-BLUE": "SDSC-BLUE-2000-4.2-cln",
    "SDSC-SP2": "SDSC-SP2-1998-4.2-cln",
}
MACHINE_SIZES = {"CEA-Curie-2011-2.1-cln": 80_640}  # as the published runs give it


def table_rows(page: str, header: str) -> list[list[str]]:
    """The cells of the table of docs/PAGE.md whose header line starts with `header`."""
    text = PAGES[page]
    block = text[text.index(header) :].split("\n\n", 1)[0]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in block.splitlines()[2:]]


def policy_rows() -> list[tuple[str, str, float, float]]:
    """(log, best variant, EASY-FCFS, the variant's value) of the policy-campaign table."""
    rows = table_rows("campaigns", "| log | EASY-FCFS | best variant |")
    return [(log, variant, float(fcfs), float(value.split()[0])) for log, fcfs, variant, value, *_ in rows]


def triple_rows() -> list[tuple[str, float, float]]:
    """(log, EASY, EASY++) of the canonical column of the triple study's EASY / EASY++ table."""
    rows = table_rows("predictions", "| log | published: EASY / EASY++")
    return [(LOG_NAMES[row[0]], *map(float, row[3].split(" / "))) for row in rows]


def replay(lake, log: str, **settings: str) -> float:
    jobs = log_jobs(lake, log, View.jobs_strong)
    size = MACHINE_SIZES.get(log) or log_machine_size(lake, log, View.jobs_strong)
    return simulate(jobs, size, **settings).summary["mean_bounded_slowdown"]


def variant_settings(name: str) -> dict[str, str]:
    """`easy-saf-sjbf` -> policy saf, backfill sjbf."""
    match = re.fullmatch(r"easy-(\w+?)(-sjbf)?", name)
    assert match, name
    return {"policy": match.group(1), "backfill": "sjbf" if match.group(2) else "queue"}


def test_the_tables_are_found():
    assert len(policy_rows()) == 5 and len(triple_rows()) == 5


@pytest.mark.parametrize(("log", "variant", "fcfs", "best"), policy_rows())
def test_policy_campaign_numbers(pwa_lake, log, variant, fcfs, best):
    lake, _ = pwa_lake
    assert round(replay(lake, log), 1) == fcfs
    assert round(replay(lake, log, **variant_settings(variant)), 1) == best


@pytest.mark.parametrize(("log", "easy", "easy_plus_plus"), triple_rows())
def test_triple_study_canonical_numbers(pwa_lake, log, easy, easy_plus_plus):
    lake, _ = pwa_lake
    assert round(replay(lake, log), 1) == easy
    assert round(replay(lake, log, **EASY_PLUS_PLUS), 1) == easy_plus_plus
