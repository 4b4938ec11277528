-- name: predict.swf_job_targets
-- grain: one row per SWF job with a resource it both requested and used
-- description: predict.swf_targets before its rows per resource, which `lakehouse report predictions` reads (it makes the text keys numbers once per job, then a row per resource): source, job, user_key, submit, done, walltime and the workflow keys as there, and resources, a list of (resource, used, requested, freed_weight), one element per resource the job requested and used.
WITH jobs AS (
    SELECT
        log AS source,
        job_id AS job,
        user_id::VARCHAR AS user_key,
        submit_time AS submit,
        submit_time + coalesce(wait_time, 0) + run_time AS done,
        run_time AS walltime,
        procs,
        user_id::VARCHAR AS wf_user,
        CASE WHEN group_id IS NOT NULL THEN user_id || '/' || group_id END AS wf_user_group,
        executable_id::VARCHAR AS wf_application,
        CASE WHEN queue_id IS NOT NULL OR partition_id IS NOT NULL THEN coalesce(queue_id, -1) || '/' || coalesce(partition_id, -1) END AS wf_queue,
        concat_ws('/', req_procs, req_time, req_memory) AS wf_signature,
        run_time, req_time, used_memory, req_memory, alloc_procs, req_procs
    FROM swf.jobs
    WHERE run_time > 0 AND submit_time IS NOT NULL AND user_id IS NOT NULL
)
SELECT
    source, job, user_key, submit, done, walltime,
    list_filter([
        {'resource': 'walltime', 'used': run_time::DOUBLE, 'requested': req_time::DOUBLE, 'freed_weight': procs::DOUBLE},
        {'resource': 'memory', 'used': used_memory::DOUBLE, 'requested': req_memory::DOUBLE, 'freed_weight': run_time::DOUBLE},
        {'resource': 'processors', 'used': alloc_procs::DOUBLE, 'requested': req_procs::DOUBLE, 'freed_weight': run_time::DOUBLE}
    ], r -> r.used > 0 AND r.requested > 0) AS resources,
    wf_user, wf_user_group, wf_application, wf_queue, wf_signature
FROM jobs
WHERE len(resources) > 0
