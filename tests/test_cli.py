"""One CliRunner test per command; data on stdout, messages on stderr, documented examples present."""

from __future__ import annotations

import gzip
import importlib
import io
import json
import os
import re
import subprocess
import sys

import polars as pl
import pytest
from rich.console import Console
from typer.testing import CliRunner

from lakehouse.base.lake import Lake
from lakehouse.base.render import rich_table
from lakehouse.base.testing import small_log, write_swf
from lakehouse.cli import app
from lakehouse.cli.commands import COMMANDS, GROUPS

from conftest import cli as run
from conftest import modules_loaded_by, unboxed


def test_init(tmp_path):
    result = run("init", "--lake", tmp_path / "l")
    assert (tmp_path / "l" / "catalog.sqlite").exists() and not (tmp_path / "l" / "lake.duckdb").exists()
    assert "lake ready" in result.stderr and result.stdout == ""
    assert Lake(tmp_path / "l").ducklake is not None  # a DuckLake lake, by default


@pytest.mark.today_format
def test_init_of_todays_format(tmp_path):
    """LAKEHOUSE_FORMAT=duckdb: a lake of the DuckDB catalog's format, as lakehouse made before DuckLake."""
    run("init", "--lake", tmp_path / "l")
    assert (tmp_path / "l" / "lake.duckdb").exists() and Lake(tmp_path / "l").ducklake is None


def test_ingest_swf_reports_and_fails_on_broken_files(tmp_path):
    jobs, header = small_log(6)
    write_swf(tmp_path / "a.swf", jobs, header)
    (tmp_path / "bad.swf").write_bytes(b"")
    result = run(
        "ingest", "swf", tmp_path / "a.swf", tmp_path / "bad.swf", "--lake", tmp_path / "l", "--format", "csv", code=2
    )
    frame = pl.read_csv(result.stdout.encode())
    assert frame.select("log", "status", "jobs").rows() == [("a", "ok", 6), ("bad", "failed", 0)]
    assert "empty file" in result.stderr and "1 failed" in result.stderr


def test_ingest_swf_name_and_machine_size(tmp_path):
    jobs, _ = small_log(3)
    write_swf(tmp_path / "x.swf", jobs, {})
    run("ingest", "swf", tmp_path / "x.swf", "--name", "renamed", "--machine-size", 64, "--lake", tmp_path / "l")
    out = run("sql", "select log, machine_size from swf.logs", "--lake", tmp_path / "l", "--format", "json")
    assert json.loads(out.stdout) == [{"log": "renamed", "machine_size": 64}]


def test_sql_formats(cli_lake, tmp_path):
    query = "select job_id, procs from swf.jobs order by job_id limit 2"
    assert run("sql", query, "--lake", cli_lake, "--format", "csv").stdout == "job_id,procs\n1,1\n2,2\n"
    assert json.loads(run("sql", query, "--lake", cli_lake, "-f", "json").stdout)[1] == {"job_id": 2, "procs": 2}
    table = run("sql", query, "--lake", cli_lake).stdout
    assert "job_id" in table and "procs" in table
    out = tmp_path / "r.parquet"
    result = run("sql", query, "--lake", cli_lake, "--format", "parquet", "--output", out)
    assert pl.read_parquet(out).height == 2 and "wrote 2 rows" in result.stderr


def test_sql_errors_are_one_clear_line(cli_lake):
    result = run("sql", "select nope from swf.jobs", "--lake", cli_lake, code=1)
    assert "error:" in result.stderr and "nope" in result.stderr and "Traceback" not in result.stderr


def test_views_lists_every_view_with_a_comment(cli_lake):
    frame = pl.read_csv(run("views", "--lake", cli_lake, "--format", "csv").stdout.encode())
    assert {"swf.jobs", "swf.jobs_clean", "swf.jobs_strong", "swf.logs", "swf.clean_report"} <= set(frame["view"])
    assert frame["comment"].null_count() == 0


def test_logs_summary(cli_lake):
    (row,) = json.loads(run("logs", "--lake", cli_lake, "--format", "json").stdout)
    # 6 jobs submitted every 10 s (span 50 s), run 100..105 s on 1..6 procs, 8 processors:
    # offered load = sum(run * procs) / (50 * 8); median of 200/100..200/105 = mean of the middle two.
    assert row["jobs"] == 6 and row["machine_size"] == 8
    assert row["offered_load"] == pytest.approx(sum((100 + i) * (1 + i) for i in range(6)) / 400)
    assert row["share_over_request"] == 0 and row["median_req_over_run"] == pytest.approx((200 / 102 + 200 / 103) / 2)


