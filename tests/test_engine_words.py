"""The engine's words, said once: the names of its choices and its predictors are the compiled engine's
(its exported constants), and Python's enums, help and the docs follow them.  A choice or a predictor
added in Rust shows up in `--help` with nothing to edit in Python; these tests fail until an enum or a
docs page that must name it does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lakehouse import _native
from lakehouse.sim.options import (
    DISTRIBUTION_PREDICTORS,
    PREDICTOR_HELP,
    Algorithm,
    Backfill,
    Compat,
    Correction,
    Policy,
)

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.mark.parametrize(
    ("enum", "names"),
    [
        (Algorithm, _native.ALGORITHMS),
        (Backfill, _native.BACKFILLS),
        (Correction, _native.CORRECTIONS),
        (Compat, _native.COMPATS),
        (Policy, _native.BUILT_IN_POLICIES),
    ],
)
def test_pythons_choices_are_the_engines_names_in_its_order(enum, names):
    assert [str(member) for member in enum] == names


def test_the_predictors_help_and_the_simulator_page_name_every_predictor_of_the_engine():
    page = (DOCS / "simulator.md").read_text()
    section = page[page.index("## Predictions and corrections") : page.index("## Event semantics")]
    for written, meaning, _ in _native.PREDICTORS:
        assert f"{written} ({meaning})" in PREDICTOR_HELP
        assert f"`{written}`" in section, f"docs/simulator.md does not name the predictor {written}"
    for name in _native.CORRECTIONS:
        assert f"`{name}`" in section, f"docs/simulator.md does not name the correction {name}"


def test_the_distribution_predictors_are_the_engines():
    """(The backfill confidence applies to them alone: a campaign leaves it out of the others' runs.)"""
    flagged = [re.split(r"[\[:]", written)[0] for written, _, gives in _native.PREDICTORS if gives]
    assert list(DISTRIBUTION_PREDICTORS) == flagged == ["hmm", "requested-law"]
