-- query: what the lake holds of trace $trace (and cell $cell) for the periodicity fits: long-running tasks, hours of usage windows
SELECT
    (SELECT count(*) FROM cluster.tasks
     WHERE trace = $trace AND cell IS NOT DISTINCT FROM $cell::VARCHAR AND long_running) AS long_running,
    (SELECT (max(end_s) - min(start_s)) / 3600 FROM cluster.usage
     WHERE trace = $trace AND cell IS NOT DISTINCT FROM $cell::VARCHAR) AS usage_hours
