"""`lakehouse ingest google-2019`: the shared real cell-a shards (JSON and Parquet), the decoding rule,
and bad shards and rows.  The expected counts are read from the files here with the standard library
(json, gzip) or pyarrow, never from the ingest under test."""

from __future__ import annotations

import collections
import gzip
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lakehouse.base.lake import Lake

from conftest import SHARED, cli, shared_or_skip

CELL_A = SHARED / "other" / "google-clusterdata-2019" / "cell_a"
MACHINE_JSON = CELL_A / "machine_events" / "machine_events-000000000000.json.gz"
MACHINE_PARQUET = CELL_A / "machine_events" / "machine_events-000000000000.parquet.gz"
USAGE_ROW = CELL_A / "instance_usage" / "instance_usage-000000000000.head1.json.gz"

COLUMNS = "time, machine_id, type, switch_id, capacity_cpus, capacity_memory, platform_id, missing_data_reason"


def _independent_counts() -> dict[str, object]:
    """What the issue's acceptance counts, read from the JSON with the standard library."""
    rows = [json.loads(line) for line in gzip.open(shared_or_skip(MACHINE_JSON), "rt")]
    types = collections.Counter(int(r["type"]) for r in rows)
    return {
        "rows": len(rows),
        "machines": len({r["machine_id"] for r in rows}),
        "types": (types[1], types[2], types[3]),
        "add_without_capacity": sum(int(r["type"]) == 1 and "capacity" not in r for r in rows),
    }


def _query(lake: Path, sql: str) -> list[tuple]:
    return Lake(lake).query(sql).rows()


