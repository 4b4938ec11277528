-- name: swf.jobs_strong_steps
-- grain: one row per job of swf.jobs
-- description: The "strong filter" of the SC'15 runtime-prediction study (predictsim strong_filter_all_swf) evaluated on every job, on the raw values (-1 counts as <= 0) and with MaxProcs from the header, else the machine size given at ingest (swf.logs.strong_machine_size). Rules in order: 1 procs_over_max_procs (allocated or requested > MaxProcs, dropped); 2 req_procs_from_alloc (requested <= 0 < allocated: requested := allocated); 3 alloc_procs_from_req (allocated <= 0 < requested: allocated := requested); 4 no_procs (both <= 0, dropped); 5 run_time_not_positive (dropped); 6 req_time_not_positive (dropped); 7 run_time_clipped (requested < run time: run time := requested); 8 negative_submit_time (dropped).
SELECT
    j.*,
    l.strong_machine_size AS filter_max_procs,
    CASE
        WHEN coalesce(j.alloc_procs, -1) > l.strong_machine_size
          OR coalesce(j.req_procs, -1) > l.strong_machine_size THEN 'procs_over_max_procs'
        WHEN coalesce(j.alloc_procs, -1) <= 0 AND coalesce(j.req_procs, -1) <= 0 THEN 'no_procs'
        WHEN coalesce(j.run_time, -1) <= 0 THEN 'run_time_not_positive'
        WHEN coalesce(j.req_time, -1) <= 0 THEN 'req_time_not_positive'
        WHEN coalesce(j.submit_time, -1) < 0 THEN 'negative_submit_time'
    END AS dropped_by,
    coalesce(j.req_procs, -1) <= 0 AND coalesce(j.alloc_procs, -1) > 0 AS req_procs_from_alloc,
    coalesce(j.alloc_procs, -1) <= 0 AND coalesce(j.req_procs, -1) > 0 AS alloc_procs_from_req,
    coalesce(j.req_time, -1) < coalesce(j.run_time, -1) AS run_time_clipped
FROM swf.jobs AS j
JOIN swf.logs AS l USING (log)