@pytest.mark.today_format
def test_catalog_rebuild_after_moving_the_lake(cli_lake, tmp_path):
    moved = tmp_path / "moved"
    cli_lake.rename(moved)
    run("catalog", "rebuild", "--lake", moved)
    assert run("sql", "select count(*) as n from swf.jobs", "--lake", moved, "-f", "csv").stdout == "n\n6\n"


def test_a_command_draws_nothing_with_typers_rich_module_and_loads_none_of_it(tmp_path):
    """typer's help and error drawing (its rich_utils, with rich's Markdown) costs a tenth of a second:
    only a help page or a usage error loads it, and then with our changes to it."""
    command = (
        "import contextlib, io\nfrom lakehouse.cli.commands import app_for\n"
        f"sys.argv = ['lakehouse', 'views', '--lake', {str(tmp_path)!r}]\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    try: app_for(sys.argv[1:])()\n"
        "    except SystemExit: pass"
    )
    assert modules_loaded_by(command, ("rich.markdown",)) == []
    usage = command.replace("'views', '--lake'", "'views', '--no-such-option'")
    assert modules_loaded_by(usage, ("rich.markdown",)) == ["rich.markdown"]


def test_no_lake_is_a_clear_error(tmp_path):
    result = run("logs", "--lake", tmp_path / "none", code=1)
    assert "no lake at" in result.stderr


def test_demo_runs_on_the_embedded_sample(tmp_path):
    result = run("demo", "--lake", tmp_path / "demo")
    assert "KTH-SP2-1996-2.1-cln" in result.stdout and "28,476" in result.stdout
    assert "EASY++" in result.stdout and "EASY, clairvoyant" in result.stdout
    assert "10,704" in result.stdout and "37,780" in result.stdout  # the embedded Google slice
    assert "google.job_sampling" in result.stdout
    assert "alibaba-2018" in result.stdout and "4,034" in result.stdout  # the embedded Alibaba slice's machines
    assert "demo done" in result.stderr
    # Two nightly runs over an inbox of the samples; the second brought the whole log and the trace.
    assert "Two nightly runs" in result.stdout and "nightly HTML report" in result.stderr
    page = tmp_path / "demo" / "demo-nightly" / "lake" / "reports"
    assert len(list(page.glob("*/index.html"))) == 2 and (page / "index.html").exists()
    # `lakehouse audit --help`'s example: the lake the demo made passes every audit.
    audited = run("audit", "--lake", tmp_path / "demo", "-f", "json")
    assert {row["status"] for row in json.loads(audited.stdout)} == {"ok"}


def test_simulate_prints_metrics_and_writes_the_schedule(cli_lake, tmp_path):
    # mini: 6 jobs, job i (1..6) submitted at 10(i-1), runs 99+i s, requests 200 s, needs i procs; 8 procs.
    # EASY-FCFS: 1, 2, 3 start on arrival (6 procs busy).  4 (4 procs) waits: at 100 job 1 ends (3
    # free), at 111 job 2 ends (5 free) -> 4 starts at 111.  5 (5 procs) waits for 4's end at 214;
    # 6 (6 procs) for 5's end at 318.  Waits 0, 0, 0, 81, 174, 268.
    out = run("simulate", "mini", "--lake", cli_lake, "--jobs-out", tmp_path / "s.parquet", "--format", "json")
    [summary] = json.loads(out.stdout)
    assert summary["jobs"] == 6 and summary["machine_size"] == 8 and summary["max_wait"] == 268
    assert summary["mean_wait"] == pytest.approx(523 / 6)
    schedule = pl.read_parquet(tmp_path / "s.parquet").sort("job_id")
    assert schedule["start_time"].to_list() == [0, 10, 20, 111, 214, 318]
    assert schedule["wait"].to_list() == [0, 0, 0, 81, 174, 268] and schedule["run"].to_list() == [
        100,
        101,
        102,
        103,
        104,
        105,
    ]
    assert "6 jobs replayed" in out.stderr


