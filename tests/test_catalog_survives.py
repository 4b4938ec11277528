"""The catalog survives its loss, and every view reads only what a writer committed.

`lake.duckdb` is one file that a user's `duckdb` shell (even `-readonly`) can overwrite with a COPY, and
the analysis folders are folders anyone may write into: neither may change what the lake answers."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from lakehouse.base.audit import run_audits
from lakehouse.base.lake import Lake
from lakehouse.cli import app
from lakehouse.nightly import history
from lakehouse.nightly.run import run

from conftest import cli as command
from nightly_inbox import FAST, put_log

#: The DuckDB catalog's machinery (its copies in meta/, `catalog rebuild`): a DuckLake lake has neither.
pytestmark = pytest.mark.today_format


def answers(lake: Lake) -> dict[str, object]:
    """What the lake says: jobs per log, the manifest, the analysis files, runs and scores, the history."""
    return {
        "jobs": sorted(lake.rows("SELECT log, count(*) FROM swf.jobs GROUP BY log")),
        "manifest": sorted(lake.rows("SELECT dataset, name, content_hash, rows_out, status FROM meta.manifest")),
        "outputs": sorted(lake.rows("SELECT dataset, name, rows FROM meta.outputs")),
        "runs": sorted(lake.rows("SELECT log, variant, mean_bounded_slowdown FROM analysis.campaign_runs")),
        "scores": lake.rows(
            "SELECT count(*), round(sum(loss), 6) FROM analysis.predictions_scores"
        ),  # (parallel sums: last bits vary)
        "nights": history.runs(lake)["run"].to_list(),
    }


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> Path:
    """A lake after one nightly run over two small logs (ingest, replays, predictions, history)."""
    folder = tmp_path_factory.mktemp("night")
    inbox = folder / "inbox"
    inbox.mkdir()
    put_log(inbox, "alpha", 400)
    put_log(inbox, "beta", 300, seed=3)
    lake = Lake(folder / "lake")
    assert run(lake, inbox, FAST).record.status == "ok"
    return lake.root


@pytest.fixture
def lake(night, tmp_path) -> Lake:
    copy = tmp_path / "lake"
    shutil.copytree(night, copy)
    moved = Lake(copy)
    moved.rebuild()  # a copied lake's views read the original until rebuilt
    return moved


def cli(*args: object):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert "Traceback" not in result.stderr, result.stderr
    return result


def _overwrite_with_csv(path: Path) -> None:
    # What `COPY (SELECT 1) TO 'lake.duckdb'` from a shell did.
    path.write_text("a\n1\n")


def _truncate(path: Path) -> None:
    with open(path, "r+b") as f:
        f.truncate(4096)


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _random_bytes(path: Path) -> None:
    path.write_bytes(os.urandom(300_000))


def _delete(path: Path) -> None:
    path.unlink()


#: `make test` damages the catalog two ways (other bytes, and none); the other three under make faults.
DAMAGES = [
    _overwrite_with_csv,
    _delete,
    *(pytest.param(d, marks=pytest.mark.thorough) for d in (_truncate, _empty, _random_bytes)),
]


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_catalog_is_one_line_then_rebuilt_from_the_lakes_files(lake, damage):
    before = answers(lake)
    assert before["runs"] and before["scores"][0][0] > 0 and len(before["manifest"]) == 2
    damage(lake.catalog_path)
    if lake.catalog_path.exists():  # every reader says what happened and the way back, in one error
        refused = cli("sql", "--lake", lake.root, "SELECT count(*) FROM swf.jobs")
        assert refused.exit_code != 0 and "lakehouse catalog rebuild" in " ".join(refused.stderr.split())
        refused = cli("audit", "--lake", lake.root)
        assert refused.exit_code != 0 and "lakehouse catalog rebuild" in " ".join(refused.stderr.split())
    rebuilt = cli("catalog", "rebuild", "--lake", lake.root)
    assert rebuilt.exit_code == 0, rebuilt.stderr
    assert answers(lake) == before
    assert all(result.passed for result in run_audits(lake))
    aside = list(lake.root.glob("lake.duckdb.broken-*"))
    assert len(aside) == (damage is not _delete)  # the damaged file is kept, not destroyed


def test_the_catalogs_copies_follow_every_commit(lake, tmp_path):
    """A later ingest and report are in the copies too: a rebuild after them loses neither."""
    (tmp_path / "more").mkdir()
    put_log(tmp_path / "more", "gamma", 200, seed=9)
    assert run(lake, tmp_path / "more", FAST).record.status == "ok"
    before = answers(lake)
    assert ("gamma", 200) in before["jobs"]
    _overwrite_with_csv(lake.catalog_path)
    lake.rebuild()
    assert answers(lake) == before


def test_files_put_into_analysis_folders_are_not_read(lake):
    """A COPY from a read-only shell into an analysis folder (a forged campaign result, a forged
    score) changes nothing, before and after the next writer's commit, and the audits pass."""
    before = answers(lake)
    runs = lake.root / "analysis" / "campaign_runs"
    committed = sorted(runs.glob("[!_]*.parquet"))[0]
    scores = lake.root / "analysis" / "predictions_scores"
    with duckdb.connect(str(lake.catalog_path), read_only=True) as con:
        forged = f"SELECT * REPLACE (mean_bounded_slowdown * 100 AS mean_bounded_slowdown) FROM '{committed}'"
        con.execute(f"COPY ({forged}) TO '{runs}/nightly.1.1.parquet'")
        con.execute(f"COPY ({forged}) TO '{runs}/{committed.stem}-copy.parquet'")
        con.execute(f"COPY (SELECT * FROM '{scores}/alpha.parquet') TO '{scores}/zeta.parquet'")
    assert answers(lake) == before
    lake.init()  # a writer's commit lists the committed files again, still not these
    assert answers(lake) == before
    assert all(result.passed for result in run_audits(lake))


