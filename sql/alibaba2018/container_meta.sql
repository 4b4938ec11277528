-- name: alibaba2018.container_meta
-- grain: one row per container event of Alibaba's 2018 trace (the container and its state at time_stamp)
-- description: container_meta as published (schema.txt's order, not trace_2018.md's): container_id, machine_id (its host), time_stamp (s), app_du (the deploy unit: containers of one service), status, cpu_request and cpu_limit (100 is one core), mem_size (normalized, 0-100). The trace gives no submit time for containers.
SELECT * FROM stored.alibaba2018_container_meta
