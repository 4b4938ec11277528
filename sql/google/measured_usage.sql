-- name: google.measured_usage
-- grain: one row per usage window of a task of a mu1s-measured job (google.measured_jobs)
-- description: The usage windows volatility studies look at, with the quantities they compare: mu5m = the window's mean CPU rate (cpu_rate), mu1s = its 1-second sampled CPU (sampled_cpu_usage), d = (mu5m - mu1s) / mu5m (the macro google.deviation; NULL when mu5m = 0). google.volatility_windows adds the task's attributes; per-task statistics aggregate this view and join the attributes afterwards (once per task rather than once per window).
SELECT
    u.job_id,
    u.task_index,
    u.start_s,
    u.cpu_rate AS mu5m,
    u.sampled_cpu_usage AS mu1s,
    google.deviation(u.cpu_rate, u.sampled_cpu_usage) AS d
FROM google.task_usage AS u
SEMI JOIN google.measured_jobs AS m ON m.job_id = u.job_id
