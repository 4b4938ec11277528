-- query: every committed output's fingerprint and status (the nightly run compares its inbox with them)
SELECT dataset, name, content_hash, status FROM meta.manifest
