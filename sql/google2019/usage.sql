-- name: google2019.usage
-- grain: one row per measurement window of a top-level instance of Google's 2019 trace
-- description: The usage windows to sum: google2019.instance_usage without the rows of tasks inside an alloc set, whose usage their alloc instance's row already includes (summing every row counts it twice; the official colab keeps these rows too). With the window's CPU percentiles by name (p0 ... p100 from cpu_usage_distribution, p91 ... p99 from the tail) and its mean (average_usage_cpus) and 1-second random sample (random_sample_usage_cpus), the two inputs of the 2011 volatility method.
SELECT
    cell, collection_id, instance_index, machine_id, collection_type, collection,
    start_time, end_time, window_s, start_at, local_start,
    average_usage_cpus, maximum_usage_cpus, random_sample_usage_cpus, average_usage_memory, maximum_usage_memory,
    assigned_memory, page_cache_memory, sample_rate,
    cpu_usage_distribution[1] AS p0, cpu_usage_distribution[2] AS p10, cpu_usage_distribution[3] AS p20,
    cpu_usage_distribution[4] AS p30, cpu_usage_distribution[5] AS p40, cpu_usage_distribution[6] AS p50,
    cpu_usage_distribution[7] AS p60, cpu_usage_distribution[8] AS p70, cpu_usage_distribution[9] AS p80,
    cpu_usage_distribution[10] AS p90, cpu_usage_distribution[11] AS p100,
    tail_cpu_usage_distribution[1] AS p91, tail_cpu_usage_distribution[5] AS p95,
    tail_cpu_usage_distribution[9] AS p99,
    cpu_usage_distribution, tail_cpu_usage_distribution,
    shard, line
FROM google2019.instance_usage
WHERE top_level
