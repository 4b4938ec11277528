-- name: alibaba2018.batch_instance
-- grain: one row per instance of a task of a batch job of Alibaba's 2018 trace
-- description: batch_instance as published: instance_name, task_name, job_name, task_type, status, start_time and end_time (s), machine_id, seq_no and total_seq_no, cpu_avg and cpu_max (100 is one core), mem_avg and mem_max (normalized).
SELECT * FROM stored.alibaba2018_batch_instance
