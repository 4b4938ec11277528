-- name: alibaba2018.caveats
-- grain: one row per documented quirk of Alibaba's 2018 trace
-- description: Each known quirk, counted on what was ingested (caveat, table_name, affected_rows, of_rows): batch tasks with end_time 0 (the trace's mark for a time before or after its 8 days) and with end_time before start_time; disk_io_percent at the trace's invalid-value marks -1 and 101 (machines and containers), and machines' CPU or memory utilisation at them; machine_usage rows sampled more than 10 s after their machine's previous sample (the sampling is irregular: 10 s is the shortest step); machine_usage rows without mem_gps or mkpi; task names cut short (a trailing '_': dependencies lost); DAG self-cycles in task names; batch tasks whose name carries no DAG information; machine_meta rows without failure_domain_2. Container submit times are not in the trace at all (no row).
SELECT * FROM (VALUES
    ('batch task with end_time 0', 'batch_task',
     (SELECT count(*) FILTER (end_time = 0) FROM alibaba2018.batch_task), (SELECT count(*) FROM alibaba2018.batch_task)),
    ('batch task ending before it starts', 'batch_task',
     (SELECT count(*) FILTER (end_time > 0 AND end_time < start_time) FROM alibaba2018.batch_task),
     (SELECT count(*) FROM alibaba2018.batch_task)),
    ('batch task name without DAG information', 'batch_task',
     (SELECT count(*) FILTER (task_number IS NULL) FROM alibaba2018.batch_task), (SELECT count(*) FROM alibaba2018.batch_task)),
    ('batch task name cut short (ends with _)', 'batch_task',
     (SELECT count(*) FILTER (task_name LIKE '%\_' ESCAPE '\') FROM alibaba2018.batch_task),
     (SELECT count(*) FROM alibaba2018.batch_task)),
    ('DAG self-cycle (a task named after itself)', 'batch_task',
     (SELECT count(*) FILTER (self_cycle) FROM alibaba2018.dag_edges), (SELECT count(*) FROM alibaba2018.dag_edges)),
    ('abnormal disk_io_percent (-1 or 101)', 'machine_usage',
     (SELECT count(*) FILTER (abnormal_disk_io) FROM alibaba2018.machine_usage), (SELECT count(*) FROM alibaba2018.machine_usage)),
    ('abnormal CPU or memory utilisation (-1 or 101)', 'machine_usage',
     (SELECT count(*) FILTER (abnormal_utilisation) FROM alibaba2018.machine_usage),
     (SELECT count(*) FROM alibaba2018.machine_usage)),
    ('machine usage sampled more than 10 s after the machine''s previous sample', 'machine_usage',
     (SELECT count(*) FILTER (gap_s > 10) FROM (
         SELECT time_stamp - lag(time_stamp) OVER (PARTITION BY machine_id ORDER BY time_stamp) AS gap_s
         FROM alibaba2018.machine_usage)),
     (SELECT count(*) FROM alibaba2018.machine_usage)),
    ('machine usage without mem_gps or mkpi', 'machine_usage',
     (SELECT count(*) FILTER (mem_gps IS NULL OR mkpi IS NULL) FROM alibaba2018.machine_usage),
     (SELECT count(*) FROM alibaba2018.machine_usage)),
    ('abnormal disk_io_percent (-1 or 101)', 'container_usage',
     (SELECT count(*) FILTER (abnormal_disk_io) FROM alibaba2018.container_usage), (SELECT count(*) FROM alibaba2018.container_usage)),
    ('machine without failure_domain_2', 'machine_meta',
     (SELECT count(*) FILTER (failure_domain_2 IS NULL) FROM alibaba2018.machine_meta), (SELECT count(*) FROM alibaba2018.machine_meta))
) AS t(caveat, table_name, affected_rows, of_rows)
