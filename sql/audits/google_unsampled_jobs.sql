-- audit: google.unsampled_jobs
-- description: A job that used CPU but whose 1-second samples were never recorded must not reach the volatility study; a row here is such a job with windows still in google.measured_usage.
SELECT job_id, tasks, tasks_used, after_filtering
FROM google.audit_unsampled_jobs
WHERE after_filtering > 0
