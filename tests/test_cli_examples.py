"""Every documented CLI example runs: the `Example:` lines of every `--help` page and the `sh` blocks of
the README and of docs/, each in a small world of its own.

The world is a working folder with `./lake` holding the logs the examples name (the first 3,000 jobs
of the embedded real KTH-SP2 log, small generated logs under the names of the other published logs)
and a generated two-day Google trace, beside the input files the examples read (`../logs/`,
`path/to/...` (a generated cell of the 2019 trace and two files of Alibaba's 2018 trace among them),
`~/traces/...`, `RICC.swf.gz`,
`study.toml`, `services.csv`, `medians.csv`, the nightly run's inboxes), and `./old-lake`, a lake of the
format lakehouse made before DuckLake (for `migrate` and `catalog rebuild`).
The examples run as written, except where the list SCALED_DOWN says otherwise, and why.  `make test`
runs each example that tries something no example before it tries (first_of_their_kind) and parses
every documented line; `make faults` runs them all.
"""

from __future__ import annotations

import gzip
import inspect
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.exceptions import TyperException
from typer.testing import CliRunner

from lakehouse.base.lake import FORMAT_VAR, Lake
from lakehouse.base.testing import small_log, swf_job, write_swf
from lakehouse.cli import app
from lakehouse.data import sample_google_trace, sample_swf_paths
from lakehouse.ingest import download as downloading
from lakehouse.ingest.download import ALIBABA_2018_URL_ENV, URL_2019_ENV, URL_ENV

from google_bucket import alibaba_archive, alibaba_digests, make_bucket, serve

REPO = Path(__file__).resolve().parents[1]
WEEK = 604_800
CODE_SPAN = re.compile(r"`([^`]+)`")
#: Generated logs under the names of the published logs the examples use, with their machine sizes.
NAMED_LOGS = {
    "CTC-SP2-1996-3.1-cln": 338,
    "SDSC-SP2-1998-4.2-cln": 128,
    "SDSC-BLUE-2000-4.2-cln": 1152,
    "HPC2N-2002-2.2-cln": 240,
    "CEA-Curie-2011-2.1-cln": 93312,
}
#: Options changed so that a test does in seconds what the example does in minutes or on a cluster.
SCALED_DOWN = [
    # 100 resamples of five logs is the whole published study (half an hour); two show it runs.
    (re.compile(r"--resamples \d+"), "--resamples 2"),
    # `--ray-address auto` joins a running Ray cluster, which a test machine does not have; a second
    # local Ray started beside the other tests times out on two cores. The same grid runs on the local
    # pool; that Ray gives the local pool's rows is test_campaign's test_ray_gives_the_same_rows...
    (re.compile(r"--executor ray --ray-address auto"), "--executor local"),
    # A twentieth of the whole Google trace takes a minute to generate; a two-thousandth shows it runs.
    (re.compile(r"--scale 0\.\d+"), "--scale 0.0005"),
    # A 2019 cell's shape over its 31 days is 700,000 usage rows even then (ten seconds to write and
    # ingest); one day shows the same commands run.
    (re.compile(r"(google-2019-shape \S+ --scale \S+)(?!.*--days)"), r"\1 --days 1"),
    # A team's lake on this machine: its catalog a SQLite file, its data a folder (test_ducklake_team runs
    # it on a PostgreSQL server and an S3-compatible one).
    (re.compile(r"--catalog postgresql://\S+"), "--catalog team/catalog.sqlite"),
    (re.compile(r"--data s3://\S+"), "--data team/data"),
]
#: The CLI as Click sees it: its groups and commands, walked for the help pages and the documented lines.
CLICK_APP = typer.main.get_group(app)
#: README lines that are not ours to run here: the test suite itself and the install step.
NOT_RUN = ("make demo", "make test")


def help_examples() -> list[tuple[str, list[str]]]:
    """(command, its example's command lines) for every `Example:` of every --help page."""
    found = []
    for path, command in _commands(CLICK_APP, ()):
        text = " ".join(inspect.cleandoc(command.help or "").split())
        for example in text.split("Example:")[1:]:
            lines = [line.strip() for span in CODE_SPAN.findall(example) for line in span.split("&&")]
            found.append((" ".join(path), [line for line in lines if line.split()[0] in ("lakehouse", "mv")]))
    return found


def _commands(group: object, prefix: tuple[str, ...]) -> list[tuple[tuple[str, ...], object]]:
    found = []
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        if hasattr(command, "commands"):
            found += _commands(command, (*prefix, name))
        else:
            found.append(((*prefix, name), command))
    return found


