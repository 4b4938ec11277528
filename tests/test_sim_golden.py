"""Hand-computed schedules.  Each scenario writes its reasoning next to the numbers it checks.

Notation: a job is (id, submit, run, requested, procs); predictions are the requested time unless a
scenario says otherwise; "m" is the machine size.
"""

from __future__ import annotations

import pytest

from lakehouse.sim import simulate

from sim_workloads import jobs, starts

# --- Queue policies -------------------------------------------------------------------------------
# m = 10.  Job 9 (10 procs, 0..100) fills the machine; jobs 1-4 arrive meanwhile.  Any two of them
# need more than 10 processors, so they run one at a time in policy order from t = 100 and nothing
# can be backfilled.  Each runs exactly its requested time.
#   job  submit  req  procs  area  req/procs
#    1     34    320    9    2880    35.6
#    2     37    230    6    1380    38.3
#    3     66    330    7    2310    47.1
#    4     95    270    8    2160    33.75
POLICY_JOBS = jobs(
    (9, 0, 100, 100, 10),
    (1, 34, 320, 320, 9),
    (2, 37, 230, 230, 6),
    (3, 66, 330, 330, 7),
    (4, 95, 270, 270, 8),
)


def serial(order: list[int]) -> dict[int, int]:
    """Start times when the jobs run back to back from t = 100 in `order`."""
    runtime = {1: 320, 2: 230, 3: 330, 4: 270}
    t, out = 100, {9: 0}
    for job in order:
        out[job] = t
        t += runtime[job]
    return out


POLICY_ORDERS = {
    "fcfs": [1, 2, 3, 4],  # by submit time
    "lcfs": [4, 3, 2, 1],  # latest submit first
    "spf": [2, 4, 1, 3],  # requested 230 < 270 < 320 < 330
    "lpf": [3, 1, 4, 2],
    "sqf": [2, 3, 4, 1],  # procs 6 < 7 < 8 < 9
    "lqf": [1, 4, 3, 2],
    "laf": [1, 3, 4, 2],  # area 2880 > 2310 > 2160 > 1380
    "saf": [2, 4, 3, 1],
    "lrf": [3, 2, 1, 4],  # req/procs 47.1 > 38.3 > 35.6 > 33.75
    "srf": [4, 1, 2, 3],
    # Expansion factor 1 + wait/req, recomputed at each decision:
    #   t=100: 1: 1+66/320=1.206  2: 1+63/230=1.274  3: 1+34/330=1.103  4: 1+5/270=1.019 -> 2 (ends 330)
    #   t=330: 1: 1+296/320=1.925  3: 1+264/330=1.800  4: 1+235/270=1.870 -> 1 (ends 650)
    #   t=650: 3: 1+584/330=2.770  4: 1+555/270=3.056 -> 4 (ends 920), then 3.
    "lexp": [2, 1, 4, 3],
    #   t=100: smallest is 4 (1.019, ends 370)
    #   t=370: 1: 1+336/320=2.050  2: 1+333/230=2.448  3: 1+304/330=1.921 -> 3 (ends 700)
    #   t=700: 1: 1+666/320=3.081  2: 1+663/230=3.883 -> 1 (ends 1020), then 2.
    "sexp": [4, 3, 1, 2],
}


@pytest.mark.parametrize("policy", list(POLICY_ORDERS))
def test_queue_policy_orders(policy):
    assert starts(POLICY_JOBS, 10, policy=policy) == serial(POLICY_ORDERS[policy])


def test_every_policy_gives_its_own_order():
    # The scenario above separates all twelve policies, so swapping two would be caught.
    assert len({tuple(order) for order in POLICY_ORDERS.values()}) == 12


# --- EASY: shadow time and extra processors ---------------------------------------------------------


def test_backfill_by_shadow_time_and_by_extra_processors():
    # m = 4.  1: 3 procs 0..100.  2: 4 procs at 1, blocked: shadow 100 (when 1 ends), extra 4-4 = 0.
    # 3: 1 proc, 50 s, at 2: ends 52 <= 100 -> backfilled.  4: 1 proc, 200 s, at 3: no processor free.
    # At 52 job 3 ends: 4 would end at 252 > 100 and extra is 0 -> waits.  2 starts at 100 (until 110);
    # 4 starts at 110.
    workload = jobs((1, 0, 100, 100, 3), (2, 1, 10, 10, 4), (3, 2, 50, 50, 1), (4, 3, 200, 200, 1))
    assert starts(workload, 4) == {1: 0, 2: 100, 3: 2, 4: 110}
    # m = 5: at 100, 5 are free and 2 needs 4 -> extra 1, so job 4 (1 proc, long) backfills at 3.
    assert starts(workload, 5) == {1: 0, 2: 100, 3: 2, 4: 3}


