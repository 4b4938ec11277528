-- name: google2019.machine_attributes
-- grain: one row per machine attribute value set (or deleted) in a cell of Google's 2019 trace
-- description: The machine_attributes table of every ingested cell: at time 0 a machine's initial value of the attribute `name` (obfuscated), later its updates; deleted = the attribute was removed then (value NULL). cell, shard and line say where the row came from.
SELECT
    *,
    google2019.seconds(time) AS time_s,
    google2019.instant(time) AS time_at,
    time = 0 AS before_trace
FROM stored.google2019_machine_attributes
