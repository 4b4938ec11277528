-- query: every nightly run, newest first; `lakehouse nightly --history`
SELECT run, status, started_at, finished_at, files_seen, files_ingested, files_skipped, files_failed,
       reports_run, reports_failed, errors, report
FROM meta.nightly_runs
ORDER BY started_at DESC, run DESC
