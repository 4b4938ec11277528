-- name: google.tasks_high_slo
-- grain: one row per task of google.tasks with scheduling class 2 or 3
-- description: Latency-sensitive tasks: latest scheduling class 2 or 3 (the highest service-level classes of the trace).
SELECT * FROM google.tasks WHERE high_slo
