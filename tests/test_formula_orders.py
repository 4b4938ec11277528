"""Queue orders written as formulas (docs/your-own-policy.md): the built-in orders rewritten as formulas
give the built-in schedules on every shared log; random formulas give the schedule of a plain Python
EASY that evaluates them itself; bad formulas are refused with the place; campaigns key runs by the
formula's text."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from lakehouse import _native
from lakehouse.base.comma_lists import split_list
from lakehouse.base.errors import SimulationInputError
from lakehouse.cli import app
from lakehouse.sim import engine_docs, simulate
from lakehouse.sim.options import Policy
from lakehouse.sim.reference import Jobs, easy_starts

from conftest import examples

runner = CliRunner()

#: Each built-in order as a formula (written by hand from docs/simulator.md's definitions).
AS_FORMULAS = {
    "fcfs": "min:a",
    "lcfs": "max:a",
    "spf": "min:r",
    "lpf": "max:r",
    "sqf": "min:n",
    "lqf": "max:n",
    "lexp": "max:(w + r) / max(r, 1)",
    "sexp": "min:(w + r) / max(r, 1)",
    "lrf": "max:r / n",
    "srf": "min:r / n",
    "laf": "max:r * n",
    "saf": "min:r * n",
}

REPO = Path(__file__).resolve().parents[1]


def test_every_built_in_order_has_its_formula():
    assert sorted(AS_FORMULAS) == sorted(_native.BUILT_IN_POLICIES)
    assert [str(policy) for policy in Policy] == _native.BUILT_IN_POLICIES  # the Python names are the engine's


def _docs_table(heading_row: str) -> list[list[str]]:
    """The rows of the table of docs/your-own-policy.md whose header is `heading_row`, as cells."""
    lines = (REPO / "docs" / "your-own-policy.md").read_text().splitlines()
    start = lines.index(heading_row) + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_the_docs_tables_are_the_engines_presets_and_variables():
    """docs/your-own-policy.md's presets table is the one `make docs` writes from the engine's constants
    (a preset added in Rust fails here until it is written); its variables, told in more words than the
    engine's, are the engine's names in its order (a variable added in Rust fails here until its row is
    written)."""
    assert engine_docs.main(["--check", str(REPO / "docs")]) == 0
    presets = [(name.strip("`"), formula.strip("`")) for name, formula, _ in _docs_table("| name | formula | source |")]
    assert presets == [(name, formula) for name, formula, _ in _native.POLICY_PRESETS]
    named = [name.strip("`") for cell, _ in _docs_table("| name | what it is |") for name in cell.split(", ")]
    assert named[:-1] == [name for name, _ in _native.FORMULA_VARIABLES] and named[-1] == "any other name"


def _shared_logs(pwa_lake) -> list[tuple[str, int]]:
    lake, _ = pwa_lake
    # A log without a machine size in its header (the -noheader ones) replays on its widest job.
    rows = lake.query(
        "select s.log, coalesce(s.machine_size, max(j.procs)) from swf.log_summary s "
        "join swf.jobs_clean j using (log) group by s.log, s.machine_size order by s.log"
    ).rows()
    return [(log, int(size)) for log, size in rows]


#: The logs `make test` checks the formulas on (the largest machine, a small one, one with memory
#: requests); `make faults` checks every shared log (marked thorough).
REPRESENTATIVE = ("CEA-Curie-2011-2.1-cln", "KTH-SP2-1996-2.1-cln", "HPC2N-2002-2.2-cln")


@pytest.mark.parametrize(
    "every", [False, pytest.param(True, marks=pytest.mark.thorough)], ids=["representative", "every"]
)
def test_every_built_in_order_written_as_a_formula_schedules_the_same_on_every_shared_log(pwa_lake, every):
    # The first 8,000 jobs of each log (the whole logs take 2.5 min on two cores: `make bench` replays
    # CEA-Curie whole under both LEXPs).
    lake, _ = pwa_lake
    logs = _shared_logs(pwa_lake)
    assert len(logs) >= 19
    if not every:
        logs = [(log, size) for log, size in logs if log in REPRESENTATIVE]
        assert len(logs) == len(REPRESENTATIVE)
    for log, size in logs:
        jobs = lake.query(f"select * from swf.jobs_clean where log = '{log}' order by submit_time, job_id limit 8000")
        for policy, formula in AS_FORMULAS.items():
            built_in = simulate(jobs, size, policy=policy).jobs["start_time"].to_numpy()
            written = simulate(jobs, size, policy=formula)
            assert np.array_equal(built_in, written.jobs["start_time"].to_numpy()), (log, policy)
            assert not written.jobs["key_not_finite"].any()


# Random formulas: a tree of operations, as text for the engine and as a Python function of (now, s, r, n)
# for the plain EASY (lakehouse.sim.reference), which sorts its queue with it at every pass.
LEAVES = {
    "w": lambda now, s, r, n: float(now - s),
    "r": lambda now, s, r, n: float(r),
    "n": lambda now, s, r, n: float(n),
    "s": lambda now, s, r, n: float(s),
    "t": lambda now, s, r, n: float(now),
}


def _number(value: int):
    return st.just((str(value), lambda now, s, r, n: float(value)))


leaves = st.one_of(
    st.sampled_from(sorted(LEAVES)).map(lambda name: (name, LEAVES[name])), st.integers(0, 9).flatmap(_number)
)


def _combine(children):
    def binary(symbol, f):
        return st.tuples(children, children).map(
            lambda pair: (
                f"({pair[0][0]} {symbol} {pair[1][0]})",
                lambda *v, a=pair[0][1], b=pair[1][1]: f(a(*v), b(*v)),
            )
        )

    def call(name, f):
        return children.map(lambda c: (f"{name}({c[0]})", lambda *v, a=c[1]: f(a(*v))))

    choice = st.tuples(children, children, children, children).map(
        lambda q: (
            f"if({q[0][0]} < {q[1][0]}, {q[2][0]}, {q[3][0]})",
            lambda *v, a=q[0][1], b=q[1][1], c=q[2][1], d=q[3][1]: c(*v) if a(*v) < b(*v) else d(*v),
        )
    )
    return st.one_of(
        binary("+", lambda a, b: a + b),
        binary("-", lambda a, b: a - b),
        binary("*", lambda a, b: a * b),
        binary("/", _divided),
        binary(",", _larger).map(lambda pair: (f"max{pair[0]}", pair[1])),
        call("abs", abs),
        call("sqrt", lambda a: math.sqrt(a) if a >= 0 else math.nan),
        children.map(lambda c: (f"({c[0]})^2", lambda *v, a=c[1]: a(*v) * a(*v))),
        choice,
    )


def _divided(a: float, b: float) -> float:
    """a / b as IEEE 754 (and the engine) divides: by zero, an infinity of the signs' product, or NaN."""
    if b != 0:
        return a / b
    if a == 0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1, b)


