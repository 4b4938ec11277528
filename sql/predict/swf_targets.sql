-- name: predict.swf_targets
-- grain: one row per SWF job and resource it both requested and used (walltime, memory, processors)
-- description: What `lakehouse report predictions` predicts for the SWF logs, in one shape shared with predict.cluster_targets: source (the log), job (job_id), user_key, submit (s), done = submit + wait + run (when the job was known to be complete; a log that records no wait time is taken to start jobs at submission), walltime = run time (s, the loss's weight), resource, used and requested (walltime: run_time and req_time in s; memory: used_memory and req_memory in KB per processor; processors: alloc_procs and req_procs), freed_weight (what a unit of the resource is held with: procs for walltime, the run time otherwise), and the workflow keys known at submission (NULL where the log lacks the attribute): wf_user, wf_user_group, wf_application (executable), wf_queue (queue and partition), wf_signature (requested procs, time and memory). Jobs without a positive run time, request or usage of a resource have no row for it.
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
    source, job, user_key, submit, done, walltime, r.resource, r.used, r.requested, r.freed_weight,
    wf_user, wf_user_group, wf_application, wf_queue, wf_signature
FROM jobs,
    LATERAL (
        VALUES
            ('walltime', run_time::DOUBLE, req_time::DOUBLE, procs::DOUBLE),
            ('memory', used_memory::DOUBLE, req_memory::DOUBLE, run_time::DOUBLE),
            ('processors', alloc_procs::DOUBLE, req_procs::DOUBLE, run_time::DOUBLE)
    ) AS r(resource, used, requested, freed_weight)
WHERE r.used > 0 AND r.requested > 0
