"""Hand-written jobs through the cleaning views; each expected outcome is reasoned in a comment."""

from __future__ import annotations

from lakehouse.base.testing import swf_job, write_swf
from lakehouse.ingest.swf import ingest_swf


def test_canonical_cleaning_rules(lake, tmp_path):
    jobs = [
        swf_job(1, 0, 100, 4, 200),  # kept as is
        swf_job(2, 0, 100, -1, 200, req_procs=-1),  # no positive processor count -> no_procs
        swf_job(3, 0, 100, 0, 200, req_procs=3),  # allocated 0, requested 3 -> procs 3, kept
        swf_job(4, 0, 100, 9, 200),  # 9 > MaxProcs 8 -> wider_than_machine
        swf_job(5, 0, -1, 2, 200),  # unknown run time -> bad_run_time
        swf_job(6, -5, 100, 2, 200),  # negative submit -> bad_submit_time
        swf_job(7, 0, 100, 2, -1),  # unknown request -> falls back to the run time (100)
        swf_job(8, 0, 300, 2, 200),  # over-runs its request: kept, simulated for 200 s
    ]
    write_swf(tmp_path / "c.swf", jobs, {"MaxProcs": 8})
    ingest_swf(lake, [str(tmp_path / "c.swf")])
    kept = lake.query("SELECT job_id, procs, req_time, sim_run_time FROM swf.jobs_clean ORDER BY job_id").rows()
    assert kept == [(1, 4, 200, 100), (3, 3, 200, 100), (7, 2, 100, 100), (8, 2, 200, 200)]
    report = dict(lake.query("SELECT rule, jobs FROM swf.clean_report WHERE filter = 'clean'").rows())
    assert report == {
        "no_procs": 1,
        "wider_than_machine": 1,
        "bad_run_time": 1,
        "bad_submit_time": 1,
        "req_time_repaired": 1,
    }


def test_strong_filter_rules_and_repairs(lake, tmp_path):
    jobs = [
        swf_job(1, 0, 100, 4, 200),  # kept
        swf_job(2, 0, 100, 4, 200, alloc_procs=9),  # allocated 9 > MaxProcs 8 -> dropped (rule 1)
        swf_job(3, 0, 100, 4, 200, req_procs=-1),  # requested := allocated 4 (repair 2), kept
        swf_job(4, 0, 100, 4, 200, alloc_procs=0),  # allocated := requested 4 (repair 3), kept
        swf_job(5, 0, 100, -1, 200, req_procs=0),  # both <= 0 -> no_procs (rule 4)
        swf_job(6, 0, 0, 2, 200),  # run time 0 -> dropped (rule 5); the canonical view keeps it
        swf_job(7, 0, 100, 2, 0),  # request 0 -> dropped (rule 6)
        swf_job(8, 0, 300, 2, 200),  # run time clipped to 200 (repair 7), kept
        swf_job(9, -1, 100, 2, 200),  # submit -1 -> dropped (rule 8)
        swf_job(10, 0, 100, 9, 200, req_procs=-1, run_time=0),  # first failing rule wins: rule 1
    ]
    write_swf(tmp_path / "s.swf", jobs, {"MaxProcs": 8})
    ingest_swf(lake, [str(tmp_path / "s.swf")])
    kept = lake.query("SELECT job_id, procs, alloc_procs, run_time FROM swf.jobs_strong ORDER BY job_id").rows()
    assert kept == [(1, 4, 4, 100), (3, 4, 4, 100), (4, 4, 4, 100), (8, 2, 2, 200)]
    report = lake.query("SELECT step, rule, action, jobs FROM swf.clean_report WHERE filter = 'strong'").rows()
    assert report == [
        (1, "procs_over_max_procs", "drop", 2),
        (2, "req_procs_from_alloc", "repair", 1),  # job 3 (job 10 was dropped at rule 1 first)
        (3, "alloc_procs_from_req", "repair", 1),
        (4, "no_procs", "drop", 1),
        (5, "run_time_not_positive", "drop", 1),
        (6, "req_time_not_positive", "drop", 1),
        (7, "run_time_clipped", "repair", 1),  # job 8 (job 9 clips nothing: 100 < 200)
        (8, "negative_submit_time", "drop", 1),
    ]