def test_a_schedule_in_each_format_and_its_provenance(cli_lake, tmp_path):
    from lakehouse.sim.schedule_io import SCHEDULE_VERSION, read_provenance

    args = ("simulate", "mini", "--lake", cli_lake, "--backfill", "sjbf", "--where", "job_id < 6")
    run(*args, "--jobs-out", tmp_path / "s.parquet")
    about = read_provenance(tmp_path / "s.parquet")
    assert about["schedule_version"] == SCHEDULE_VERSION and about["log"] == "mini" and about["view"] == "jobs_clean"
    assert about["where"] == "job_id < 6" and about["settings"]["backfill"] == "sjbf"
    assert about["settings"]["machine_size"] == 8
    run(*args, "--jobs-out", tmp_path / "s.csv")
    assert pl.read_csv(tmp_path / "s.csv").equals(pl.read_parquet(tmp_path / "s.parquet"))
    # SWF: a log the lake reads back, the simulated wait and run in place of the recorded ones.
    run(*args, "--jobs-out", tmp_path / "s.swf")
    run("ingest", "swf", tmp_path / "s.swf", "--name", "replayed", "--lake", cli_lake)
    back = json.loads(
        run(
            "sql",
            "select job_id, submit_time, wait_time, run_time, procs, req_time from swf.jobs "
            "where log = 'replayed' order by 1",
            "--lake",
            cli_lake,
            "-f",
            "json",
        ).stdout
    )
    schedule = pl.read_parquet(tmp_path / "s.parquet").sort("job_id")
    assert (
        back
        == schedule.select(
            "job_id", "submit_time", wait_time="wait", run_time="run", procs="procs", req_time="req_time"
        ).to_dicts()
    )
    logs = json.loads(
        run("sql", "select machine_size from swf.logs where log = 'replayed'", "--lake", cli_lake, "-f", "json").stdout
    )
    assert logs == [{"machine_size": 8}]


def test_a_schedule_in_another_format_is_refused_before_the_replay(cli_lake, tmp_path):
    result = run("simulate", "mini", "--lake", cli_lake, "--jobs-out", tmp_path / "s.txt", code=2)
    assert "a schedule is written as .parquet, .csv, .swf, .batsim.csv (by extension), not '.txt'" in unboxed(
        result.stderr
    )


def test_ingest_google_summarizes_per_table_and_fails_on_broken_parts(tmp_path):
    trace = tmp_path / "trace"
    (trace / "machine_events").mkdir(parents=True)
    good = "0,5,0,HofLGzk1Or/8Ildj2+Lqv0UGGvY82NLoni8+J/Yy0RU=,0.5,0.2493\n"
    (trace / "machine_events" / "part-00000-of-00001.csv.gz").write_bytes(gzip.compress(good.encode()))
    result = run("ingest", "google", trace, "--lake", tmp_path / "l", "--format", "json")
    assert json.loads(result.stdout) == [
        {"table": "machine_events", "parts": 1, "ok": 1, "unchanged": 0, "failed": 0, "rows": 1, "quarantined": 0}
    ]
    (trace / "task_usage").mkdir()
    (trace / "task_usage" / "part-00000-of-00001.csv.gz").write_bytes(b"not gzip")
    result = run("ingest", "google", trace, "--lake", tmp_path / "l", "--format", "csv", code=2)
    assert "machine_events,1,0,1,0,0,0" in result.stdout
    assert "not a gzip file" in result.stderr


def test_generate_google_then_ingest(tmp_path):
    result = run("generate", "google", tmp_path / "gen", "--machines", 5, "--days", 0.5, "--services", 2)
    assert "jobs" in result.stderr and (tmp_path / "gen" / "truth" / "jobs.parquet").exists()
    ingested = run("ingest", "google", tmp_path / "gen" / "trace", "--lake", tmp_path / "l", "--format", "json")
    assert {row["table"] for row in json.loads(ingested.stdout)} == {
        "job_events",
        "machine_events",
        "task_events",
        "task_usage",
    }
    assert "0.01<=x<=29.0" in run("generate", "google", tmp_path / "x", "--days", 0, code=2).stderr


