-- audit: swf.unique_job_ids
-- description: Every job id appears once per log in swf.jobs (the ingest quarantines the later lines of a repeated id); a row here is a repeated id.
SELECT log, job_id, count(*) AS lines
FROM swf.jobs
GROUP BY log, job_id
HAVING count(*) > 1
