-- query: record one committed file of an analysis table, replacing its previous row (parameters: dataset key, name, source, rows); a MERGE, as nightly_remember_file
MERGE INTO meta.outputs AS o
USING (SELECT $1 AS dataset, $2 AS name, $3 AS source, $4::BIGINT AS rows, now() AS written_at) AS n
ON o.dataset = n.dataset AND o.name = n.name
WHEN MATCHED THEN UPDATE SET source = n.source, rows = n.rows, written_at = n.written_at
WHEN NOT MATCHED THEN INSERT VALUES (n.dataset, n.name, n.source, n.rows, n.written_at)
