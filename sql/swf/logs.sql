-- name: swf.logs
-- grain: one row per ingested SWF log
-- description: Each log's header: every key in `header` (repeated keys joined by newlines), numeric values parsed from their leading integer in `header_numeric` and in columns of their own (max_procs, unix_start_time, ...), the raw header text, the content hash, job lines read, jobs kept and lines quarantined. machine_size is the size given at ingest, else MaxProcs. clean_machine_size and strong_machine_size are the sizes swf.jobs_clean and swf.jobs_strong are filtered with (hence a replay's default machine): the size given at ingest first for the canonical cleaning, MaxProcs first for the SC'15 strong filter, as its published runs used.
SELECT
    *,
    coalesce(machine_size, max_procs) AS clean_machine_size,
    coalesce(max_procs, machine_size) AS strong_machine_size,
    time_zone_string IN (SELECT name FROM pg_timezone_names()) AS time_zone_known
FROM stored.swf_logs
