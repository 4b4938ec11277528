-- query: what the Google lake holds for the periodicity fits: long-running tasks, hours of task_usage
SELECT
    (SELECT count(*) FROM google.tasks_long_running) AS long_running,
    (SELECT (max(end_s) - min(start_s)) / 3600 FROM google.task_usage) AS usage_hours
