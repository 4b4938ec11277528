-- name: google2019.machine_events
-- grain: one row per machine event of a cell of Google's 2019 trace
-- description: The machine_events table of every ingested cell, decoded (quoted integers read, left-out fields given the proto's default; a left-out capacity stays NULL). time in microseconds (0 = before the trace window, 2^63-1 = after it: before_trace and after_trace say so, time_s and time_at are NULL for them), time_at the instant, local_time the wall clock of the cell; event = ADD, REMOVE or UPDATE; capacity_cpus and capacity_memory in the trace's normalized units (NCU, the same scale in all eight cells, not 2011's). cell, shard and line say where the row came from.
SELECT *, google2019.machine_event_name(type) AS event
FROM google2019.timed_events('stored.google2019_machine_events')
