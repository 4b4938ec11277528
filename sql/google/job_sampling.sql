-- name: google.job_sampling
-- grain: one row per job with usage windows in google.task_usage
-- description: Whether the trace recorded 1-second CPU samples for a job. measured = in google.measured_jobs (at least one task has a non-zero sampled CPU, mu1s). tasks_used = tasks with a non-zero mean CPU rate; tasks_sampled = tasks with a non-zero sample. consistent checks the trace's property "within a job, either every task with non-zero mean usage has a non-zero sample, or none has" (jobs whose samples were never recorded are the ones to filter out of volatility studies).
SELECT
    job_id,
    count(*) AS tasks,
    count(*) FILTER (mean_cpu_rate > 0) AS tasks_used,
    count(*) FILTER (nonzero_samples > 0) AS tasks_sampled,
    job_id IN (SELECT job_id FROM google.measured_jobs) AS measured,
    tasks_sampled = 0 OR count(*) FILTER (mean_cpu_rate > 0 AND nonzero_samples = 0) = 0 AS consistent
FROM google.task_usage_stats
GROUP BY job_id
