-- query: every nightly run, newest first; `lakehouse nightly --history` (a lake whose catalog predates reports_skipped has no such column until its next write: COLUMNS takes the report lists it has)
SELECT run, status, started_at, finished_at, files_seen, files_ingested, files_skipped, files_failed,
       COLUMNS(c -> c IN ('reports_run', 'reports_failed', 'reports_skipped')), errors, report
FROM meta.nightly_runs
ORDER BY started_at DESC, run DESC