def test_report_periodicity_on_a_generated_trace(tmp_path):
    run(
        "generate",
        "google",
        tmp_path / "gen",
        "--machines",
        4,
        "--days",
        2,
        "--services",
        3,
        "--batch-jobs-per-hour",
        1,
    )
    run("ingest", "google", tmp_path / "gen" / "trace", "--lake", tmp_path / "l")
    result = run("report", "periodicity", "--lake", tmp_path / "l", "--format", "json")
    daily = [row for row in json.loads(result.stdout) if row["component"] == "daily"][0]
    assert daily["jobs"] == 3
    assert "3 long-running jobs fitted" in result.stderr


def test_pack_from_a_query(tmp_path):
    run("init", "--lake", tmp_path / "l")
    # Two tasks of peak 15 in opposite phase share one machine of capacity 20; by peak they need two.
    query = "SELECT * FROM (VALUES (1, 1, 10.0, 5.0, 0.0), (2, 1, 10.0, 5.0, pi())) AS t(job, tasks, c, rho, phi)"
    result = run("pack", "--lake", tmp_path / "l", "--query", query, "--capacity", 20, "--format", "json")
    machines = {row["heuristic"]: row["machines"] for row in json.loads(result.stdout)}
    assert machines["MMM"] == 2 and machines["FFD"] == 1
    stored = run(
        "sql", "select heuristic, machines, tasks from analysis.packing", "--lake", tmp_path / "l", "-f", "csv"
    )
    assert "MMM,2,2" in stored.stdout
    bad = run("pack", "--lake", tmp_path / "l", "--query", query.replace("5.0", "50.0"), "--capacity", 20, code=1)
    assert "amplitude above the level" in bad.stderr


def test_pack_the_long_running_jobs_of_a_generated_trace(tmp_path):
    # The default input: analysis.job_sinusoids, with the machines' most common CPU capacity.
    gen, lake = tmp_path / "gen", tmp_path / "l"
    run("generate", "google", gen, "--machines", 6, "--days", 2, "--services", 5, "--batch-jobs-per-hour", 1)
    run("ingest", "google", gen / "trace", "--lake", lake)
    run("report", "periodicity", "--lake", lake)
    result = run("pack", "--lake", lake, "--format", "json")
    rows = {row["heuristic"]: row for row in json.loads(result.stdout)}
    assert set(rows) == {"FFD", "BFD", "MM", "MMM"}
    assert all(row["machines"] >= row["lower_bound"] - 1e-9 for row in rows.values())
    capacity = run("sql", "select mode(cpus) as c from google.machine_events", "--lake", lake, "-f", "json")
    assert f"machine capacity {json.loads(capacity.stdout)[0]['c']}" in result.stderr


def test_pack_synthetic_campaign_with_a_plot(tmp_path):
    result = run("pack", "--synthetic", "--seeds", 1, "--plot", tmp_path / "bars.png", "--format", "json")
    rows = json.loads(result.stdout)
    assert len(rows) == 8 * 2 * 4  # families x task orders x heuristics
    assert all(row["mean_ratio"] >= 1.0 for row in rows)
    assert (tmp_path / "bars.png").stat().st_size > 10_000


def test_simulate_errors_are_clear(cli_lake):
    assert "no log matches 'nope'" in run("simulate", "nope", "--lake", cli_lake, code=1).stderr
    bad_policy = run("simulate", "mini", "--lake", cli_lake, "--policy", "fifo", code=2)  # a usage error
    assert "Invalid value for '--policy': unknown policy 'fifo'; expected one of: fcfs, lcfs" in unboxed(
        bad_policy.stderr
    )
    too_small = run("simulate", "mini", "--lake", cli_lake, "--machine-size", 4, code=1)
    assert "wider than the machine (4 processors): job id 5, 6" in too_small.stderr
    assert "no jobs of mini" in run("simulate", "mini", "--lake", cli_lake, "--where", "job_id > 99", code=1).stderr


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["--policy", "fcfs", "--policy", "spf"], "given twice ('fcfs', then 'spf')"),
        (["--policy=fcfs", "--backfill", "sjbf", "--policy", "spf"], "given twice ('fcfs', then 'spf')"),
        (["--tau", "10", "--tau=60"], "given twice ('10', then '60')"),
        (["-o", "a.csv", "--output", "b.csv"], "given twice ('a.csv', then 'b.csv')"),
    ],
)
def test_a_one_value_option_given_twice_is_refused(cli_lake, args, shown):
    result = run("simulate", "mini", "--lake", cli_lake, *args, code=2)
    assert shown in unboxed(result.stderr)


