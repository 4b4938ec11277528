-- audit: analysis.imported_predictions
-- description: A prediction table holds the SHA-256 of each log's file as it was when the table was imported; a row here is a table whose log has been ingested again from other content since, so that its job ids may name other jobs (a replay refuses it: import the table again).
SELECT DISTINCT p.name, p.log, p.log_content_hash AS imported_for, m.content_hash AS ingested_now
FROM analysis.imported_predictions p
LEFT JOIN meta.manifest m ON m.dataset = 'swf' AND m.name = p.log
WHERE p.log_content_hash IS NOT NULL AND p.log_content_hash IS DISTINCT FROM m.content_hash
