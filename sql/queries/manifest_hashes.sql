-- query: every committed output's fingerprint, status and source (the nightly run compares its inbox with them)
SELECT dataset, name, content_hash, status, source FROM meta.manifest
