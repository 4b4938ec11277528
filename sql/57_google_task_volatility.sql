-- name: google.task_volatility
-- grain: one row per task of a mu1s-measured job (google.job_sampling.measured) with usage windows
-- description: How far the 1-second CPU samples (mu1s = sampled_cpu_usage) stray from the 5-minute means (mu5m = cpu_rate) per task: windows and non-zero samples; coefficient of variation (sample sd / mean) of mu1s and of mu5m, and their robust counterparts MAD / median (the CV explodes for near-zero means); mean_abs_d = mean of |d| over windows with mu5m > 0, d = (mu5m - mu1s) / mu5m. Latest scheduling class and CPU request from google.tasks (NULL when the task's events were not ingested), high_slo = class 2 or 3, long_running = present for the whole trace.
SELECT
    u.job_id,
    u.task_index,
    count(*) AS windows,
    count(*) FILTER (u.sampled_cpu_usage > 0) AS nonzero_samples,
    stddev_samp(u.sampled_cpu_usage) / nullif(avg(u.sampled_cpu_usage), 0) AS cv_mu1s,
    stddev_samp(u.cpu_rate) / nullif(avg(u.cpu_rate), 0) AS cv_mu5m,
    mad(u.sampled_cpu_usage) / nullif(median(u.sampled_cpu_usage), 0) AS robust_cv_mu1s,
    mad(u.cpu_rate) / nullif(median(u.cpu_rate), 0) AS robust_cv_mu5m,
    avg(abs((u.cpu_rate - u.sampled_cpu_usage) / u.cpu_rate)) FILTER (u.cpu_rate > 0) AS mean_abs_d,
    any_value(t.scheduling_class) AS scheduling_class,
    any_value(t.cpu_request) AS cpu_request,
    coalesce(any_value(t.scheduling_class) IN (2, 3), false) AS high_slo,
    coalesce(any_value(t.before_trace AND NOT t.ended), false) AS long_running
FROM google.task_usage AS u
JOIN google.job_sampling AS s ON s.job_id = u.job_id AND s.measured
LEFT JOIN google.tasks AS t ON t.job_id = u.job_id AND t.task_index = u.task_index
GROUP BY u.job_id, u.task_index
