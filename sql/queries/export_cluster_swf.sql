-- query: a cloud trace's jobs as SWF fields, through cluster.* ($1: the trace, $2: its cell or NULL for all, $3: 'tasks' or 'cpu' processors, $4: cores per unit of the trace's CPU, $5: seconds of the trace's clock before its start); one row per job (the SWF fields it knows: the others are written -1); rules in `lakehouse export swf --help`
WITH
per_job AS (
    -- A task of n instances (Alibaba's instance_num) counts n times.
    SELECT cell, job_id, sum(coalesce(instances, 1)) AS task_instances, sum(cpu_request * coalesce(instances, 1)) AS cpu
    FROM cluster.tasks
    WHERE trace = $1
    GROUP BY ALL
),
rows AS (
    SELECT j.cell, j.job_id, j."user",
           greatest(coalesce(j.submit_s, j.start_s) - $5, 0) AS submit,
           greatest(j.start_s - $5, 0) AS first_start,
           greatest(j.end_s - $5, 0) AS finish,
           CASE WHEN $3 = 'cpu' THEN greatest(1, ceil(t.cpu * $4))::BIGINT ELSE t.task_instances END AS procs
    FROM cluster.jobs AS j
    JOIN per_job AS t ON t.cell IS NOT DISTINCT FROM j.cell AND t.job_id = j.job_id
    WHERE j.trace = $1 AND ($2 IS NULL OR j.cell = $2) AND coalesce(j.submit_s, j.start_s) IS NOT NULL
)
SELECT
    row_number() OVER (ORDER BY round(submit), cell, job_id) AS job_id,
    round(submit)::BIGINT AS submit_time,
    coalesce(round(first_start - submit)::BIGINT, -1) AS wait_time,
    CASE WHEN finish >= first_start THEN round(finish - first_start)::BIGINT ELSE -1 END AS run_time,
    coalesce(procs, -1) AS alloc_procs,
    coalesce(procs, -1) AS req_procs,
    coalesce(dense_rank() OVER (ORDER BY "user"), -1) AS user_id,
    cell AS trace_cell,
    job_id AS trace_job_id
FROM rows
ORDER BY submit_time, trace_cell, trace_job_id
