-- name: predict.cluster_targets
-- grain: one row per ended task of a cloud trace (Google 2011, each Google 2019 cell, Alibaba 2018) with usage, and resource (cpu, cpu_peak, memory, memory_peak)
-- description: What `lakehouse report predictions` predicts for the cloud traces, read from the common views cluster.tasks, cluster.usage and cluster.jobs, in the shape of predict.swf_targets: trace and cell (what a source is read by), source ('google' for the 2011 trace, 'google-2019-' and the cell: each cell is its own cluster, 'alibaba-2018'), job (Google: job * 100000 + task; Alibaba, whose names are text: a 63-bit hash of job and task), user_key (the job's user; Alibaba gives none), submit (the task's submission; Alibaba gives none: its start), done (its end), walltime = done - first start (s), resource, used (cpu / memory: the mean over the task's usage rows of their mean CPU / memory; cpu_peak / memory_peak: the largest maximum of any row, in the trace's units), requested (the task's request), freed_weight = walltime, and the workflow keys known at submission: wf_job (the job), wf_user, wf_name (the job's logical name), wf_signature (CPU and memory requests). Tasks that ended after they started, with their own usage rows (Google 2019: tasks of jobs, those inside an alloc set included).
WITH usage AS (
    SELECT
        trace, cell, job_number, task_id,
        avg(cpu_mean) AS cpu, max(cpu_max) AS cpu_peak, avg(memory_mean) AS memory, max(memory_max) AS memory_peak
    FROM cluster.usage
    GROUP BY trace, cell, job_number, task_id
),
tasks AS (
    SELECT
        t.trace,
        t.cell,
        CASE t.trace WHEN 'google-2011' THEN 'google' WHEN 'google-2019' THEN 'google-2019-' || t.cell ELSE t.trace END
            AS source,
        CASE WHEN t.trace IN ('google-2011', 'google-2019') THEN t.job_number * 100000 + t.task_id::BIGINT
             ELSE (hash(t.job_id, t.task_id) >> 1)::BIGINT END AS job,
        j."user" AS user_key,
        CASE WHEN t.trace = 'alibaba-2018' THEN t.start_s ELSE t.submit_s END AS submit,
        t.end_s AS done,
        t.end_s - t.start_s AS walltime,
        t.cpu_request,
        t.memory_request,
        u.cpu, u.cpu_peak, u.memory, u.memory_peak,
        t.job_id AS wf_job,
        j."user" AS wf_user,
        j.name AS wf_name,
        t.cpu_request || '/' || t.memory_request AS wf_signature
    FROM cluster.tasks AS t
    JOIN usage AS u
        ON u.trace = t.trace AND u.cell IS NOT DISTINCT FROM t.cell AND u.job_number = t.job_number
        AND u.task_id = t.task_id
    JOIN cluster.jobs AS j ON j.trace = t.trace AND j.cell IS NOT DISTINCT FROM t.cell AND j.job_number = t.job_number
    WHERE t.end_s > t.start_s
)
SELECT
    trace, cell, source, job, user_key, submit, done, walltime, r.resource, r.used, r.requested, walltime AS freed_weight,
    wf_job, wf_user, wf_name, wf_signature
FROM (SELECT *, unnest(google.task_resources(cpu, cpu_peak, memory, memory_peak, cpu_request, memory_request)) AS r
      FROM tasks
      WHERE submit IS NOT NULL)
