-- name: google2019.caveats
-- grain: one row per documented caveat of Google's 2019 trace and cell
-- description: How many rows each documented caveat touches in each ingested cell, and what the views do about it: machine ADD events without a capacity (google2019.machine_capacity keeps the last capacity given), usage rows of tasks inside alloc sets (left out of google2019.usage: their alloc instance's row counts them), events synthesized for missing data, times before or after the trace window (kept as flags, never as dates), and the rows quarantined.
SELECT cell, 'machine ADD without capacity' AS caveat, count(*) AS affected_rows,
       'google2019.machine_capacity carries the capacity last given' AS handling
FROM google2019.machine_events WHERE event = 'ADD' AND capacity_cpus IS NULL GROUP BY cell
UNION ALL
SELECT cell, 'usage of a task inside an alloc set (counted twice if summed)', count(*) FILTER (NOT top_level),
       'left out of google2019.usage'
FROM google2019.instance_usage GROUP BY cell
UNION ALL
SELECT cell, 'instance event synthesized for missing data', count(*) FILTER (missing_type <> 0),
       'kept; google2019.instance_events.missing names why'
FROM google2019.instance_events GROUP BY cell
UNION ALL
SELECT cell, 'collection event synthesized for missing data', count(*) FILTER (missing_type <> 0),
       'kept; google2019.collection_events.missing names why'
FROM google2019.collection_events GROUP BY cell
UNION ALL
SELECT cell, 'event before the trace window (time 0)', count(*) FILTER (before_trace),
       'kept with before_trace; time_s and time_at NULL'
FROM (SELECT cell, before_trace FROM google2019.instance_events UNION ALL
      SELECT cell, before_trace FROM google2019.collection_events UNION ALL
      SELECT cell, before_trace FROM google2019.machine_events) GROUP BY cell
UNION ALL
SELECT cell, 'event after the trace window (time 2^63-1)', count(*) FILTER (after_trace),
       'kept with after_trace; time_s and time_at NULL'
FROM (SELECT cell, after_trace FROM google2019.instance_events UNION ALL
      SELECT cell, after_trace FROM google2019.collection_events UNION ALL
      SELECT cell, after_trace FROM google2019.machine_events) GROUP BY cell
UNION ALL
SELECT split_part(part, '.', 1), 'row quarantined (' || table_name || ')', count(*), 'in google2019.quarantine with its reason'
FROM google2019.quarantine GROUP BY ALL
