-- query: the jobs with long-running tasks of trace $trace (and cell $cell, NULL for a trace without cells), how many such tasks each has, and its hash (DuckDB's, as every partitioned report splits): the jobs `lakehouse report periodicity` fits
SELECT job_number AS job_id, count(*) AS tasks, hash(job_number) AS hashed
FROM cluster.tasks
WHERE trace = $trace AND cell IS NOT DISTINCT FROM $cell::VARCHAR AND long_running
GROUP BY ALL
ORDER BY job_id