def readme_blocks() -> list[tuple[str, list[str]]]:
    """(first line, its command lines) for every `sh` block of the README and of docs/, continuations
    joined and comments dropped."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    blocks = [block for page in pages for block in re.findall(r"^```sh\n(.*?)^```", page.read_text(), re.M | re.S)]
    found = []
    for block in blocks:
        lines = [re.sub(r"\s+#\s.*$", "", line).strip() for line in block.replace("\\\n", " ").splitlines()]
        lines = [line for line in lines if line and not line.startswith(NOT_RUN)]
        if lines:
            found.append((lines[0][:60], lines))
    return found


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The world every example starts from, made in the folder every example runs in, and a pristine
    copy of it, copied back before each example (examples write to it).  The examples run where the
    world was made because its lake's views read that folder's files: a copy elsewhere needed its
    catalog rebuilt, a third of a second per example."""
    root = tmp_path_factory.mktemp("world")
    work, home = root / "work", root / "home"
    for folder in (work, home / "traces", root / "logs", work / "path" / "to" / "logs", root / "data"):
        folder.mkdir(parents=True)
    kth = _first_jobs(sample_swf_paths()[0], 3000, root / "logs" / "KTH-SP2-1996-2.1-cln.swf.gz")
    logs = [kth]
    for i, (name, size) in enumerate(NAMED_LOGS.items()):
        logs.append(write_swf(root / "logs" / f"{name}.swf.gz", three_weeks(300 + 50 * i), {"MaxProcs": size}))
    jobs, header = small_log(60)
    write_swf(work / "path" / "to" / "logs" / "example.swf", jobs, header)
    write_swf(work / "RICC.swf.gz", jobs, {})  # no header: the example gives --machine-size
    for place in (home / "traces" / "clusterdata-2011-2", work / "path" / "to" / "clusterdata-2011-2"):
        shutil.copytree(sample_google_trace(), place)
    # A small generated cell of the 2019 trace, where the examples read one: a cell's folder, and a
    # folder of shards that does not name the cell.
    _lakehouse(["generate", "google-2019", str(root / "gen2019"), "--hours", "2", "--jobs", "6", "--machines", "4"])
    shutil.copytree(root / "gen2019" / "cell_a", work / "path" / "to" / "clusterdata_2019_a")
    shutil.copytree(root / "gen2019" / "cell_a", work / "downloads")
    shutil.copytree(root / "gen2019" / "cell_a", home / "traces" / "clusterdata_2019_a")
    # Alibaba's 2018 trace, where the examples read it: two of its headerless files, a few real rows each.
    for folder in (home / "traces" / "alibaba-2018", work / "path" / "to" / "alibaba-2018"):
        folder.mkdir(parents=True)
        (folder / "machine_meta.csv").write_text("m_1,0,219,17,96,100,USING\nm_2,0,219,17,96,100,USING\n")
        (folder / "batch_task.csv").write_text(
            "M1,1,j_1,1,Terminated,419912,419912,100,0.2\nR2_1,1,j_2,1,Terminated,87076,87086,50,0.2\n"
        )
    (work / "study.toml").write_text(
        'name = "study"\nlogs = ["KTH", "SDSC-*"]\n[grid]\npolicy = ["fcfs", "spf"]\nbackfill = ["queue", "sjbf"]\n'
    )
    for inbox in (work / "inbox", root / "srv" / "traces" / "inbox"):  # the nightly run's examples
        inbox.mkdir(parents=True)
        write_swf(inbox / "example.swf", jobs, header)
    (work / "services.csv").write_text("job,tasks,c,rho,phi\n1,3,4.0,2.0,0.0\n2,2,5.0,3.0,3.1\n3,4,2.0,1.0,1.5\n")
    # A prediction table made outside lakehouse (`import predictions`): two jobs of the KTH-SP2 log.
    (work / "medians.csv").write_text(
        "log,job_id,predicted\nKTH-SP2-1996-2.1-cln,15,3600\nKTH-SP2-1996-2.1-cln,16,60\n"
    )
    lake = str(work / "lake")
    _lakehouse(["ingest", "swf", *map(str, logs), "--lake", lake])
    with pytest.MonkeyPatch.context() as patch:  # a lake an earlier release made (`migrate`, `catalog rebuild`)
        patch.setenv(FORMAT_VAR, "duckdb")
        _lakehouse(["ingest", "swf", str(kth), "--lake", str(work / "old-lake")])
    _lakehouse(["generate", "google", str(root / "gen"), "--days", "2", "--machines", "6", "--services", "3"])
    _lakehouse(["ingest", "google", str(root / "gen" / "trace"), "--lake", lake])
    _lakehouse(["ingest", "google-2019", str(root / "gen2019" / "cell_a"), "--lake", lake])
    _lakehouse(["campaign", "run", "--name", "policies", "--log", "KTH", "--policy", "fcfs,spf", "--lake", lake])
    # The imported table the examples list and drop (`predictions list|drop`).
    _lakehouse(["import", "predictions", str(work / "medians.csv"), "--name", "user-median", "--lake", lake])
    pristine = tmp_path_factory.mktemp("pristine") / "world"
    shutil.copytree(root, pristine, symlinks=True)
    return root, pristine


