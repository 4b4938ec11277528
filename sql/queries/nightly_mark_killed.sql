-- query: nightly runs left 'running' by a process that no longer runs: failed, with the reason ($1)
UPDATE meta.nightly_runs
SET status = 'failed', errors = list_append(coalesce(errors, []), $1)
WHERE status = 'running'
