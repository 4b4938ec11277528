-- query: a cloud trace's tasks as OpenDC's tasks and fragments ($1: the trace, $2: its cell or NULL, $3: cores per unit of the trace's CPU, $4: MHz per core, $5: MB per unit of the trace's memory, $6: seconds of the trace's clock before its start, $7: the instant of the trace clock's 0 in Unix milliseconds, or 0); one row per fragment, with its task's fields; rules in `lakehouse export opendc --help`
WITH
task AS (
    -- Every instance of a task that started and ended inside the trace (Alibaba's instance_num: one each).
    SELECT t.trace, t.cell, t.job_id, t.task_id, t.start_s, t.end_s, t.cpu_request, t.memory_request,
           concat_ws('/', t.cell, t.job_id, t.task_id) || CASE WHEN coalesce(t.instances, 1) > 1 THEN '/' || (i + 1) ELSE '' END
               AS id
    FROM cluster.tasks AS t, range(coalesce(t.instances, 1)) AS r(i)
    WHERE t.trace = $1 AND ($2 IS NULL OR t.cell = $2) AND t.start_s >= $6 AND t.end_s > t.start_s
          AND t.cpu_request > 0
),
measured AS (
    -- A task's own usage windows (Google), clipped to its run; Alibaba measures instances, not tasks.
    SELECT u.cell, u.job_id, u.task_id, greatest(u.start_s, t.start_s) AS start_s, least(u.end_s, t.end_s) AS end_s,
           u.cpu_mean
    FROM cluster.usage AS u
    JOIN task AS t ON u.trace = t.trace AND u.cell IS NOT DISTINCT FROM t.cell AND u.job_id = t.job_id
                  AND u.task_id = t.task_id
    WHERE u.trace = $1 AND $1 <> 'alibaba-2018' AND u.end_s > t.start_s AND u.start_s < t.end_s
),
fragment AS (
    SELECT t.id, coalesce(m.start_s, t.start_s) AS start_s, coalesce(m.end_s, t.end_s) AS end_s,
           coalesce(m.cpu_mean, t.cpu_request) AS cpu
    FROM measured AS m  -- (the windows stream past the tasks: each join holds its right side)
    RIGHT JOIN task AS t ON m.cell IS NOT DISTINCT FROM t.cell AND m.job_id = t.job_id AND m.task_id = t.task_id
)
SELECT
    t.id,
    ($7 + round(t.start_s * 1000))::BIGINT AS submission_time,
    round((t.end_s - t.start_s) * 1000)::BIGINT AS task_duration,
    greatest(1, ceil(t.cpu_request * $3))::INTEGER AS cpu_count,
    t.cpu_request * $3 * $4 AS cpu_capacity,
    round(coalesce(t.memory_request, 0) * $5)::BIGINT AS mem_capacity,
    round((f.end_s - f.start_s) * 1000)::BIGINT AS fragment_duration,
    f.cpu * $3 * $4 AS cpu_usage,
    f.start_s AS fragment_start
FROM fragment AS f
JOIN task AS t USING (id)
WHERE f.end_s > f.start_s
ORDER BY t.id, f.start_s