def test_an_option_value_that_looks_like_an_option_is_not_counted(cli_lake):
    # `--where` takes "--policy" as its value: the one --policy after it is not a repetition.
    result = run("simulate", "mini", "--lake", cli_lake, "--where", "--policy", "--policy", "spf", code=1)
    assert "given twice" not in result.stderr and "--where '--policy' is not one condition" in result.stderr


@pytest.mark.parametrize(
    "command",
    [["init"], ["ingest", "swf"], ["sql"], ["views"], ["logs"], ["catalog", "rebuild"], ["demo"], ["simulate"]],
)
def test_every_command_help_has_an_example(command):
    assert "Example" in run(*command, "--help").stdout


def test_tables_never_print_counts_or_times_in_scientific_notation():

    frame = pl.DataFrame({"max_wait": [262194.0, 8715136.0], "mean_wait": [13580.5, 6837.49], "util": [0.6971, 1.0]})
    console = Console(record=True, width=120)
    console.print(rich_table(frame))
    text = console.export_text()
    assert "e+" not in text
    assert "262,194" in text and "8,715,136" in text and "13,580" in text and "0.6971" in text


def test_csv_writes_nested_values_as_json_text(cli_lake):
    query = "select 1 as job, [1, 2] as xs, {'a': 'b'} as s, NULL::INT[] as none"
    assert run("sql", query, "--lake", cli_lake, "-f", "csv").stdout == 'job,xs,s,none\n1,"[1, 2]","{""a"": ""b""}",\n'


def test_the_stored_predictions_must_exist_to_be_used(cli_lake):
    result = run("simulate", "mini", "--lake", cli_lake, "--predictor", "column:predicted_walltime", code=1)
    assert "run `lakehouse report predictions LOG` first" in unboxed(result.stderr)


# -- the command line loads only the command it runs ------------------------------------------------


def test_the_table_of_commands_names_every_command_and_its_module():
    commands = {c.name or c.callback.__name__: c.callback.__module__ for c in app.registered_commands}
    assert commands == {name: f"lakehouse.cli.{module}" for name, module in COMMANDS.items()}
    groups = {g.name: g.typer_instance for g in app.registered_groups}
    assert groups.keys() == GROUPS.keys()
    for name, (module, attribute) in GROUPS.items():
        assert getattr(importlib.import_module(f"lakehouse.cli.{module}"), attribute) is groups[name], name


