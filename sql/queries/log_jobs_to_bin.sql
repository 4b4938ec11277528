-- query: every job of one SWF log ($log) with what the metrics over bins of jobs need (models/job_bins.py), in submit order
SELECT submit_time, run_time, procs, user_id FROM swf.jobs WHERE log = $log ORDER BY submit_time, line
