-- name: predict.google2019_targets
-- grain: one row per ended task of a cell of Google's 2019 trace with usage windows, and resource (cpu, cpu_peak, memory, memory_peak)
-- description: What `lakehouse report predictions` predicts for Google's 2019 trace, in the shape of predict.google_targets: source ('google-2019-' and the cell: each cell is its own cluster, users and names are not shared), job (collection_id * 100000 + instance_index), user_key (the collection's user), submit and done (the task's first SUBMIT and last FINISH, FAIL, KILL or LOST, trace seconds), walltime = done - submit (s), resource, used (cpu / memory: mean over the task's windows of average_usage; cpu_peak / memory_peak: the largest maximum_usage of any window, in NCU and normalized memory), requested (the task's latest request), freed_weight = walltime, and the workflow keys known at submission: wf_job (the collection), wf_user, wf_name (collection_logical_name), wf_signature (CPU and memory requests). Tasks only (collection JOB: an alloc instance's usage is its tasks'), their own usage rows (a task inside an alloc set has rows of its own: google2019.usage leaves them out of sums, not here), and only tasks submitted and ended inside the trace window.
WITH usage AS (
    SELECT
        cell,
        collection_id,
        instance_index,
        avg(average_usage_cpus) AS cpu,
        max(maximum_usage_cpus) AS cpu_peak,
        avg(average_usage_memory) AS memory,
        max(maximum_usage_memory) AS memory_peak
    FROM google2019.instance_usage
    WHERE collection = 'JOB'
    GROUP BY cell, collection_id, instance_index
),
tasks AS (
    SELECT
        'google-2019-' || i.cell AS source,
        i.collection_id * 100000 + i.instance_index AS job,
        c."user" AS user_key,
        i.submit_s AS submit,
        i.end_s AS done,
        i.end_s - i.submit_s AS walltime,
        i.cpu_request,
        i.memory_request,
        u.cpu,
        u.cpu_peak,
        u.memory,
        u.memory_peak,
        i.collection_id::VARCHAR AS wf_job,
        c."user" AS wf_user,
        c.collection_logical_name AS wf_name,
        i.cpu_request || '/' || i.memory_request AS wf_signature
    FROM google2019.instances AS i
    JOIN usage AS u USING (cell, collection_id, instance_index)
    JOIN google2019.collections AS c USING (cell, collection_id)
    WHERE i.collection = 'JOB' AND i.submit_s IS NOT NULL AND i.end_s > i.submit_s
)
SELECT
    source, job, user_key, submit, done, walltime, r.resource, r.used, r.requested, walltime AS freed_weight,
    wf_job, wf_user, wf_name, wf_signature
FROM (SELECT *, unnest(google.task_resources(cpu, cpu_peak, memory, memory_peak, cpu_request, memory_request)) AS r
      FROM tasks)
