-- query: the jobs with long-running tasks, and how many (the jobs `lakehouse report periodicity` fits)
SELECT job_id, count(*) AS tasks FROM google.tasks_long_running GROUP BY job_id