def three_weeks(jobs: int) -> list[dict]:
    """Jobs over three weeks (week resampling needs two), on up to 64 processors."""
    return [
        swf_job(i + 1, submit=i * 3 * WEEK // jobs, run=600 + 97 * (i % 40), procs=1 + (7 * i) % 64, req_time=4000)
        for i in range(jobs)
    ]


def _first_jobs(source: Path, jobs: int, target: Path) -> Path:
    """The header and the first `jobs` job lines of a real log."""
    kept, count = [], 0
    for line in gzip.decompress(source.read_bytes()).decode().splitlines(keepends=True):
        count += not line.startswith(";")
        if count > jobs:
            break
        kept.append(line)
    target.write_bytes(gzip.compress("".join(kept).encode(), mtime=0))
    return target


def _lakehouse(args: list[str]) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, (args, result.stdout, result.stderr, result.exception)


@pytest.fixture(scope="module")
def bucket_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The Google trace's bucket, as the `download google-2011` examples fetch from it: a local one."""
    with serve(make_bucket(tmp_path_factory.mktemp("bucket") / "clusterdata-2011-2")) as url:
        yield url


@pytest.fixture(scope="module")
def host_2019_url(template: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Google's storage host as the `download google-2019` examples list and fetch from it: a local one
    with the buckets of cells a and b (the template's generated cell under both names)."""
    host = tmp_path_factory.mktemp("host")
    for cell in ("a", "b"):
        shutil.copytree(template[1] / "gen2019" / "cell_a", host / f"clusterdata_2019_{cell}")
    with serve(host) as url:
        yield url


@pytest.fixture(scope="module")
def alibaba_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """Alibaba's object store as the `download alibaba-2018` examples fetch from it: a local one holding
    the embedded sample's tables as archives, and their digests (published in place of the real ones)."""
    folder = tmp_path_factory.mktemp("oss")
    for table in ("machine_meta", "machine_usage", "container_meta", "batch_task"):
        alibaba_archive(folder, table)
    with serve(folder) as url:
        yield url, alibaba_digests(folder)


@pytest.fixture
def world(
    template: tuple[Path, Path],
    bucket_url: str,
    host_2019_url: str,
    alibaba_store: tuple[str, dict[str, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> Path:
    root, pristine = template
    shutil.rmtree(root)
    shutil.copytree(pristine, root, symlinks=True)
    monkeypatch.chdir(root / "work")
    monkeypatch.setenv("HOME", str(root / "home"))
    monkeypatch.delenv("LAKEHOUSE_LAKE", raising=False)
    monkeypatch.setenv(URL_ENV, bucket_url)
    monkeypatch.setenv(URL_2019_ENV, host_2019_url)
    monkeypatch.setenv(ALIBABA_2018_URL_ENV, alibaba_store[0])
    monkeypatch.setattr(downloading, "ALIBABA_2018_SHA256", downloading.ALIBABA_2018_SHA256 | alibaba_store[1])
    return root


def scaled_down(line: str) -> str:
    for pattern, replacement in SCALED_DOWN:
        line = pattern.sub(replacement, line)
    return line


def run_line(line: str, world: Path) -> None:
    """One documented command line, as a shell would run it in the world."""
    line = scaled_down(line)
    if line.startswith("D "):  # a query typed in the duckdb shell the line before opened on ./lake
        Lake("lake").query(line[2:])
        return
    words = [_in_world(os.path.expanduser(word), world) for word in shlex.split(line)]
    if words[0] == "duckdb":
        return  # the shell itself; its query is the next line
    if words[0] == "mv":
        shutil.move(words[1], words[2])
        return
    assert words[0] == "lakehouse", line
    if words[1] == "shell":  # it becomes the duckdb command line (exec): a process of its own, no input
        done = subprocess.run([sys.executable, "-m", "lakehouse.cli", *words[1:]], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        assert done.returncode == 0, (line, done.stdout, done.stderr)
        return
    result = CliRunner().invoke(app, words[1:])
    assert result.exit_code == 0, (line, result.stdout, result.stderr, result.exception)


def _in_world(word: str, world: Path) -> str:
    """Absolute paths of the examples (`/data/lake`, `/srv/traces/inbox`) land inside the world."""
    return str(world / word.lstrip("/")) if word.startswith(("/data", "/srv")) else word


#: Example lines another test runs, with more checks: `lakehouse demo` takes a minute, so it runs once,
#: in test_cli's test_demo_runs_on_the_embedded_sample, which also audits the lake it made; every study
#: of docs/reproductions.md runs in test_reproduce, on the lake its record is made on, its rows checked
#: (here they took 34 s of the suite, on logs that hold none of the studies' jobs).
RUN_ELSEWHERE = (
    "lakehouse demo --lake demo-lake",
    "lakehouse audit --lake demo-lake",
    "lakehouse reproduce locality",
    "lakehouse reproduce hmm",
    "lakehouse reproduce hmm-backfilling --format csv -o hmm.csv",
    "lakehouse reproduce eloss-triples",
    "lakehouse reproduce packing",
    "lakehouse reproduce selection --quick",
    "lakehouse reproduce volatility",
)


def _without(lines: list[str], dropped: tuple[str, ...]) -> list[str]:
    return [line for line in lines if line not in dropped]


def unrepeated(examples: list[tuple[str, list[str]]]) -> list[tuple[str, list[str]]]:
    """The examples without those whose lines begin another one's (or repeat an earlier one's): every
    world starts the same, so those lines would run again from the same state and show nothing new."""
    kept = []
    for i, (name, lines) in enumerate(examples):
        covered = any(
            other[: len(lines)] == lines and (len(other) > len(lines) or j < i)
            for j, (_, other) in enumerate(examples)
            if j != i
        )
        if not covered:
            kept.append((name, lines))
    return kept


def command_of(line: str) -> tuple[tuple[str, ...], object]:
    """The command a documented `lakehouse` line runs, and its path: `lakehouse report selection KTH` runs
    ("report", "selection")."""
    command, path = CLICK_APP, []
    for word in shlex.split(line)[1:]:
        commands = getattr(command, "commands", None)
        if commands is None or word not in commands:
            break
        path.append(word)
        command = commands[word]
    return tuple(path), command


#: A query or a policy formula is a trial of its own: parsing the command line does not read them.
OWN_TRIAL = re.compile(r"^D |^lakehouse sql |--polic(y|ies)[ =]\S*:")


def kinds(lines: list[str]) -> set[object]:
    """What an example tries: the commands it runs, and each query or formula it types."""
    found: set[object] = set()
    for line in lines:
        if OWN_TRIAL.search(line):
            found.add(line)
        elif line.startswith("lakehouse"):
            found.add(command_of(line)[0])
    return found


def first_of_their_kind(examples: list[tuple[str, list[str]]]) -> list[bool]:
    """For each example, whether it tries something no example before it tries (help pages first, in the
    order of the commands).  `make test` runs those; the others run in `make faults` (marked thorough),
    and `make test` still parses every line of them (test_every_documented_line_parses)."""
    seen: set[object] = set()
    first = []
    for _, lines in examples:
        tried = kinds(lines)
        first.append(not tried <= seen)
        seen |= tried
    return first


HELP_EXAMPLES = help_examples()
README_BLOCKS = readme_blocks()
EXAMPLES = unrepeated(
    [(name, kept) for name, lines in [*HELP_EXAMPLES, *README_BLOCKS] if (kept := _without(lines, RUN_ELSEWHERE))]
)


def _params(examples: list[tuple[str, list[str]]]) -> list[object]:
    return [
        pytest.param(name, lines, id=name, marks=[] if first else [pytest.mark.thorough])
        for (name, lines), first in zip(examples, first_of_their_kind(examples), strict=True)
    ]


def test_the_examples_are_found():
    assert len(HELP_EXAMPLES) >= 20 and all(lines for _, lines in HELP_EXAMPLES)
    assert len(README_BLOCKS) >= 5 and sum(len(lines) for _, lines in README_BLOCKS) >= 20


def test_every_example_runs_somewhere():
    """Every documented line runs here, but those that run elsewhere."""
    run = {line for _, lines in EXAMPLES for line in lines}
    assert {line for _, lines in [*HELP_EXAMPLES, *README_BLOCKS] for line in lines} - run == set(RUN_ELSEWHERE)


@pytest.mark.parametrize(("first", "lines"), _params(EXAMPLES))
def test_example_runs(world, first, lines):
    for line in lines:
        run_line(line, world)


def test_every_documented_line_parses():
    """Every documented `lakehouse` line names a command and options it has, with values they take (the
    lines `make test` does not run included): parsed as the command line parses them, not run."""
    for _, lines in [*HELP_EXAMPLES, *README_BLOCKS]:
        for line in lines:
            if not line.startswith("lakehouse"):
                continue
            line = scaled_down(line)
            path, command = command_of(line)
            assert not hasattr(command, "commands"), f"{line!r} names no command"
            args = [os.path.expanduser(word) for word in shlex.split(line)[1 + len(path) :]]
            try:
                command.make_context(" ".join(path), args)
            except TyperException as exc:
                raise AssertionError(f"{line!r}: {exc}") from None
