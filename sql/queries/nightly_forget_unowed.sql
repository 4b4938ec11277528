-- query: forget what is owed for a version the lake does not hold (its ingest failed or never ran) or by a report the config no longer runs (parameter: the config's reports)
DELETE FROM meta.nightly_owed AS o
WHERE o.report NOT IN (SELECT unnest($1::VARCHAR[]))
   OR NOT EXISTS (
       SELECT 1 FROM meta.manifest AS m
       WHERE m.dataset = o.dataset AND m.name = o.name AND m.content_hash = o.content_hash AND m.status = 'ok'
   )
