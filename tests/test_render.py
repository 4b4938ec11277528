"""Tables as a terminal and a file show them (lakehouse.base.render): every column of a wide table in
blocks of 80 columns, each block keyed by its log or job, one row turned when it is too wide, units in
headers and not in CSV, names and paths never cut."""

from __future__ import annotations

import polars as pl
from rich.console import Console

from lakehouse.base.render import print_frame, print_table, rich_table


def test_log_names_and_counts_are_never_broken_in_an_80_column_terminal():
    long_name = "LLNL-Thunder-2007-1.1-cln"
    frame = pl.DataFrame(
        {"log": [long_name, "KTH-SP2-1996-2.1-cln"], "jobs": [1_234_567, 28_476], "mean_wait": [262194.0, 13.5]}
        | {f"metric_{i}": [1.0, 2.0] for i in range(8)}  # far too wide for 80 columns
        | {"note": ["a long free-text note that may fold over several lines of the table", ""]}
    )
    console = Console(width=80, record=True)
    print_table(console, rich_table(frame))
    text = console.export_text()
    lines = [line for line in text.splitlines() if long_name in line]
    assert len(lines) == 1 and "1,234,567" in lines[0] and "262,194" in lines[0]
    assert "e+" not in text
    narrow = Console(width=80, record=True)  # a table that fits folds only its free text
    print_table(narrow, rich_table(frame.select("log", "jobs", "note")))
    assert all(len(line) <= 80 for line in narrow.export_text().splitlines())


WIDE = pl.DataFrame(
    {"log": ["LLNL-Thunder-2007-1.1-cln", "KTH-SP2-1996-2.1-cln"], "view": ["jobs_clean", "jobs_clean"]}
    | {name: [123_456.0, 7.5] for name in ("mean_wait", "max_wait", "p50_wait", "p90_wait", "p99_wait")}
    | {f"mean_bounded_slowdown_{i}": [1.0, 2.0] for i in range(6)}
    | {"utilization": [0.7, 0.8], "jobs": [28_476, 1_234_567]}
)


def test_a_table_too_wide_for_the_terminal_shows_every_column_in_blocks():
    """At 80 columns, a 15-column table comes in blocks that fit, each naming its rows, none dropped."""
    console = Console(width=80, record=True, force_terminal=True)
    print_frame(console, WIDE, "replays")
    text = console.export_text()
    assert all(len(line) <= 80 for line in text.splitlines())
    assert all(name in text for name in WIDE.columns)
    blocks = text.count("replays (columns")
    assert blocks >= 3 and text.count("LLNL-Thunder-2007-1.1-cln") == blocks  # every block names the rows
    assert "1,234,567" in text


def test_one_row_too_wide_is_shown_turned_and_a_file_keeps_one_line_per_row():
    console = Console(width=80, record=True, force_terminal=True)
    print_frame(console, WIDE.head(1))
    text = console.export_text()
    assert all(len(line) <= 80 for line in text.splitlines()) and all(name in text for name in WIDE.columns)
    piped = Console(width=80, record=True, force_terminal=False)  # a file or a pipe: whole rows
    print_frame(piped, WIDE)
    whole = piped.export_text()
    rows = [line for line in whole.splitlines() if "LLNL" in line or "KTH" in line]
    assert len(rows) == 2 and all(name in whole for name in WIDE.columns)


def test_seconds_say_so_in_a_table_header_but_not_in_csv():
    frame = pl.DataFrame({"log": ["x"], "mean_wait": [12.5], "makespan": [100], "mean_bounded_slowdown": [1.5]})
    console = Console(width=200, record=True)
    print_frame(console, frame)
    text = console.export_text()
    assert "mean_wait (s)" in text and "makespan (s)" in text and "mean_bounded_slowdown (s)" not in text


def _headers(frame: pl.DataFrame, keys: tuple[str, ...] | None = None) -> list[list[str]]:
    """Each block's column names, as an 80-column terminal shows `frame`."""
    console = Console(width=80, record=True, force_terminal=True)
    print_frame(console, frame, "t", keys)
    text = console.export_text()
    assert all(len(line) <= 80 for line in text.splitlines())
    return [[name.strip() for name in line.strip("┃").split("┃")] for line in text.splitlines() if line.startswith("┃")]


