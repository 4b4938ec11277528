-- query: jobs each cleaning keeps of the given logs (parameter: a list of log names)
SELECT
    log,
    (SELECT count(*) FROM swf.jobs_clean AS c WHERE c.log = l.log) AS jobs_clean,
    (SELECT count(*) FROM swf.jobs_strong AS s WHERE s.log = l.log) AS jobs_strong
FROM swf.logs AS l
WHERE list_contains($1, log)
ORDER BY log