def _larger(a: float, b: float) -> float:
    return math.nan if math.isnan(a) or math.isnan(b) else max(a, b)


formulas = st.recursive(leaves, _combine, max_leaves=8)


@st.composite
def workloads(draw):
    n = draw(st.integers(2, 40))
    gaps = draw(st.lists(st.integers(0, 50), min_size=n, max_size=n))
    submit = list(np.cumsum(gaps))
    requested = draw(st.lists(st.integers(1, 120), min_size=n, max_size=n))
    run = [draw(st.integers(0, 150)) for _ in range(n)]
    procs = draw(st.lists(st.integers(1, 8), min_size=n, max_size=n))
    return submit, run, requested, procs


@settings(max_examples=examples(150), deadline=None)
@given(formula=formulas, largest_first=st.booleans(), jobs=workloads())
def test_random_formulas_schedule_as_a_plain_python_easy_evaluating_them(formula, largest_first, jobs):
    text, evaluate = formula
    submit, run, requested, procs = jobs
    sign = -1.0 if largest_first else 1.0

    def key(now, s, r, n):
        return sign * evaluate(now, s, r, n)

    expected = easy_starts(Jobs(submit, run, requested, procs), 8, key)
    frame = {
        "job_id": np.arange(1, len(submit) + 1),
        "submit_time": np.array(submit),
        "run_time": np.array(run),
        "req_time": np.array(requested),
        "procs": np.array(procs),
        "user_id": np.ones(len(submit), dtype=np.int64),
    }
    result = simulate(frame, 8, policy=f"{'max' if largest_first else 'min'}:{text}")
    assert result.jobs["start_time"].to_list() == expected, text


