"""The ingest under faults, as a user's machine inflicts them: kill -9 and Ctrl-C at random moments of
`lakehouse ingest swf` (every shared log) and `lakehouse ingest google` (a generated trace), two writers
started together, readers during an ingest.  After each trial the lake opens read-only, every view
answers, a re-run completes, and the rows equal a clean ingest's.

`make test` runs one trial of kill -9 on an SWF ingest, on the smallest shared logs; `make faults` runs
every signal on each kind of ingest, two writers and readers, 20
(LAKEHOUSE_FAULT_TRIALS) on every shared log and prints the table: trials, hangs, tracebacks,
inconsistent lakes, lost or duplicated rows, all zero."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from postgres_server import Server, postgres_server
from s3_server import ObjectStore, s3_server

from lakehouse.base.lake import Lake
from lakehouse.synth.google_trace import Settings, generate

from conftest import SWF_DIR, read_every_view, shared_or_skip

TRIALS = int(os.environ.get("LAKEHOUSE_FAULT_TRIALS", "1"))
#: Logs ingested under faults: every shared log in `make faults`, the smallest in `make test` (a clean
#: ingest of all of them takes half a minute, and every trial ingests again).
SMALLEST_LOGS = None if "LAKEHOUSE_FAULT_TRIALS" in os.environ else 4
pytestmark = [pytest.mark.faults, pytest.mark.slow]
#: Per kind of trial: what went wrong how often (printed at the end of the module).
TALLY: dict[str, Counter] = {}


@pytest.fixture(scope="module", autouse=True)
def table():
    yield
    print("\n\ningest faults:")
    print(f"{'trials':<48}{'runs':>6}{'hangs':>7}{'tracebacks':>12}{'inconsistent':>14}{'lost/dup rows':>15}")
    for kind, tally in TALLY.items():
        print(f"{kind:<48}{tally['trials']:>6}{tally['hangs']:>7}{tally['tracebacks']:>12}"
              f"{tally['inconsistent']:>14}{tally['lost']:>15}")  # fmt: skip


def ingest(kind: str, source: Path, lake: Path) -> list[str]:
    return [sys.executable, "-m", "lakehouse.cli", "ingest", kind, str(source), "--lake", str(lake)]


def state(root: Path) -> dict[str, object]:
    """Rows per log and per Google table, the manifest, and duplicates; every view must answer."""
    lake = Lake(root)
    read_every_view(lake, "count(*)")  # (three times a trial: each view binds and scans)
    return {
        "jobs": dict(lake.query("SELECT log, count(*) AS n FROM swf.jobs GROUP BY log").rows()),
        "duplicated jobs": lake.query("SELECT count(*) - count(DISTINCT (log, line)) AS d FROM swf.jobs")["d"][0],
        "usage": lake.query("SELECT count(*) AS n FROM google.task_usage")["n"][0],
        "events": lake.query("SELECT count(*) AS n FROM google.task_events")["n"][0],
        "manifest": sorted(lake.query("SELECT dataset, name, rows_out FROM meta.manifest WHERE status = 'ok'").rows()),
    }


@pytest.fixture(scope="module")
def swf_logs(tmp_path_factory) -> Path:
    logs = sorted(shared_or_skip(SWF_DIR).glob("*.swf.gz"), key=lambda p: p.stat().st_size)
    if SMALLEST_LOGS is None:
        return SWF_DIR
    folder = tmp_path_factory.mktemp("fault-logs")
    for log in logs[:SMALLEST_LOGS]:
        (folder / log.name).symlink_to(log)
    return folder


@pytest.fixture(scope="module")
def trace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("faults-trace")
    generate(root, Settings(machines=10, days=1, seed=5, services=6, batch_jobs_per_hour=6, parts=4))
    return root / "trace"


#: The catalogs a trial's lake may have: today's DuckDB file, a DuckLake lake of one folder, a team's
#: DuckLake lake (its catalog on PostgreSQL, its data on the S3-compatible server).
CATALOGS = {"duckdb": "", "ducklake": " (DuckLake)", "postgresql": " (PostgreSQL + S3)"}


@pytest.fixture(scope="module")
def team_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, ObjectStore]]:
    """A PostgreSQL server and an S3-compatible one for the trials on a team's lake, their password and
    keys in the environment of the module's commands (as a member's shell has them)."""
    with postgres_server() as catalogs, s3_server(tmp_path_factory.mktemp("object-store")) as store:
        saved = dict(os.environ)
        os.environ.update({"PGPASSWORD": catalogs.password, **store.environment()})
        try:
            yield catalogs, store
        finally:
            os.environ.clear()
            os.environ.update(saved)


def _maker(request: pytest.FixtureRequest, catalog: str) -> Callable[[Path], None]:
    """How a trial's new lake is made before its ingest: by the ingest itself (today's format), by `init
    --ducklake`, or by `init --catalog` on a new database and data path of the team's servers."""

    def init(root: Path, *options: str) -> None:
        line = [sys.executable, "-m", "lakehouse.cli", "init", "--lake", str(root), *options]
        made = subprocess.run(line, capture_output=True, text=True)
        assert made.returncode == 0, made.stderr

    if catalog == "duckdb":
        return lambda root: None
    if catalog == "ducklake":
        return lambda root: init(root, "--ducklake")
    catalogs, store = request.getfixturevalue("team_servers")

    def on_the_team_servers(root: Path) -> None:
        database_name = f"trial_{secrets.token_hex(4)}"
        catalogs.create_database(database_name)
        init(root, "--catalog", catalogs.url(database_name), "--data", f"s3://{store.bucket}/{database_name}")

    return on_the_team_servers


