-- name: cluster.jobs
-- grain: one row per job of every trace (an SWF log's job, a Google 2011 job, a Google 2019 job collection, an Alibaba 2018 batch job)
-- description: Every trace's jobs in one shape: trace, cell (the SWF log; Google 2019's cell), job_id (as text), job_number (as in cluster.tasks: the job as a number), user, submit_s, start_s and end_s (seconds of the trace's clock; SWF: submit + wait and + run; Google 2011: the job's first SUBMIT and SCHEDULE and last FINISH, FAIL, KILL or LOST), priority (Google 2011: its tasks' highest) and tier (Google 2019: the tier by our documented rule), processors (SWF: allocated, else requested), tasks (cluster.tasks of the job; SWF: NULL; Google 2011: NULL without task_events), depends_on (the jobs it waits for where the trace says: Google 2019's start_after_collection_ids; Alibaba's dependencies are between tasks, in alibaba2018.dag_edges), name (the job's logical name where the trace gives one: Google's; a name recurs across a workflow's runs). NULL where the trace lacks it: Alibaba gives no user and no submit time, SWF no priority.
WITH task_counts AS (
    SELECT trace, cell, job_id, job_number, count(*) AS tasks, min(submit_s) AS submit_s, min(start_s) AS start_s,
           max(end_s) AS end_s, bool_and(end_s IS NOT NULL) AS all_ended, max(priority) AS priority
    FROM cluster.tasks
    GROUP BY ALL
)
SELECT
    'swf' AS trace, log AS cell, job_id::VARCHAR AS job_id, job_id::BIGINT AS job_number, user_id::VARCHAR AS "user",
    submit_time::DOUBLE AS submit_s, (submit_time + wait_time)::DOUBLE AS start_s, (submit_time + wait_time + run_time)::DOUBLE AS end_s,
    NULL::INTEGER AS priority, NULL::VARCHAR AS tier, procs AS processors, NULL::BIGINT AS tasks,
    CASE WHEN preceding_job_id IS NOT NULL THEN [preceding_job_id::VARCHAR] END AS depends_on, NULL::VARCHAR AS name
FROM swf.jobs
UNION ALL
SELECT
    'google-2011', NULL, j.job_id::VARCHAR, j.job_id, j."user", j.submit_s, j.start_s, j.end_s, t.priority, NULL, NULL, t.tasks, NULL, j.name
FROM (
    SELECT
        job_id,
        arg_max("user", time) AS "user",
        arg_max(logical_job_name, time) AS name,
        min(time_s) FILTER (event = 'SUBMIT') AS submit_s,
        min(time_s) FILTER (event = 'SCHEDULE') AS start_s,
        max(time_s) FILTER (event IN ('FINISH', 'FAIL', 'KILL', 'LOST')) AS end_s
    FROM google.job_events
    GROUP BY job_id
) AS j
LEFT JOIN task_counts AS t ON t.trace = 'google-2011' AND t.job_number = j.job_id
UNION ALL
SELECT
    'google-2019', c.cell, c.collection_id::VARCHAR, c.collection_id, c."user", c.submit_s, c.first_schedule_s, c.end_s,
    c.priority, c.tier, NULL, t.tasks, CASE WHEN len(c.start_after_collection_ids) > 0 THEN c.start_after_collection_ids::VARCHAR[] END,
    c.collection_logical_name
FROM google2019.collections AS c
LEFT JOIN task_counts AS t ON t.trace = 'google-2019' AND t.cell = c.cell AND t.job_number = c.collection_id
WHERE c.collection = 'JOB'
UNION ALL
SELECT 'alibaba-2018', NULL, job_id, job_number, NULL, NULL, start_s, CASE WHEN all_ended THEN end_s END, NULL, NULL, NULL, tasks, NULL, NULL
FROM task_counts
WHERE trace = 'alibaba-2018'
