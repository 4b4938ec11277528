-- query: record one committed (or failed) input file (parameters: the columns of meta.manifest but the time)
INSERT INTO meta.manifest VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now())
