-- name: cluster.usage
-- grain: one row per usage measurement of a task of a trace that measures usage (Google 2011 and 2019 windows, Alibaba 2018 batch instances)
-- description: Every trace's measured usage in one shape: trace, cell, job_id, task_id, machine_id (as text), job_number and task_number (as in cluster.tasks: the job and the task as numbers), start_s and end_s (seconds of the trace's clock: Google's 5-minute windows; Alibaba: a batch instance's life), cpu_mean, cpu_max, cpu_sample (one random second: Google only), cpu_p90 (Google 2019's 90th percentile of the window's seconds), memory_mean and memory_max, in the trace's units (cluster.traces; Alibaba's CPU turned to cores), and counted_once (false on Google 2019 rows of tasks inside an alloc set, whose alloc instance's row already holds them: sum only rows where it is true). SWF logs have no usage.
SELECT
    'google-2011' AS trace, NULL::VARCHAR AS cell, job_id::VARCHAR AS job_id, job_id AS job_number,
    task_index::VARCHAR AS task_id, task_index::BIGINT AS task_number, machine_id::VARCHAR AS machine_id, start_s,
    end_s, cpu_rate AS cpu_mean, maximum_cpu_rate AS cpu_max, sampled_cpu_usage AS cpu_sample, NULL::DOUBLE AS cpu_p90, canonical_memory_usage AS memory_mean,
    maximum_memory_usage AS memory_max, true AS counted_once
FROM google.task_usage
UNION ALL
SELECT
    'google-2019', cell, collection_id::VARCHAR, collection_id, instance_index::VARCHAR, instance_index,
    machine_id::VARCHAR, google2019.seconds(start_time), google2019.seconds(end_time), average_usage_cpus, maximum_usage_cpus,
    random_sample_usage_cpus, cpu_usage_distribution[10], average_usage_memory, maximum_usage_memory, top_level
FROM google2019.instance_usage
UNION ALL
SELECT
    'alibaba-2018', NULL, job_name, cluster.name_number(job_name), task_name, cluster.name_number(task_name), machine_id,
    start_time::DOUBLE, end_time::DOUBLE, cpu_avg / 100, cpu_max / 100, NULL, NULL, mem_avg, mem_max, true
FROM alibaba2018.batch_instance
