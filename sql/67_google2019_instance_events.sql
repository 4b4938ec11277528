-- name: google2019.instance_events
-- grain: one row per instance event (a task or an alloc instance) of a cell of Google's 2019 trace
-- description: The instance_events table of every ingested cell, decoded as google2019.collection_events (event, collection, tier, missing, latency_sensitivity by name); machine_id 0 = not on a machine, -1 = a dedicated machine; alloc_collection_id 0 = a task outside an alloc set; resource_request_cpus and resource_request_memory NULL when the event carries no request. Its constraints are in google2019.instance_constraints.
SELECT
    *,
    google2019.seconds(time) AS time_s,
    google2019.instant(time) AS time_at,
    google2019.local_time(time, cell) AS local_time,
    time = 0 AS before_trace,
    time = 9223372036854775807 AS after_trace,
    google2019.event_name(type) AS event,
    google2019.collection_type_name(collection_type) AS collection,
    google2019.tier(priority) AS tier,
    google2019.missing_type_name(missing_type) AS missing,
    google2019.latency_sensitivity_name(scheduling_class) AS latency_sensitivity
FROM read_parquet({google2019_instance_events})