def test_a_lake_made_before_the_outputs_were_listed_keeps_its_analysis_tables(lake):
    """Its catalog has no meta.outputs: the first writer adopts the analysis files in place, once."""
    before = answers(lake)
    shutil.rmtree(lake.root / "meta")  # nor copies, as then
    with duckdb.connect(str(lake.catalog_path)) as con:
        con.execute("DROP TABLE meta.outputs")
    lake.init()
    after = answers(lake)
    assert after["runs"] == before["runs"] and after["scores"] == before["scores"]
    assert {d for d, _, _ in after["outputs"]} == {d for d, _, _ in before["outputs"]}


def test_a_writer_makes_again_only_the_views_that_changed(tmp_path):
    from lakehouse.base.catalog import _views_as_made, view_files
    from lakehouse.base.datasets import DATASETS
    from lakehouse.data import sample_swf_paths
    from lakehouse.ingest.swf import ingest_swf

    lake = Lake(tmp_path / "lake")
    ingest_swf(lake, [str(p) for p in sample_swf_paths()])
    every = {view.name for view in view_files()} | {dataset.stored for dataset in DATASETS.values()}
    con = duckdb.connect(str(lake.catalog_path))
    assert set(_views_as_made(con)) == every  # all as made: a writer re-creates none of them
    # Someone redefines one view and drops another (a DuckDB shell can): those two are made again.
    con.execute("CREATE OR REPLACE VIEW swf.jobs_clean AS SELECT 1 AS x")
    con.execute("DROP VIEW swf.logs")
    assert set(_views_as_made(con)) == every - {"swf.jobs_clean", "swf.logs"}
    con.close()
    lake.init()  # a writer's session
    con = duckdb.connect(str(lake.catalog_path), read_only=True)
    assert set(_views_as_made(con)) == every
    assert con.execute("SELECT count(*) FROM swf.logs").fetchone() == (1,)
    assert "job_id" in [c[0] for c in con.execute("DESCRIBE swf.jobs_clean").fetchall()]
    con.close()


