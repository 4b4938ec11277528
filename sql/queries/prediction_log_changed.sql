-- query: an imported prediction table's log whose file changed since the import: (the log's SHA-256 then, now), or no row (parameters: table name, log)
SELECT DISTINCT p.log_content_hash, m.content_hash
FROM analysis.imported_predictions p
LEFT JOIN meta.manifest m ON m.dataset = 'swf' AND m.name = p.log
WHERE p.name = $1 AND p.log = $2 AND p.log_content_hash IS NOT NULL
  AND p.log_content_hash IS DISTINCT FROM m.content_hash
LIMIT 1
