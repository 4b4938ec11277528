-- name: swf.log_summary
-- grain: one row per ingested SWF log
-- description: A log at a glance: jobs, users (NULL where the log records no user id), first and last submit, span = last - first submit (days), machine size, offered load = sum(run_time * procs) / (span * machine size) over jobs with known run time and procs, share of jobs whose run time exceeds their requested time (among jobs with both known), median requested/actual run-time ratio (jobs with both positive), lines quarantined.
SELECT
    j.log,
    count(*) AS jobs,
    nullif(count(DISTINCT j.user_id), 0) AS users,
    min(j.submit_at) AS first_submit,
    max(j.submit_at) AS last_submit,
    (max(j.submit_time) - min(j.submit_time)) / 86400.0 AS span_days,
    any_value(l.machine_size) AS machine_size,
    sum(j.run_time * j.procs) FILTER (j.run_time >= 0)
        / nullif((max(j.submit_time) - min(j.submit_time)) * any_value(l.machine_size), 0) AS offered_load,
    avg((j.run_time > j.req_time)::DOUBLE) FILTER (j.run_time >= 0 AND j.req_time >= 0) AS share_over_request,
    median(j.req_time / j.run_time) FILTER (j.run_time > 0 AND j.req_time > 0) AS median_req_over_run,
    any_value(l.quarantined) AS quarantined
FROM swf.jobs AS j
JOIN swf.logs AS l USING (log)
GROUP BY j.log
ORDER BY j.log
