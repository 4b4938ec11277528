"""Property tests of SWF ingest: nothing is lost, and accepted jobs keep their exact values."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from lakehouse._native import SWF_MAX_PROCS, SWF_MAX_SECONDS
from lakehouse.base.errors import BrokenFileError
from lakehouse.base.testing import FIELD_NAMES
from lakehouse.ingest.swf import decompress, parse_log

# Mostly jobs a log has, now and then one with values beyond the ingest's limits (quarantined, and checked
# as such). The draw is per job, not per field: with seven limited fields each out of range one time in ten,
# half the jobs were out of range, half the logs were refused whole, and the value check had too few rows
# to compare on some seeds (73 rows in 66 examples).
small = st.integers(min_value=-1, max_value=10**6)
large = st.integers(min_value=-1, max_value=10**12)
job = st.sampled_from([small] * 9 + [large]).flatmap(
    lambda ints: st.fixed_dictionaries(dict.fromkeys(FIELD_NAMES, ints))
)
# Times (submit, wait, run, requested, think) and processor counts beyond these are quarantined.
LIMITS = {
    **dict.fromkeys(("submit_time", "wait_time", "run_time", "req_time", "think_time"), SWF_MAX_SECONDS),
    **dict.fromkeys(("alloc_procs", "req_procs"), SWF_MAX_PROCS),
}


def in_range(values: dict) -> bool:
    return all(abs(values[name]) <= limit for name, limit in LIMITS.items())


KINDS = ["drop_field", "add_field", "letter", "decimal_in_int", "comment", "blank"]
# Corruption is rare, as in real logs: most lines are intact, so the value check below has rows to check.
corruptions = st.sampled_from(["none"] * 12 + KINDS)
#: How many rows the value check compared in each example of the run (read by the test that runs it).
CHECKED: list[int] = []


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


#: All 200 in `make test` too: the checks after the run (rows in most examples) count shares of the
#: examples, and a sixth of them (33) left too few to count on (16 of 33 with rows, one run in many).
VALUE_EXAMPLES = 200


@settings(max_examples=VALUE_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(job, corruptions), min_size=2, max_size=40))
def lines_in_equal_rows_plus_quarantine_and_values_survive(rows):
    # Job ids made unique so that duplicates do not interfere (they have their own test).
    rows = [({**values, "job_id": i}, c) for i, (values, c) in enumerate(rows)]
    text = "\n".join(render(v, c) for v, c in rows) + "\n"
    data_lines = sum(c not in ("comment", "blank") for _, c in rows)
    clean = [v for v, c in rows if c == "none" and in_range(v)]
    good_share = len(clean) / data_lines if data_lines else 1.0
    path = Path("x.swf")  # named in messages only: the text is parsed from memory
    try:
        parsed = parse_log(path, decompress(path, text.encode()))
    except BrokenFileError as exc:  # a log of mostly bad lines (or no text at all) is rejected whole
        assert good_share < 0.5 or not text.strip(), exc
        event("rejected whole")
        CHECKED.append(0)
        return
    assert parsed.job_lines == data_lines
    assert parsed.jobs.num_rows + parsed.quarantine.num_rows == data_lines
    got = parsed.jobs.to_pylist()
    assert len(got) == len(clean)
    for row, values in zip(got, clean, strict=True):
        assert {name: row[name] for name in FIELD_NAMES} == values
    CHECKED.append(len(clean))
    event("values checked" if clean else "no clean row")
    expected_lines = [
        i + 1 for i, (v, c) in enumerate(rows) if c not in ("comment", "blank") and (c != "none" or not in_range(v))
    ]
    assert parsed.quarantine.column("line").to_pylist() == expected_lines


@pytest.mark.hypothesis  # (a property run by hand: make faults selects it with the others, at its full count)
def test_lines_in_equal_rows_plus_quarantine_and_values_survive():
    """Run the property, then make sure its value check really ran: in most examples, on rows."""
    CHECKED.clear()
    lines_in_equal_rows_plus_quarantine_and_values_survive()
    assert len(CHECKED) >= VALUE_EXAMPLES // 2
    assert sum(n > 0 for n in CHECKED) >= 0.6 * len(CHECKED), CHECKED
    # rows whose every value was compared (16 in 200 examples before corruption was made rare)
    assert sum(CHECKED) >= 1.5 * VALUE_EXAMPLES
