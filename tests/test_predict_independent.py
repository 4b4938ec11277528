"""`report predictions` on a real log, recomputed job by job in plain Python from swf.jobs: the
window each user gets, the maximum of the workflow's last k completions, the profiles, the cap at
the request.  Nothing is taken from the SQL but its output."""

from __future__ import annotations

import bisect
import itertools
from collections import defaultdict

import pytest

from lakehouse.models.predictions.model import ALL, TRAIN_SHARE, WINDOWS, PredictionSettings, report

KTH = "KTH-SP2-1996-2.1-cln"
# The workflow keys as documented for predict.swf_targets, from the log's raw fields.
KEYS = {
    "user": lambda j: j["user_id"],
    "user+group": lambda j: None if j["group_id"] is None else (j["user_id"], j["group_id"]),
    "application": lambda j: j["executable_id"],
    "queue": lambda j: (
        None
        if j["queue_id"] is None and j["partition_id"] is None
        else (
            j["queue_id"] if j["queue_id"] is not None else -1,
            j["partition_id"] if j["partition_id"] is not None else -1,
        )
    ),
    "request signature": lambda j: (j["req_procs"], j["req_time"], j["req_memory"]),
}
FIELDS = {"walltime": ("run_time", "req_time"), "processors": ("alloc_procs", "req_procs")}


def _targets(kth_lake, resource: str) -> list[dict]:
    used, requested = FIELDS[resource]
    jobs = kth_lake.query(f"SELECT * FROM swf.jobs WHERE log = '{KTH}'").to_dicts()
    rows = []
    for j in jobs:
        if not (j["run_time"] and j["run_time"] > 0 and j["submit_time"] is not None and j["user_id"] is not None):
            continue
        if not (j[used] and j[used] > 0 and j[requested] and j[requested] > 0):
            continue
        done = j["submit_time"] + (j["wait_time"] or 0) + j["run_time"]
        rows.append({**j, "used": float(j[used]), "requested": float(j[requested]), "done": done})
    # The first 80 % of each user's jobs (by submit, then job) train the window choice.
    by_user = defaultdict(list)
    for r in sorted(rows, key=lambda r: (r["submit_time"], r["job_id"])):
        by_user[r["user_id"]].append(r)
    for mine in by_user.values():
        for i, r in enumerate(mine):
            r["train"] = i + 1 <= int(TRAIN_SHARE * len(mine))
    return rows


class History:
    """A workflow's (or user's) completions in (completion time, job) order, asked as of a submit time:
    only completions strictly before it count."""

    def __init__(self, entries: list[tuple[float, int, float, float]]):  # (done, job, used, requested)
        entries.sort()
        self.done = [e[0] for e in entries]
        self.used = [e[2] for e in entries]
        self.running_max = list(itertools.accumulate(self.used, max))
        self.sum_used = [0.0, *itertools.accumulate(self.used)]
        self.sum_requested = [0.0, *itertools.accumulate(e[3] for e in entries)]

    def max_of_last(self, submit: float, k: int) -> float | None:
        n = bisect.bisect_left(self.done, submit)
        if n == 0:
            return None
        return self.running_max[n - 1] if k >= n else max(self.used[n - k : n])

    def ratio(self, submit: float) -> float | None:
        """used / requested over the completions."""
        n = bisect.bisect_left(self.done, submit)
        return self.sum_used[n] / self.sum_requested[n] if n else None


def _loss(p: float, used: float, walltime: float, s: PredictionSettings) -> float:
    return (s.under if p < used else s.over) * abs(p - used) * walltime


@pytest.mark.slow
@pytest.mark.parametrize("resource", ["walltime", "processors"])
def test_a_real_logs_predictions_recomputed_job_by_job(kth_lake, resource):
    settings = PredictionSettings()
    result = report(kth_lake, "swf", KTH, settings)
    stored = {r["job"]: r for r in result.jobs.filter(result.jobs["resource"] == resource).iter_rows(named=True)}
    rows = _targets(kth_lake, resource)
    assert len(rows) == len(stored) > 20_000
    key = KEYS[result.grouping]
    entries: dict[str, dict[object, list]] = {"workflow": defaultdict(list), "user": defaultdict(list)}
    for r in rows:
        entry = (r["done"], r["job_id"], r["used"], r["requested"])
        if key(r) is not None:
            entries["workflow"][key(r)].append(entry)
        entries["user"][r["user_id"]].append(entry)
    workflow = {k: History(v) for k, v in entries["workflow"].items()}
    user = {k: History(v) for k, v in entries["user"].items()}
    everyone = History([(r["done"], r["job_id"], r["used"], r["requested"]) for r in rows])

    def predicted(r: dict, k: int) -> float:
        submit, requested = r["submit_time"], r["requested"]
        history = workflow[key(r)].max_of_last(submit, k) if key(r) is not None else None
        if history is not None:
            return min(history, requested)
        for ratio in (user[r["user_id"]].ratio(submit), everyone.ratio(submit)):
            if ratio is not None:
                return min(ratio * requested, requested)
        return requested

    # Each user's window: the least training loss over the windows (ties: the smaller), else the largest.
    losses: dict[object, dict[int, float]] = defaultdict(lambda: dict.fromkeys(WINDOWS, 0.0))
    for r in rows:
        if r["train"]:
            for k in WINDOWS:
                losses[r["user_id"]][k] += _loss(predicted(r, k), r["used"], r["run_time"], settings)
    window = {u: min(WINDOWS, key=lambda k: (round(by_k[k], 6), k)) for u, by_k in losses.items()}
    wrong = []
    for r in rows:
        k = window.get(r["user_id"], max(WINDOWS))
        mine, theirs = stored[r["job_id"]], predicted(r, k)
        if mine["window_jobs"] != k or mine["predicted"] != pytest.approx(theirs, rel=1e-9):
            wrong.append((r["job_id"], k, mine["window_jobs"], theirs, mine["predicted"]))
    assert not wrong, f"{len(wrong)} of {len(rows)} jobs differ, e.g. {wrong[:3]}"
    if resource == "walltime":  # (KTH's users get the processors they request: every window ties there)
        assert ALL in WINDOWS and len(set(window.values())) > 1  # the users' windows do differ
