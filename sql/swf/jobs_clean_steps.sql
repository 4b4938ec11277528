-- name: swf.jobs_clean_steps
-- grain: one row per job of swf.jobs
-- description: The canonical cleaning for simulation (docs/cleaning.md) evaluated on every job: dropped_by names the first rule that drops it (1 no_procs: no positive processor count; 2 wider_than_machine: procs > machine_size; 3 bad_run_time: unknown or negative run time; 4 bad_submit_time: unknown or negative submit time), NULL if kept. req_time_repaired: requested time unknown or <= 0, replaced by the run time.
SELECT
    j.*,
    l.clean_machine_size AS machine_size,
    CASE
        WHEN j.procs IS NULL THEN 'no_procs'
        WHEN j.procs > l.clean_machine_size THEN 'wider_than_machine'
        WHEN j.run_time IS NULL OR j.run_time < 0 THEN 'bad_run_time'
        WHEN j.submit_time IS NULL OR j.submit_time < 0 THEN 'bad_submit_time'
    END AS dropped_by,
    coalesce(j.req_time, 0) <= 0 AS req_time_repaired
FROM swf.jobs AS j
JOIN swf.logs AS l USING (log)
