-- name: google.job_demand_5min
-- grain: one row per job and 5-minute window with usage in google.task_usage
-- description: Per job CPU demand at 5-minute resolution (the input of the spectral fits): bucket_s = start of the 300-second bucket of the trace clock (seconds); cpu_rate = sum over the job's tasks of their mean CPU rate in windows starting in that bucket; tasks = how many tasks reported. Missing windows are absent, not zero.
SELECT
    job_id,
    start_time // 300000000 * 300 AS bucket_s,
    sum(cpu_rate) AS cpu_rate,
    count(DISTINCT task_index) AS tasks
FROM google.task_usage
GROUP BY job_id, bucket_s
