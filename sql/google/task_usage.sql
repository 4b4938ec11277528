-- name: google.task_usage
-- grain: one row per task and measurement window (normally 5 minutes) of the Google trace
-- description: The task_usage table typed by the official schema (v2.1: 20 columns, incl. sampled_cpu_usage, the CPU rate of one randomly chosen second of the window). start_time and end_time are microseconds of the trace clock; start_s, end_s and window_s are seconds; start_at is the window's start instant (the trace clock's 600 s is 19:00 EDT on Sunday 1 May 2011). cpu_rate is the window's mean CPU rate (mu5m), sampled_cpu_usage the 1-second sample (mu1s). part = the source part.
SELECT
    *,
    start_time / 1e6 AS start_s,
    google.instant(start_time) AS start_at,
    end_time / 1e6 AS end_s,
    (end_time - start_time) / 1e6 AS window_s
FROM stored.google_task_usage