def _clean(
    kind: str, source: Path, root: Path, make: Callable[[Path], None] = lambda root: None
) -> tuple[dict[str, object], float]:
    make(root)
    started = time.perf_counter()
    done = subprocess.run(ingest(kind, source, root), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return state(root), time.perf_counter() - started


@pytest.fixture(scope="module")
def clean_swf(swf_logs, tmp_path_factory) -> tuple[dict[str, object], float]:
    """The lake's state after a clean ingest of the fault trials' logs, and its seconds: what every SWF
    trial must end with (made once for the module's trials)."""
    return _clean("swf", swf_logs, tmp_path_factory.mktemp("clean-swf") / "lake")


def _trial(
    kind: str,
    source: Path,
    root: Path,
    clean: dict,
    how: signal.Signals,
    after: float,
    tally: Counter,
    make: Callable[[Path], None],
) -> bool:
    """One fault `after` seconds into an ingest; False (and no trial counted) if the ingest had ended
    before the signal landed: only a signal that lands mid-work tests anything."""
    make(root)
    victim = subprocess.Popen(ingest(kind, source, root), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(after)
    if victim.poll() is not None:
        victim.communicate()
        shutil.rmtree(root, ignore_errors=True)
        return False
    victim.send_signal(how)
    try:
        _, err = victim.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        tally["hangs"] += 1
        victim.kill()
        _, err = victim.communicate()
    if victim.returncode == 0:  # it finished between the look and the signal
        shutil.rmtree(root, ignore_errors=True)
        return False
    tally["trials"] += 1
    # Ctrl-C: 130 (stopped, one line); anything else counts as a traceback.
    if "Traceback" in err or (how == signal.SIGINT and victim.returncode != 130):
        tally["tracebacks"] += 1
        print(f"\n{kind} after {after:.2f} s: exit {victim.returncode}\n{err[-2000:]}")
    try:
        if Lake(root).exists():
            state(root)  # right after the fault: the lake opens and every view answers
    except Exception:  # noqa: BLE001 - any error is what the tally counts
        tally["inconsistent"] += 1
    again = subprocess.run(ingest(kind, source, root), capture_output=True, text=True)
    if again.returncode != 0 or "Traceback" in again.stderr:
        tally["inconsistent"] += 1
        return True
    now = state(root)
    if now != clean:
        tally["lost"] += 1
    return True


#: `make test` kills an SWF ingest at a random moment; the other three pairs run in `make faults` (marked
#: thorough).  `make test` meets the others elsewhere: Ctrl-C mid-ingest in test_lake_safety, a Google
#: ingest killed (kill -9 or SIGTERM) at a random moment of a nightly run in test_nightly_faults.
#: Each also on a DuckLake lake (`init --ducklake`), in `make faults`: a trial there took 44 s where one on
#: today's format takes 8 (every view is read three times a trial, and a DuckLake view binds in ~20 ms per
#: table it reads); `make test` meets a killed writer's leftovers on DuckLake in test_ducklake_lake.
#: And each on a team's lake (PostgreSQL and the S3-compatible server, which make faults builds).
FAULT_CASES = [
    pytest.param("swf", signal.SIGKILL, "duckdb", id="swf-kill -9"),
    *(
        pytest.param(kind, how, catalog, id=f"{kind}-{name}{'' if catalog == 'duckdb' else '-' + catalog}",
                     marks=pytest.mark.thorough)
        for catalog in CATALOGS
        for kind, how, name in (("google", signal.SIGINT, "ctrl-c"), ("swf", signal.SIGINT, "ctrl-c"),
                                ("google", signal.SIGKILL, "kill -9"), ("swf", signal.SIGKILL, "kill -9"))
        if (kind, how, catalog) != ("swf", signal.SIGKILL, "duckdb")
    ),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "how", "catalog"), FAULT_CASES)
def test_faults_at_random_moments_of_an_ingest(request, tmp_path, swf_logs, kind, how, catalog):
    # The generated trace is made only for the Google trials (it took 4 s of the SWF trial).
    source = swf_logs if kind == "swf" else request.getfixturevalue("trace")
    make = _maker(request, catalog)
    if kind == "swf" and catalog == "duckdb":
        clean, seconds = request.getfixturevalue("clean_swf")
    else:
        clean, seconds = _clean(kind, source, tmp_path / "clean", make)
    signal_name = "kill -9" if how == signal.SIGKILL else "Ctrl-C"
    tally = TALLY.setdefault(f"{signal_name} during ingest {kind}{CATALOGS[catalog]}", Counter())
    rng = np.random.default_rng([TRIALS, len(kind), int(how)])
    latest = 0.9 * seconds  # `seconds` ends with the interpreter's exit
    for attempt in range(6 * TRIALS + 6):  # a draw after the ingest ended is drawn again
        if tally["trials"] == TRIALS:
            break
        after = float(rng.uniform(0.6, max(latest, 0.7)))
        if not _trial(kind, source, tmp_path / f"t{attempt}", clean, how, after, tally, make):
            # The ingest ended first: the clean run was slower than this one (the machine is shared
            # with the other tests), so draw earlier.
            latest = min(latest, after) * 0.8
    assert tally["trials"] == TRIALS, f"only {tally['trials']} of {TRIALS} signals landed while the ingest worked"
    assert (tally["hangs"], tally["tracebacks"], tally["inconsistent"], tally["lost"]) == (0, 0, 0, 0), dict(tally)


# `make test` starts two writers together in test_lake_safety (on a new lake) and reads during a nightly
# run's ingest in test_nightly (with lakehouse and with the duckdb shell): these repeat them on the
# archive's logs in `make faults`.
@pytest.mark.thorough
def test_two_writers_started_together(tmp_path, swf_logs, clean_swf):
    source = swf_logs
    clean, _ = clean_swf
    tally = TALLY.setdefault("two ingests started together", Counter())
    for trial in range(TRIALS):
        tally["trials"] += 1
        root = tmp_path / f"t{trial}"
        both = [subprocess.Popen(ingest("swf", source, root), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 text=True) for _ in range(2)]  # fmt: skip
        outcomes = [(p.wait(timeout=120), " ".join(p.stderr.read().split())) for p in both]
        for p in both:
            p.stderr.close()
        tally["tracebacks"] += sum("Traceback" in err for _, err in outcomes)
        codes = sorted(code for code, _ in outcomes)
        # One ingests; the other is refused at once (or, started just after, finds everything done).
        if codes not in ([0, 0], [0, 1]) or (
            codes == [0, 1] and "another writer" not in "".join(e for _, e in outcomes)
        ):
            tally["inconsistent"] += 1
        if state(root) != clean:
            subprocess.run(ingest("swf", source, root), capture_output=True)
            tally["lost"] += state(root) != clean
    assert (tally["tracebacks"], tally["inconsistent"], tally["lost"]) == (0, 0, 0), dict(tally)


#: Logs the readers' test ingests one by one (each commit is read several times).
READER_LOGS = 6


@pytest.mark.thorough
@pytest.mark.parametrize("catalog", CATALOGS)
def test_readers_during_an_ingest_see_whole_logs(request, tmp_path, catalog):
    # Six logs, ingested one after the other (one process each): each commits while readers read,
    # and the run lasts long enough for many reads on a busy machine (one ingest of the whole folder
    # left some runs with only 4 reads).  The six smallest archive logs: what is tested is the commits,
    # and small logs give more reads in less time (the first six by name, CEA-Curie's 312 k jobs
    # among them, took a minute).
    archive = [p for p in shared_or_skip(SWF_DIR).glob("*.swf.gz") if not p.name.startswith("lublin")]
    logs = sorted(archive, key=lambda p: p.stat().st_size)[:READER_LOGS]
    source = tmp_path / "logs"
    source.mkdir()
    for log in logs:
        (source / log.name).symlink_to(log)
    clean, _ = _clean("swf", source, tmp_path / "clean")
    final = clean["jobs"]
    tally = TALLY.setdefault(f"readers during ingest swf{CATALOGS[catalog]}", Counter())
    root = tmp_path / "lake"
    _maker(request, catalog)(root)
    pending = sorted(source.iterdir())
    writer: subprocess.Popen[str] | None = None
    errors: list[str] = []
    reads = 0
    while pending or (writer is not None and writer.poll() is None):
        if pending and (writer is None or writer.poll() is not None):  # (it may end between two polls)
            if writer is not None:
                _, failure = writer.communicate()
                assert writer.returncode == 0, failure
            writer = subprocess.Popen(ingest("swf", pending.pop(0), root), stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True)  # fmt: skip
        if not Lake(root).exists():
            time.sleep(0.01)
            continue
        try:
            seen = dict(Lake(root).query("SELECT log, count(*) AS n FROM swf.jobs GROUP BY log").rows())
        except Exception as exc:  # noqa: BLE001 - any error is what this test looks for
            errors.append(str(exc))
            continue
        reads += 1
        errors += [f"{log}: {n} of {final.get(log)} jobs" for log, n in seen.items() if final.get(log) != n]
    assert writer is not None
    _, failure = writer.communicate()
    assert writer.returncode == 0, failure
    assert state(root)["jobs"] == final  # every log arrived, once
    tally["trials"] += reads
    tally["inconsistent"] += len(errors)
    assert reads > 5 and not errors, errors[:5]


def test_a_reader_thread_and_the_writer_share_nothing_but_the_files(tmp_path, swf_logs):
    # The same from threads of one process (as a notebook reading while a cell ingests).
    from lakehouse.ingest.swf import ingest_swf

    source = swf_logs
    lake = Lake(tmp_path / "lake")
    lake.init()
    errors: list[str] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            try:
                Lake(lake.root).query("SELECT count(*) FROM swf.jobs_clean")
            except Exception as exc:  # noqa: BLE001
                errors.append(str(exc))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        ingest_swf(lake, [str(source)])
    finally:
        stop.set()
        reader.join()
    assert not errors, errors[:3]
