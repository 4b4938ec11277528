-- query: the reports owed for versions the lake holds (a row whose version was never ingested, or failed, is not), by report
SELECT o.report, o.dataset, o.name
FROM meta.nightly_owed AS o
JOIN meta.manifest AS m USING (dataset, name, content_hash)
WHERE m.status = 'ok'
ORDER BY ALL