@pytest.fixture(scope="module")
def machine_lakes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The shared machine_events shard ingested twice: from its JSON and from its Parquet export."""
    lakes = {}
    for fmt, shard in (("json", MACHINE_JSON), ("parquet", MACHINE_PARQUET)):
        lakes[fmt] = tmp_path_factory.mktemp(fmt) / "lake"
        cli("ingest", "google-2019", shared_or_skip(shard), "--lake", lakes[fmt])
    return lakes


def test_shared_machine_events_give_the_published_counts(machine_lakes: dict[str, Path]) -> None:
    expected = _independent_counts()
    assert expected == {"rows": 46_219, "machines": 10_001, "types": (27_777, 17_941, 501), "add_without_capacity": 459}
    for lake in machine_lakes.values():
        ((rows, machines, adds, removes, updates, no_capacity, cells),) = _query(
            lake,
            "SELECT count(*), count(DISTINCT machine_id), count(*) FILTER (event = 'ADD'), "
            "count(*) FILTER (event = 'REMOVE'), count(*) FILTER (event = 'UPDATE'), "
            "count(*) FILTER (event = 'ADD' AND capacity_cpus IS NULL), string_agg(DISTINCT cell) "
            "FROM google2019.machine_events",
        )
        assert (rows, machines, (adds, removes, updates), no_capacity) == (
            expected["rows"],
            expected["machines"],
            expected["types"],
            expected["add_without_capacity"],
        )
        assert cells == "a"  # from the folder's name, cell_a
        ((caveat,),) = _query(
            lake, "SELECT affected_rows FROM google2019.caveats WHERE caveat = 'machine ADD without capacity'"
        )
        assert caveat == 459


def test_json_and_parquet_exports_give_the_same_table(machine_lakes: dict[str, Path]) -> None:
    tables = [
        Lake(lake).query(f"SELECT {COLUMNS}, line FROM google2019.machine_events ORDER BY line")
        for lake in machine_lakes.values()
    ]
    assert tables[0].equals(tables[1])
    # and both are the file's values: the first row as pyarrow reads the Parquet export
    first = pq.read_table(MACHINE_PARQUET).slice(0, 1).to_pylist()[0]
    row = tables[0].row(0, named=True)
    assert (row["time"], row["machine_id"], row["type"], row["switch_id"]) == (
        first["time"],
        first["machine_id"],
        first["type"],
        first["switch_id"],
    )


def test_times_keep_their_sentinels_as_flags(machine_lakes: dict[str, Path]) -> None:
    zeros = sum(int(json.loads(line)["time"]) == 0 for line in gzip.open(MACHINE_JSON, "rt"))
    ((before, dated, first_instant),) = _query(
        machine_lakes["json"],
        "SELECT count(*) FILTER (before_trace), count(time_at) FILTER (before_trace), "
        "min(time_at) FILTER (time = 600000000) FROM google2019.machine_events",
    )
    assert (before, dated) == (zeros, 0)
    ((start,),) = _query(
        machine_lakes["json"], "SELECT google2019.instant(600000000) = TIMESTAMPTZ '2019-05-01 07:00:00+00'"
    )
    assert start  # 00:00 PDT is 07:00 UTC: the trace's start, 600 s after its clock's zero
    ((local,),) = _query(
        machine_lakes["json"], "SELECT strftime(google2019.local_time(600000000, 'a'), '%Y-%m-%d %H:%M')"
    )
    assert local == "2019-05-01 03:00"  # cell a ran in New York (EDT, three hours ahead of PDT)
    assert first_instant is None or first_instant  # (no row at exactly the start is needed)


def test_twin_shard_replaces_rather_than_adds(machine_lakes: dict[str, Path], tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    shutil.copytree(machine_lakes["json"], lake, symlinks=True)
    Lake(lake).init()
    cli("ingest", "google-2019", MACHINE_PARQUET, "--lake", lake)
    ((rows,),) = _query(lake, "SELECT count(*) FROM google2019.machine_events")
    assert rows == 46_219
    # both exports of one shard in one call: the second is refused, naming the first
    result = cli("ingest", "google-2019", MACHINE_JSON, MACHINE_PARQUET, "--lake", tmp_path / "other", code=2)
    assert "the same shard as" in result.stderr


def _real_row_lake(tmp_path: Path) -> dict:
    """A lake of the one real instance_usage row, as a shard of cell a (tmp_path/lake); the row as the
    JSON holds it."""
    text = gzip.open(shared_or_skip(USAGE_ROW), "rt").read()
    shard = tmp_path / "cell_a" / "instance_usage-000000000000.json.gz"
    shard.parent.mkdir()
    shard.write_bytes(gzip.compress(text.encode()))
    cli("ingest", "google-2019", shard, "--lake", tmp_path / "lake")
    return json.loads(text)


def test_the_real_usage_row_keeps_its_histograms(tmp_path: Path) -> None:
    """The one real instance_usage row (cell a): every value as the JSON holds it, the histograms as
    lists of 11 and 9, the window's length 300 s."""
    row = _real_row_lake(tmp_path)
    got = Lake(tmp_path / "lake").query("SELECT * FROM google2019.instance_usage").row(0, named=True)
    assert got["cpu_usage_distribution"] == pytest.approx(row["cpu_usage_distribution"])
    assert got["tail_cpu_usage_distribution"] == pytest.approx(row["tail_cpu_usage_distribution"])
    assert got["average_usage_cpus"] == pytest.approx(row["average_usage"]["cpus"])
    assert got["random_sample_usage_cpus"] == pytest.approx(row["random_sample_usage"]["cpus"])
    assert got["collection_id"] == int(row["collection_id"]) and got["alloc_collection_id"] == int(
        row["alloc_collection_id"]
    )
    assert got["window_s"] == 300 and got["top_level"] is False  # a task inside an alloc set
    assert got["assigned_memory"] == 0  # a bare 0 in the export
    ((usage_rows,),) = _query(tmp_path / "lake", "SELECT count(*) FROM google2019.usage")
    assert usage_rows == 0  # counted in its alloc instance's row, not again


# --- bad shards and bad rows ------------------------------------------------------------------------


def _shard(folder: Path, table: str, rows: list[dict], number: int = 0) -> Path:
    path = folder / "cell_b" / f"{table}-{number:012d}.json.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    return path


GOOD_EVENT = {"time": "5000000", "type": "3", "collection_id": "7", "priority": "200", "instance_index": "2",
              "machine_id": "11", "resource_request": {"cpus": 0.25, "memory": 0.5},
              "constraint": [{"name": "abc", "value": "2", "relation": "2"},
                             {"name": "xyz", "relation": "6"}]}  # fmt: skip


