-- name: swf.jobs
-- grain: one row per job line accepted from an SWF log
-- description: The 18 SWF fields with clear names; -1 (unknown) is NULL. Times in seconds, memory in KB. procs = allocated processors if positive, else requested. submit_at = UnixStartTime + submit_time (an instant), submit_local = the same in the log's TimeZoneString. line = the job's line in the source file.
SELECT
    j.log,
    j.job_id,
    nullif(j.submit_time, -1) AS submit_time,
    nullif(j.wait_time, -1) AS wait_time,
    nullif(j.run_time, -1) AS run_time,
    nullif(j.alloc_procs, -1) AS alloc_procs,
    nullif(j.avg_cpu_time, -1) AS avg_cpu_time,
    nullif(j.used_memory, -1) AS used_memory,
    nullif(j.req_procs, -1) AS req_procs,
    nullif(j.req_time, -1) AS req_time,
    nullif(j.req_memory, -1) AS req_memory,
    nullif(j.status, -1) AS status,
    nullif(j.user_id, -1) AS user_id,
    nullif(j.group_id, -1) AS group_id,
    nullif(j.executable_id, -1) AS executable_id,
    nullif(j.queue_id, -1) AS queue_id,
    nullif(j.partition_id, -1) AS partition_id,
    nullif(j.preceding_job_id, -1) AS preceding_job_id,
    nullif(j.think_time, -1) AS think_time,
    CASE WHEN j.alloc_procs > 0 THEN j.alloc_procs WHEN j.req_procs > 0 THEN j.req_procs END AS procs,
    to_timestamp(l.unix_start_time + j.submit_time) AS submit_at,
    CASE WHEN l.time_zone_known
         THEN timezone(l.time_zone_string, to_timestamp(l.unix_start_time + j.submit_time)) END AS submit_local,
    j.line
FROM stored.swf_jobs AS j
LEFT JOIN swf.logs AS l USING (log)
