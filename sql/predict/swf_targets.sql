-- name: predict.swf_targets
-- grain: one row per SWF job and resource it both requested and used (walltime, memory, processors)
-- description: What `lakehouse report predictions` predicts for the SWF logs, in one shape shared with predict.cluster_targets: source (the log), job (job_id), user_key, submit (s), done = submit + wait + run (when the job was known to be complete; a log that records no wait time is taken to start jobs at submission), walltime = run time (s, the loss's weight), resource, used and requested (walltime: run_time and req_time in s; memory: used_memory and req_memory in KB per processor; processors: alloc_procs and req_procs), freed_weight (what a unit of the resource is held with: procs for walltime, the run time otherwise), and the workflow keys known at submission (NULL where the log lacks the attribute): wf_user, wf_user_group, wf_application (executable), wf_queue (queue and partition), wf_signature (requested procs, time and memory). Jobs without a positive run time, request or usage of a resource have no row for it.
SELECT
    source, job, user_key, submit, done, walltime, r.resource, r.used, r.requested, r.freed_weight,
    wf_user, wf_user_group, wf_application, wf_queue, wf_signature
FROM (SELECT *, unnest(resources) AS r FROM predict.swf_job_targets)
