-- name: alibaba2018.batch_task
-- grain: one row per task of a batch job of Alibaba's 2018 trace
-- description: batch_task as published (schema.txt's order): task_name (unique within its job; a name such as M5_3_4 gives the DAG: task 5 after tasks 3 and 4, see alibaba2018.dag_edges), instance_num, job_name, task_type, status, start_time and end_time (s; a time of 0 means before or after the trace's 8 days; end_time is 0 or before start_time on some rows: ended is false for them, and alibaba2018.caveats counts them), plan_cpu (100 is one core), plan_mem (normalized, 0-100); task_number, the number the name gives its task in the DAG (NULL for a name without DAG information), and duration_s where the times are usable.
SELECT
    *,
    TRY_CAST(regexp_extract(task_name, '^[A-Za-z]+(\d+)', 1) AS BIGINT) AS task_number,
    end_time > 0 AND end_time >= start_time AS ended,
    CASE WHEN end_time > 0 AND end_time >= start_time THEN end_time - start_time END AS duration_s
FROM stored.alibaba2018_batch_task
