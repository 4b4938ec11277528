-- name: google2019.instances
-- grain: one row per instance (a task or an alloc instance) of a cell of Google's 2019 trace
-- description: Per instance (cell, collection_id, instance_index) of google2019.instance_events: collection (JOB: a task; ALLOC_SET: an alloc instance), alloc_collection_id and alloc_instance_index (the alloc instance a task runs in; 0 and -1: none); its events, submit_s, first_schedule_s, end_s (the last FINISH, FAIL, KILL or LOST), evictions, machines it ran on (SCHEDULE events' distinct machines), the final event; the latest CPU and memory requests, priority, scheduling class (its latency sensitivity, 0-3 as in 2011) and tier; before_trace and ended; long_running = there before the trace window and never ended.
SELECT *, before_trace AND NOT ended AS long_running
FROM (
    SELECT
        cell,
        collection_id,
        instance_index,
        arg_max(collection, time) AS collection,
        arg_max(alloc_collection_id, time) AS alloc_collection_id,
        arg_max(alloc_instance_index, time) AS alloc_instance_index,
        count(*) AS events,
        min(time_s) FILTER (event = 'SUBMIT') AS submit_s,
        min(time_s) FILTER (event = 'SCHEDULE') AS first_schedule_s,
        max(time_s) FILTER (event IN ('FINISH', 'FAIL', 'KILL', 'LOST')) AS end_s,
        count(*) FILTER (event = 'EVICT') AS evictions,
        count(DISTINCT machine_id) FILTER (event = 'SCHEDULE') AS machines,
        arg_max(event, (time, type)) AS final_event,
        arg_max(resource_request_cpus, time) FILTER (resource_request_cpus IS NOT NULL) AS cpu_request,
        arg_max(resource_request_memory, time) FILTER (resource_request_memory IS NOT NULL) AS memory_request,
        arg_max(priority, time) AS priority,
        arg_max(scheduling_class, time) FILTER (scheduling_class IS NOT NULL) AS scheduling_class,
        google2019.tier(arg_max(priority, time)) AS tier,
        bool_or(before_trace) AS before_trace,
        bool_or(event IN ('FINISH', 'FAIL', 'KILL', 'LOST')) AS ended
    FROM google2019.instance_events
    GROUP BY cell, collection_id, instance_index
)
