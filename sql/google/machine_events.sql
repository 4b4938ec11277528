-- name: google.machine_events
-- grain: one row per machine event of the Google trace
-- description: The machine_events table typed by the official schema; time (microseconds, 0 = before the trace window, 2^63-1 = after it), time_s in seconds and time_at the instant (600 s = 19:00 EDT on 1 May 2011; both NULL for the special values), event = ADD, REMOVE or UPDATE; cpus and memory are normalized capacities. part = the source part.
SELECT
    *,
    google.seconds(time) AS time_s,
    google.instant(time) AS time_at,
    time = 0 AS before_trace,
    time = 9223372036854775807 AS after_trace,
    ['ADD', 'REMOVE', 'UPDATE'][event_type + 1] AS event
FROM stored.google_machine_events
