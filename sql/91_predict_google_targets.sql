-- name: predict.google_targets
-- grain: one row per ended task of the Google trace with usage windows, and resource (cpu, cpu_peak, memory, memory_peak)
-- description: What `lakehouse report predictions` predicts for the Google trace, in the shape of predict.swf_targets: source ('google'), job (job_id * 100000 + task_index), user_key (the job's user), submit and done (the task's submit and end, s), walltime = lifetime (s), resource, used (cpu / memory: mean over the task's windows of the mean CPU rate / canonical memory usage; cpu_peak / memory_peak: the largest maximum CPU rate / maximum memory usage of any window), requested (the task's latest CPU or memory request), freed_weight = lifetime, and the workflow keys known at submission: wf_job (the job), wf_user, wf_name (logical job name), wf_signature (CPU and memory requests). Only tasks that ended within the ingested events, with a submit time in the trace window and usage windows.
WITH usage AS (
    SELECT
        job_id,
        task_index,
        avg(cpu_rate) AS cpu,
        max(maximum_cpu_rate) AS cpu_peak,
        avg(canonical_memory_usage) AS memory,
        max(maximum_memory_usage) AS memory_peak
    FROM google.task_usage
    GROUP BY job_id, task_index
),
jobs AS (
    SELECT job_id, arg_max(user, time) AS user_key, arg_max(logical_job_name, time) AS wf_name
    FROM google.job_events
    GROUP BY job_id
),
tasks AS (
    SELECT
        'google' AS source,
        t.job_id * 100000 + t.task_index AS job,
        j.user_key,
        t.submit_s AS submit,
        t.end_s AS done,
        t.lifetime_s AS walltime,
        t.cpu_request,
        t.memory_request,
        u.*,
        t.job_id::VARCHAR AS wf_job,
        j.user_key AS wf_user,
        j.wf_name,
        t.cpu_request || '/' || t.memory_request AS wf_signature
    FROM google.tasks AS t
    JOIN usage AS u USING (job_id, task_index)
    JOIN jobs AS j USING (job_id)
    WHERE t.submit_s IS NOT NULL AND t.end_s IS NOT NULL AND t.lifetime_s > 0
)
SELECT
    source, job, user_key, submit, done, walltime, r.resource, r.used, r.requested, walltime AS freed_weight,
    wf_job, wf_user, wf_name, wf_signature
FROM (SELECT *, unnest(google.task_resources(cpu, cpu_peak, memory, memory_peak, cpu_request, memory_request)) AS r
      FROM tasks)
