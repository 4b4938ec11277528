-- name: google.measured_jobs
-- grain: one row per job with at least one usage window whose 1-second sampled CPU (mu1s) is non-zero
-- description: The mu1s-measured jobs: the trace recorded their 1-second CPU samples. A job whose samples were never recorded has sampled_cpu_usage = 0 in every window, and is left out of volatility studies. (One scan with a filter; google.job_sampling adds the per-job detail and the consistency check.)
SELECT DISTINCT job_id FROM google.task_usage WHERE sampled_cpu_usage > 0
