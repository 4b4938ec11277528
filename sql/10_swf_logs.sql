-- name: swf.logs
-- grain: one row per ingested SWF log
-- description: Each log's header: every key in `header` (repeated keys joined by newlines), numeric values parsed from their leading integer in `header_numeric` and in columns of their own (max_procs, unix_start_time, ...), the raw header text, the content hash, job lines read, jobs kept and lines quarantined. machine_size is the size given at ingest, else MaxProcs.
SELECT
    *,
    time_zone_string IN (SELECT name FROM pg_timezone_names()) AS time_zone_known
FROM read_parquet({swf_logs})
