-- name: google2019.instance_usage
-- grain: one row per measurement window (usually 300 s) of an instance of Google's 2019 trace
-- description: The instance_usage table of every ingested cell, decoded: window start_time and end_time (microseconds), usage in normalized units (average, maximum, random 1-second sample), and the CPU histograms of the window's ~1 Hz samples: cpu_usage_distribution holds the 0th, 10th, ..., 100th percentiles (11 values) and tail_cpu_usage_distribution the 91st ... 99th (9). top_level is false for a task inside an alloc set: the alloc instance's own row already counts its usage, so sum usage over top-level rows only (google2019.usage does).
SELECT
    *,
    google2019.instant(start_time) AS start_at,
    google2019.local_time(start_time, cell) AS local_start,
    (end_time - start_time) / 1e6 AS window_s,
    alloc_collection_id = 0 AS top_level,
    google2019.collection_type_name(collection_type) AS collection
FROM stored.google2019_instance_usage
