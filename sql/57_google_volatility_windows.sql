-- name: google.volatility_windows
-- grain: one row per usage window of a task of a mu1s-measured job (google.measured_jobs)
-- description: The usage windows volatility studies look at, with the quantities they compare: mu5m = the window's mean CPU rate (cpu_rate), mu1s = its 1-second sampled CPU (sampled_cpu_usage), d = (mu5m - mu1s) / mu5m (NULL when mu5m = 0), both rates as ratios to the task's latest CPU request (NULL without a positive request). Task attributes from google.tasks (NULL when the task's events were not ingested): high_slo = scheduling class 2 or 3, long_running = present for the whole trace.
SELECT
    u.job_id,
    u.task_index,
    u.start_s,
    u.cpu_rate AS mu5m,
    u.sampled_cpu_usage AS mu1s,
    (u.cpu_rate - u.sampled_cpu_usage) / nullif(u.cpu_rate, 0) AS d,
    u.cpu_rate / nullif(t.cpu_request, 0) AS mu5m_per_request,
    u.sampled_cpu_usage / nullif(t.cpu_request, 0) AS mu1s_per_request,
    t.scheduling_class,
    t.cpu_request,
    coalesce(t.scheduling_class IN (2, 3), false) AS high_slo,
    coalesce(t.before_trace AND NOT t.ended, false) AS long_running
FROM google.task_usage AS u
SEMI JOIN google.measured_jobs AS m ON m.job_id = u.job_id
LEFT JOIN google.tasks AS t ON t.job_id = u.job_id AND t.task_index = u.task_index