def test_presets_are_their_formulas_and_name_their_source(kth_lake):
    jobs = kth_lake.query("select * from swf.jobs_clean order by submit_time, job_id")
    for name, formula, source in _native.POLICY_PRESETS:
        # each names its study: its name, then the paper with its year (a venue's '17 counts)
        assert source.startswith(name.upper() + ":") and re.search(r"\b(19|20)\d\d\b|'\d\d", source), source
        by_name = simulate(jobs, 100, policy=name)
        by_text = simulate(jobs, 100, policy=formula)
        assert by_name.jobs["start_time"].equals(by_text.jobs["start_time"]), name
        assert by_name.settings.policy == name
    help_text = runner.invoke(app, ["simulate", "--help"], env={"COLUMNS": "200"}).stdout
    assert all(name in help_text for name, _, _ in _native.POLICY_PRESETS)


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        ("max:(w/r)^3*q", 'unknown variable "q"; known: w, r, p, n, s, t, a, id, ur, uw'),
        ("max:(w/r)^3*", "expected a value, the formula ended"),
        ("min:if(w, 1, 2)", "if's first value must be a condition"),
        ("min:w > 3", "a queue order needs a number"),
        ("nope", "unknown policy"),
        ("min:" + "w+" * 600 + "w", "at most 1000 bytes"),
        ("min:" + "(" * 500, "nested too deeply"),
    ],
)
def test_a_bad_formula_is_refused_with_the_place(kth_lake, policy, message):
    result = runner.invoke(app, ["simulate", "KTH-SP2-1996-2.1-cln", "--lake", str(kth_lake.root), "--policy", policy])
    output = result.stdout + result.stderr
    assert result.exit_code != 0 and "Traceback" not in output, output
    assert message in output, output
    if message.startswith(("unknown variable", "expected a value")):
        text_line, caret_line = output.splitlines()[-2:]
        assert caret_line.strip() == "^"
        assert text_line.strip() == policy
        # The caret stands under the place: the unknown name, or where the text ended.
        place = policy.index("q") if "q" in policy else len(policy)
        assert caret_line.index("^") == text_line.index(policy) + place


def test_a_key_that_is_not_a_number_goes_last_and_is_counted(kth_lake):
    jobs = kth_lake.query("select * from swf.jobs_clean order by submit_time, job_id")
    hours = int((jobs["req_time"] == 3600).sum())
    assert hours > 0
    result = simulate(jobs, 100, policy="max:1/(r - 3600)")
    marked = result.jobs["key_not_finite"]
    assert 0 < int(marked.sum()) <= hours
    assert (result.jobs.filter(marked)["req_time"] == 3600).all()
    assert any("not a finite number" in w for w in result.warnings)


def test_a_formula_is_one_item_of_a_list():
    assert split_list("fcfs, max:w/max(r,1),wfp3,min:if(w > 1, r, n)") == [
        "fcfs",
        "max:w/max(r,1)",
        "wfp3",
        "min:if(w > 1, r, n)",
    ]