def test_rows_that_break_the_schema_go_to_the_quarantine_with_their_reasons(tmp_path: Path) -> None:
    rows = [
        GOOD_EVENT,
        {"time": "6000000", "collection_id": "7"},  # type left out: SUBMIT (0), kept
        {**GOOD_EVENT, "type": "11"},  # no such event
        {**GOOD_EVENT, "time": "-5"},  # negative, not a sentinel
        {**GOOD_EVENT, "priority": "high"},  # not a number
        {**GOOD_EVENT, "cpu_usage_distribution": [0.1]},  # a field of another table
    ]
    shard = _shard(tmp_path, "instance_events", rows)
    lines = shard.read_bytes()
    text = gzip.decompress(lines).decode() + "<html>oops</html>\n"
    shard.write_bytes(gzip.compress(text.encode()))
    cli("ingest", "google-2019", shard, "--lake", tmp_path / "lake")
    lake = tmp_path / "lake"
    kept = _query(lake, "SELECT line, event, tier, resource_request_cpus FROM google2019.instance_events ORDER BY line")
    assert kept == [(1, "SCHEDULE", "production", 0.25), (2, "SUBMIT", "free", None)]
    reasons = dict(_query(lake, "SELECT line, reason FROM google2019.quarantine ORDER BY line"))
    assert set(reasons) == {3, 4, 5, 6, 7}
    assert "type: unknown code 11" in reasons[3]
    assert "time: negative (-5)" in reasons[4]
    assert "priority: high is not a INTEGER" in reasons[5]
    assert "fields that instance_events does not have: cpu_usage_distribution" in reasons[6]
    assert reasons[7] == "not a JSON object"
    constraints = _query(
        lake, "SELECT name, value, relation_name, line FROM google2019.instance_constraints ORDER BY name"
    )
    assert constraints == [("abc", "2", "LESS_THAN", 1), ("xyz", None, "PRESENT", 1)]


def test_histograms_of_the_wrong_length_or_out_of_order_are_quarantined(tmp_path: Path) -> None:
    good = {"start_time": "0", "end_time": "300000000", "collection_id": "1", "average_usage": {"cpus": 0.5},
            "cpu_usage_distribution": [i / 10 for i in range(11)],
            "tail_cpu_usage_distribution": [0.91 + i / 100 for i in range(9)]}  # fmt: skip
    rows = [
        good,
        {**good, "cpu_usage_distribution": [i / 10 for i in range(10)]},
        {**good, "tail_cpu_usage_distribution": [0.99 - i / 100 for i in range(9)]},
    ]
    cli("ingest", "google-2019", _shard(tmp_path, "instance_usage", rows), "--lake", tmp_path / "lake")
    reasons = _query(tmp_path / "lake", "SELECT line, reason FROM google2019.quarantine ORDER BY line")
    assert reasons == [
        (2, "cpu_usage_distribution: 10 values, not the documented 11"),
        (3, "tail_cpu_usage_distribution: not in increasing order"),
    ]
    # a member left out of a message that is there is 0; the row is top-level (not in an alloc set)
    assert _query(tmp_path / "lake", "SELECT average_usage_memory FROM google2019.usage") == [(0,)]


def test_a_shard_that_is_not_what_its_name_says_fails_alone(tmp_path: Path) -> None:
    good = _shard(tmp_path, "collection_events", [{"time": "1", "collection_id": "3", "priority": "103"}], 0)
    whole = gzip.compress(b"".join(json.dumps(GOOD_EVENT).encode() + b"\n" for _ in range(2000)))
    cut = tmp_path / "cell_b" / "instance_events-000000000001.json.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    page = tmp_path / "cell_b" / "instance_events-000000000002.json.gz"
    page.write_bytes(gzip.compress(b"<!DOCTYPE html><html><body>Service Unavailable</body></html>\n"))
    alien = _shard(tmp_path, "instance_usage", [{"time": "1", "machine_id": "2", "type": "1", "platform_id": "p"}], 3)
    other_columns = tmp_path / "cell_b" / "machine_events-000000000004.parquet.gz"
    pq.write_table(pa.table({"time": [1], "machine_id": [2]}), other_columns)
    lake = tmp_path / "lake"
    result = cli("ingest", "google-2019", tmp_path / "cell_b", "--lake", lake, code=2)
    errors = result.stderr
    assert f"{cut}: truncated gzip stream" in errors.replace("\n", "")
    assert "not JSON lines" in errors and "error page" in errors
    assert "(a shard of another table?)" in errors
    assert "a Parquet file without the columns type, switch_id, capacity, platform_id" in errors.replace("\n", " ")
    ((tier,),) = _query(lake, "SELECT tier FROM google2019.collection_events")
    assert tier == "best-effort batch"
    assert _query(lake, "SELECT count(*) FROM google2019.instance_events") == [(0,)]
    assert _query(lake, "SELECT count(*) FROM google2019.quarantine") == [(0,)]
    assert good.exists() and alien.exists()


