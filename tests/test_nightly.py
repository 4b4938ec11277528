"""`lakehouse nightly`: discovery, incremental ingest, reports for what changed, history, the HTML
report, the lock and the exit codes."""

from __future__ import annotations

import fcntl
import os
import re
import shlex
import shutil
import subprocess
import threading
import time
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from lakehouse.base.errors import SettingsError
from lakehouse.base.lake import Lake
from lakehouse.cli import app
from lakehouse.data import sample_google_trace
from lakehouse.nightly import history
from lakehouse.nightly.config import GOOGLE_REPORTS, SWF_REPORTS, Config, load
from lakehouse.nightly.run import EXIT_BUSY, NIGHTLY_LOCK, plan, run
from lakehouse.sim import simulate

from conftest import rewrite_stored_runs
from nightly_inbox import DRAWN, FAST, INBOX, REPLAYS, jobs, put_broken, put_log

runner = CliRunner()


def cli(*args: object, code: int | None = 0):
    result = runner.invoke(app, [str(a) for a in args])
    if code is not None:
        assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    assert "Traceback" not in result.stderr
    result.err = "".join(result.stderr.split())  # without spaces: rich wraps stderr at any character
    return result


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    folder = tmp_path / "inbox"
    folder.mkdir()
    return folder


def test_dry_run_lists_what_would_be_done_and_changes_nothing(tmp_path, inbox):
    put_log(inbox, "alpha", 50)
    (inbox / "notes.txt").write_text("not a trace")
    root = tmp_path / "lake"
    result = cli("nightly", "--inbox", inbox, "--lake", root, "--dry-run", "--format", "csv")
    rows = pl.read_csv(result.stdout.encode())
    assert rows.select("kind", "file", "state", "action").rows() == [("swf", "alpha", "new", "ingest")]
    assert "wouldingest1SWFlog(s)" in result.err and ",".join(SWF_REPORTS) in result.err
    assert not root.exists()  # nothing was made, not even the lake


def test_a_second_run_with_nothing_new_ingests_nothing_and_says_so(tmp_path, inbox):
    lake = Lake(tmp_path / "lake")
    put_log(inbox, "alpha", 120)
    first = run(lake, inbox, INBOX)
    assert first.record.status == "ok" and first.exit_code == 0
    assert first.record.files_ingested == 1 and first.record.reports_run == ["logs"]
    second = run(lake, inbox, INBOX)
    assert (second.record.files_ingested, second.record.files_skipped, second.record.reports_run) == (0, 1, [])
    assert second.exit_code == 0 and second.record.run == f"{first.record.run}-2"
    assert second.page is None and not (lake.root / "reports" / second.record.run).exists()  # a quiet night
    index = (lake.root / "reports" / "index.html").read_text()
    assert second.record.run in index and f'href="{second.record.run}/index.html"' not in index
    assert lake.query("SELECT count(*) AS n FROM swf.jobs")["n"][0] == 120  # not twice
    dry = plan(lake, inbox, INBOX)
    assert dry.swf == [] and dry.reports == []


def test_a_changed_log_replaces_its_rows_and_the_page_shows_the_change(tmp_path, inbox):
    lake = Lake(tmp_path / "lake")
    put_log(inbox, "alpha", 150)
    put_log(inbox, "beta", 80, seed=3)
    run(lake, inbox, REPLAYS)
    put_log(inbox, "alpha", 300)  # the log's next month
    outcome = run(lake, inbox, REPLAYS)
    assert outcome.record.status == "ok"
    assert [(f.name, str(f.state)) for f in outcome.plan.inbox.arrived()] == [("alpha", "changed")]
    counts = dict(lake.query("SELECT log, count(*) AS n FROM swf.jobs GROUP BY log").rows())
    assert counts == {"alpha": 300, "beta": 80}
    replays = next(s for s in outcome.sections if s.key == "replays")
    change = dict(replays.tables)["change since the log's previous version (mean bounded slowdown)"]
    easy = change.filter(pl.col("scheduler") == "EASY").row(0, named=True)
    # Independently: the simulator called directly on each version of the log's jobs.
    expected = [simulate(_sim_jobs(pl.DataFrame(jobs(n))), 64).summary for n in (150, 300)]
    assert (easy["jobs before"], easy["jobs now"]) == (150, 300)
    assert easy["bsld before"] == pytest.approx(expected[0]["mean_bounded_slowdown"])
    assert easy["bsld now"] == pytest.approx(expected[1]["mean_bounded_slowdown"])
    assert easy["engine"] == "same" and not any("engine changed" in note for note in replays.notes)
    page = outcome.page.read_text()
    assert "changed" in page and "bsld before" in page