def test_campaign_runs_are_keyed_by_the_formulas_text(kth_lake, tmp_path):
    args = ["campaign", "run", "--name", "formula-keys", "--log", "KTH-SP2-1996-2.1-cln", "--lake", str(kth_lake.root)]
    first = runner.invoke(app, [*args, "--policy", "fcfs,max:(w/r)^3*n,wfp3"])
    assert first.exit_code == 0, first.output
    shown = runner.invoke(app, ["campaign", "show", "formula-keys", "--lake", str(kth_lake.root), "-f", "json"])
    rows = json.loads(shown.stdout)
    policies = sorted(str(row.get("policy") or row.get("variant")) for row in rows)
    assert any("max:(w/r)^3*n" in p for p in policies) and any("wfp3" in p for p in policies), policies
    waits = {str(row.get("policy") or row.get("variant")): row["mean_wait"] for row in rows}
    formula_wait = next(v for k, v in waits.items() if "max:(w/r)^3*n" in k)
    preset_wait = next(v for k, v in waits.items() if "wfp3" in k)
    assert formula_wait == preset_wait  # the preset is that formula
    again = runner.invoke(app, [*args, "--policy", "max:(w/r)^3*n"])
    assert again.exit_code == 0 and "0 runs ok, 0 failed, 1 already stored" in again.output, again.output


def test_a_formula_setting_is_refused_before_any_job_is_read():
    with pytest.raises(SimulationInputError, match="unknown function"):
        simulate({}, 8, policy="min:foo(w)")


# The Python hook: `simulate(..., order=fn)` calls fn(queue columns, now) at every pass that sorts.
HOOKS = {
    "spf": lambda q, now: q["req_time"],
    "lqf": lambda q, now: -q["procs"],
    "lexp": lambda q, now: -(q["wait"] + q["req_time"]) / np.maximum(q["req_time"], 1),
    "saf": lambda q, now: (q["req_time"] * q["procs"]).tolist(),  # a list does as well as an array
}


@pytest.mark.parametrize("policy", sorted(HOOKS))
def test_a_python_order_computing_a_built_in_orders_keys_schedules_as_it(kth_lake, policy):
    from lakehouse.sim import simulate_log

    built_in = simulate_log(kth_lake, "KTH", policy=policy, backfill="sjbf")
    hooked = simulate_log(kth_lake, "KTH", order=HOOKS[policy], backfill="sjbf")
    assert hooked.jobs["start_time"].equals(built_in.jobs["start_time"])
    assert hooked.settings.policy == "python"


def test_the_python_order_sees_the_waiting_queue_as_columns(kth_lake):
    seen: list[tuple[int, dict]] = []

    def fifo(queue, now):
        seen.append((now, {name: column.copy() for name, column in queue.items()}))
        return queue["submit_time"]

    jobs = kth_lake.query("select * from swf.jobs_clean order by submit_time, job_id limit 2000")
    result = simulate(jobs, 100, order=fifo)
    assert result.jobs["start_time"].equals(simulate(jobs, 100).jobs["start_time"])
    assert seen, "the function was called"
    starts = dict(zip(result.jobs["job_id"].to_list(), result.jobs["start_time"].to_list(), strict=True))
    for now, queue in seen[:500]:
        assert set(queue) == {"job_id", "submit_time", "req_time", "procs", "user_id", "prediction", "wait"}
        assert all(column.dtype == np.int64 and len(column) == len(queue["job_id"]) for column in queue.values())
        assert (queue["wait"] == now - queue["submit_time"]).all()
        # Every job shown is waiting: submitted, not started before this pass.
        assert (queue["submit_time"] <= now).all()
        assert all(starts[job] >= now for job in queue["job_id"].tolist())


def test_a_python_order_that_fails_stops_the_replay(kth_lake):
    from lakehouse.sim import simulate_log

    class RuleBroke(Exception):
        pass

    def broken(queue, now):
        raise RuleBroke("my rule broke")

    with pytest.raises(RuleBroke, match="my rule broke"):
        simulate_log(kth_lake, "KTH", order=broken)
    with pytest.raises(SimulationInputError, match="returned 1 keys for a queue of"):
        simulate_log(kth_lake, "KTH", order=lambda q, now: [1.0])
    with pytest.raises(SimulationInputError, match="one number per waiting job"):
        simulate_log(kth_lake, "KTH", order=lambda q, now: "not numbers")
    with pytest.raises(SimulationInputError, match="an order function replaces the policy"):
        simulate_log(kth_lake, "KTH", order=HOOKS["spf"], policy="lexp")
    with pytest.raises(SimulationInputError, match="needs an order function"):
        simulate_log(kth_lake, "KTH", policy="python")
    with pytest.raises(SimulationInputError, match="cannot be a candidate"):
        simulate_log(kth_lake, "KTH", selector="full", policies=["fcfs", "python"])


