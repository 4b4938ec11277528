"""The adversary's fourth pass (docs/bad-input.md): a listing that would write outside the download
folder, bodies and listings larger than announced, file names read as patterns, one Lake used from
threads, a prediction table left bound to a log ingested again."""

from __future__ import annotations

import gzip
import shutil
import threading
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from lakehouse.base.lake import Lake
from lakehouse.cli import app
from lakehouse.data import sample_google_trace
from lakehouse.ingest import download as downloads
from lakehouse.ingest.download import URL_ENV

from conftest import cli as run
from google_bucket import Faults, make_bucket, serve

runner = CliRunner()
KTH = "KTH-SP2-1996-2.1-cln"


# -- writes outside where they belong -------------------------------------------------------------


@pytest.mark.parametrize(
    "hostile",
    ["job_events/../../outside/part-00000-of-00001.csv.gz", "/tmp/part-00000-of-00001.csv.gz",
     "job_events//part-00000-of-00001.csv.gz", "job_events\\\\..\\\\part-00000-of-00001.csv.gz"],
)  # fmt: skip
def test_a_listing_path_that_leaves_the_download_folder_refuses_the_listing(tmp_path, monkeypatch, hostile):
    bucket = make_bucket(tmp_path / "bucket")
    with (bucket / "SHA256SUM").open("a") as listing:
        listing.write(f"{'0' * 64}  {hostile}\n")
    dest = tmp_path / "work" / "dest"
    with serve(bucket) as url:
        monkeypatch.setenv(URL_ENV, url)
        result = run("download", "google-2011", dest, code=1)
    said = " ".join(result.stderr.split())
    assert "the listing is refused" in said and "Traceback" not in said, said
    assert not (tmp_path / "work" / "outside").exists() and not (dest / "job_events").exists()


def test_a_file_listed_twice_refuses_the_listing():
    from lakehouse.ingest.download import DownloadError, parse_checksums

    listing = (
        f"{'a' * 64}  job_events/part-00000-of-00500.csv.gz\n{'b' * 64}  ./job_events/part-00000-of-00500.csv.gz\n"
    )
    with pytest.raises(DownloadError, match="line 2: 'job_events/part-00000-of-00500.csv.gz' is listed already"):
        parse_checksums(listing)


def test_a_body_longer_than_announced_is_cut_and_refused(tmp_path, monkeypatch):
    bucket = make_bucket(tmp_path / "bucket")
    grown = "machine_events/part-00000-of-00001.csv.gz"
    with serve(bucket, Faults(grow={grown})) as url:
        monkeypatch.setenv(URL_ENV, url)
        result = run("download", "google-2011", tmp_path / "dest", "--tables", "machine_events", code=1)
    said = " ".join(result.stderr.split())
    assert "announced" in said and "sends more: not fetched" in said, said
    assert not (tmp_path / "dest" / grown).exists() and not list((tmp_path / "dest").rglob("*.part"))


def test_an_endless_listing_is_read_up_to_its_bound(tmp_path, monkeypatch):
    bucket = make_bucket(tmp_path / "bucket")
    monkeypatch.setattr(downloads, "MAX_LISTING", 1000)  # (the real bound is 16 MB; the listing is ~700 bytes)
    with (bucket / "SHA256SUM").open("a") as listing:
        listing.write("\n" * 2000)
    with serve(bucket) as url:
        monkeypatch.setenv(URL_ENV, url)
        result = run("download", "google-2011", tmp_path / "dest", code=1)
    assert "longer than" in result.stderr and "not a listing of the trace" in result.stderr


# -- file names read as patterns ------------------------------------------------------------------


