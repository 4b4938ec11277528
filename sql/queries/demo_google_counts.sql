-- query: rows of each table the demo ingests from the embedded Google sample
SELECT 'job_events' AS table_name, count(*) AS rows FROM google.job_events
UNION ALL SELECT 'machine_events', count(*) FROM google.machine_events
UNION ALL SELECT 'task_usage', count(*) FROM google.task_usage