def test_every_block_of_a_campaign_table_names_the_log_its_size_and_the_variant():
    from lakehouse.campaigns.report import SHOWN_METRICS

    frame = pl.DataFrame(
        {"log": ["LLNL-Thunder-2007-1.1-cln"] * 3, "machine_size": [4008] * 3, "variant": ["EASY", "SJBF", "LXF"]}
        | {"status": ["ok"] * 3, "jobs": [120_000] * 3}
        | {name: [123_456.7, 2.5, 3.5] for name in SHOWN_METRICS}
        | {"error": [None, None, None]}
    )
    blocks = _headers(frame)
    assert len(blocks) >= 2
    assert all(block[:3] == ["log", "machine_size", "variant"] for block in blocks)


def test_ad_hoc_sql_over_a_job_view_keys_each_block_by_the_job(kth_lake):
    jobs = kth_lake.query("SELECT * FROM swf.jobs ORDER BY job_id LIMIT 3")
    blocks = _headers(jobs)
    assert len(blocks) >= 3 and all(block[:2] == ["log", "job_id"] for block in blocks)
    # Columns that do not tell the rows apart get a row number first.
    same = pl.DataFrame({"log": ["KTH"] * 2, "a" * 30: [1, 2], "b" * 30: [3, 4], "c" * 30: [5, 6]})
    assert all(block[:2] == ["row", "log"] for block in _headers(same))


def test_reproduce_shows_the_paper_ours_and_the_difference_in_the_first_block():
    from lakehouse.cli.reproduce import TABLE_KEYS, table_view
    from lakehouse.models.reproductions import REPRODUCTIONS_SCHEMA

    row = {
        "study": "locality", "source": "Table 2.3", "trace": "SDSC Paragon '96", "log": "SDSC-Par-1996-3.1-cln",
        "quantity": "f(s;r) K-Means run-time bins", "setting": "variant=time+user t_s=259200 t_r=1.5",
        "published": 1.47, "ours": 1.4721, "difference": 0.0021, "relative_pct": 0.142857, "unit": "bits",
        "status": "within 5 %",
    }  # fmt: skip
    table = pl.DataFrame(
        [row, row | {"source": "Table 2.2", "quantity": "f(s;r)"}], schema=pl.Schema(REPRODUCTIONS_SCHEMA)
    )
    blocks = _headers(table_view(table), TABLE_KEYS)
    assert blocks[0] == ["trace", "quantity", "published", "ours", "diff %"]
    assert all(block[:2] == ["trace", "quantity"] for block in blocks)


def test_identifiers_and_instants_print_without_separators_and_measures_with():
    frame = pl.DataFrame(
        {"job_id": [272_393], "submit_time": [12_345_678], "user_id": [10_001], "wait_time": [12_345_678]}
        | {"jobs": [28_476], "time": [600_000_000], "run_time": [5_000.0], "machine_size": [80_640]}
    )
    console = Console(width=200, record=True)
    print_frame(console, frame)
    text = console.export_text()
    assert "272393" in text and "10001" in text and "600000000" in text  # ids and a trace timestamp
    assert text.count("12345678") == 1 and "12,345,678" in text  # the submit time; the wait
    assert "28,476" in text and "5,000" in text and "80,640" in text


def test_one_row_shown_turned_keeps_the_units_of_its_columns():
    console = Console(width=80, record=True, force_terminal=True)
    print_frame(console, WIDE.head(1))
    text = console.export_text()
    assert "mean_wait (s)" in text and "p99_wait (s)" in text


def test_a_path_in_a_table_is_never_cut_at_80_columns():
    path = "/srv/lakes/cluster-a/nightly/reports/2026-11-27T02-00-00/index.html"
    frame = pl.DataFrame({"run": ["2026-11-27"], "status": ["ok"], "errors": [["none"]], "report": [path]})
    frame = pl.concat([frame, frame.with_columns(run=pl.lit("2026-11-26"))])
    console = Console(width=80, record=True, force_terminal=True)
    print_frame(console, frame)
    assert path in console.export_text()
