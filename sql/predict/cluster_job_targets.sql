-- name: predict.cluster_job_targets
-- grain: one row per ended task of a cloud trace (Google 2011, each Google 2019 cell, Alibaba 2018) with usage and a resource to predict
-- description: predict.cluster_targets before its rows per resource, which `lakehouse report predictions` reads (it makes the text keys numbers once per task, then a row per resource): trace, cell, source, job, user_key, submit, done, walltime and the workflow keys as there, and resources, a list of (resource, used, requested, freed_weight), one element per resource the task requested and used.
WITH usage AS (
    SELECT
        trace, cell, job_number, task_number,
        avg(cpu_mean) AS cpu, max(cpu_max) AS cpu_peak, avg(memory_mean) AS memory, max(memory_max) AS memory_peak
    FROM cluster.usage
    GROUP BY trace, cell, job_number, task_number
),
tasks AS (
    SELECT
        t.trace,
        t.cell,
        CASE t.trace WHEN 'google-2011' THEN 'google' WHEN 'google-2019' THEN 'google-2019-' || t.cell ELSE t.trace END
            AS source,
        CASE WHEN t.trace IN ('google-2011', 'google-2019') THEN t.job_number * 100000 + t.task_number
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
        AND u.task_number = t.task_number
    JOIN cluster.jobs AS j ON j.trace = t.trace AND j.cell IS NOT DISTINCT FROM t.cell AND j.job_number = t.job_number
    WHERE t.end_s > t.start_s
)
SELECT
    trace, cell, source, job, user_key, submit, done, walltime,
    google.task_resources(cpu, cpu_peak, memory, memory_peak, cpu_request, memory_request, walltime) AS resources,
    wf_job, wf_user, wf_name, wf_signature
FROM tasks
WHERE submit IS NOT NULL AND len(resources) > 0
