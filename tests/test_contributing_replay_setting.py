"""A replay setting a user tunes is declared once, on its `ReplaySettings` field (lakehouse.sim.settings):
`simulate`'s option, `campaign run`'s list, the grid's dimension, the variant's name, a replay's
provenance and a campaign's stored row are made from it.  The recipe of docs/contributing.md, followed
by a test: a toy setting added to a copy of the package's layout (its field, and its column of
analysis.campaign_runs) is, with no other edit, an option of both commands, swept by a campaign that
names and stores it, and in `simulate`'s provenance.  (The engine does not read the toy: what it
changes in a replay is the engine's part of the recipe.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from package_tree import REPO, build, lakehouse_in, links_of

from lakehouse.campaigns.grid import DIMENSIONS, RunSettings
from lakehouse.cli.replay_options import written_default
from lakehouse.models.campaigns import CAMPAIGN_RUNS_SCHEMA
from lakehouse.sim.settings import TUNABLES, ReplaySettings

from nightly_inbox import put_log

TOY_FIELD = (
    '    toy_factor: int = tunable(1, kind=int, read=int, help="A toy setting, which the engine does not read.")\n'
)
#: Where the toy goes: before ReplaySettings' first field that is not a setting, after the last column.
SETTINGS_ANCHOR = "    selection: Selection | None = None\n"
COLUMNS_ANCHOR = '        pa.field("usage_half_life", pa.float64()),\n'
TOY_COLUMN = """        pa.field("toy_factor", pa.int64()),
"""


def test_every_tunable_setting_is_an_option_a_dimension_a_column_and_a_docs_row():
    from typer.testing import CliRunner

    from lakehouse.cli.commands import app

    runner = CliRunner()
    simulate = runner.invoke(app, ["simulate", "--help"], env={"COLUMNS": "300"}).stdout
    campaign = runner.invoke(app, ["campaign", "run", "--help"], env={"COLUMNS": "300"}).stdout
    docs = (REPO / "docs" / "campaigns.md").read_text()
    provenance = ReplaySettings(8).columns()
    for name in TUNABLES:
        flag = "--" + name.replace("_", "-")
        assert flag in simulate and flag in campaign, name
        assert name in DIMENSIONS and name in CAMPAIGN_RUNS_SCHEMA.names and name in provenance, name
        row = re.search(rf"^\| `{flag}` \|.*\| `([^`]*)` \|$", docs, re.M)
        assert row is not None, f"docs/campaigns.md has no row for {flag}"
        assert row.group(1) == written_default(name), name


def test_a_campaign_point_replays_as_simulate_does_with_the_same_settings():
    point = RunSettings(
        backfill="sjbf", predictor="hmm", backfill_confidence=0.1, usage_half_life=86_400.0, threshold=60
    )
    assert point.replay_settings(16) == ReplaySettings.of(
        16, backfill="sjbf", predictor="hmm", backfill_confidence=0.1, usage_half_life=86_400.0, threshold=60
    )
    assert point.label() == "easy-fcfs-sjbf-hmm-thr=60-conf=0.1-hl=1d"  # (the names stored runs have)


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """The package's layout with a toy setting: its field in a copy of lakehouse/sim/settings.py and its
    column in a copy of the campaign tables' declaration, every other file the repository's."""
    folder = tmp_path_factory.mktemp("toy-setting")
    package = build(folder)
    _edited(links_of(package / "sim") / "settings.py", SETTINGS_ANCHOR, TOY_FIELD + SETTINGS_ANCHOR)
    campaigns = links_of(links_of(package / "models") / "campaigns")
    _edited(campaigns / "__init__.py", COLUMNS_ANCHOR, COLUMNS_ANCHOR + TOY_COLUMN)
    return folder


def _edited(link: Path, anchor: str, replacement: str) -> None:
    """The file `link` points to, copied in its place with `anchor` replaced."""
    text = link.read_text()
    assert anchor in text
    link.unlink()
    link.write_text(text.replace(anchor, replacement))


lakehouse = lakehouse_in


def test_a_toy_setting_is_an_option_a_campaign_sweeps_names_and_stores(tree, tmp_path):
    for command in (["simulate", "--help"], ["campaign", "run", "--help"]):
        helped = lakehouse(tree, *command)
        assert "--toy-factor" in helped.stdout and "A toy setting" in helped.stdout, helped.stderr
    inbox, lake = tmp_path / "logs", tmp_path / "lake"
    inbox.mkdir()
    put_log(inbox, "alpha", 40)
    assert lakehouse(tree, "ingest", "swf", inbox, "--lake", lake).returncode == 0
    swept = lakehouse(tree, "campaign", "run", "--log", "alpha", "--toy-factor", "1,2", "--workers", "1",
                      "--lake", lake, "-f", "json")  # fmt: skip
    assert swept.returncode == 0, swept.stderr
    assert {row["variant"] for row in json.loads(swept.stdout)} == {"easy-fcfs", "easy-fcfs-toy_factor=2"}
    stored = lakehouse(tree, "sql", "SELECT variant, toy_factor FROM analysis.campaign_runs ORDER BY 2",
                       "--lake", lake, "-f", "csv")  # fmt: skip
    assert stored.stdout.splitlines() == ["variant,toy_factor", "easy-fcfs,1", "easy-fcfs-toy_factor=2,2"]
    replayed = lakehouse(tree, "simulate", "alpha", "--toy-factor", "3", "--lake", lake, "-f", "json")
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout)[0]["toy_factor"] == 3
