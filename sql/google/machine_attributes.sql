-- name: google.machine_attributes
-- grain: one row per machine attribute change of the Google trace
-- description: The machine_attributes table typed by the official schema; time (microseconds, 0 = before the trace window, 2^63-1 = after it) and time_s in seconds and time_at the instant (600 s = 19:00 EDT on 1 May 2011; both NULL for the special values). attribute_value is a hash or an integer, kept as text. part = the source part.
SELECT
    *,
    google.seconds(time) AS time_s,
    google.instant(time) AS time_at,
    time = 0 AS before_trace,
    time = 9223372036854775807 AS after_trace
FROM stored.google_machine_attributes
