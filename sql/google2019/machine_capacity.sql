-- name: google2019.machine_capacity
-- grain: one row per machine event of a cell of Google's 2019 trace, with the span it holds for
-- description: Each machine's capacity over time: from_time to until_time (the machine's next event; NULL after its last) the machine is present (false after a REMOVE) with capacity_cpus and capacity_memory as its latest event that gave one says (capacity_given false when this event gave none: 459 ADD rows of cell a carry no capacity). Times in microseconds of the trace.
SELECT
    cell,
    machine_id,
    time AS from_time,
    lead(time) OVER per_machine AS until_time,
    event,
    event <> 'REMOVE' AS present,
    capacity_cpus IS NOT NULL AS capacity_given,
    last_value(capacity_cpus IGNORE NULLS) OVER per_machine AS capacity_cpus,
    last_value(capacity_memory IGNORE NULLS) OVER per_machine AS capacity_memory,
    platform_id,
    switch_id
FROM google2019.machine_events
WINDOW per_machine AS (PARTITION BY cell, machine_id ORDER BY time, shard, line)