def test_a_job_ending_exactly_at_the_shadow_time_is_backfilled():
    # m = 2.  1: 1 proc 0..10.  2: 2 procs at 0, blocked, shadow 10, extra 0.  3: 1 proc predicted
    # 10 s at 0: ends at 10 = shadow -> allowed.  2 starts at 10, when 1 and 3 both end.
    workload = jobs((1, 0, 10, 10, 1), (2, 0, 5, 5, 2), (3, 0, 10, 10, 1))
    assert starts(workload, 2) == {1: 0, 2: 10, 3: 0}
    # One second longer (ends 11 > 10, extra 0) and job 3 waits for 2: 10 + 5 = 15.
    assert starts(jobs((1, 0, 10, 10, 1), (2, 0, 5, 5, 2), (3, 0, 11, 11, 1)), 2) == {1: 0, 2: 10, 3: 15}


def test_all_jobs_ending_at_the_shadow_time_count_for_the_extra_processors():
    # m = 6.  1 and 2: 2 procs each, 0..100.  3: 5 procs at 1, blocked; shadow 100 frees 2 + 2 + 2 =
    # 6 (both jobs end then), extra 6 - 5 = 1.  4: 1 proc, 500 s at 2 -> fits the extra, backfilled.
    workload = jobs((1, 0, 100, 100, 2), (2, 0, 100, 100, 2), (3, 1, 10, 10, 5), (4, 2, 500, 500, 1))
    assert starts(workload, 6) == {1: 0, 2: 0, 3: 100, 4: 2}


# --- Simultaneous events -----------------------------------------------------------------------------


def test_completions_come_before_submissions_at_one_instant():
    # m = 1.  1: 0..10; 2 submitted at 10 starts at 10 (the completion frees the processor first).
    assert starts(jobs((1, 0, 10, 10, 1), (2, 10, 5, 5, 1)), 1) == {1: 0, 2: 10}


def test_simultaneous_terminations_one_pass_canonical_several_in_pyss():
    # m = 4.  1 and 2: 2 procs, run 10 but request 100.  3: 4 procs at 1 (run 50).  4: 2 procs, 5 s,
    # at 2.  At 2: 3 is blocked (0 free).
    # Canonical: at 10 both ends are handled, then one pass: 3 fits (4 free) and starts; 4 waits for
    # 3's end at 60.
    # pyss: the first termination alone frees 2; 3 is blocked with shadow 100 (job 2's predicted end,
    # its termination not handled yet), so 4 (ends 15 <= 100) is backfilled at 10; after the second
    # termination 3 needs 4 but 4 holds 2 until 15.
    workload = jobs((1, 0, 10, 100, 2), (2, 0, 10, 100, 2), (3, 1, 50, 50, 4), (4, 2, 5, 5, 2))
    assert starts(workload, 4) == {1: 0, 2: 0, 3: 10, 4: 60}
    assert starts(workload, 4, compat="pyss") == {1: 0, 2: 0, 3: 15, 4: 10}


# --- Starvation threshold -----------------------------------------------------------------------------


def test_threshold_moves_long_waiters_to_the_head():
    # m = 1, SPF.  9: 0..100.  1 (req 500) at 1, 2 (req 10) at 2, 3 (req 10) at 3.
    # Without threshold, at 100: 2, 3 (10 s each), then 1 at 120.
    # Threshold 98: at 100 job 1 has waited 99 > 98 (starving); 2 waited 98 (not longer) -> 1 first
    # (100..600), then SPF among the rest: 2 at 600, 3 at 610.
    workload = jobs((9, 0, 100, 100, 1), (1, 1, 500, 500, 1), (2, 2, 10, 10, 1), (3, 3, 10, 10, 1))
    assert starts(workload, 1, policy="spf") == {9: 0, 1: 120, 2: 100, 3: 110}
    assert starts(workload, 1, policy="spf", threshold=98) == {9: 0, 1: 100, 2: 600, 3: 610}


# --- Corrections --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("correction", "d_run", "expected"),
    [
        # m = 2.  1: 1 proc, runs 100, requests 1000, predicted 50.  2: 2 procs (run 10) at 1: blocked,
        # shadow 50 (1's prediction).  At 50 job 1 outlives its prediction and is corrected:
        #   requested -> 1000 (shadow 1000); incremental -> 50 + 60 = 110; doubling -> 100.
        # 4: 1 proc at 60, predicted = run.  With 45 s it ends at 105: before 1000 and 110, not
        # before 100.  With 70 s it ends at 130: only before 1000.  Extra processors: 0.
        # Backfilled -> 4 at 60, and 2 waits for both: max(100, 60 + run of 4).  Otherwise 2 starts
        # at 100 (1's real end) and 4 at 110.
        ("requested", 45, {1: 0, 2: 105, 4: 60}),
        ("incremental", 45, {1: 0, 2: 105, 4: 60}),
        ("doubling", 45, {1: 0, 2: 100, 4: 110}),
        ("requested", 70, {1: 0, 2: 130, 4: 60}),
        ("incremental", 70, {1: 0, 2: 100, 4: 110}),
        ("doubling", 70, {1: 0, 2: 100, 4: 110}),
    ],
)
def test_correction_rules_move_the_shadow_time(correction, d_run, expected):
    workload = jobs((1, 0, 100, 1000, 1), (2, 1, 10, 10, 2), (4, 60, d_run, 1000, 1), prediction=[50, 10, d_run])
    assert starts(workload, 2, predictor="column:guess", correction=correction) == expected


