-- name: google.audit_unsampled_jobs
-- grain: one row per job that used CPU but whose 1-second CPU samples were never recorded
-- description: Audit of the trace's sampling corruption "a job's 1-second CPU samples (sampled_cpu_usage, mu1s) were never recorded: zero in every window although the job used CPU": the raw finding (jobs of google.job_sampling with tasks_used > 0 and no task sampled) with their tasks and windows, and after_filtering = that job's windows still in google.measured_usage, the view volatility studies read. The audit passes when after_filtering is 0 on every row.
SELECT
    s.job_id,
    s.tasks,
    s.tasks_used,
    (SELECT count(*) FROM google.measured_usage AS w WHERE w.job_id = s.job_id) AS after_filtering
FROM google.job_sampling AS s
WHERE s.tasks_used > 0 AND s.tasks_sampled = 0
