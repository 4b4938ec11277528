"""Property tests of SWF ingest: nothing is lost, and accepted jobs keep their exact values."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lakehouse._native import SWF_MAX_PROCS, SWF_MAX_SECONDS
from lakehouse.errors import BrokenFileError
from lakehouse.ingest.swf import decompress, parse_log
from lakehouse.testing import FIELD_NAMES

ints = st.integers(min_value=-1, max_value=10**12)
job = st.fixed_dictionaries({name: ints for name in FIELD_NAMES})
# Times (submit, wait, run, requested, think) and processor counts beyond these are quarantined.
LIMITS = {
    **dict.fromkeys(("submit_time", "wait_time", "run_time", "req_time", "think_time"), SWF_MAX_SECONDS),
    **dict.fromkeys(("alloc_procs", "req_procs"), SWF_MAX_PROCS),
}


def in_range(values: dict) -> bool:
    return all(abs(values[name]) <= limit for name, limit in LIMITS.items())


corruptions = st.sampled_from(["drop_field", "add_field", "letter", "decimal_in_int", "comment", "blank", "none"])


def render(values: dict, corruption: str) -> str:
    tokens = [str(values[name]) for name in FIELD_NAMES]
    if corruption == "drop_field":
        tokens.pop()
    elif corruption == "add_field":
        tokens.append("0")
    elif corruption == "letter":
        tokens[3] = tokens[3] + "x"
    elif corruption == "decimal_in_int":
        tokens[1] = tokens[1] + ".5"
    elif corruption == "comment":
        return "; " + " ".join(tokens)
    elif corruption == "blank":
        return "   "
    return "  ".join(tokens)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(job, corruptions), min_size=1, max_size=40))
def test_lines_in_equal_rows_plus_quarantine_and_values_survive(tmp_path_factory, rows):
    # Job ids made unique so that duplicates do not interfere (they have their own test).
    rows = [({**values, "job_id": i}, c) for i, (values, c) in enumerate(rows)]
    text = "\n".join(render(v, c) for v, c in rows) + "\n"
    data_lines = sum(c not in ("comment", "blank") for _, c in rows)
    clean = [v for v, c in rows if c == "none" and in_range(v)]
    good_share = len(clean) / data_lines if data_lines else 1.0
    path = tmp_path_factory.mktemp("p") / "x.swf"
    try:
        parsed = parse_log(path, decompress(path, text.encode()))
    except BrokenFileError as exc:  # a log of mostly bad lines (or no text at all) is rejected whole
        assert good_share < 0.5 or not text.strip(), exc
        return
    assert parsed.job_lines == data_lines
    assert parsed.jobs.num_rows + parsed.quarantine.num_rows == data_lines
    got = parsed.jobs.to_pylist()
    assert len(got) == len(clean)
    for row, values in zip(got, clean, strict=True):
        assert {name: row[name] for name in FIELD_NAMES} == values
    expected_lines = [
        i + 1 for i, (v, c) in enumerate(rows) if c not in ("comment", "blank") and (c != "none" or not in_range(v))
    ]
    assert parsed.quarantine.column("line").to_pylist() == expected_lines
