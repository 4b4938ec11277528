-- query: a nightly run ends: its status, counts, reports (run, failed, skipped), step names and their seconds, errors, its page (NULL for a quiet night)
UPDATE meta.nightly_runs
SET finished_at = $1, status = $2, files_seen = $3, files_ingested = $4, files_skipped = $5, files_failed = $6,
    reports_run = $7, reports_failed = $8, reports_skipped = $14, seconds = map($9::VARCHAR[], $10::DOUBLE[]), errors = $11, report = $13
WHERE run = $12