def test_a_catalog_made_before_a_view_existed_says_to_rebuild_it(lake):
    """A lake whose catalog an older lakehouse made lacks this version's newer views: a command that
    reads one says so in one line, with the command that brings the views up to date, which does."""
    with duckdb.connect(str(lake.catalog_path)) as con:
        con.execute("DROP VIEW predict.cluster_targets")  # as a catalog made before the view existed
    run = CliRunner().invoke(app, ["sql", "SELECT count(*) FROM predict.cluster_targets", "--lake", str(lake.root)])
    assert run.exit_code == 1, run.output
    said = " ".join(run.output.split())
    assert "the lake's catalog has no view predict.cluster_targets, which this version of lakehouse reads" in said
    assert f"run `lakehouse catalog rebuild --lake {lake.root}`" in said and "Traceback" not in run.output
    assert CliRunner().invoke(app, ["catalog", "rebuild", "--lake", str(lake.root)]).exit_code == 0
    assert lake.rows("SELECT count(*) FROM predict.cluster_targets") == [(0,)]
    # The predictions of a lake without a cloud trace never read the cloud targets (the cloud sources
    # come from the manifest): they run on the old catalog.
    with duckdb.connect(str(lake.catalog_path)) as con:
        con.execute("DROP VIEW predict.cluster_targets; DROP VIEW predict.cluster_job_targets")
    predicted = CliRunner().invoke(app, ["report", "predictions", "--lake", str(lake.root)])
    assert predicted.exit_code == 0, predicted.output


def test_the_nightly_picks_the_logs_to_predict_without_reading_the_cloud_targets(lake):
    """The nightly predicts changed SWF logs only: listing the cloud sources with targets would scan every
    usage row of a cloud trace in the lake (a minute at 0.2 of a 2019 cell), each night, for nothing."""
    from lakehouse.models.predictions.report import REPORT

    with duckdb.connect(str(lake.catalog_path)) as con:  # reading the cloud targets now fails
        con.execute("DROP VIEW predict.cluster_targets; DROP VIEW predict.cluster_job_targets")
    options = {option.name: option.default for option in REPORT.options}
    assert REPORT.nightly is not None
    runs, notes = REPORT.nightly(lake, ["alpha", "beta"], options)
    assert [run.name for run in runs] == ["alpha", "beta"] and notes == []


@pytest.mark.parametrize("meta_damage", [_truncate, _overwrite_with_csv], ids=["truncated", "foreign"])
def test_a_rebuild_that_cannot_read_the_tables_copies_moves_nothing(lake, meta_damage):
    """A broken catalog and a broken meta/ copy: one line, and the catalog stays where it was (it was
    moved aside first, then the remake failed on the copy: a traceback and a lake without a catalog)."""
    _random_bytes(lake.catalog_path)
    damaged = lake.catalog_path.read_bytes()
    meta_damage(lake.root / "meta" / "manifest.parquet")
    refused = cli("catalog", "rebuild", "--lake", lake.root)
    said = " ".join(refused.stderr.split())
    assert refused.exit_code == 1 and "the copies of the catalog's tables cannot be read" in said
    assert "nothing was moved" in said and lake.catalog_path.read_bytes() == damaged
    assert not list(lake.root.glob("lake.duckdb.broken-*"))


def test_catalog_rebuild_with_another_tables_copy_is_one_line_naming_the_file(tmp_path):
    from lakehouse.base.catalog import meta_copy
    from lakehouse.base.testing import small_log, write_swf

    jobs, header = small_log(4)
    lake = Lake(tmp_path / "lake")
    command("ingest", "swf", write_swf(tmp_path / "mini.swf", jobs, header), "--lake", lake.root)
    manifest, outputs = meta_copy(lake.root, "manifest"), meta_copy(lake.root, "outputs")
    assert manifest.exists() and outputs.exists()
    shutil.copyfile(manifest, outputs)  # valid Parquet, another table's columns
    lake.catalog_path.unlink()  # the catalog lost: rebuilt from the copies
    result = command("catalog", "rebuild", "--lake", lake.root, code=1)
    said = " ".join(result.stderr.split())
    assert f"{outputs}: not a copy of meta.outputs" in said and "Traceback" not in said, said
