-- query: a report owed for one version of an input, recorded before the run ingests it (parameters: report, dataset, name, content hash, run); a MERGE, as nightly_remember_file
MERGE INTO meta.nightly_owed AS o
USING (SELECT $1 AS report, $2 AS dataset, $3 AS name, $4 AS content_hash, $5 AS owed_since) AS n
ON o.report = n.report AND o.dataset = n.dataset AND o.name = n.name
WHEN MATCHED THEN UPDATE SET content_hash = n.content_hash, owed_since = n.owed_since
WHEN NOT MATCHED THEN INSERT VALUES (n.report, n.dataset, n.name, n.content_hash, n.owed_since)