def test_a_shard_without_a_cell_is_refused_with_the_way_to_name_it(tmp_path: Path) -> None:
    shard = tmp_path / "machine_events-000000000000.json.gz"
    shard.write_bytes(gzip.compress(b'{"time":"1","machine_id":"2","type":"1"}\n'))
    result = cli("ingest", "google-2019", shard, "--lake", tmp_path / "lake", code=2)
    assert "which cell?" in result.stderr
    cli("ingest", "google-2019", shard, "--cell", "g", "--lake", tmp_path / "lake")
    assert _query(tmp_path / "lake", "SELECT cell, event FROM google2019.machine_events") == [("g", "ADD")]


def test_the_sql_macros_name_the_codes_as_the_format_declares_them(machine_lakes: dict[str, Path]) -> None:
    """sql/google2019/macros.sql spells the proto's names for the views; the Python declaration
    spells them for the checks and the docs: both must agree, code for code."""
    from lakehouse.base import google2019_format as f

    macros = {
        "event_name": f.EVENT_TYPES,
        "machine_event_name": f.MACHINE_EVENT_TYPES,
        "collection_type_name": f.COLLECTION_TYPES,
        "missing_type_name": f.MISSING_TYPES,
        "latency_sensitivity_name": f.LATENCY_SENSITIVITY,
        "relation_name": f.CONSTRAINT_RELATIONS,
    }
    lake = Lake(machine_lakes["json"])
    for macro, names in macros.items():
        codes = ", ".join(map(str, names))
        got = lake.query(f"SELECT c, google2019.{macro}(c) FROM unnest([{codes}]) AS t(c)").rows()
        assert dict(got) == dict(names), macro
    zones = lake.query(f"SELECT c, google2019.time_zone(c) FROM unnest({list(f.CELL_TIME_ZONES)}) AS t(c)").rows()
    assert dict(zones) == f.CELL_TIME_ZONES


def test_the_2011_method_and_the_percentiles_on_the_real_row(tmp_path: Path) -> None:
    """`report volatility --trace google-2019` on real 2019 data: the one real window of cell a (a task
    inside an alloc set). Its numbers against a hand calculation from the row, with numpy: |d| from
    the mean and the random second, E|X - mean| / mean by trapezoids over the 20 percentiles."""
    import numpy as np

    row = _real_row_lake(tmp_path)
    cli("report", "volatility", "--trace", "google-2019", "--lake", tmp_path / "lake")
    got = Lake(tmp_path / "lake").query("SELECT * FROM analysis.volatility_2019 WHERE tier = 'all'").row(0, named=True)
    mean, second = row["average_usage"]["cpus"], row["random_sample_usage"]["cpus"]
    levels = np.array([*range(0, 100, 10), *range(91, 100), 100]) / 100
    values = np.array([*row["cpu_usage_distribution"][:10], *row["tail_cpu_usage_distribution"],
                       row["cpu_usage_distribution"][10]])  # fmt: skip
    deviations = np.abs(values - mean)
    mad = float(np.sum((deviations[1:] + deviations[:-1]) / 2 * np.diff(levels))) / mean
    assert got["windows"] == 1 and got["tier"] == "all"
    assert got["mean_abs_d_2011"] == pytest.approx(abs(mean - second) / mean)
    assert got["mean_mad_percentiles"] == pytest.approx(mad)
    p90, p10 = row["cpu_usage_distribution"][9], row["cpu_usage_distribution"][1]
    assert got["median_spread_p90_p10"] == pytest.approx((p90 - p10) / mean)
    assert got["median_p99_over_mean"] == pytest.approx(row["tail_cpu_usage_distribution"][8] / mean)
