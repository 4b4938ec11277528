-- name: google.job_demand_5min
-- grain: one row per job and 5-minute window with usage in google.task_usage
-- description: Per job CPU demand at 5-minute resolution (the input of the spectral fits): bucket_s = start of the 300-second bucket of the trace clock (seconds) in which usage windows start; cpu_rate = the job's CPU demand averaged over the bucket, each window's mean CPU rate weighted by its length / 300 s (windows are 300 s, except where a task starts or stops within one: a task running 60 s of the bucket adds a fifth of its rate); tasks = the windows' total length / 300 s, i.e. how many tasks were measured over the whole bucket (an integer when every window is full). cpu_rate / tasks is the demand per measured task. Missing windows are absent, not zero.
SELECT
    job_id,
    start_time // 300000000 * 300 AS bucket_s,
    sum(cpu_rate * (end_time - start_time)) / 300e6 AS cpu_rate,
    sum(end_time - start_time) / 300e6 AS tasks
FROM google.task_usage
GROUP BY job_id, bucket_s
