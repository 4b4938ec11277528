-- name: google.job_instances
-- grain: one row per job instance: a job id and the number of SUBMIT events seen for it so far
-- description: Jobs with their documented anomaly filtered: a job id may be reused after a restart (job 6253771429 is submitted twice in clusterdata-2011-2), so each SUBMIT starts a new instance (1, 2, ...) and the events up to the next SUBMIT belong to it. Per instance: submits (1 by construction, checked by google.audit_job_instances), events, submit and first schedule times, end (last FINISH, FAIL, KILL or LOST) and the final event, latest user and scheduling class. Events before the first SUBMIT (jobs already there when the trace began) form instance 0.
WITH numbered AS (
    SELECT
        *,
        (sum((event = 'SUBMIT')::INTEGER) OVER (
            PARTITION BY job_id ORDER BY time, event_type ROWS UNBOUNDED PRECEDING
        ))::INTEGER AS instance
    FROM google.job_events
)
SELECT
    job_id,
    instance,
    count(*) FILTER (event = 'SUBMIT') AS submits,
    count(*) AS events,
    min(time_s) FILTER (event = 'SUBMIT') AS submit_s,
    min(time_s) FILTER (event = 'SCHEDULE') AS first_schedule_s,
    max(time_s) FILTER (event IN ('FINISH', 'FAIL', 'KILL', 'LOST')) AS end_s,
    arg_max(event, (time, event_type)) AS final_event,
    arg_max(user, time) AS user,
    arg_max(scheduling_class, time) AS scheduling_class
FROM numbered
GROUP BY job_id, instance