def test_an_imported_file_name_with_glob_characters_is_that_file(kth_lake, tmp_path):
    first = kth_lake.query(f"select job_id from swf.jobs where log = '{KTH}' order by job_id limit 1")["job_id"][0]
    (tmp_path / "m1.csv").write_text(f"log,job_id,predicted\n{KTH},{first},111\n")
    (tmp_path / "m[1].csv").write_text(f"log,job_id,predicted\n{KTH},{first},999\n")
    run("import", "predictions", tmp_path / "m[1].csv", "--name", "bracket", "--lake", kth_lake.root)
    stored = kth_lake.query("select predicted from analysis.imported_predictions where name = 'bracket'")
    assert stored["predicted"].to_list() == [999.0]
    star = run("import", "predictions", tmp_path / "m*.csv", "--name", "star", "--lake", kth_lake.root, code=1)
    assert "no such file" in star.stderr


def test_a_trace_folder_with_glob_characters_is_read_as_it_is(tmp_path):
    shutil.copytree(sample_google_trace(), tmp_path / "tr[1]")
    shutil.copytree(sample_google_trace(), tmp_path / "tr1")
    name = Path("machine_events") / "part-00000-of-00001.csv.gz"
    lines = gzip.decompress((tmp_path / "tr1" / name).read_bytes()).splitlines(keepends=True)
    (tmp_path / "tr1" / name).write_bytes(gzip.compress(b"".join(lines[:5])))  # the sibling: five events
    # A bad line sends the part through DuckDB's line-checked reader, the one that took a path as a pattern.
    (tmp_path / "tr[1]" / name).write_bytes(gzip.compress(b"".join(lines) + b"not,a,machine,event\n"))
    lake = Lake(tmp_path / "lake")
    run("ingest", "google", tmp_path / "tr[1]", "--lake", lake.root)
    assert lake.rows("select count(*) from google.machine_events")[0][0] == len(lines)
    assert lake.rows("select count(*) from google.quarantine")[0][0] == 1


# -- one Lake, many threads -----------------------------------------------------------------------


def test_one_lake_used_from_four_threads_replays_without_a_crash(kth_lake):
    from lakehouse.sim import simulate_log

    lake = Lake(kth_lake.root)  # one object, shared
    results, errors = [], []

    def replay(policy: str) -> None:
        try:
            for _ in range(3):
                results.append(
                    (
                        policy,
                        simulate_log(lake, KTH, policy=policy, where="submit_offset < 5*86400").summary["mean_wait"],
                    )
                )
        except Exception as exc:  # noqa: BLE001 (the test reports any)
            errors.append(exc)

    threads = [threading.Thread(target=replay, args=(p,)) for p in ("fcfs", "spf", "lexp", "saf")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    by_policy: dict[str, set[float]] = {}
    for policy, value in results:
        by_policy.setdefault(policy, set()).add(value)
    assert all(len(values) == 1 for values in by_policy.values()) and len(results) == 12


# -- imports that change meaning silently ---------------------------------------------------------


def test_a_prediction_table_is_bound_to_the_content_its_log_had(tmp_path):
    from lakehouse.base.testing import small_log, write_swf

    jobs, header = small_log(8)
    log = write_swf(tmp_path / "mini.swf", jobs, header)
    lake = Lake(tmp_path / "lake")
    run("ingest", "swf", log, "--lake", lake.root)
    ids = lake.query("select job_id from swf.jobs where log = 'mini'")["job_id"].to_list()
    pl.DataFrame({"log": "mini", "job_id": ids, "predicted": 60.0}).write_csv(tmp_path / "p.csv")
    run("import", "predictions", tmp_path / "p.csv", "--name", "minute", "--lake", lake.root)
    run("simulate", "mini", "--predictor", "table:minute", "--lake", lake.root)
    assert run("audit", "--lake", lake.root).exit_code == 0
    # The log ingested again from another version of its file: the same ids, other jobs.
    write_swf(log, [{**job, "run_time": job["run_time"] + 1} for job in jobs], header)
    run("ingest", "swf", log, "--lake", lake.root)
    refused = run("simulate", "mini", "--predictor", "table:minute", "--lake", lake.root, code=1)
    said = " ".join(refused.stderr.split())
    assert "table:minute was imported for mini as its file was then" in said and "import the table again" in said
    audit = run("audit", "--lake", lake.root, code=1)
    assert "analysis.imported_predictions" in audit.stdout + audit.stderr
    run("import", "predictions", tmp_path / "p.csv", "--name", "minute", "--lake", lake.root)  # bound anew
    run("simulate", "mini", "--predictor", "table:minute", "--lake", lake.root)


# -- settings accepted, then failing every night ---------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("under", "nan", "expected a finite number from 0 to 1e+06, got nan"),
        ("over", "inf", "expected a finite number from 0 to 1e+06, got inf"),
        ("window", "-1", "expected a whole number from 1 to 1e+09, got -1"),
        ("grouping", '"foo"', "expected one of user, user+group"),
    ],
)
def test_a_nightly_report_option_is_checked_by_the_words_of_its_command(tmp_path, key, value, said):
    from lakehouse.base.errors import SettingsError
    from lakehouse.nightly.config import load

    config = tmp_path / "nightly.toml"
    config.write_text(f"[predictions]\n{key} = {value}\n")
    with pytest.raises(SettingsError, match="predictions." + key) as caught:
        load(config)
    assert said in str(caught.value)
    flag = "--" + key
    command = run("report", "predictions", "KTH", flag, value.strip('"'), code=2)
    assert said.split(", got")[0].split(" from")[0] in " ".join(command.stderr.split()) or "range" in command.stderr


