-- query: lines quarantined from the files a nightly run ingested, by reason ($1: SWF logs, $2: 'table/part' of Google parts)
SELECT 'swf' AS kind, log AS source, reason, count(*) AS lines
FROM swf.quarantine WHERE list_contains($1, log)
GROUP BY ALL
UNION ALL
SELECT 'google' AS kind, table_name AS source, reason, count(*) AS lines
FROM google.quarantine WHERE list_contains($2, table_name || '/' || part)
GROUP BY ALL
ORDER BY kind, source, lines DESC
