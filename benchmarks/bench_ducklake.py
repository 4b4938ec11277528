"""`make bench`, DuckLake section: what a DuckLake catalog costs a user, whole commands on the same data.

Each command runs on a lake of the DuckDB catalog's format, which lakehouse made before DuckLake became
the default (the baseline, `LAKEHOUSE_FORMAT=duckdb`), and on a DuckLake lake of one folder (`init
--ducklake`, its catalog a SQLite file), in turns, three rounds; the ratio printed is the median
of the three rounds' ratios.  Rows:

- `lakehouse ingest swf` of the shared logs ($LAKEHOUSE_SHARED_DATA/swf) into a new lake, and
  `lakehouse ingest google` of the shared Google sample: target >= 0.9x today's speed (time ratio <= 1.11).
- `lakehouse logs` on the lakes just made, and a campaign (12 policies x EASY on KTH-SP2 and CTC-SP2, 24
  runs, 2 workers): target <= 1.2x.
- A team's lake (`init --catalog postgresql://...`, a PostgreSQL server started here as the tests start
  it, the data in a folder): the 19 logs' ingest against the DuckDB catalog's format (information), and what a
  commit costs on PostgreSQL against SQLite: `lakehouse ingest swf` of one small log (one commit), ten
  logs, the median difference (information).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from benchmarks.bench_campaign import POLICIES
from benchmarks.measure import command, timed, verdict
from lakehouse.base.lake import FORMAT_VAR
from lakehouse.base.testing import small_log, write_swf

ROUNDS = 3
CAMPAIGN = ["--log", "KTH-SP2-1996-2.1-cln", "--log", "CTC-SP2-1996-3.1-cln", "--view", "jobs_strong",
            "--policy", POLICIES, "--workers", "2", "--format", "csv"]  # fmt: skip


def todays_lake(path: Path) -> Path:
    """A new lake of the DuckDB catalog's format, the baseline (made, not timed): DuckLake is the default."""
    saved = os.environ.get(FORMAT_VAR)
    os.environ[FORMAT_VAR] = "duckdb"
    try:
        timed(command("init", "--lake", str(path)))
    finally:
        os.environ.pop(FORMAT_VAR) if saved is None else os.environ.update({FORMAT_VAR: saved})
    return path


def _seconds(args: list[str]) -> float:
    return timed(args)[0]


def _paired(label: str, baseline: Callable[[int], float], measured: Callable[[int], float]) -> float:
    """The median over ROUNDS of measured/baseline, each round running both, in turns."""
    ratios, pairs = [], []
    for number in range(ROUNDS):
        base, this = baseline(number), measured(number)
        ratios.append(this / base)
        pairs.append(f"{this:.1f}/{base:.1f} s")
    ratio = sorted(ratios)[ROUNDS // 2]
    print(f"{label}: {ratio:.2f}x the DuckDB catalog's format (median of {ROUNDS} rounds: {', '.join(pairs)})")
    return ratio


def bench_ducklake(folder: Path) -> bool:
    google = folder.parent / "google"
    with tempfile.TemporaryDirectory(prefix="lakehouse-bench-ducklake-") as scratch:
        root = Path(scratch)

        def lake(kind: str, name: str, number: int) -> Path:
            """A new lake of that kind (made, not timed)."""
            path = root / f"{kind}-{name}-{number}"
            if kind == "ducklake":
                timed(command("init", "--ducklake", "--lake", str(path)))
            else:
                todays_lake(path)
            return path

        def ingest(kind: str, what: str, source: Path) -> Callable[[int], float]:
            return lambda number: _seconds(
                command("ingest", what, str(source), "--lake", str(lake(kind, what, number)))
            )

        checks = {}
        ratio = _paired(
            "ingest swf, the shared logs", ingest("today", "swf", folder), ingest("ducklake", "swf", folder)
        )
        checks["ingest swf >= 0.9x"] = ratio <= 1 / 0.9
        if google.exists():
            ratio = _paired("ingest google, the shared sample", ingest("today", "google", google),
                            ingest("ducklake", "google", google))  # fmt: skip
            checks["ingest google >= 0.9x"] = ratio <= 1 / 0.9

        def logs(kind: str) -> Callable[[int], float]:
            return lambda number: _seconds(command("logs", "--lake", str(root / f"{kind}-swf-0")))

        checks["logs <= 1.2x"] = _paired("lakehouse logs", logs("today"), logs("ducklake")) <= 1.2

        def campaign(kind: str) -> Callable[[int], float]:
            return lambda number: _seconds(
                command(
                    "campaign", "run", "--lake", str(root / f"{kind}-swf-0"), "--name", f"bench-{number}", *CAMPAIGN
                )
            )

        checks["campaign <= 1.2x"] = _paired("a campaign (24 runs)", campaign("today"), campaign("ducklake")) <= 1.2
        _team(root, folder)
    return verdict(checks)


def _team(root: Path, folder: Path) -> None:
    """A team's lake on PostgreSQL: information, no target."""
    sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
    try:
        from postgres_server import postgres_server
    except ImportError as exc:
        print(f"team lake (PostgreSQL): not measured ({exc})")
        return
    try:
        with postgres_server() as server:
            saved = os.environ.get("PGPASSWORD")
            os.environ["PGPASSWORD"] = server.password
            try:
                _team_rows(root, folder, server)
            finally:
                os.environ.pop("PGPASSWORD") if saved is None else os.environ.update(PGPASSWORD=saved)
    except Exception as exc:  # noqa: BLE001 - pytest's skip (no PostgreSQL here) or a failed start: said, not fatal
        print(f"team lake (PostgreSQL): not measured ({type(exc).__name__}: {exc})")


def _team_rows(root: Path, folder: Path, server) -> None:  # noqa: ANN001 - tests/postgres_server.Server
    made = iter(range(1_000_000))

    def team_lake() -> Path:
        name = f"bench_{next(made)}"
        server.create_database(name)
        path = root / f"team-{name}"
        timed(command("init", "--lake", str(path), "--catalog", server.url(name), "--data", str(root / f"{name}-data")))
        return path

    def today(number: int) -> float:
        return _seconds(
            command("ingest", "swf", str(folder), "--lake", str(todays_lake(root / f"today-team-{number}")))
        )

    _paired("team lake (PostgreSQL catalog, data in a folder): ingest swf, the shared logs", today,
            lambda number: _seconds(command("ingest", "swf", str(folder), "--lake", str(team_lake()))))  # fmt: skip
    logs = root / "small-logs"
    logs.mkdir()
    sqlite, postgres = [], []
    for number in range(10):
        log = write_swf(logs / f"small{number}.swf", *small_log(5))
        folder_lake = root / f"one-commit-{number}"
        timed(command("init", "--ducklake", "--lake", str(folder_lake)))
        sqlite.append(_seconds(command("ingest", "swf", str(log), "--lake", str(folder_lake))))
        postgres.append(_seconds(command("ingest", "swf", str(log), "--lake", str(team_lake()))))
    differences = sorted(p - s for p, s in zip(postgres, sqlite, strict=True))
    medians = f"SQLite {sorted(sqlite)[5]:.2f} s, PostgreSQL {sorted(postgres)[5]:.2f} s"
    print(f"a commit on PostgreSQL against SQLite (ingest swf of a 5-job log, 10 logs): "
          f"+{differences[5] * 1000:.0f} ms (median; {medians})")  # fmt: skip
    shutil.rmtree(logs)
