"""The nightly run takes a cell of Google's 2019 trace from its inbox: the shards of a `cell_X` folder
are ingested (a JSON shard and its Parquet twin: one of them, the other named), the reports that read
Google data run on the 2019 trace for them, and a second night finds nothing new."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lakehouse.base.lake import Lake
from lakehouse.nightly.config import Config
from lakehouse.nightly.run import plan, run

from conftest import cli


@pytest.fixture(scope="module")
def cell(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gen")
    cli("generate", "google-2019", root, "--cell", "g", "--hours", "24", "--jobs", "12", "--seed", "5")
    return root / "cell_g"


NIGHT = Config(workers=1, reports=("volatility", "periodicity"), options={"periodicity": {"noise_trials": 0}})


def test_a_cell_in_the_inbox_is_ingested_and_its_reports_run_on_2019(cell: Path, tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    shutil.copytree(cell, inbox / "traces" / "cell_g")
    lake = Lake(tmp_path / "lake")
    dry = plan(lake, inbox, NIGHT)
    tables = ("collection_events", "instance_events", "instance_usage", "machine_events")
    assert {f.dataset for f in dry.google} == {f"google2019.{table}" for table in tables}
    assert dry.reports == ["volatility", "periodicity"]
    night = run(lake, inbox, NIGHT)
    assert night.record.status == "ok", night.record.errors
    assert night.record.files_ingested == len(list(cell.iterdir()))
    ((cells,),) = lake.query("SELECT string_agg(DISTINCT cell) FROM google2019.instance_usage").rows()
    assert cells == "g"
    # the reports ran on the 2019 trace: their 2019 tables are stored, the 2011 ones were not needed
    assert lake.query("SELECT count(*) FROM analysis.volatility_2019 WHERE cell = 'g'").rows()[0][0] > 0
    assert lake.query("SELECT count(*) FROM analysis.periodicity_2019 WHERE cell = 'g'").rows()[0][0] > 0
    assert night.record.reports_run == ["volatility", "periodicity"] and not night.record.reports_failed
    again = run(lake, inbox, NIGHT)
    assert (again.record.files_ingested, again.record.reports_run) == (0, [])


def test_a_shard_and_its_twin_in_the_inbox_ingest_once(cell: Path, tmp_path: Path) -> None:
    inbox = tmp_path / "inbox" / "cell_g"
    inbox.mkdir(parents=True)
    shard = "machine_events-000000000000"
    shutil.copy(cell / f"{shard}.json.gz", inbox)
    cli("generate", "google-2019", tmp_path / "pq", "--cell", "g", "--hours", "24", "--jobs", "12", "--seed", "5",
        "--format", "parquet")  # fmt: skip
    shutil.copy(tmp_path / "pq" / "cell_g" / f"{shard}.parquet.gz", inbox)
    lake = Lake(tmp_path / "lake")
    night = run(lake, inbox.parent, Config(workers=1, reports=()))
    assert night.record.files_ingested == 1 and night.record.files_failed == 1
    assert any("the same shard as" in error for error in night.record.errors)
    ((machines,),) = lake.query("SELECT count(*) FROM google2019.machine_events").rows()
    assert machines == 40  # the generator's machines, once
