-- name: google.volatility_windows
-- grain: one row per usage window of a task of a mu1s-measured job (google.measured_jobs)
-- description: google.measured_usage (mu5m, mu1s, d per window) with the task's attributes from google.tasks (NULL when the task's events were not ingested): both rates as ratios to the task's latest CPU request (NULL without a positive request), scheduling class, CPU request, high_slo = scheduling class 2 or 3, long_running = present for the whole trace.
SELECT
    w.*,
    w.mu5m / nullif(t.cpu_request, 0) AS mu5m_per_request,
    w.mu1s / nullif(t.cpu_request, 0) AS mu1s_per_request,
    t.scheduling_class,
    t.cpu_request,
    coalesce(t.high_slo, false) AS high_slo,
    coalesce(t.long_running, false) AS long_running
FROM google.measured_usage AS w
LEFT JOIN google.tasks AS t ON t.job_id = w.job_id AND t.task_index = w.task_index
