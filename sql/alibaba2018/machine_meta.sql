-- name: alibaba2018.machine_meta
-- grain: one row per machine event (added, or its status changed) of Alibaba's 2018 trace
-- description: machine_meta as published (column order of schema.txt): machine_id, time_stamp (seconds from the trace's start), failure_domain_1 and failure_domain_2 (two levels of failure domain; failure_domain_2 is empty on some rows), cpu_num (cores), mem_size (normalized, 0-100), status (USING, ...). part and line say where the row came from.
SELECT * FROM stored.alibaba2018_machine_meta
