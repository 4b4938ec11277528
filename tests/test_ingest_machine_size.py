"""`ingest swf --machine-size`: N sizes the logs whose header gives no MaxProcs and leaves a header's
size alone (saying so); LOG=N sizes the logs LOG names over their header, with a warning; a size given
once stays with the log when it is ingested again, until another is given."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from lakehouse.base.errors import LakehouseError
from lakehouse.base.testing import small_log, write_swf
from lakehouse.cli import app
from lakehouse.ingest.swf import ingest_swf

from conftest import cli as run
from conftest import unboxed


@pytest.fixture
def logs(tmp_path):
    jobs, header = small_log(6, max_procs=8)
    write_swf(tmp_path / "sized.swf", jobs, header)
    write_swf(tmp_path / "bare.swf", jobs, {k: v for k, v in header.items() if k != "MaxProcs"})
    return [str(tmp_path / "sized.swf"), str(tmp_path / "bare.swf")]


def sizes(lake) -> dict[str, int]:
    return dict(lake.query("SELECT log, machine_size FROM swf.logs").rows())


def warnings_of(results) -> dict[str, str]:
    return {r.log: " ".join(r.warnings) for r in results}


def test_a_number_sizes_only_the_logs_without_maxprocs_and_says_so(lake, logs):
    results = ingest_swf(lake, logs, machine_size=8192)
    assert sizes(lake) == {"sized": 8, "bare": 8192}
    assert "machine size 8 from the header's MaxProcs" in warnings_of(results)["sized"]
    assert "MaxProcs" not in warnings_of(results)["bare"]


def test_log_equals_n_overrides_a_header_with_a_warning(lake, logs):
    results = ingest_swf(lake, logs, machine_sizes=[("sized", 16)])
    assert sizes(lake) == {"sized": 16, "bare": None}
    assert "machine size 16 as given for this log, over its header's MaxProcs 8" in warnings_of(results)["sized"]
    with pytest.raises(LakehouseError, match="no log matches 'nope'"):
        ingest_swf(lake, logs, machine_sizes=[("nope", 16)])


def test_a_given_size_is_kept_on_a_forced_reingest_until_changed(lake, logs):
    ingest_swf(lake, logs, machine_size=64, machine_sizes=[("sized", 16)])
    assert sizes(lake) == {"sized": 16, "bare": 64}
    again = ingest_swf(lake, logs, force=True)
    assert sizes(lake) == {"sized": 16, "bare": 64}
    assert all("as given at an earlier ingest" in w for w in warnings_of(again).values())
    assert {r.status for r in ingest_swf(lake, logs)} == {"unchanged"}  # nothing asked: nothing to redo
    ingest_swf(lake, logs, machine_sizes=[("sized", 8), ("bare", 32)])  # changed: back to the header's
    assert sizes(lake) == {"sized": 8, "bare": 32}
    ingest_swf(lake, logs, force=True)
    assert sizes(lake) == {"sized": 8, "bare": 32}  # 8 is the header's again: nothing given to keep


def test_the_command_takes_n_and_log_equals_n(tmp_path, logs):

    from lakehouse.base.lake import Lake

    root = tmp_path / "lake"
    command = ["ingest", "swf", *logs, "--machine-size", "8192", "--machine-size", "sized=4", "--lake", str(root)]
    done = CliRunner().invoke(app, command)
    assert done.exit_code == 0, done.output
    assert sizes(Lake(root)) == {"sized": 4, "bare": 8192}
    bad = CliRunner().invoke(app, ["ingest", "swf", *logs, "--machine-size", "=4", "--lake", str(root)])
    assert bad.exit_code == 1 and "the log before '=' is missing" in bad.output


@pytest.mark.parametrize(
    ("header", "size", "warning"),
    [
        ({"MaxProcs": 8, "MaxNodes": 4}, 8, None),
        ({"MaxNodes": 6}, 6, "no MaxProcs in the header: machine size 6 taken from MaxNodes"),
        (
            {},
            None,
            "no MaxProcs or MaxNodes in the header: the log has no machine size (re-ingest with --machine-size N",
        ),
    ],
)
def test_ingest_says_where_the_machine_size_comes_from(tmp_path, header, size, warning):
    jobs, _ = small_log(4, max_procs=4)
    write_swf(tmp_path / "x.swf", jobs, header)
    result = run("ingest", "swf", tmp_path / "x.swf", "--lake", tmp_path / "l", "--format", "json")
    note = json.loads(result.stdout)[0]["note"]
    assert (warning in note) if warning else note == ""
    logs = run("sql", "select machine_size from swf.logs", "--lake", tmp_path / "l", "-f", "json").stdout
    assert json.loads(logs) == [{"machine_size": size}]


def test_a_log_without_a_machine_size_asks_for_one_when_simulated(tmp_path):
    jobs, _ = small_log(4, max_procs=4)
    write_swf(tmp_path / "x.swf", jobs, {})
    run("ingest", "swf", tmp_path / "x.swf", "--lake", tmp_path / "l")
    assert "give --machine-size" in unboxed(run("simulate", "x", "--lake", tmp_path / "l", code=1).stderr)
    assert json.loads(run("simulate", "x", "--lake", tmp_path / "l", "--machine-size", 4, "-f", "json").stdout)
