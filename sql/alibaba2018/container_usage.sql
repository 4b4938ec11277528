-- name: alibaba2018.container_usage
-- grain: one row per measurement of a container of Alibaba's 2018 trace
-- description: container_usage as published: container_id, machine_id, time_stamp (s), cpu_util_percent (relative to the container's CPU request, so it may exceed 100), mem_util_percent, cpi, mem_gps, mpki, net_in, net_out, disk_io_percent (-1 and 101 abnormal: abnormal_disk_io).
SELECT *, disk_io_percent IN (-1, 101) AS abnormal_disk_io FROM stored.alibaba2018_container_usage
