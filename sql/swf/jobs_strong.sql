-- name: swf.jobs_strong
-- grain: one row per job kept by the strong filter
-- description: Jobs kept by the SC'15 strong filter (see swf.jobs_strong_steps), with its repairs applied: missing requested/allocated processors copied from the other field, run time clipped to the requested time. procs = requested processors, as the published simulations use; sim_run_time = run_time (already clipped).
SELECT * EXCLUDE (dropped_by, req_procs_from_alloc, alloc_procs_from_req, run_time_clipped, filter_max_procs)
    REPLACE (
        CASE WHEN req_procs_from_alloc THEN alloc_procs ELSE req_procs END AS req_procs,
        CASE WHEN alloc_procs_from_req THEN req_procs ELSE alloc_procs END AS alloc_procs,
        CASE WHEN run_time_clipped THEN req_time ELSE run_time END AS run_time,
        CASE WHEN req_procs_from_alloc THEN alloc_procs ELSE req_procs END AS procs),
    least(run_time, req_time) AS sim_run_time
FROM swf.jobs_strong_steps
WHERE dropped_by IS NULL
