-- name: google2019.collection_events
-- grain: one row per collection event (a job or an alloc set) of a cell of Google's 2019 trace
-- description: The collection_events table of every ingested cell, decoded: event by name (the 2019 codes, not 2011's: SCHEDULE is 3, FINISH 6), collection = JOB or ALLOC_SET, tier from the raw priority (free <= 99, best-effort batch 100-115, mid 116-119, production 120-359, monitoring >= 360: docs/google-2019.md says why), missing by name, latency_sensitivity for scheduling_class, alloc_collection_id 0 for a job outside an alloc set, start_after_collection_ids the collections it waits for. Times as in google2019.machine_events.
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
FROM read_parquet({google2019_collection_events})
