-- name: google.tasks
-- grain: one row per task (job_id, task_index) seen in google.task_events
-- description: Per task: its events (count, first and last, in trace seconds; NULL where the event happened before or after the trace window), submit time, first schedule, end (last FINISH, FAIL, KILL or LOST) and lifetime = end - first schedule; the latest non-null CPU, memory and disk requests, scheduling class and priority; the final event; whether it was already there before the trace window (first event at time 0) and whether it ended; high_slo = latest scheduling class 2 or 3 (the highest service-level classes of the trace), long_running = there before the trace window and never ended (a service running through the whole trace).
SELECT
    *,
    google.high_slo(scheduling_class) AS high_slo,
    before_trace AND NOT ended AS long_running
FROM (
    SELECT
        job_id,
        task_index,
        count(*) AS events,
        min(time_s) AS first_event_s,
        max(time_s) AS last_event_s,
        min(time_s) FILTER (event = 'SUBMIT') AS submit_s,
        min(time_s) FILTER (event = 'SCHEDULE') AS first_schedule_s,
        max(time_s) FILTER (event IN ('FINISH', 'FAIL', 'KILL', 'LOST')) AS end_s,
        end_s - first_schedule_s AS lifetime_s,
        arg_max(cpu_request, time) FILTER (cpu_request IS NOT NULL) AS cpu_request,
        arg_max(memory_request, time) FILTER (memory_request IS NOT NULL) AS memory_request,
        arg_max(disk_space_request, time) FILTER (disk_space_request IS NOT NULL) AS disk_space_request,
        arg_max(scheduling_class, time) FILTER (scheduling_class IS NOT NULL) AS scheduling_class,
        arg_max(priority, time) FILTER (priority IS NOT NULL) AS priority,
        arg_max(event, (time, event_type)) AS final_event,  -- same instant: SUBMIT < SCHEDULE < ... < FINISH
        bool_or(before_trace) AS before_trace,
        bool_or(event IN ('FINISH', 'FAIL', 'KILL', 'LOST')) AS ended
    FROM google.task_events
    GROUP BY job_id, task_index
)
