-- name: cluster.tasks
-- grain: one row per task of a trace that has tasks (Google 2011 tasks, Google 2019 tasks of jobs, Alibaba 2018 batch tasks)
-- description: Every trace's tasks in one shape: trace, cell (Google 2019), job_id and task_id (as text), job_number and task_number (the job and the task as numbers, for joins and filters that must be quick: Google's own; Alibaba: cluster.name_number of the names), submit_s, start_s (first scheduled; Alibaba: started), end_s (the last FINISH, FAIL, KILL or LOST; Alibaba: where its end_time is usable), cpu_request and memory_request in the trace's units (Alibaba's plan_cpu turned to cores), priority, scheduling_class (Google: the latency sensitivity, 0-3; high_slo = 2 or 3 in the 2011 study), in_alloc (Google 2019: the task runs inside an alloc set, whose usage row already counts it), instances (Alibaba: instance_num; 1 elsewhere), long_running (Google: the task was there before the trace window and never ended, a service running through the whole trace). NULL where the trace lacks it: Alibaba gives no submit time, no priority, and no task there before its start. SWF jobs are in cluster.jobs only.
SELECT
    'google-2011' AS trace, NULL::VARCHAR AS cell, job_id::VARCHAR AS job_id, job_id AS job_number,
    task_index::VARCHAR AS task_id, task_index::BIGINT AS task_number, submit_s, first_schedule_s AS start_s, end_s,
    cpu_request, memory_request, priority::INTEGER AS priority, scheduling_class::INTEGER AS scheduling_class,
    false AS in_alloc, 1::BIGINT AS instances, long_running
FROM google.tasks
UNION ALL
SELECT
    'google-2019', cell, collection_id::VARCHAR, collection_id, instance_index::VARCHAR, instance_index, submit_s,
    first_schedule_s, end_s, cpu_request, memory_request, priority, scheduling_class, alloc_collection_id <> 0, 1,
    long_running
FROM google2019.instances
WHERE collection = 'JOB'
UNION ALL
SELECT
    'alibaba-2018', NULL, job_name, cluster.name_number(job_name), task_name, cluster.name_number(task_name), NULL,
    start_time::DOUBLE, CASE WHEN ended THEN end_time::DOUBLE END, plan_cpu / 100, plan_mem, NULL, NULL, false,
    instance_num, NULL
FROM alibaba2018.batch_task
