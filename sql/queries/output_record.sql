-- query: record one committed file of an analysis table, replacing its previous row (parameters: dataset key, name, source, rows)
INSERT OR REPLACE INTO meta.outputs VALUES ($1, $2, $3, $4, now())
