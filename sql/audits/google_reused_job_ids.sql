-- audit: google.reused_job_ids
-- description: A job id submitted more than once (a restart reusing the id) is split into instances with one SUBMIT each by google.job_instances; a row here is an instance that still holds another number of SUBMIT events.
SELECT job_id, submits, after_filtering
FROM google.audit_reused_job_ids
WHERE after_filtering > 0
