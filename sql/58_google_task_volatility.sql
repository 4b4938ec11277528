-- name: google.task_volatility
-- grain: one row per task of a mu1s-measured job (google.measured_jobs) with usage windows
-- description: How far the 1-second CPU samples (mu1s) stray from the 5-minute means (mu5m) per task, over its windows in google.measured_usage: windows and non-zero samples; coefficient of variation (sample sd / mean) of mu1s and of mu5m, and their robust counterparts MAD / median (the CV explodes for near-zero means); mean_abs_d = mean of |d| over windows with mu5m > 0; mean mu5m and mu1s; the task's scheduling class, CPU request, high_slo and long_running flags (as in google.volatility_windows).
WITH per_task AS (
    SELECT
        job_id,
        task_index,
        count(*) AS windows,
        count(*) FILTER (mu1s > 0) AS nonzero_samples,
        stddev_samp(mu1s) / nullif(avg(mu1s), 0) AS cv_mu1s,
        stddev_samp(mu5m) / nullif(avg(mu5m), 0) AS cv_mu5m,
        -- Each task's values as lists, for the medians and MADs below: measured a fifth faster than
        -- DuckDB's median and mad aggregates, which keep a copy of the values each.
        list(mu1s) AS mu1s_values,
        list(mu5m) AS mu5m_values,
        avg(abs(d)) AS mean_abs_d,
        avg(mu5m) AS mean_mu5m,
        avg(mu1s) AS mean_mu1s
    FROM google.measured_usage
    GROUP BY job_id, task_index
),
medians AS (
    SELECT *, list_median(mu1s_values) AS median_mu1s, list_median(mu5m_values) AS median_mu5m FROM per_task
),
robust AS (
    SELECT
        * EXCLUDE (mu1s_values, mu5m_values, median_mu1s, median_mu5m, mean_abs_d, mean_mu5m, mean_mu1s),
        -- MAD = the median of the absolute deviations from the median.
        list_median(list_transform(mu1s_values, x -> abs(x - median_mu1s))) / nullif(median_mu1s, 0) AS robust_cv_mu1s,
        list_median(list_transform(mu5m_values, x -> abs(x - median_mu5m))) / nullif(median_mu5m, 0) AS robust_cv_mu5m,
        mean_abs_d,
        mean_mu5m,
        mean_mu1s
    FROM medians
)
SELECT
    p.*,
    t.scheduling_class,
    t.cpu_request,
    coalesce(t.high_slo, false) AS high_slo,
    coalesce(t.long_running, false) AS long_running
FROM robust AS p
LEFT JOIN google.tasks AS t ON t.job_id = p.job_id AND t.task_index = p.task_index