def test_the_tutorials_python_runs(kth_lake, capsys, tmp_path, monkeypatch):
    """docs/your-own-policy.md's Python blocks, on the embedded KTH-SP2 log (its sh blocks run in
    test_cli_examples); the table the page writes imports and replays."""
    monkeypatch.chdir(tmp_path)
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "your-own-policy.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, re.S)
    assert len(blocks) >= 3
    for block in blocks:
        assert 'Lake("lake")' in block
        exec(compile(block.replace('Lake("lake")', f"Lake({str(kth_lake.root)!r})"), "tutorial", "exec"), {})
    printed = capsys.readouterr().out.split()
    assert len(printed) >= 3 and all(float(value) >= 0 for value in printed)
    assert (tmp_path / "medians.csv").exists()
    args = ["import", "predictions", "medians.csv", "--name", "tutorial-medians", "--lake", str(kth_lake.root)]
    assert runner.invoke(app, args).exit_code == 0
    replay = ["simulate", "KTH", "--predictor", "table:tutorial-medians", "--lake", str(kth_lake.root)]
    assert runner.invoke(app, replay).exit_code == 0


def test_a_formula_reads_the_views_numeric_columns_by_name(kth_lake):
    from lakehouse.sim import simulate_log

    # req_time, the view's column, is the request r: SPF.
    by_column = simulate_log(kth_lake, "KTH", policy="min:req_time", backfill="sjbf")
    assert by_column.jobs["start_time"].equals(
        simulate_log(kth_lake, "KTH", policy="spf", backfill="sjbf").jobs["start_time"]
    )
    # A column that is NULL for every job (KTH-SP2 records no preceding job): every key would be NaN and
    # every job go last, in arrival order (FCFS in disguise): refused before the replay, naming it.
    with pytest.raises(SimulationInputError, match="column preceding_job_id has no value for any of the 28,475"):
        simulate_log(kth_lake, "KTH", policy="min:preceding_job_id")
    # The run time itself (a clairvoyant SPF) does better than the request.
    clairvoyant = simulate_log(kth_lake, "KTH", policy="min:run_time")
    assert clairvoyant.summary["mean_wait"] < simulate_log(kth_lake, "KTH", policy="spf").summary["mean_wait"]


def test_a_name_neither_variable_nor_column_is_pointed_at(kth_lake):
    result = runner.invoke(
        app, ["simulate", "KTH", "--lake", str(kth_lake.root), "--policy", "max:w / max(think_timee, 1)"]
    )
    output = result.stdout + result.stderr
    assert result.exit_code == 2, output  # (as a formula that does not parse)
    assert (
        'unknown variable "think_timee"; known: w, r, p, n, s, t, a, id, ur, uw, uu, un, and the jobs\' numeric'
        in output
    )
    assert "think_time, " in output  # the view's columns are listed
    lines = output.splitlines()
    text = next(i for i, line in enumerate(lines) if line.strip() == "max:w / max(think_timee, 1)")
    assert lines[text + 1].index("^") == lines[text].index("think_timee")
    campaign = runner.invoke(
        app,
        [
            "campaign",
            "run",
            "--name",
            "bad-column",
            "--log",
            "KTH",
            "--lake",
            str(kth_lake.root),
            "--policy",
            "min:nope",
        ],
    )
    assert campaign.exit_code == 2 and 'unknown variable "nope"' in campaign.output


