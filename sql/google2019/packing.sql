-- name: google2019.packing
-- grain: one row per cell of Google's 2019 trace
-- description: How much a cell gains from packing instances whose peaks do not coincide, over its top-level usage windows (google2019.usage, 5-minute buckets of the trace clock): sum_of_peaks = the sum over instances of each one's highest mean CPU in a window; peak_of_sum = the highest total mean CPU of the cell in a bucket; sharing_gain = sum_of_peaks / peak_of_sum (1: every instance peaks at once; more: capacity provisioned per instance at its peak is that many times what the cell ever used at once). The same with each window's in-window peak (maximum_usage_cpus): sum_of_max_peaks and peak_of_sum_of_max. instances and buckets counted.
WITH windows AS (
    SELECT cell, collection_id, instance_index, start_time // 300000000 AS bucket,
           average_usage_cpus AS mean_cpu, maximum_usage_cpus AS max_cpu
    FROM google2019.usage
    WHERE NOT google2019.special_time(start_time)
),
per_instance AS (
    SELECT cell, max(mean_cpu) AS peak_mean, max(max_cpu) AS peak_max
    FROM windows GROUP BY cell, collection_id, instance_index
),
per_bucket AS (
    SELECT cell, sum(mean_cpu) AS total_mean, sum(max_cpu) AS total_max FROM windows GROUP BY cell, bucket
)
SELECT
    i.cell,
    i.instances,
    b.buckets,
    i.sum_of_peaks,
    b.peak_of_sum,
    i.sum_of_peaks / nullif(b.peak_of_sum, 0) AS sharing_gain,
    i.sum_of_max_peaks,
    b.peak_of_sum_of_max
FROM (SELECT cell, count(*) AS instances, sum(peak_mean) AS sum_of_peaks, sum(peak_max) AS sum_of_max_peaks
      FROM per_instance GROUP BY cell) AS i
JOIN (SELECT cell, count(*) AS buckets, max(total_mean) AS peak_of_sum, max(total_max) AS peak_of_sum_of_max
      FROM per_bucket GROUP BY cell) AS b USING (cell)
ORDER BY i.cell