def test_a_lake_whose_history_predates_skipped_reports_reads_and_gains_the_column(tmp_path, inbox):
    import duckdb

    lake = Lake(tmp_path / "lake")
    run(lake, inbox, FAST)  # a quiet night: one row in the history
    if lake.ducklake is not None:  # the catalog as a version before the column made it (and says so)
        lake.ducklake.write(
            "a test",
            lambda con: con.execute(
                "ALTER TABLE lake.meta.nightly_runs DROP COLUMN reports_skipped; "
                "UPDATE lake.meta.catalog_version SET digest = 'older'"
            ),
        )
    else:
        with duckdb.connect(str(lake.catalog_path)) as con:
            con.execute("ALTER TABLE meta.nightly_runs DROP COLUMN reports_skipped")
    old = history.runs(lake)
    assert old.height == 1 and old["reports_skipped"].to_list() == [None]
    assert cli("nightly", "--history", "--lake", lake.root).exit_code == 0
    run(lake, inbox, FAST)  # its first write adds the column back
    assert history.runs(lake).height == 2
    assert "reports_skipped" in lake.query("SELECT * FROM meta.nightly_runs").columns


def test_the_change_of_a_log_says_when_another_build_of_the_engine_replayed_its_previous_version(tmp_path, inbox):
    lake = Lake(tmp_path / "lake")
    put_log(inbox, "alpha", 150)
    run(lake, inbox, REPLAYS)
    older = "0.0.9+0123456789abcdef"
    rewrite_stored_runs(lake, engine_version=older)
    put_log(inbox, "alpha", 300)
    outcome = run(lake, inbox, REPLAYS)
    replays = next(s for s in outcome.sections if s.key == "replays")
    change = dict(replays.tables)["change since the log's previous version (mean bounded slowdown)"]
    assert change["engine"].unique().to_list() == [f"before: {older}"]
    assert any("engine changed" in note for note in replays.notes)


