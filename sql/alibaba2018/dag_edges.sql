-- name: alibaba2018.dag_edges
-- grain: one row per dependency of a task on another within a batch job of Alibaba's 2018 trace
-- description: The DAG the task names encode: a task named M5_3_4 (a letter for its kind, then numbers joined by '_') is task 5 of its job and runs after tasks 3 and 4 of the same job. job_name, task_name, task (its number), after (the number of the task it waits for), self_cycle (a task named after itself, which the trace has; kept, flagged). Names without DAG information (task_..., MergeTask) give no rows. What follows the numbers is left (a stage suffix such as _Stg4; a name cut short ends in '_' and loses the dependencies past the cut, which alibaba2018.caveats counts).
SELECT job_name, task_name, task, after, task = after AS self_cycle
FROM (
    SELECT
        job_name,
        task_name,
        TRY_CAST(parts[1] AS BIGINT) AS task,
        TRY_CAST(unnest(parts[2:]) AS BIGINT) AS after
    FROM (
        SELECT job_name, task_name, string_split(regexp_extract(task_name, '^[A-Za-z]+(\d+(?:_\d+)*)', 1), '_') AS parts
        FROM stored.alibaba2018_batch_task
    )
    WHERE parts[1] <> '' AND len(parts) > 1
)
