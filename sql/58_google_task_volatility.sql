-- name: google.task_volatility
-- grain: one row per task of a mu1s-measured job (google.measured_jobs) with usage windows
-- description: How far the 1-second CPU samples (mu1s) stray from the 5-minute means (mu5m) per task, over its google.volatility_windows: windows and non-zero samples; coefficient of variation (sample sd / mean) of mu1s and of mu5m, and their robust counterparts MAD / median (the CV explodes for near-zero means); mean_abs_d = mean of |d| over windows with mu5m > 0; mean mu5m and mu1s; the task's scheduling class, CPU request, high_slo and long_running flags.
SELECT
    job_id,
    task_index,
    count(*) AS windows,
    count(*) FILTER (mu1s > 0) AS nonzero_samples,
    stddev_samp(mu1s) / nullif(avg(mu1s), 0) AS cv_mu1s,
    stddev_samp(mu5m) / nullif(avg(mu5m), 0) AS cv_mu5m,
    mad(mu1s) / nullif(median(mu1s), 0) AS robust_cv_mu1s,
    mad(mu5m) / nullif(median(mu5m), 0) AS robust_cv_mu5m,
    avg(abs(d)) AS mean_abs_d,
    avg(mu5m) AS mean_mu5m,
    avg(mu1s) AS mean_mu1s,
    any_value(scheduling_class) AS scheduling_class,
    any_value(cpu_request) AS cpu_request,
    bool_or(high_slo) AS high_slo,
    bool_or(long_running) AS long_running
FROM google.volatility_windows
GROUP BY job_id, task_index