#: Formulas refused before any replay, on every command that takes one, with exit code 2 (the researcher's
#: round): what the message names.
REFUSED_ORDERS = {
    "max:think_time": "column think_time has no value for any of the 28,475 jobs",  # KTH-SP2 records none
    "min:1e400*r": "1e400 is beyond the largest number a key can hold",
    "min:w + 1e-400": "1e-400 is below the smallest number a key can hold",
    "max:submit_at": "column submit_at holds TIMESTAMP WITH TIME ZONE values, not numbers",
    "max:submit_local": "column submit_local holds TIMESTAMP values, not numbers",
    "min:(w+": "expected a value",
}


@pytest.mark.parametrize("order", sorted(REFUSED_ORDERS))
@pytest.mark.parametrize("command", ["simulate", "campaign"])
def test_a_formula_that_cannot_order_the_jobs_is_refused_with_exit_code_2(kth_lake, order, command):
    lake = ["--lake", str(kth_lake.root)]
    args = (
        ["simulate", "KTH", *lake, "--policy", order]
        if command == "simulate"
        else ["campaign", "run", "--name", "refused", "--log", "KTH", *lake, "--policy", f"fcfs,{order}"]
    )
    result = runner.invoke(app, args)
    output = " ".join((result.stdout + result.stderr).split())
    assert result.exit_code == 2 and REFUSED_ORDERS[order] in output and "Traceback" not in output, output
    assert not kth_lake.rows("select count(*) from analysis.campaign_runs where campaign = 'refused'")[0][0]


# -- a fair-share order: the users' decayed usage (uu, un) -----------------------------------------

#: One processor; user 1 runs 0-100 s, then user 1 and user 2 each have a 10 s job waiting.
FAIR = {
    "job_id": [1, 2, 3], "submit_time": [0, 10, 20], "run_time": [100, 10, 10], "req_time": [100, 10, 10],
    "procs": [1, 1, 1], "user_id": [1, 1, 2],
}  # fmt: skip


@pytest.mark.parametrize(
    ("threshold", "first_at_100"),
    # By hand: user 1's usage at 100 s with a 100 s half-life is the integral of 2^(-(100 - s)/100) over
    # [0, 100] = 100 / ln 2 x (1 - 1/2) = 72.1348 processor-seconds; user 2's is 0.
    [(72.13, 3), (72.14, 2)],
)
def test_the_users_decayed_usage_is_the_hand_computed_integral(threshold, first_at_100):
    import polars as pl

    result = simulate(pl.DataFrame(FAIR), 1, policy=f"min:if(uu > {threshold}, 1, 0) + a/1000", usage_half_life=100)
    starts = dict(zip(result.jobs["job_id"].to_list(), result.jobs["start_time"].to_list(), strict=True))
    assert starts[first_at_100] == 100 and starts[5 - first_at_100] == 110
    # un: user 1 holds every bit of the usage so far (share 1), user 2 none.
    share = simulate(pl.DataFrame(FAIR), 1, policy="min:if(un > 0.999, 1, 0) + a/1000", usage_half_life=100)
    assert share.jobs.filter(pl.col("job_id") == 3)["start_time"].item() == 100
    # A half-life of a tenth: usage at 100 s is 10/ln 2 x (1 - 2^-10) = 14.4128, below 72.13: FCFS order.
    short = simulate(pl.DataFrame(FAIR), 1, policy="min:if(uu > 72.13, 1, 0) + a/1000", usage_half_life=10)
    assert short.jobs.filter(pl.col("job_id") == 2)["start_time"].item() == 100


def test_a_campaign_sweeps_the_usage_half_life_and_names_it(kth_lake):
    args = ["campaign", "run", "--name", "fair", "--log", "KTH", "--lake", str(kth_lake.root), "--policy",
            "fair=max:w/3600 - 10*un", "--usage-half-life", "1d,7d", "-f", "json"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = {row["variant"]: row for row in json.loads(result.stdout)}
    assert set(rows) == {"easy-fair", "easy-fair-hl=1d"}
    assert rows["easy-fair"]["mean_wait"] != rows["easy-fair-hl=1d"]["mean_wait"]
    bad = runner.invoke(app, [*args[:-4], "--usage-half-life", "0"])
    assert bad.exit_code != 0 and "usage half-life must be a positive number" in bad.output