def test_a_machine_size_glob_for_logs_not_there_yet_names_none():
    from lakehouse.nightly.config import Config

    config = Config(machine_size={"RICC-*": 8192})
    assert config.size_for(KTH, [KTH]) is None
    assert config.size_for("RICC-2010-2.2-cln", [KTH, "RICC-2010-2.2-cln"]) == 8192


@pytest.mark.parametrize("threshold", ["[3600.7]", "1.9", "[true]"])
def test_a_threshold_that_is_not_whole_seconds_is_refused_not_rounded(tmp_path, threshold):
    from lakehouse.campaigns.grid import GridError, grid_from_toml

    spec = tmp_path / "t.toml"
    spec.write_text(f'name = "t"\nlogs = ["KTH"]\n[grid]\nthreshold = {threshold}\n')
    with pytest.raises(GridError, match="whole number of seconds|must be a value or a list"):
        grid_from_toml(spec)
    whole = tmp_path / "w.toml"
    whole.write_text('name = "w"\nlogs = ["KTH"]\n[grid]\nthreshold = [3600, 7200.0, "none"]\n')
    assert grid_from_toml(whole).values["threshold"] == (3600, 7200, None)


def test_a_fixed_selectors_formula_reads_the_views_columns_as_the_policy_does(kth_lake):
    from lakehouse.sim import simulate_log

    fixed = simulate_log(kth_lake, KTH, selector="fixed:min:group_id")
    policy = simulate_log(kth_lake, KTH, policy="min:group_id")
    assert fixed.jobs["start_time"].equals(policy.jobs["start_time"])


# -- unbounded reads of special files -------------------------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "zero", "large"])
@pytest.mark.parametrize("command", ["nightly", "campaign"])
def test_a_configuration_that_is_no_regular_file_is_refused_at_once(tmp_path, kind, command):
    import os
    import time

    config = tmp_path / "config.toml"
    if kind == "fifo":
        os.mkfifo(config)  # (a reader that opened it blocking would wait for ever)
    elif kind == "zero":
        config.symlink_to("/dev/zero")
    else:
        config.write_text("# " + "x" * (2 << 20) + "\n")
    args = (
        ["nightly", "--inbox", tmp_path, "--config", config, "--dry-run", "--lake", tmp_path / "lake"]
        if command == "nightly"
        else ["campaign", "run", str(config), "--lake", tmp_path / "lake"]
    )
    started = time.monotonic()
    result = runner.invoke(app, [str(a) for a in args])
    said = " ".join((result.stdout + result.stderr).split())
    assert result.exit_code != 0 and time.monotonic() - started < 10, said
    expected = "larger than 1,048,576 bytes" if kind == "large" else "not a regular file"
    assert f"{config}: " in said and expected in said and "Traceback" not in said, said


