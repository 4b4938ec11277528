-- name: google.task_usage_stats
-- grain: one row per task (job_id, task_index) with usage windows in google.task_usage
-- description: Per task usage statistics over its measurement windows: windows; mean_cpu_rate = mean of the windows' mean CPU rate (mu5m) and mean_sampled_cpu = mean of the 1-second sampled CPU (mu1s); their sample standard deviations (NULL with one window) and coefficients of variation (sd / mean, NULL when the mean is 0); nonzero_samples = windows whose sampled CPU is positive; first and last window start (seconds).
SELECT
    job_id,
    task_index,
    count(*) AS windows,
    avg(cpu_rate) AS mean_cpu_rate,
    avg(sampled_cpu_usage) AS mean_sampled_cpu,
    stddev_samp(cpu_rate) AS sd_cpu_rate,
    stddev_samp(sampled_cpu_usage) AS sd_sampled_cpu,
    sd_cpu_rate / nullif(mean_cpu_rate, 0) AS cv_cpu_rate,
    sd_sampled_cpu / nullif(mean_sampled_cpu, 0) AS cv_sampled_cpu,
    count(*) FILTER (sampled_cpu_usage > 0) AS nonzero_samples,
    min(start_s) AS first_window_s,
    max(start_s) AS last_window_s
FROM google.task_usage
GROUP BY job_id, task_index
