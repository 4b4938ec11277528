-- audit: swf.manifest_matches_logs
-- description: The manifest and the lake agree on the SWF logs: each log whose last ingest is ok in meta.manifest is in swf.logs with the same content hash, and each log of swf.logs has a manifest row (a failed re-ingest keeps the previous copy, so its row says failed). A row here is a log on one side only, or with two fingerprints.
SELECT coalesce(m.name, l.log) AS log, m.status, m.content_hash AS manifest_hash, l.content_hash AS lake_hash
FROM (SELECT name, status, content_hash FROM meta.manifest WHERE dataset = 'swf') AS m
    FULL OUTER JOIN swf.logs AS l ON m.name = l.log
WHERE (m.status = 'ok' AND (l.log IS NULL OR m.content_hash IS DISTINCT FROM l.content_hash))
    OR (l.log IS NOT NULL AND m.name IS NULL)