def _sim_jobs(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.select("job_id", "submit_time", "run_time", pl.col("req_procs").alias("procs"), "req_time", "user_id")


def test_a_corrupt_file_fails_alone_and_the_exit_code_says_partial(tmp_path, inbox):
    put_log(inbox, "alpha", 60)
    put_broken(inbox)
    root = tmp_path / "lake"
    config = tmp_path / "nightly.toml"  # the cheapest report: what is tested is the inbox's files
    config.write_text('reports = ["logs"]\nfigures = false\n')
    result = cli("nightly", "--inbox", inbox, "--lake", root, "--config", config, code=1)
    assert "broken.swf.gz" in result.err and "partial" in result.err
    lake = Lake(root)
    assert lake.log_names() == ["alpha"]
    row = history.runs(lake).row(0, named=True)
    assert row["status"] == "partial" and row["files_failed"] == 1 and "broken" in row["errors"][0]
    assert "broken" in Path(row["report"]).read_text()


def test_nothing_could_be_done_exits_2(tmp_path, inbox):
    put_broken(inbox)
    result = cli("nightly", "--inbox", inbox, "--lake", tmp_path / "lake", code=2)
    assert "failed" in result.err
    result = cli("nightly", "--inbox", tmp_path / "missing", "--lake", tmp_path / "lake", code=2)
    assert "notafolder" in result.err
    assert history.runs(Lake(tmp_path / "lake"))["status"].to_list() == ["failed", "failed"]


def test_a_second_run_exits_at_once_while_one_holds_the_lake(tmp_path, inbox):
    put_log(inbox, "alpha", 20)
    root = tmp_path / "lake"
    root.mkdir()
    with open(root / NIGHTLY_LOCK, "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.write("4242")
        held.flush()
        result = cli("nightly", "--inbox", inbox, "--lake", root, code=EXIT_BUSY)
    assert "anothernightlyrunisinprogress(pid4242)" in result.err
    assert not (root / "lake.duckdb").exists()  # it did nothing


def test_a_run_that_never_finished_is_marked_failed_by_the_next(tmp_path, inbox):
    lake = Lake(tmp_path / "lake")
    put_log(inbox, "alpha", 20)
    killed, _ = history.begin(lake, inbox, lake.root / "reports")  # as a run killed right after it started
    outcome = run(lake, inbox, INBOX)
    assert outcome.killed_runs == 1
    rows = {r["run"]: r for r in history.runs(lake).iter_rows(named=True)}
    assert rows[killed.run]["status"] == "failed" and "interrupted" in rows[killed.run]["errors"][0]
    assert rows[outcome.record.run]["status"] == "ok"
    index = (lake.root / "reports" / "index.html").read_text()
    assert killed.run in index and "failed" in index


def test_config_selects_reports_and_names_a_bad_key(tmp_path, inbox):
    config = tmp_path / "nightly.toml"
    config.write_text('reports = ["logs"]\nworkers = 1\n[machine_size]\n"alpha*" = 128\n')
    put_log(inbox, "alpha", 30)
    lake = Lake(tmp_path / "lake")
    outcome = run(lake, inbox, load(config))
    assert outcome.record.reports_run == ["logs"]
    assert lake.query("SELECT machine_size FROM swf.logs")["machine_size"][0] == 128
    config.write_text("[replays]\nveiw = 'jobs_strong'\n")
    result = cli("nightly", "--inbox", inbox, "--lake", lake.root, "--config", config, code=1)
    assert "nightly.toml:replays.veiw:unknownkey;expectedoneof:campaign,view" in result.err
    config.write_text('figures = "no"\n')
    result = cli("nightly", "--inbox", inbox, "--lake", lake.root, "--config", config, code=1)
    assert "nightly.toml:figures:expectedtrueorfalse,got'no'" in result.err


def test_a_night_without_figures_shows_the_same_tables_and_draws_nothing(tmp_path, inbox):
    put_log(inbox, "alpha", 120)
    config = tmp_path / "nightly.toml"
    config.write_text("figures = false\nworkers = 1\n[periodicity]\nnoise_trials = 0\n")
    assert load(config) == FAST
    outcome = run(Lake(tmp_path / "lake"), inbox, FAST)
    drawn = run(Lake(tmp_path / "drawn"), inbox, DRAWN)
    assert all(not s.figures for s in outcome.sections) and any(s.figures for s in drawn.sections)
    assert [[c for c, _ in s.tables] for s in outcome.sections] == [[c for c, _ in s.tables] for s in drawn.sections]
    assert "<img" not in outcome.page.read_text() and "<img" in drawn.page.read_text()


def test_print_systemd_fills_in_the_run(tmp_path, inbox):
    result = cli("nightly", "--inbox", inbox, "--lake", tmp_path / "lake", "--print-systemd", "--at", "03:15")
    out = result.stdout
    assert "[Service]" in out and "Type=oneshot" in out and "[Timer]" in out
    assert "OnCalendar=*-*-* 03:15:00" in out and f"--inbox {inbox.absolute()}" in out
    assert re.search(r"^15 3 \* \* \* .*nightly --inbox", out, re.M)
    cli("nightly", "--inbox", inbox, "--print-systemd", "--at", "25:00", code=2)


def test_readers_see_the_old_or_the_new_state_never_an_error(tmp_path, inbox):
    from lakehouse.cli.query import shell_line

    lake = Lake(tmp_path / "lake")
    put_log(inbox, "alpha", 400)
    run(lake, inbox, INBOX)
    put_log(inbox, "alpha", 2000)
    shell = shell_line(lake)  # (as `lakehouse shell` runs it)
    query = "SELECT count(*) AS n FROM swf.jobs"
    seen: dict[str, list[int]] = {"lakehouse sql": [], "lakehouse shell": []}
    errors: list[object] = []
    stop = threading.Event()

    def read_with_lakehouse() -> None:
        while not stop.is_set():
            try:
                seen["lakehouse sql"].append(Lake(lake.root).user_sql(query)["n"][0])
            except Exception as exc:  # any error is the failure this test looks for
                errors.append(exc)

    def read_with_the_duckdb_shell() -> None:
        while not stop.is_set():
            done = subprocess.run([*shell, "-csv", "-noheader", "-c", query], capture_output=True, text=True)
            if done.returncode:
                errors.append(done.stderr)
            else:
                seen["lakehouse shell"].append(int(done.stdout.strip()))

    readers = [threading.Thread(target=read_with_lakehouse), threading.Thread(target=read_with_the_duckdb_shell)]
    for reader in readers:
        reader.start()
    try:
        run(lake, inbox, FAST)  # with its reports: time for several reads during and after the ingest
    finally:
        stop.set()
        for reader in readers:
            reader.join()
    assert not errors
    for counts in seen.values():
        assert set(counts) <= {400, 2000}
    assert len(seen["lakehouse sql"]) > 3
    # A read that began before the commit may end after the run: the next one sees the new state.
    assert Lake(lake.root).user_sql(query)["n"][0] == 2000
    assert len(seen["lakehouse shell"]) > 3


def test_google_trace_arrives_and_its_reports_run(tmp_path, inbox):

    shutil.copytree(sample_google_trace(), inbox / "trace")
    lake = Lake(tmp_path / "lake")
    outcome = run(lake, inbox, DRAWN)
    assert outcome.record.files_ingested == 3
    assert outcome.record.reports_run == list(GOOGLE_REPORTS)  # (the registry's, in their order)
    # The slice has no long-running job: the periodicity and packing say so, which is not a failure.
    assert outcome.record.status == "ok", outcome.record.errors
    sections = {s.key: s for s in outcome.sections}
    assert "no long-running task" in sections["periodicity"].notes[0]
    assert sections["volatility"].figures and all(p.exists() for p in sections["volatility"].figures)
    # Its tasks have one 5-minute window each, so no CV: the CV chart is left out, not drawn empty.
    assert "volatility_cv_ecdf" not in {p.stem for p in sections["volatility"].figures}
    # The reports skipped for too little data are recorded so, and the index of runs marks them.
    skipped = [key for key, s in sections.items() if s.skipped]
    assert skipped and outcome.record.reports_skipped == skipped
    index = (lake.root / "reports" / "index.html").read_text()
    assert all(f"{key} (skipped)" in index for key in skipped) and "volatility (skipped)" not in index
    # Hashing is skipped for files whose size and time are unchanged; --verify hashes them all.
    again = run(lake, inbox, FAST, verify=True)
    assert again.record.files_skipped == 3 and again.record.files_ingested == 0


#: `make test` runs one name (each run took 2.7 s); `make faults` the others.
@pytest.mark.parametrize(
    "bad",
    [
        pytest.param("good copy", marks=pytest.mark.thorough),
        "-dash",
        pytest.param("ünïcode", marks=pytest.mark.thorough),
    ],
)
def test_a_badly_named_inbox_file_fails_alone_and_is_counted(tmp_path, inbox, bad):
    put_log(inbox, "good", 40)
    put_log(inbox, bad, 40)
    lake = Lake(tmp_path / "lake")
    outcome = run(lake, inbox, INBOX)
    assert outcome.record.files_ingested == 1 and outcome.record.files_failed == 1
    assert lake.log_names() == ["good"]
    assert any("rename the file" in e for e in outcome.record.errors)


def test_one_log_name_in_two_inbox_folders_is_refused_every_night(tmp_path, inbox):
    """a/X.swf and b/X.swf would take the log in turn, night after night: both are refused, counted,
    and the lake's X stays as it was until one is renamed."""
    put_log(inbox, "other", 40)
    (inbox / "a").mkdir()
    (inbox / "b").mkdir()
    put_log(inbox / "a", "X", 100)
    put_log(inbox / "b", "X", 200)
    lake = Lake(tmp_path / "lake")
    for _ in range(2):
        outcome = run(lake, inbox, INBOX)
        assert outcome.record.files_failed == 2
        assert lake.log_names() == ["other"]
        assert any("would both become log 'X'" in e for e in outcome.record.errors)
    (inbox / "b" / "X.swf.gz").rename(inbox / "b" / "Y.swf.gz")
    run(lake, inbox, INBOX)
    assert dict(lake.query("SELECT log, count(*) FROM swf.jobs GROUP BY log").rows()) == {
        "X": 100,
        "Y": 200,
        "other": 40,
    }


def test_reports_owed_by_an_interrupted_run_run_on_the_next(tmp_path, inbox, monkeypatch):
    """Stopped after its ingest, a run leaves its reports owed: the next run, with nothing new in the
    inbox, runs them (once), and the one after owes nothing."""
    lake = Lake(tmp_path / "lake")
    put_log(inbox, "alpha", 120)

    def stopped(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("lakehouse.nightly.run.run_report", stopped)
    with pytest.raises(KeyboardInterrupt):
        run(lake, inbox, FAST)
    monkeypatch.undo()
    assert lake.log_names() == ["alpha"] and history.owed(lake).height == len(SWF_REPORTS)
    second = run(lake, inbox, FAST)
    assert second.record.files_ingested == 0 and second.record.reports_run == list(SWF_REPORTS)
    assert lake.query("SELECT count(*) AS n FROM analysis.predictions_scores WHERE source = 'alpha'")["n"][0] > 0
    assert lake.query("SELECT count(*) AS n FROM analysis.campaign_runs WHERE log = 'alpha'")["n"][0] == 3
    assert history.owed(lake).is_empty()
    assert run(lake, inbox, FAST).record.reports_run == []


def test_a_run_stopped_between_reports_owes_only_those_not_yet_run(tmp_path, inbox, monkeypatch):
    from lakehouse.nightly import run as nightly_run

    lake = Lake(tmp_path / "lake")
    put_log(inbox, "alpha", 120)
    real = nightly_run.run_report

    def stop_at_predictions(key: str, *args: object, **kwargs: object):
        if key == "predictions":
            raise KeyboardInterrupt
        return real(key, *args, **kwargs)

    monkeypatch.setattr("lakehouse.nightly.run.run_report", stop_at_predictions)
    with pytest.raises(KeyboardInterrupt):
        run(lake, inbox, FAST)
    monkeypatch.undo()
    assert history.owed(lake)["report"].to_list() == ["predictions"]
    assert run(lake, inbox, FAST).record.reports_run == ["predictions"]


def test_a_log_the_lake_took_from_another_file_still_there_is_refused(tmp_path, inbox):
    """Two inboxes (or an inbox and a hand-made ingest) that both hold log X would replace it in turn,
    night after night: the second source is refused while the first still exists."""
    lake = Lake(tmp_path / "lake")
    first = tmp_path / "first"
    first.mkdir()
    put_log(first, "X", 100)
    run(lake, first, INBOX)
    put_log(inbox, "X", 200)
    for _ in range(2):
        outcome = run(lake, inbox, INBOX)
        assert outcome.record.files_failed == 1 and outcome.exit_code == 2  # nothing else to do
        assert any("was ingested from" in e for e in outcome.record.errors)
        assert lake.query("SELECT count(*) AS n FROM swf.jobs")["n"][0] == 100
    (first / "X.swf.gz").unlink()  # the first source gone: the inbox's file is the log's new version
    assert run(lake, inbox, INBOX).exit_code == 0
    assert lake.query("SELECT count(*) AS n FROM swf.jobs")["n"][0] == 200


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[replays]\nview = ["jobs_clean"]\n', "replays.view: unknown view"),
        ("[replays]\ncampaign = 5\n", "replays.campaign"),
        ('workers = "two"\n', "workers: expected a whole number of worker processes from 1 to"),
        # The command line's bounds, from the same place: 4 workers per core, not a fork bomb.
        (f"workers = {4 * (os.cpu_count() or 1) + 1}\n", "workers: expected a whole number of worker processes"),
        ("workers = 0\n", "workers: expected a whole number of worker processes"),
        ('reports = "logs"\n', "reports: expected a list"),
        ('[periodicity]\nnoise_trials = "many"\n', "noise_trials: expected a whole number from 0 to 10,000"),
        ("[periodicity]\nnoise_trials = 1000000000000\n", "noise_trials: expected a whole number from 0 to 10,000"),
        ("machine_size = 5\n", "machine_size: expected a table"),
    ],
)
def test_a_config_value_of_the_wrong_type_is_named(tmp_path, toml, message):
    config = tmp_path / "nightly.toml"
    config.write_text(toml)
    with pytest.raises(SettingsError, match=message):
        load(config)


#: Each stop and each place once in `make test` (a run took 2.8 s); the other two pairs in `make faults`.
@pytest.mark.parametrize(
    ("stop", "where"),
    [
        ("INTERRUPT Error: Interrupted!", "section"),  # what a Ctrl-C inside a query gives
        ("Query interrupted", "one log's report"),  # a RuntimeError: the signal was pending as the query began
        pytest.param("INTERRUPT Error: Interrupted!", "one log's report", marks=pytest.mark.thorough),
        pytest.param("Query interrupted", "section", marks=pytest.mark.thorough),
    ],
)
def test_an_interrupted_query_in_a_report_stops_the_run_as_an_interrupt(tmp_path, inbox, monkeypatch, stop, where):
    import duckdb

    from lakehouse.nightly import reports

    def interrupted(*args, **kwargs):
        raise duckdb.InterruptException(stop) if stop.startswith("INTERRUPT") else RuntimeError(stop)

    if where == "section":
        title, _ = reports.SECTIONS["predictions"]
        monkeypatch.setitem(reports.SECTIONS, "predictions", (title, interrupted))
    else:  # per log, where the other logs' reports go on after a failure
        monkeypatch.setattr("lakehouse.models.predictions.model.report", interrupted)
    put_log(inbox, "alpha", 120)
    lake = Lake(tmp_path / "lake")
    with pytest.raises(KeyboardInterrupt):  # not a failed report the run goes on from
        run(lake, inbox, Config(reports=("predictions",), workers=1))
    (row,) = history.runs(lake).iter_rows(named=True)
    assert row["status"] == "failed" and "interrupted" in row["errors"][0]


def test_print_systemd_escapes_what_systemd_and_cron_would_take_for_their_own(tmp_path):
    """`%` is a specifier to systemd and a newline to cron, `$` a variable to systemd: escaped, the
    command reads back as given; a newline in a path (an injected `ExecStartPre=`) is refused."""
    inbox = tmp_path / "in%box $HOME"
    inbox.mkdir()
    out = cli("nightly", "--inbox", inbox, "--lake", tmp_path / "lake", "--memory-limit", "30%", "--print-systemd")
    (exec_start,) = [
        line.removeprefix("ExecStart=") for line in out.stdout.splitlines() if line.startswith("ExecStart=")
    ]
    (cron,) = [line for line in out.stdout.splitlines() if re.match(r"^\d+ \d+ \* \* \* ", line)]
    systemd_argv = shlex.split(exec_start.replace("%%", "\0").replace("$$", "$").replace("\0", "%"))
    assert str(inbox) in systemd_argv and "30%" in systemd_argv
    assert not re.search(r"(?<!%)%(?!%)", exec_start.replace("%%", ""))  # no lone specifier
    command = cron.split(" ", 5)[5].rsplit(" >> ", 1)[0]
    assert not re.search(r"(?<!\\)%", command)
    assert str(inbox) in shlex.split(command.replace("\\%", "%")) and "30%" in shlex.split(command.replace("\\%", "%"))
    evil = tmp_path / "x\nExecStartPre=rm -rf ~"
    evil.mkdir()
    refused = cli("nightly", "--inbox", evil, "--lake", tmp_path / "lake", "--print-systemd", code=1)
    assert "cannotgointoasystemdunitoracrontabline" in refused.err and "ExecStartPre" not in refused.stdout


class _Holder(threading.Thread):
    """Another writer (as a user's `ingest` would) holding the lake's writer lock for `seconds`, or until
    `release()`."""

    def __init__(self, root: Path, seconds: float) -> None:
        from lakehouse.base.writer import LOCK_FILE

        super().__init__(daemon=True)
        self.held = open(root / LOCK_FILE, "a+")  # noqa: SIM115 (closed by the thread)
        fcntl.flock(self.held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self.held.write("4242")
        self.held.flush()
        self.seconds = seconds
        self.done = threading.Event()
        self.start()

    def run(self) -> None:
        self.done.wait(self.seconds)
        self.held.close()

    def release(self) -> None:
        self.done.set()
        self.join()


def test_a_run_that_meets_another_writer_waits_for_it_then_does_everything(tmp_path, inbox):
    put_log(inbox, "alpha", 40)
    lake = Lake(tmp_path / "lake")
    lake.init()
    holder = _Holder(lake.root, 1.5)
    started = time.perf_counter()
    outcome = run(lake, inbox, INBOX)
    holder.join()
    assert time.perf_counter() - started >= 1.5  # it queued behind the other writer...
    assert outcome.record.status == "ok" and outcome.record.files_ingested == 1  # ...then did its night
    assert history.runs(lake)["status"].to_list() == ["ok"]


def test_a_writer_that_keeps_the_lake_past_the_wait_is_one_line_and_a_true_record(tmp_path, inbox, monkeypatch):
    monkeypatch.setattr("lakehouse.nightly.run.WRITER_WAIT", 0.5)
    put_log(inbox, "alpha", 40)
    lake = Lake(tmp_path / "lake")
    lake.init()
    holder = _Holder(lake.root, 30)
    result = cli("nightly", "--inbox", inbox, "--lake", lake.root, code=2)
    holder.release()
    assert "anotherwriterisrunning(pid4242)(waited0.5s)" in result.err
    assert lake.log_names() == []  # nothing was ingested, and nothing claims it was


def test_the_documented_configuration_loads_and_gives_its_options_to_the_runs(tmp_path, kth_lake):
    """docs/nightly.md's example is a configuration the run accepts, and a report's table there (the
    predictions' loss weight) reaches the runs the nightly run makes of it."""
    from lakehouse.reports import PREDICTIONS

    text = (Path(__file__).resolve().parents[1] / "docs" / "nightly.md").read_text(encoding="utf-8")
    path = tmp_path / "nightly.toml"
    path.write_text(text.split("```toml")[1].split("```")[0])
    config = load(path)
    assert config.options_of("periodicity")["noise_trials"] == 200
    runs, notes = PREDICTIONS.nightly_runs(kth_lake, kth_lake.log_names(), config.options_of("predictions"))
    assert [(r.name, r.settings.under, r.settings.over) for r in runs] == [("KTH-SP2-1996-2.1-cln", 2.0, 0.5)]
    assert notes == []


KTH = "KTH-SP2-1996-2.1-cln"


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
    command = cli("report", "predictions", "KTH", flag, value.strip('"'), code=2)
    assert said.split(", got")[0].split(" from")[0] in " ".join(command.stderr.split()) or "range" in command.stderr


def test_a_machine_size_glob_for_logs_not_there_yet_names_none():
    from lakehouse.nightly.config import Config

    config = Config(machine_size={"RICC-*": 8192})
    assert config.size_for(KTH, [KTH]) is None
    assert config.size_for("RICC-2010-2.2-cln", [KTH, "RICC-2010-2.2-cln"]) == 8192