def test_ctrl_c_stops_the_transfers_under_way_at_once_and_keeps_what_came(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    bucket = make_bucket(tmp_path / "bucket")
    slow = "task_usage/part-00000-of-00500.csv.gz"  # (365 KB: 7 s at this pace)
    dest = tmp_path / "dest"
    with serve(bucket, Faults(slow={slow}, slow_pause=0.3)) as url:
        process = subprocess.Popen(
            [sys.executable, "-m", "lakehouse.cli", "download", "google-2011", str(dest), "--tables", "task_usage"],
            env={**os.environ, URL_ENV: url}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        partial = dest / (slow + ".part")
        deadline = time.monotonic() + 30
        while not (partial.exists() and partial.stat().st_size > 0) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert partial.exists(), process.communicate(timeout=30)
        process.send_signal(signal.SIGINT)
        stopped = time.monotonic()
        _, err = process.communicate(timeout=30)
    # (A block is 64 KB, 1.2 s at this pace; the rest of the file would take 5 s more.)
    assert time.monotonic() - stopped < 3.5, err.decode()
    assert process.returncode == 130, err.decode()
    assert partial.exists() and not (dest / slow).exists()  # what came is kept, for the next run


# -- messages -------------------------------------------------------------------------------------


def test_catalog_rebuild_with_another_tables_copy_is_one_line_naming_the_file(tmp_path):
    from lakehouse.base.catalog import meta_copy
    from lakehouse.base.testing import small_log, write_swf

    jobs, header = small_log(4)
    lake = Lake(tmp_path / "lake")
    run("ingest", "swf", write_swf(tmp_path / "mini.swf", jobs, header), "--lake", lake.root)
    manifest, outputs = meta_copy(lake.root, "manifest"), meta_copy(lake.root, "outputs")
    assert manifest.exists() and outputs.exists()
    shutil.copyfile(manifest, outputs)  # valid Parquet, another table's columns
    lake.catalog_path.unlink()  # the catalog lost: rebuilt from the copies
    result = run("catalog", "rebuild", "--lake", lake.root, code=1)
    said = " ".join(result.stderr.split())
    assert f"{outputs}: not a copy of meta.outputs" in said and "Traceback" not in said, said


def test_two_formulas_that_differ_only_in_symbols_plot_to_two_files():
    from lakehouse.sim.schedule_plots import file_stem

    assert file_stem("KTH easy-min:r*n") != file_stem("KTH easy-min:r/n")
    assert file_stem("KTH EASY-SJBF") == "schedule-KTH-EASY-SJBF"  # (a plain title keeps its name)


def test_an_import_names_the_line_an_editor_shows_and_leaves_special_files_alone(kth_lake, tmp_path):
    import os

    first = kth_lake.query(f"select job_id from swf.jobs where log = '{KTH}' order by job_id limit 3")["job_id"]
    a, b, c = first.to_list()
    # A blank line and a quoted field over two lines before the bad record: it is on line 7.
    (tmp_path / "t.csv").write_text(
        f'log,job_id,predicted,note\n{KTH},{a},10,\n\n{KTH},{b},20,\n{KTH},{c},30,"two\nlines"\n{KTH},{a + 1},-5,\n'
    )
    result = run("import", "predictions", tmp_path / "t.csv", "--name", "lines", "--lake", kth_lake.root, code=1)
    assert f"{tmp_path / 't.csv'}, line 7: has a negative prediction" in " ".join(result.stderr.split())
    os.mkfifo(tmp_path / "fifo.csv")
    (tmp_path / "zero.csv").symlink_to("/dev/zero")
    for special in ("fifo.csv", "zero.csv"):
        refused = run("import", "predictions", tmp_path / special, "--name", "x", "--lake", kth_lake.root, code=1)
        assert "not a regular file" in refused.stderr, refused.stderr
