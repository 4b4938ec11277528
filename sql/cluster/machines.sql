-- name: cluster.machines
-- grain: one row per machine event of a trace that has machines (Google 2011 and 2019, Alibaba 2018)
-- description: Every trace's machines in one shape: trace, cell (Google 2019's cell; NULL elsewhere), machine_id (as text: each trace numbers its own), time_s (seconds of the trace's clock, cluster.traces; NULL for Google's times before or after the window), event (ADD, REMOVE, UPDATE; Alibaba: the machine's status), cpus and memory in the trace's units (cluster.traces; NULL where the event gives none). SWF logs have no machines.
SELECT 'google-2011' AS trace, NULL::VARCHAR AS cell, machine_id::VARCHAR AS machine_id, time_s, event, cpus, memory
FROM google.machine_events
UNION ALL
SELECT 'google-2019', cell, machine_id::VARCHAR, time_s, event, capacity_cpus, capacity_memory
FROM google2019.machine_events
UNION ALL
SELECT 'alibaba-2018', NULL, machine_id, time_stamp::DOUBLE, status, cpu_num::DOUBLE, mem_size::DOUBLE
FROM alibaba2018.machine_meta
