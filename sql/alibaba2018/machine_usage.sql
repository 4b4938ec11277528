-- name: alibaba2018.machine_usage
-- grain: one row per measurement of a machine of Alibaba's 2018 trace (about every 10 s, irregularly)
-- description: machine_usage as published: machine_id, time_stamp (s), cpu_util_percent and mem_util_percent (0-100; -1 and 101 mark invalid values, as in every percentage of the trace: abnormal_utilisation says so), mem_gps (normalized memory bandwidth), mkpi (cache misses per thousand instructions), net_in and net_out (normalized traffic, 0-100), disk_io_percent (0-100; -1 and 101 are the schema's abnormal values, kept and counted by alibaba2018.caveats, not to be averaged: abnormal_disk_io says so). Empty fields are NULL (mem_gps and mkpi are empty on most rows).
SELECT
    *,
    disk_io_percent IN (-1, 101) AS abnormal_disk_io,
    cpu_util_percent IN (-1, 101) OR mem_util_percent IN (-1, 101) AS abnormal_utilisation
FROM stored.alibaba2018_machine_usage
