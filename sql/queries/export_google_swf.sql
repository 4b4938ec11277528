-- query: the Google lake's jobs as SWF fields ($1: 'tasks' or 'cpu' processors, $2: cores per machine), one row per job (the SWF fields it knows: the others are written -1); rules in `lakehouse export google-swf --help`
WITH
job AS (
    -- Times in seconds of the trace clock, whose 600 s is the trace's start; 0 ("before the trace") is the start.
    SELECT job_id,
           min(CASE WHEN event = 'SUBMIT' THEN greatest(coalesce(time_s, 600), 600) - 600 END) AS submit,
           min(CASE WHEN event = 'SCHEDULE' THEN greatest(coalesce(time_s, 600), 600) - 600 END) AS first_schedule,
           arg_max(event, time) FILTER (WHERE event IN ('FINISH', 'FAIL', 'KILL', 'LOST', 'EVICT')
                                        AND NOT after_trace) AS final_event,
           any_value(user) AS user,
           any_value(scheduling_class) AS scheduling_class,
           any_value(logical_job_name) AS logical_job_name
    FROM google.job_events
    WHERE NOT after_trace
    GROUP BY job_id
),
task AS (
    SELECT job_id, task_index,
           arg_min(cpu_request, time) FILTER (WHERE event = 'SUBMIT') AS cpu_request,
           max(CASE WHEN event IN ('FINISH', 'FAIL', 'KILL', 'LOST', 'EVICT') THEN time_s - 600 END) AS task_end
    FROM google.task_events
    WHERE NOT after_trace
    GROUP BY job_id, task_index
),
per_job AS (
    SELECT job_id, count(*) AS tasks, sum(cpu_request) AS cpu, max(task_end) AS last_task_end
    FROM task GROUP BY job_id
),
rows AS (
    SELECT j.*, t.tasks, t.cpu, t.last_task_end,
           CASE WHEN $1 = 'cpu' THEN greatest(1, ceil(t.cpu * $2))::BIGINT ELSE t.tasks END AS procs
    FROM job AS j JOIN per_job AS t USING (job_id)
    WHERE j.submit IS NOT NULL
)
SELECT
    row_number() OVER (ORDER BY submit, job_id) AS job_id,
    round(submit)::BIGINT AS submit_time,
    coalesce(round(first_schedule - submit)::BIGINT, -1) AS wait_time,
    CASE WHEN final_event IS NOT NULL AND first_schedule IS NOT NULL AND last_task_end >= first_schedule
         THEN round(last_task_end - first_schedule)::BIGINT ELSE -1 END AS run_time,
    coalesce(procs, -1) AS alloc_procs,
    coalesce(procs, -1) AS req_procs,
    CASE final_event WHEN 'FINISH' THEN 1 WHEN 'KILL' THEN 5 WHEN 'FAIL' THEN 0 WHEN 'LOST' THEN 0
                     WHEN 'EVICT' THEN 0 ELSE -1 END AS status,
    coalesce(dense_rank() OVER (ORDER BY user), -1) AS user_id,
    coalesce(dense_rank() OVER (ORDER BY logical_job_name), -1) AS executable_id,
    coalesce(scheduling_class, -1) AS queue_id,
    job_id AS google_job_id
FROM rows
ORDER BY submit_time, google_job_id
