-- name: google.audit_reused_job_ids
-- grain: one row per job id submitted more than once in google.job_events
-- description: Audit of the documented anomaly "a job id is reused after a restart": the raw finding (job ids with several SUBMIT events; in clusterdata-2011-2 only job 6253771429) with how many, and after_filtering = the instances of google.job_instances for that id that still hold other than one SUBMIT. The audit passes when after_filtering is 0 on every row.
SELECT
    e.job_id,
    count(*) AS submits,
    (SELECT count(*) FROM google.job_instances AS i WHERE i.job_id = e.job_id AND i.instance > 0 AND i.submits <> 1)
        AS after_filtering
FROM google.job_events AS e
WHERE e.event = 'SUBMIT'
GROUP BY e.job_id
HAVING count(*) > 1
