-- name: google.task_constraints
-- grain: one row per task placement constraint of the Google trace
-- description: The task_constraints table typed by the official schema; time (microseconds, 0 = before the trace window, 2^63-1 = after it), time_s in seconds and time_at the instant (600 s = 19:00 EDT on 1 May 2011; both NULL for the special values), operator = EQUAL, NOT_EQUAL, LESS_THAN or GREATER_THAN. part = the source part.
SELECT
    *,
    google.seconds(time) AS time_s,
    google.instant(time) AS time_at,
    time = 0 AS before_trace,
    time = 9223372036854775807 AS after_trace,
    ['EQUAL', 'NOT_EQUAL', 'LESS_THAN', 'GREATER_THAN'][comparison_operator + 1] AS operator
FROM stored.google_task_constraints
