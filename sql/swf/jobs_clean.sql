-- name: swf.jobs_clean
-- grain: one row per job kept by the canonical cleaning
-- description: Jobs ready for simulation (docs/cleaning.md): positive procs no wider than the machine, known non-negative run and submit times; a missing or non-positive requested time falls back to the run time. sim_run_time = least(run_time, req_time): a job is killed at its requested time. See swf.clean_report for what each rule dropped.
SELECT * EXCLUDE (dropped_by, req_time_repaired, machine_size)
    REPLACE (CASE WHEN req_time_repaired THEN run_time ELSE req_time END AS req_time),
    least(run_time, CASE WHEN req_time_repaired THEN run_time ELSE req_time END) AS sim_run_time
FROM swf.jobs_clean_steps
WHERE dropped_by IS NULL
