-- name: google2019.collections
-- grain: one row per collection (a job or an alloc set) of a cell of Google's 2019 trace
-- description: Per collection of google2019.collection_events: collection (JOB or ALLOC_SET), user, names, parent_collection_id (0: none), start_after_collection_ids, alloc_collection_id (the alloc set a job runs in; 0: none); its events (count), submit_s, first_schedule_s and end_s (the last FINISH, FAIL, KILL or LOST) in trace seconds (NULL where the event was before or after the trace window), the final event; the latest priority with its tier and latency_sensitivity, vertical_scaling and scheduler codes; before_trace (there before the window) and ended.
SELECT
    cell,
    collection_id,
    arg_max(collection, time) AS collection,
    arg_max("user", time) FILTER ("user" IS NOT NULL) AS "user",
    arg_max(collection_name, time) FILTER (collection_name IS NOT NULL) AS collection_name,
    arg_max(collection_logical_name, time) FILTER (collection_logical_name IS NOT NULL) AS collection_logical_name,
    arg_max(parent_collection_id, time) AS parent_collection_id,
    arg_max(start_after_collection_ids, time) AS start_after_collection_ids,
    arg_max(alloc_collection_id, time) AS alloc_collection_id,
    count(*) AS events,
    min(time_s) FILTER (event = 'SUBMIT') AS submit_s,
    min(time_s) FILTER (event = 'SCHEDULE') AS first_schedule_s,
    max(time_s) FILTER (event IN ('FINISH', 'FAIL', 'KILL', 'LOST')) AS end_s,
    arg_max(event, (time, type)) AS final_event,  -- the same instant: the later code (SUBMIT < ... < FINISH)
    arg_max(priority, time) AS priority,
    google2019.tier(arg_max(priority, time)) AS tier,
    arg_max(latency_sensitivity, time) AS latency_sensitivity,
    arg_max(vertical_scaling, time) AS vertical_scaling,
    arg_max(scheduler, time) AS scheduler,
    bool_or(before_trace) AS before_trace,
    bool_or(event IN ('FINISH', 'FAIL', 'KILL', 'LOST')) AS ended
FROM google2019.collection_events
GROUP BY cell, collection_id