@pytest.mark.parametrize("command", ["sql", "simulate", "report", "catalog"])
def test_a_command_line_loads_only_the_command_it_runs(command):
    probe = (
        "import sys\nfrom lakehouse.cli.commands import app_for\n"
        f"app = app_for([{command!r}, '--help'])\n"
        "print(' '.join([c.name or c.callback.__name__ for c in app.registered_commands]"
        " + [g.name for g in app.registered_groups]))\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('lakehouse.cli.'))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    registered, loaded = (line.split() for line in out.splitlines())
    # Those of its module only (a module registers all its commands as it loads).
    module = COMMANDS.get(command) or GROUPS[command][0]
    assert set(registered) == {n for n, m in COMMANDS.items() if m == module} | ({command} & GROUPS.keys())
    if command in ("sql", "simulate"):  # the reports and campaigns stay unloaded
        assert not {"lakehouse.cli.report", "lakehouse.cli.campaign"} & set(loaded), loaded


def test_the_command_line_runs_a_command_with_or_without_the_others(cli_lake):
    line = [sys.executable, "-m", "lakehouse.cli"]
    alone = subprocess.run([*line, "sql", "select 41 + 1 AS answer", "--lake", str(cli_lake), "--format", "csv"],
                           capture_output=True, text=True)  # fmt: skip
    assert (alone.returncode, alone.stdout) == (0, "answer\n42\n"), alone.stderr
    wide = {**os.environ, "COLUMNS": "200"}  # (the rest of the environment is the test's own)
    help_all = subprocess.run([*line, "--help"], capture_output=True, text=True, env=wide)
    assert all(name in help_all.stdout for name in ["simulate", "report", "campaign", "export"]), help_all.stdout
    typo = subprocess.run([*line, "simulat"], capture_output=True, text=True, env=wide)
    assert typo.returncode == 2 and "Did you mean 'simulate'?" in typo.stderr, typo.stderr


# -- the command line ends without tearing the interpreter down -----------------------------------

ENDING = """
import atexit, sys
from pathlib import Path
marker = Path(sys.argv.pop())  # (the last argument; the rest is the command's)
atexit.register(lambda: marker.write_text("ran"))
from lakehouse.cli import main
main()
"""


@pytest.mark.parametrize(
    ("args", "code", "stdout"),
    [
        (["sql", "select 41 + 1 AS answer", "--format", "csv"], 0, "answer\n42\n"),
        (["simulate", "no-such-log"], 1, ""),
        (["simulate", "mini", "--policy", "fifo"], 2, ""),
    ],
)
def test_a_command_ends_with_its_status_its_output_and_the_exit_handlers_run(cli_lake, tmp_path, args, code, stdout):
    marker = tmp_path / "atexit"
    line = [sys.executable, "-c", ENDING, *args, "--lake", str(cli_lake), str(marker)]
    ended = subprocess.run(line, capture_output=True, text=True)
    assert (ended.returncode, ended.stdout) == (code, stdout), ended.stderr
    assert marker.read_text() == "ran"
    assert code == 0 or "error" in ended.stderr.lower()


def test_simulate_imports_polars_only_once_the_jobs_are_loaded(cli_lake):
    """The jobs reach the engine as numpy columns; Polars is imported while the engine runs."""
    probe = f"""
import sys
from contextlib import contextmanager
import lakehouse.sim.engine as engine
loading = engine._loading_polars
@contextmanager
def watched():
    print("polars before the engine:", "polars" in sys.modules, file=sys.stderr)
    with loading():
        yield
engine._loading_polars = watched
sys.argv = ["lakehouse", "simulate", "mini", "--lake", {str(cli_lake)!r}, "--format", "csv"]
from lakehouse.cli import main
main()
"""
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert "polars before the engine: False" in ran.stderr
    assert ran.stdout.startswith("log,machine_size,jobs,") and ",mini," not in ran.stdout  # one row after the header
    assert len(ran.stdout.splitlines()) == 2


def test_simulate_never_imports_pandas_or_sqlglot(cli_lake):
    """Neither serves a replay: pandas came in with a bound query parameter (0.45 s of the command),
    sqlglot is for --where alone (0.2 s)."""
    probe = f"""
import atexit, sys
atexit.register(lambda: print("loaded:", sorted(m for m in ("pandas", "sqlglot") if m in sys.modules), file=sys.stderr))
sys.argv = ["lakehouse", "simulate", "mini", "--lake", {str(cli_lake)!r}, "--format", "csv"]
from lakehouse.cli import main
main()
"""
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert "loaded: []" in ran.stderr, ran.stderr


def test_an_unchanged_file_shows_no_counts_rather_than_zero(tmp_path):
    """It was not read: its row says so, where 0 jobs would read as an empty log."""
    jobs, header = small_log(6)
    write_swf(tmp_path / "mini.swf", jobs, header)
    run("ingest", "swf", tmp_path / "mini.swf", "--lake", tmp_path / "lake")
    again = json.loads(run("ingest", "swf", tmp_path / "mini.swf", "--lake", tmp_path / "lake", "-f", "json").stdout)
    assert again[0]["status"] == "unchanged" and again[0]["jobs"] is None and again[0]["job_lines"] is None
    assert "already in the lake" in again[0]["note"]


def test_a_log_without_user_ids_shows_no_user_count(tmp_path):
    jobs, header = small_log(4)
    write_swf(tmp_path / "anon.swf", [job | {"user_id": -1} for job in jobs], header)
    run("ingest", "swf", tmp_path / "anon.swf", "--lake", tmp_path / "lake")
    (row,) = json.loads(run("logs", "--lake", tmp_path / "lake", "--format", "json").stdout)
    assert row["jobs"] == 4 and row["users"] is None  # unknown, as the table's "—", not 0 users


def test_sql_writes_parquet_batch_by_batch_as_the_query_runs(cli_lake, tmp_path, monkeypatch):
    """A result of several batches arrives whole and in order (to a file and to a pipe); a statement
    without rows still says ok.  (Its memory, flat in the rows, is measured in the closing notes' way:
    `sql "select ... from range(N)" -f parquet -o x.parquet` at two N.)"""
    monkeypatch.setattr("lakehouse.base.lake.STREAMED_ROWS", 1000)
    query = "SELECT range AS i, 'x' || range AS s FROM range(4500)"
    out = tmp_path / "r.parquet"
    result = run("sql", query, "--lake", cli_lake, "--format", "parquet", "--output", out)
    assert pl.read_parquet(out)["i"].to_list() == list(range(4500)) and "wrote 4,500 rows" in result.stderr
    import pyarrow.parquet as pq

    assert pq.ParquetFile(out).metadata.num_row_groups == 5  # written as it came: five batches
    piped = run("sql", query, "--lake", cli_lake, "--format", "parquet")
    assert pl.read_parquet(io.BytesIO(piped.stdout_bytes))["s"][-1] == "x4499"
    assert run("sql", "SET VARIABLE v = 1", "--lake", cli_lake, "--format", "parquet").stdout == "ok\n"


def _shell(lake, *duckdb_words: str) -> subprocess.CompletedProcess:
    """`lakehouse shell` in a process of its own (it becomes the duckdb command line), without input."""
    return subprocess.run(
        [sys.executable, "-m", "lakehouse.cli", "shell", "--lake", str(lake), "--", *duckdb_words],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_shell_opens_the_duckdb_command_line_on_the_lake_read_only(cli_lake):
    done = _shell(cli_lake, "-csv", "-c", "select count(*) AS jobs from swf.jobs where log = 'mini'")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["jobs", "6"]  # the mini log's six jobs (conftest.mini_lakes)
    refused = _shell(cli_lake, "-c", "create table mine (a int)")
    assert "read-only" in (refused.stdout + refused.stderr)
    assert Lake(cli_lake).rows("select count(*) from duckdb_tables() where table_name = 'mine'") == [(0,)]


def test_shell_without_a_lake_is_one_line(tmp_path):
    done = _shell(tmp_path / "none", "-c", "select 1")
    assert done.returncode == 1 and "no lake at" in done.stderr and "Traceback" not in done.stderr


def test_no_help_cuts_a_word_at_80_columns():
    """Every command's --help at 80 columns: long words (--no-global-profile, $LAKEHOUSE_MEMORY_LIMIT,
    analysis/campaign_jobs/) fold onto the next line, none ends in "…"."""
    import os
    import subprocess
    import sys

    script = """
import typer
from typer.testing import CliRunner
from lakehouse.cli.commands import app
command = typer.main.get_command(app)
def paths(group, prefix):
    for name, sub in group.commands.items():
        yield prefix + [name]
        if hasattr(sub, "commands"):
            yield from paths(sub, prefix + [name])
for path in paths(command, []):
    shown = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "80"}).output
    print("@@", " ".join(path), len(shown.splitlines()))
    print(shown)
"""
    narrow = {**os.environ, "COLUMNS": "80"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=narrow, check=True).stdout
    pages = out.split("@@ ")[1:]
    assert len(pages) >= 30  # every command and group
    cut = {page.splitlines()[0]: [line for line in page.splitlines() if "…" in line] for page in pages}
    assert {name: lines for name, lines in cut.items() if lines} == {}
    wide = [line for page in pages for line in page.splitlines()[1:] if len(line) > 80]
    assert wide == []
    # A list of choices is cut only after a `|` (`<jobs_clean|jobs_stro` / `ng>` could not be read).
    broken = {page.splitlines()[0]: re.findall(r"<[^ >│]*\|[^ >│]*[^ |>│](?= )", page) for page in pages}
    assert {name: found for name, found in broken.items() if found} == {}
    simulate = next(page for page in pages if page.startswith("simulate "))
    assert all(f"─ {panel} " in simulate for panel in ("Jobs replayed", "Scheduler", "Predictions", "Metrics"))
    pack = next(page for page in pages if page.startswith("pack "))
    folded = re.search(r"\$LAKEHOUSE_MEMORY_(\w*) *│\n│ +(\w+)", pack)  # the word goes on, whole, below
    assert folded and (folded[1] + folded[2]).startswith("LIMIT")


def test_generate_google_lake_help_gives_the_measured_memory():
    """It said 22 GB per unit of scale; scale 0.01 peaked at 2 GB: a fixed part, then about 5 GB per unit."""
    shown = " ".join(
        CliRunner().invoke(app, ["generate", "google-lake", "--help"], env={"COLUMNS": "200"}).stdout.split()
    )
    assert "22 GB" not in shown and "about 2 GB of memory plus 5 GB per unit of scale" in shown
