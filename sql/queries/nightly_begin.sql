-- query: a nightly run starts (run, started_at, inbox, pid, report)
INSERT INTO meta.nightly_runs (run, started_at, status, inbox, pid, report) VALUES ($1, $2, 'running', $3, $4, $5)