@pytest.mark.parametrize(
    ("correction", "count"),
    [
        ("requested", 1),  # 50 -> 1000
        ("incremental", 3),  # 50 -> 50+60=110 -> 50+300=350 -> 50+900=950 >= 400
        ("doubling", 3),  # 50 -> 100 -> 200 -> 400 >= 400
        ("none", 0),  # the expired prediction is kept
    ],
)
def test_corrections_repeat_until_the_prediction_covers_the_run(correction, count):
    # One job, runs 400 s, requests 1000, predicted 50.
    result = simulate(jobs((1, 0, 400, 1000, 1), prediction=[50]), 1, predictor="column:guess", correction=correction)
    assert result.jobs["corrections"].to_list() == [count]
    assert result.jobs["initial_prediction"].to_list() == [50]


# --- Conservative vs EASY -----------------------------------------------------------------------------


def test_easy_may_delay_the_second_job_conservative_does_not():
    # m = 4.  1: 2 procs 0..10.  2: 3 procs at 1 (10 s): blocked, shadow 10, extra 4-3 = 1.
    # 3: 4 procs at 2 (10 s).  4: 1 proc, 100 s at 3.
    # EASY: 4 fits the extra processor -> backfilled at 3.  2 runs 10..20; 3 needs all 4 but 4 holds
    # one until 103 -> 3 starts at 103.
    # Conservative: 2 holds [10, 20) x 3, 3 holds [20, 30) x 4; 4 (1 proc for 100 s) cannot start at 3
    # without overlapping [20, 30) -> its first slot is at 30.
    workload = jobs((1, 0, 10, 10, 2), (2, 1, 10, 10, 3), (3, 2, 10, 10, 4), (4, 3, 100, 100, 1))
    assert starts(workload, 4) == {1: 0, 2: 10, 3: 103, 4: 3}
    assert starts(workload, 4, algorithm="conservative") == {1: 0, 2: 10, 3: 20, 4: 30}


def test_conservative_fills_holes_before_reservations():
    # m = 4.  1: 3 procs 0..10.  2: 4 procs at 1, reserved at [10, 20).  3: 1 proc, 9 s at 1: fits
    # [1, 10) beside job 1 -> starts at 1 and ends before 2's reservation.
    workload = jobs((1, 0, 10, 10, 3), (2, 1, 10, 10, 4), (3, 1, 9, 9, 1))
    result = simulate(workload, 4, algorithm="conservative").jobs
    assert dict(zip(result["job_id"], result["start_time"], strict=True)) == {1: 0, 2: 10, 3: 1}
    assert result.filter(result["job_id"] == 3)["backfilled"].to_list() == [True]


# --- Backfill order -----------------------------------------------------------------------------------


def test_sjbf_tries_the_shortest_predicted_job_first():
    # m = 2.  1: 1 proc 0..100.  2: 2 procs at 1, shadow 100, extra 0.  3 (90 s) and 4 (50 s), 1 proc
    # each, both at 2; one processor is free.  Queue order backfills 3 (ends 92 <= 100); SJBF
    # backfills 4 (ends 52).  The other one would end after 100 once the first has ended, so it waits
    # for 2 (100..110).
    workload = jobs((1, 0, 100, 100, 1), (2, 1, 10, 10, 2), (3, 2, 90, 90, 1), (4, 2, 50, 50, 1))
    assert starts(workload, 2) == {1: 0, 2: 100, 3: 2, 4: 110}
    assert starts(workload, 2, backfill="sjbf") == {1: 0, 2: 100, 3: 110, 4: 2}


# --- AVE2 ---------------------------------------------------------------------------------------------


def test_ave2_uses_the_users_two_last_completed_runtimes():
    # m = 1, user 7.  1 runs 0..100 and 2 runs 100..300 (requested 1000 each; fewer than two
    # completed jobs -> predicted 1000).  3 arrives at 300, when 2 completes (completions first):
    # int((100 + 200) / 2) = 150.  4 (user 8, no history) -> its request 500.  5 (user 7, requests
    # 120) arrives at 300 too: min(150, 120) = 120.
    workload = jobs(
        (1, 0, 100, 1000, 1, 7),
        (2, 0, 200, 1000, 1, 7),
        (3, 300, 10, 1000, 1, 7),
        (4, 300, 10, 500, 1, 8),
        (5, 300, 10, 120, 1, 7),
    )
    result = simulate(workload, 1, predictor="ave2").jobs
    assert result["initial_prediction"].to_list() == [1000, 1000, 150, 500, 120]


def test_zero_length_jobs_start_and_end_at_one_instant():
    # m = 1.  1 runs 0 s at 0; 2 at 0 starts as soon as 1 has come and gone, also at 0.
    assert starts(jobs((1, 0, 0, 5, 1), (2, 0, 3, 5, 1)), 1) == {1: 0, 2: 0}
